"""Annotate instances with feature values, parsing each distinct text at most once
(docs/methods.md §5).

:func:`annotate` deduplicates the hypothesis/choice texts (and premises, for OVERLAP), serves
what it can from the :class:`~cuelens.audit.parse_cache.ParseCache`, and parses the rest with
spaCy in one ``nlp.pipe`` pass per group of texts missing the same detectors: the pipeline is
loaded once with the components of all groups, and each group runs only those its detectors need
(word/sentiment need no spaCy at all). Large inputs use ``n_process`` worker processes.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from itertools import chain, groupby
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from cuelens.audit.features.base import (PIPE_ORDER, Annotations, DocFeature, Feature,
                                         TextFeature)
from cuelens.audit.features.stepped_parse import parse
from cuelens.audit.parse_cache import ParseCache, text_keys
from cuelens.data.readers import read_json

Progress = Callable[[str, float], None]
BATCH_SIZE = 512
#: Parse in worker processes from this many texts on (process start-up costs ~2 s).
MULTIPROCESS_MIN_TEXTS = 4000


def pipeline_name() -> str:
    """``<package>-<version>`` of the installed English pipeline, read without loading it."""
    from cuelens.models.spacy_pipeline import pipeline_package

    package = pipeline_package()
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(package)
    location = spec.submodule_search_locations[0]
    meta = read_json(Path(location, "meta.json"))
    return f"{meta.get('lang', 'en')}_{meta.get('name', package)}-{meta.get('version', '0')}"


def default_n_process(n_texts: int) -> int:
    """Worker processes for parsing ``n_texts`` texts: 1 below :data:`MULTIPROCESS_MIN_TEXTS`,
    else the usable CPUs left idle (their count less the 1-minute load average, this process
    not counted), 1 to 4. Workers cost about a fifth more CPU time than one process; on a busy
    machine they save no time (docs/icq-features.md, "Speed")."""
    if n_texts < MULTIPROCESS_MIN_TEXTS:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    idle = (cpus or 1) - max(load - 1.0, 0.0)
    return max(1, min(4, int(idle)))


def annotate(features: list[Feature], texts: list[str], premises: list[str] | None = None,
             cache: ParseCache | None = None, progress: Progress | None = None,
             n_process: int | None = None) -> dict[str, Annotations]:
    """Values of every instance ``(premises[i], texts[i])`` for each feature, by feature name."""
    cache = cache or ParseCache(None)
    distinct, hyp, prem = _distinct(features, texts, premises)
    hyp_rows, prem_rows = np.unique(hyp), np.unique(prem)
    per_text: dict[str, Annotations] = {}
    docs = [f for f in features if isinstance(f, DocFeature)]
    if docs:
        per_text.update(_doc_annotations(docs, distinct, _needed(docs, hyp_rows, prem_rows),
                                         cache, progress, n_process))
    for feature in features:
        if feature.name not in per_text and isinstance(feature, TextFeature):
            part = feature.annotate([distinct[i] for i in hyp_rows])
            per_text[feature.name] = _scatter(len(distinct), [(hyp_rows, part)])
    return {f.name: f.combine(per_text[f.name].take(hyp),
                              per_text[f.name].take(prem) if f.uses_premise else None)
            for f in features}


def uncached(features: list[DocFeature], texts: list[str], premises: list[str] | None,
             cache: ParseCache) -> int:
    """How many distinct texts :func:`annotate` would parse for the spaCy ``features``: those
    ``cache`` does not hold."""
    distinct, hyp, prem = _distinct(features, texts, premises)
    needed = _needed(features, np.unique(hyp), np.unique(prem))
    _, missing = _lookup(features, text_keys(distinct), needed, cache, pipeline_name())
    return int(np.count_nonzero(missing))


def _distinct(features: Sequence[Feature], texts: list[str], premises: list[str] | None
              ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The distinct texts of the instances (and of their premises when a feature pairs them),
    and each instance's row of its text and of its premise there."""
    needs_premise = any(f.uses_premise for f in features)
    if needs_premise and (premises is None or len(premises) != len(texts)):
        raise ValueError("OVERLAP needs one premise per text")
    paired = premises if needs_premise and premises is not None else []
    distinct = list(dict.fromkeys(chain(texts, paired)))
    position = {text: i for i, text in enumerate(distinct)}
    hyp = np.fromiter((position[t] for t in texts), dtype=np.int64, count=len(texts))
    prem = np.fromiter((position[p] for p in paired), dtype=np.int64, count=len(paired))
    return distinct, hyp, prem


