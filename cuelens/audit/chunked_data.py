"""Chunked data: the loaded splits held as chunks (on disk or in memory) with the token store of
the statistics' splits (docs/large-datasets.md). :func:`load_chunked` reads the data arguments
chunk by chunk into a work directory and encodes them (:func:`encode_chunk`) into a
:class:`~cuelens.audit.passes.TokenStore`; :mod:`cuelens.audit.chunk_scan` scans the result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cuelens.audit.config import ScanConfig
from cuelens.audit.counts import Encoder, TokenSequences, first_occurrences
from cuelens.audit.fitting import check_choice_count, instance_labels, instance_texts
from cuelens.audit.passes import TokenStore, check_streamable
from cuelens.audit.scan import Progress
from cuelens.audit.text_keys import as_keys, text_key, text_keys
from cuelens.data.compact import CompactSplit
from cuelens.data.dataset import MCQ_LABELS, Dataset, EvaluatedItems, Split, Task, \
    inferred_roles
from cuelens.data.loading import check_scannable, split_roles, unseen_label
from cuelens.data.schema import FieldMap
from cuelens.engine.chunks import CHUNK_ITEMS, ChunkDirectory, ChunkedSplit, read_chunked
from cuelens.errors import UserError


@dataclass
class ChunkedData(EvaluatedItems):
    """The loaded splits (role → chunked split, in results.json order), which two the
    statistics use, and the token store; held in memory, the dataset they hold
    (``loaded``)."""

    name: str
    format: str
    splits: dict[str, ChunkedSplit]
    fitting: str | None
    evaluated: str
    label_names: list[str]
    store: TokenStore
    work: ChunkDirectory | None = None  # holding the chunks, kept alive with the data
    split_roles: dict | None = None  # a role given to a file whose name does not say it
    loaded: Dataset | None = None

    @property
    def work_dir(self) -> Path:
        """Where the scan's work files go: the spilled store's directory, else the work
        directory's."""
        if self.store.directory is not None:
            return self.store.directory
        assert self.work is not None, "chunks held in memory need a work directory"
        return Path(self.work.name)

    def close(self) -> None:
        """Remove the work directory of the chunks now (else when garbage-collected)."""
        if self.work is not None:
            self.work.cleanup()

    @property
    def input_paths(self) -> list[str]:
        return [split.path for split in self.splits.values()]

    def evaluated_parts(self, mask: np.ndarray) -> Iterator[tuple[Split, np.ndarray]]:
        """Each evaluated chunk with its part of the per-item ``mask``."""
        first = 0
        for chunk in self.splits[self.evaluated]:
            yield chunk.split, mask[first:first + len(chunk.split)]
            first += len(chunk.split)


def fold_keys(split: Split) -> np.ndarray:
    """Fold keys: the fingerprint of the ``--group-field`` value, else of the premise's normal
    form (MCQ: with the question), so that an item's siblings (the other hypotheses written for
    its premise) share its folds (docs/large-datasets.md)."""
    if split.groups and split.groups[0] is not None:
        return as_keys(b"".join(text_key(str(group)) for group in split.groups))
    return text_keys(split).context


def _check_known_labels(split: CompactSplit, fitting: ChunkedSplit) -> None:
    """A label of ``split`` that the (fully read) fitting split lacks is an error."""
    known = set(fitting.label_counts)
    for i, label in enumerate(split.labels):
        if label not in known:
            raise unseen_label(label, fitting.path, sorted(known),
                               str(split.raw.paths[split.shard_of[i]]),  # type: ignore
                               split.line_of[i])


def check_chunk(split: CompactSplit, k: int, known: ChunkedSplit | None) -> None:
    """A chunk's items fit the statistics: MCQ ``k`` choices each; NLI labels ``known`` to
    the fitting split (when there is one)."""
    if split.task == Task.MCQ:
        check_choice_count(split, k)
    elif known is not None:
        _check_known_labels(split, known)


def encode_chunk(split: CompactSplit, include_premise: bool, words: Encoder,
                 features: Encoder | None, registry: dict
                 ) -> tuple[TokenSequences, TokenSequences, np.ndarray]:
    """A chunk's words (repeats kept), cue features (``features``; None: distinct words) and
    label codes (NLI: ``registry`` numbers values by first appearance; MCQ: whether right),
    the vocabularies growing in the order of first appearance."""
    texts = instance_texts(split, include_premise)
    tokens = words.add(texts).flush()
    seqs = first_occurrences(tokens) if features is None else features.add(texts).flush()
    if split.task == Task.MCQ:
        return tokens, seqs, instance_labels(split, MCQ_LABELS).astype(np.int16)
    codes = np.fromiter((registry.setdefault(v, len(registry)) for v in split.labels),
                        dtype=np.int16, count=len(split))
    return tokens, seqs, codes