def _needed(features: list[DocFeature], hyp_rows: np.ndarray,
            prem_rows: np.ndarray) -> dict[str, np.ndarray]:
    """The rows of distinct texts each spaCy feature reads."""
    return {f.name: np.union1d(hyp_rows, prem_rows) if f.uses_premise else hyp_rows
            for f in features}


def _lookup(features: list[DocFeature], keys: np.ndarray, needed: dict[str, np.ndarray],
            cache: ParseCache, pipeline: str
            ) -> tuple[dict[str, list[tuple[np.ndarray, Annotations]]], np.ndarray]:
    """The cached rows of each feature (of the ``pipeline``, :func:`pipeline_name`), and per
    distinct text the bits of the features to parse it for (bit j: ``features[j]``)."""
    parts: dict[str, list[tuple[np.ndarray, Annotations]]] = {f.name: [] for f in features}
    missing = np.zeros(len(keys), dtype=np.int64)
    for j, feature in enumerate(features):
        rows = needed[feature.name]
        found, cached = cache.lookup(feature.namespace(pipeline), keys[rows])
        parts[feature.name].append((rows[found], cached))
        missing[rows[~found]] |= 1 << j
    return parts, missing


def _doc_annotations(features: list[DocFeature], distinct: list[str],
                     needed: dict[str, np.ndarray], cache: ParseCache,
                     progress: Progress | None, n_process: int | None) -> dict[str, Annotations]:
    """Per-distinct-text annotations of spaCy features: cached rows, then parsed misses."""
    pipeline = pipeline_name()
    keys = text_keys(distinct)
    parts, missing = _lookup(features, keys, needed, cache, pipeline)
    groups = [(bits, np.flatnonzero(missing == bits)) for bits in np.unique(missing[missing > 0])]
    total, done = int(sum(len(rows) for _, rows in groups)), 0
    loaded = _components([f for j, f in enumerate(features) if np.any(missing >> j & 1)])
    for bits, rows in groups:
        group = [f for j, f in enumerate(features) if bits >> j & 1]
        fresh = _parse(group, loaded, [distinct[i] for i in rows], n_process,
                       lambda k: progress and progress("parse", (done + k) / total))
        done += len(rows)
        for feature in group:
            cache.store(feature.namespace(pipeline), keys[rows], fresh[feature.name])
            parts[feature.name].append((rows, fresh[feature.name]))
    if progress:
        progress("parse", 1.0)
    return {name: _scatter(len(distinct), feature_parts) for name, feature_parts in parts.items()}


def _components(features: list[DocFeature]) -> tuple[str, ...]:
    """The spaCy components ``features`` read, in pipeline order."""
    wanted = {c for f in features for c in f.components}
    return tuple(c for c in PIPE_ORDER if c in wanted)


def _parse(features: list[DocFeature], loaded: tuple[str, ...], texts: list[str],
           n_process: int | None, tick: Callable[[int], object]) -> dict[str, Annotations]:
    """Parse ``texts`` once with the union of the features' components; values per feature.

    The pipeline holds the ``loaded`` components (those of every group of this run, loaded
    once); this group runs only its own under ``select_pipes``, except the attribute ruler,
    applied by :class:`~.ruler.LookupRuler` (the same attributes, a fraction of the time), and
    the lemmatizer, which OVERLAP applies to the tokens it reads. With several processes each
    worker parses a chunk and returns only the value tuples (shipping parsed ``Doc`` objects
    back, as ``nlp.pipe(n_process=…)`` does, costs ~40% more CPU); chunks come back in order,
    so the output does not depend on the process count. The texts are parsed in sorted order:
    texts that begin alike share a batch, so the context layers run on fewer distinct windows
    (:mod:`.window_dedup`; SNLI's hypotheses: ~8% less of the ``tok2vec``'s time). The
    layers' matrix products run on one BLAS thread per process: the batches are small, and more
    threads cost more CPU than they save.
    """
    setup = (loaded, _components(features), [f.name for f in features])
    _init_worker(*setup)  # in the parent: forked workers inherit the pipeline and detectors
    processes = n_process or default_n_process(len(texts))
    order = sorted(range(len(texts)), key=texts.__getitem__)
    in_order = [texts[i] for i in order]
    with threadpool_limits(1, user_api="blas"):  # forked workers inherit the limit
        _warm_blas()
        if processes <= 1:
            sorted_rows = _values(in_order, tick)
        else:
            sorted_rows = _pooled_values(in_order, processes, setup, tick)
    rows: list[tuple] = [()] * len(texts)
    for i, row in zip(order, sorted_rows):
        rows[i] = row
    return {name: Annotations.from_lists([row[j] for row in rows])
            for j, name in enumerate(setup[2])}