@dataclass
class Loading:
    """What reading the data arguments builds up, whichever reader reads them: the chunked
    splits (``loaded``), the token store of the statistics' splits (``fitting``,
    ``evaluated``), their shared vocabularies and label registry (value → code)."""

    fields: FieldMap
    skip_bad: bool
    config: ScanConfig
    directory: Path
    chunk_items: int
    fitting: str | None
    evaluated: str
    progress: Progress | None = None
    loaded: list[ChunkedSplit] = field(default_factory=list)
    store: TokenStore | None = None
    words: Encoder = field(default_factory=lambda: Encoder(repeats=True))
    features: Encoder | None = None
    registry: dict = field(default_factory=dict)

    def encodes(self, role: str) -> bool:
        return role in (self.fitting, self.evaluated)

    def known(self, role: str) -> ChunkedSplit | None:
        """The fitting split, whose labels the chunks of ``role`` must have (else None)."""
        return self.loaded[0] if role == self.evaluated and self.fitting is not None else None

    def open_store(self, task: str, k: int) -> TokenStore:
        """The token store, created for the first chunk of the statistics' splits."""
        check_streamable(self.config.max_fit_items)
        if self.store is None:
            self.store = TokenStore(self.directory, task, k, 0)
        return self.store

    def report(self, role: str, items: int) -> None:
        if self.progress is not None:
            self.progress(f"{role}: {items:,} items", 0.0)


#: Reads one data argument (source, role, task or None) into a :class:`Loading`.
Reader = Callable[[Loading, str, str, "str | None"], None]


def read_local(loading: Loading, source: str, role: str, task: str | None) -> None:
    """:data:`Reader` in this process: chunk by chunk (one in memory at a time)."""
    for chunk in read_chunked(source, role, loading.fields, task, loading.skip_bad,
                              loading.directory, loading.chunk_items, loading.loaded):
        split = chunk.split
        assert isinstance(split, CompactSplit)  # read from its chunk file
        if not loading.encodes(role):
            continue
        store = loading.open_store(split.task, split.n_choices or 1)
        check_chunk(split, store.k, loading.known(role))
        words, seqs, codes = encode_chunk(split, loading.config.include_premise, loading.words,
                                          loading.features, loading.registry)
        store.add(role == loading.fitting, words, seqs, codes, fold_keys(split))
        loading.report(role, chunk.first + len(split))


def load_chunked(data: str | None, train: str | None, test: str | None, fields: FieldMap,
                 skip_bad: bool, config: ScanConfig, directory: Path,
                 chunk_items: int = CHUNK_ITEMS, progress: Progress | None = None,
                 reader: Reader = read_local) -> ChunkedData:
    """Read the data arguments into chunks under ``directory`` and encode the statistics'
    splits chunk by chunk (``reader``; locally one chunk in memory at a time, plus the
    vocabulary)."""
    from cuelens.audit.segmentation import check_streamable
    from cuelens.engine.streaming import ROLES, resolve_sources

    check_streamable(config.segmenter)
    sources, name, fmt = resolve_sources(data, train, test)
    roles = [role for role in ROLES if role in sources]
    fitting, evaluated = split_roles(roles)
    loading = Loading(fields, skip_bad, config, directory, chunk_items, fitting, evaluated,
                      progress, features=None if config.ngrams == 1 else Encoder(config.ngrams))
    task = None
    for role in roles:
        reader(loading, sources[role], role, task)
        task = task or loading.loaded[-1].task
    store, loaded, registry = loading.store, loading.loaded, loading.registry
    assert store is not None
    splits = {split.name: split for split in loaded}
    if len({s.task for s in loaded}) > 1:
        raise UserError("the splits mix NLI and multiple-choice items", path=loaded[-1].path)
    fitted = splits[fitting or evaluated]
    check_scannable(fitted.task, fitted.label_counts, len(fitted), fitted.path)
    if store.task == Task.MCQ:  # instance labels stored as MCQ_LABELS indices
        label_names, registry = list(MCQ_LABELS), {name: name for name in MCQ_LABELS}
    else:
        label_names = sorted(fitted.label_counts)
    store.n_labels = len(label_names)
    store.label_map = np.asarray([label_names.index(v) if v in label_names else -1
                                  for v in registry], dtype=np.int64)
    store.words_vocab[:] = list(loading.words.vocab)
    store.vocab[:] = store.words_vocab if loading.features is None \
        else list(loading.features.vocab)
    ordered = {role: splits[role] for role in ([fitting] if fitting else []) + [evaluated]}
    ordered.update({role: split for role, split in splits.items() if role not in ordered})
    return ChunkedData(name, fmt, ordered, fitting, evaluated, label_names, store,
                       split_roles=inferred_roles(fitting, evaluated,
                                                  {role: Path(s.path).name
                                                   for role, s in ordered.items()}))