def _warm_blas() -> None:
    """One float matrix product of 1,024 columns on one thread: OpenBLAS (0.3.31, AMD EPYC) ran
    the layers' narrower products at a third of their speed until the process's first such
    product (docs/icq-features.md, "Speed")."""
    np.dot(np.zeros((128, 96), dtype=np.float32), np.zeros((96, 1024), dtype=np.float32),
           out=np.empty((128, 1024), dtype=np.float32))


def _pooled_values(texts: list[str], processes: int, setup: tuple,
                   tick: Callable[[int], object]) -> list[tuple]:
    """:func:`_values` of ``texts`` in ``processes`` workers, ``8 × processes`` chunks."""
    import multiprocessing

    bounds = np.linspace(0, len(texts), processes * 8 + 1).astype(int)
    chunks = [texts[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    rows, done = [], 0
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux")
                                          else "spawn")
    with context.Pool(processes, _init_worker, setup) as pool:
        for part in pool.imap(_values, chunks):
            rows += part
            done += len(part)
            tick(done)
    return rows


_WORKER: tuple = ()
#: Components loaded but not run by ``nlp.pipe``: the attribute ruler (a :class:`LookupRuler`
#: instead) and the lemmatizer (OVERLAP lemmatises the tokens it reads, :mod:`.overlap`).
APPLIED_HERE = frozenset({"attribute_ruler", "lemmatizer"})
#: Transition-based components, their steps run by :func:`~.stepped_parse.parse`.
STEPPED = frozenset({"parser", "ner"})


def _init_worker(loaded: tuple[str, ...], enabled: tuple[str, ...], names: list[str]) -> None:
    """Set the pipeline (holding ``loaded``, running ``enabled``; its token embeddings memoised,
    :mod:`.embedding_memo`), its attribute ruler (when enabled) and the prepared detectors of
    this process (the parent or a pool worker)."""
    from cuelens.audit.features.embedding_memo import memoise_embedding
    from cuelens.audit.features.registry import FEATURES
    from cuelens.audit.features.ruler import LookupRuler
    from cuelens.audit.features.window_dedup import dedupe_windows
    from cuelens.models.spacy_pipeline import load_spacy

    global _WORKER
    nlp = load_spacy(loaded)
    memoise_embedding(nlp)
    dedupe_windows(nlp)
    features = [FEATURES[name] for name in names]
    for feature in features:
        feature.prepare(nlp)
    ruler = LookupRuler.of(nlp) if "attribute_ruler" in enabled else None
    _WORKER = (nlp, tuple(c for c in enabled if c not in APPLIED_HERE), ruler, features)


def _values(texts: list[str], tick: Callable[[int], object] | None = None) -> list[tuple]:
    """Per text, the value tuple of each detector of :data:`_WORKER`."""
    nlp, enabled, ruler, features = _WORKER
    rows = []
    for i, doc in enumerate(_docs(nlp, enabled, texts)):
        if ruler is not None:
            ruler(doc)
        rows.append(tuple(feature.values(doc) for feature in features))
        if tick is not None and i % BATCH_SIZE == 0:
            tick(i)
    return rows


def _docs(nlp, enabled: tuple[str, ...], texts: list[str]) -> Iterator:
    """The docs of ``texts`` run through the ``enabled`` components in batches of
    :data:`BATCH_SIZE`, as ``nlp.pipe`` runs them; the steps of the transition-based components
    (:data:`STEPPED`) run from Python (:mod:`.stepped_parse`: the same parses in less time)."""
    for start in range(0, len(texts), BATCH_SIZE):
        docs = [nlp.make_doc(text) for text in texts[start:start + BATCH_SIZE]]
        for stepped, group in groupby(enabled, key=STEPPED.__contains__):
            names = list(group)
            if stepped:
                for name in names:
                    docs = list(parse(nlp.get_pipe(name), docs, BATCH_SIZE))
            else:
                with nlp.select_pipes(enable=names):
                    docs = list(nlp.pipe(docs, batch_size=BATCH_SIZE))
        yield from docs


def _scatter(n: int, parts: list[tuple[np.ndarray, Annotations]]) -> Annotations:
    """Annotations of ``n`` rows assembled from ``(row indices, annotations)`` parts;
    rows in no part have no values."""
    stacked = Annotations.stack([a for _, a in parts] + [Annotations.empty(1)])
    source = np.full(n, stacked.matrix.shape[0] - 1, dtype=np.int64)  # default: the empty row
    offset = 0
    for rows, part in parts:
        source[rows] = np.arange(offset, offset + len(part))
        offset += len(part)
    return stacked.take(source)
