"""Statistics that stream, read and counted on Ray workers (docs/large-datasets.md, "The Ray
engine" and "Ray runs the passes", which describe each pass, what the driver holds and why the
results are the local engine's).

:class:`RayPasses` is the :class:`~cuelens.audit.passes.ChunkPasses` of ``audit scan --stats
streaming --engine ray``: every chunk file of the token store is one Ray task running the local
pass over that chunk alone, the partial results merged on the driver in chunk order.
:meth:`RayPasses.read` is its :data:`~cuelens.audit.chunked_data.Reader`, in two rounds of tasks
(one per shard: :func:`_read_part`; one per chunk: :func:`_build_chunk`);
:meth:`RayPasses.read_split` is round 1 alone, the reader of the statistics in memory
(``--engine ray --stats exact``, :func:`load_ray`).
"""

from __future__ import annotations

import shutil
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from cuelens.audit.counts import Encoder, TokenSequences
from cuelens.audit.folds import Folds, dealt
from cuelens.audit.passes import FoldModels, ItemSink, LocalPasses, RunCounts, Tally, TokenStore, \
    count_chunks, ragged, subset, tally_chunks, token_arrays, token_path
from cuelens.audit.chunked_data import Loading, check_chunk, encode_chunk, fold_keys
from cuelens.audit.tokenize import active_segmenter, segmenting
from cuelens.data.compact import CompactSplit
from cuelens.data.dataset import Task
from cuelens.data.labels import LabelFindings
from cuelens.data.readers import iter_records
from cuelens.data.schema import FieldMap
from cuelens.data.splits import NO_ITEMS, build_split
from cuelens.engine.chunks import ChunkDirectory, ChunkedSplit, chunk_path, load_mapped, \
    save_chunk, save_mapped, until_full
from cuelens.engine.options import EngineOptions, Loaded
from cuelens.engine.ray_engine import connect
from cuelens.engine.sources import shard_paths
from cuelens.engine.streaming import add_skipped, load_streaming, shard_records
from cuelens.errors import UserError

# reruns of a task whose worker died (Ray's default): safe for every task, as each writes its
# files whole or, adding into the easy/hard counters, once per call (EasyCounters.add)
RETRIES = 3
ChunkFile = tuple[bool, int, Path]  # TokenStore.files: (fitting, first item, path)
Piece = tuple[Path, int, int, int, Any]  # block file, shard, items start … stop, id remaps


def _with_vocabularies(counts: RunCounts, vocab: list[str], words_vocab: list[str]
                       ) -> RunCounts:
    """``counts`` with its candidates' token sequences pointing at these vocabularies."""
    candidates = counts.candidates
    if candidates.seqs is not None and candidates.words is not None:
        candidates.seqs = replace(candidates.seqs, vocab=vocab)
        candidates.words = replace(candidates.words, vocab=words_vocab)
    return counts


def _segmented(segmenter: str, part: Callable, *args: Any) -> Any:
    """``part(*args)`` (a Ray task) with the driver's segmenter active: a worker's words, text
    keys and lengths are cut as the driver's scan cuts them (its own context starts with
    ``unicode``)."""
    with segmenting(segmenter):
        return part(*args)


def _count_part(shipped: tuple[TokenStore, tuple], chunk: ChunkFile) -> RunCounts:
    """Pass 1 over one chunk (a Ray task); its candidates' tokens without the vocabularies,
    which stay on the driver."""
    store, args = shipped
    return _with_vocabularies(count_chunks(replace(store, files=[chunk]), *args), [], [])


def _tally_part(shipped: tuple[TokenStore, tuple], chunk: ChunkFile) -> Tally:
    """Pass 2 over one chunk (a Ray task): its tally; the per-item sink, if any
    (:meth:`~cuelens.audit.passes.EasyCounters.add`), is fed here on the worker."""
    store, args = shipped
    return tally_chunks(replace(store, files=[chunk]), *args)


@dataclass(frozen=True)
class _Reading:
    """What the tasks reading one data argument need (shipped once)."""

    source: str
    role: str
    task: str
    shards: list[Path]
    fields: FieldMap
    skip_bad: bool
    encode: bool  # tokenise (a split the statistics use)
    include_premise: bool
    ngrams: int
    chunk_items: int
    directory: Path

    def split(self, shard: int = 0) -> CompactSplit:
        split = CompactSplit(self.role, self.source, self.task, self.shards, iter_records)
        split.shard = shard
        return split


@dataclass
class _Part:
    """One shard as read by a task: its block files (and items), what the driver merges in
    shard order, and the error that stopped the reading (None: read to the end)."""

    blocks: list[tuple[Path, int]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    findings: LabelFindings = field(default_factory=LabelFindings)
    words: list[str] = field(default_factory=list)  # its vocabularies, first appearance first
    features: list[str] = field(default_factory=list)
    labels: list = field(default_factory=list)  # NLI label values, first appearance first
    choices: dict[int, int] = field(default_factory=dict)  # MCQ choice count → first item
    error: UserError | None = None


def _read_part(reading: _Reading, shard: int) -> _Part:
    """Round 1 (a Ray task): shard ``shard`` read, normalised and tokenised with its own
    vocabularies, saved in blocks of at most ``chunk_items`` items (one in memory at a time)."""
    path, part = reading.shards[shard], _Part()
    words, registry = Encoder(repeats=True), dict[Any, int]()
    features = None if reading.ngrams == 1 else Encoder(reading.ngrams)
    records, state, items = iter_records(path, raw=False), {"done": False}, 0
    while not state["done"]:
        split = reading.split(shard)
        try:
            build_split(until_full(records, split, reading.chunk_items, state), path,
                        reading.role, reading.fields, reading.task, reading.skip_bad, into=split)
        except UserError as error:
            part.error, state["done"] = error, True
        add_skipped(part.skipped, split.skipped)
        part.findings.merge(split.findings)
        if len(split) == 0:
            continue
        arrays = split.to_arrays()
        if reading.encode:
            tokens, seqs, codes = encode_chunk(split, reading.include_premise, words, features,
                                               registry)
            arrays.update(token_arrays(tokens, seqs, codes, np.zeros(0, np.uint64)))
        for i, count in enumerate(split.choice_counts):
            part.choices.setdefault(count, items + i)
        block = reading.directory / f"{reading.role}-part-{shard:06d}-{len(part.blocks):04d}"
        part.blocks.append((save_mapped(block, arrays), len(split)))
        items += len(split)
    part.words, part.labels = list(words.vocab), list(registry)
    part.features = list(features.vocab) if features is not None else []
    return part


def _build_chunk(reading: _Reading, pieces: list[Piece], index: int, tokens_index: int, k: int,
                 known: ChunkedSplit | None) -> tuple[tuple[dict, dict], int, int] | UserError:
    """Round 2 (a Ray task): chunk ``index`` joined from its ``pieces`` of the blocks, checked
    (:func:`~cuelens.audit.chunked_data.check_chunk`: the error, if any, is returned), saved;
    when tokenised, its ids mapped into the merged vocabularies and saved as token file
    ``tokens_index``. Its label and choice counts, longest feature sequence and items."""
    chunk, blocks = reading.split(), []
    for path, shard, start, stop, _ in pieces:
        blocks.append(load_mapped(path))  # a piece reads only its rows of the block
        chunk.extend(CompactSplit.from_arrays(
            CompactSplit.slice_arrays(blocks[-1], start, stop), reading.role, reading.source,
            reading.shards, iter_records), shard_offset=shard)
    counts = save_chunk(chunk, chunk_path(reading.directory, reading.role, index))
    if not reading.encode:
        return counts, 0, len(chunk)
    try:
        check_chunk(chunk, k, known)
    except UserError as error:
        return error
    words: list[TokenSequences] = []
    seqs: list[TokenSequences] = []
    labels: list[np.ndarray] = []
    for arrays, (_, _, start, stop, (words_ids, feature_ids, label_ids)) in zip(blocks, pieces):
        rows = np.arange(start * k, stop * k)
        for name, ids, into in (("words", words_ids, words), ("seqs", feature_ids, seqs)):
            mine = subset(TokenSequences(arrays[f"{name}_indptr"], arrays[name], []), rows)
            into.append(TokenSequences(mine.indptr, ids[mine.indices], []))
        codes = arrays["labels"][rows]
        labels.append(codes if label_ids is None else label_ids[codes])
    features = ragged(seqs, [])
    save_mapped(token_path(reading.directory, tokens_index),
                token_arrays(ragged(words, []), features, np.concatenate(labels),
                             fold_keys(chunk)))
    return counts, int(features.lengths.max(initial=0)), len(chunk)


@dataclass
class _Chunks:
    """Round 2's calls, cut from round 1's shards as they arrive in shard order: the blocks
    not yet in a chunk (with their shard's id remaps), the items merged, the ends of the chunks
    cut, the blocks each chunk finishes, each MCQ choice count's first item, round 1's error."""

    loading: Loading
    chunked: ChunkedSplit
    tokens: int  # the token store's files before this split's
    blocks: deque = field(default_factory=deque)
    items: int = 0
    cut: list[int] = field(default_factory=list)
    finished: dict[int, list[Path]] = field(default_factory=dict)
    choices: dict[int, int] = field(default_factory=dict)
    error: UserError | None = None

    def merge(self, shard: int, part: _Part) -> None:
        """Count in ``part`` (shard ``shard``): its skips and findings, its vocabularies and
        label values numbered in the merged ones (the remaps of its blocks)."""
        loading, chunked = self.loading, self.chunked
        add_skipped(chunked.skipped, part.skipped)
        chunked.findings.merge(part.findings)
        words = loading.words.remap(part.words)
        features = words if loading.features is None else loading.features.remap(part.features)
        registry = loading.registry
        labels = None if chunked.task == Task.MCQ else np.asarray(
            [registry.setdefault(value, len(registry)) for value in part.labels], np.int16)
        for count, item in part.choices.items():
            self.choices.setdefault(count, self.items + item)
        for path, items in part.blocks:
            self.blocks.append((path, shard, 0, items, (words, features, labels)))
            self.items += items
        self.error = part.error

    def take(self, end: int) -> list[Piece]:
        """The pieces of the next chunk, up to item ``end``."""
        pieces, done = [], self.cut[-1] if self.cut else 0
        while done < end:
            path, shard, start, stop, remaps = self.blocks[0]
            step = min(end - done, stop - start)
            pieces.append((path, shard, start, start + step, remaps))
            done += step
            if start + step == stop:
                self.blocks.popleft()
                self.finished.setdefault(len(self.cut), []).append(path)
            else:
                self.blocks[0] = (path, shard, start + step, stop, remaps)
        self.cut.append(end)
        return pieces

    def calls(self, reading: Any, parts: Iterable[tuple[int, _Part]], last: int) -> Iterator[tuple]:
        """Round 2's calls: each chunk once round 1 has merged its items (the last, partial
        one after shard ``last``); none after an error (the local reader stops there)."""
        loading, size, role, k = self.loading, self.loading.chunk_items, self.chunked.name, 0
        known = loading.known(role)
        known = known if known is None else replace(known, files=[], sizes=[])
        for shard, part in parts:
            self.merge(shard, part)
            final = self.items if shard == last and self.error is None else -1
            while (done := self.cut[-1] if self.cut else 0) + size <= self.items or \
                    done < final:
                end_of = min(done + size, self.items)
                if not k:  # the store's k, once: the first chunk's choice count
                    firsts = [count for count, item in self.choices.items() if item < end_of]
                    k = 1 if not loading.encodes(role) else loading.open_store(
                        self.chunked.task, firsts[0] if len(firsts) == 1 else 1).k
                index = len(self.cut)
                yield reading, self.take(end_of), index, self.tokens + index, k, known
            if self.error is not None:
                return


@dataclass(frozen=True)
class RayPasses:
    """:class:`~cuelens.audit.passes.ChunkPasses` on the Ray cluster at ``address`` (None: a
    local one, started on first use), one task per chunk file."""

    address: str | None = None
    in_flight: int = 0  # partial results held at once (0: twice the cluster's CPUs)

    def _ordered(self, ray, part: Callable, calls: Iterable[tuple]) -> Iterator:
        """``part`` run as a Ray task on each of ``calls`` (its arguments) with the driver's
        segmenter (:func:`_segmented`), the results in order, at most ``in_flight`` at once; a
        task whose worker died is rerun up to :data:`RETRIES` times."""
        task = ray.remote(num_cpus=1, max_retries=RETRIES)(_segmented)
        limit = self.in_flight or 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
        segmenter, pending = active_segmenter().name, deque[Any]()
        for args in calls:
            pending.append(task.remote(segmenter, part, *args))
            if len(pending) >= limit:
                yield ray.get(pending.popleft())
        while pending:
            yield ray.get(pending.popleft())

    def _map(self, part: Callable, store: TokenStore, fitting: bool | None,
             args: tuple) -> Iterator:
        """``part`` run on every chunk file of ``store`` (of one split with ``fitting``), the
        results in chunk order; the store's columns (vocabularies included) are shipped once."""
        return self.map(part, (replace(store, files=[], passes=LocalPasses()), args),
                        ((chunk,) for chunk in store.files
                         if fitting is None or chunk[0] == fitting))

    def map(self, part: Callable, shared: object, calls: Iterable[tuple]) -> Iterator:
        """Each call one Ray task; ``shared`` is shipped once."""
        ray = connect(self.address)
        shipped = ray.put(shared)
        return self._ordered(ray, part, ((shipped, *call) for call in calls))

    def _read_parts(self, source: str, role: str, task: str | None, fields: FieldMap,
                    skip_bad: bool, *options) -> tuple[_Reading, Any, Iterator, dict[str, int]]:
        """Round 1 of :meth:`read`: ``source``'s reading (and shipped), its shards' parts in
        order from the first with a parsable record, and the bad lines of those before it."""
        ray, shards, lost = connect(self.address), shard_paths(source), dict[str, int]()
        found = next(shard_records(shards, fields, task, skip_bad, lost), None)
        if found is None:
            raise UserError(NO_ITEMS, path=source)
        reading = _Reading(source, role, found[3], shards, fields, skip_bad, *options)
        shipped, indices = ray.put(reading), range(found[0], len(shards))
        parts = self._ordered(ray, _read_part, ((shipped, shard) for shard in indices))
        return reading, shipped, zip(indices, parts), lost

    def read(self, loading: Loading, source: str, role: str, task: str | None) -> None:
        """:data:`~cuelens.audit.chunked_data.Reader` on Ray workers (module docstring): the
        local reader's chunks, token ids, counts and errors."""
        reading, shipped, parts, lost = self._read_parts(
            source, role, task, loading.fields, loading.skip_bad, loading.encodes(role),
            loading.config.include_premise, loading.config.ngrams, loading.chunk_items,
            loading.work)
        chunked = ChunkedSplit(role, source, reading.task, reading.shards)
        loading.loaded.append(chunked)
        cut = _Chunks(loading, chunked, len(loading.store.files) if loading.store else 0)
        built = self._ordered(connect(self.address), _build_chunk,
                              cut.calls(shipped, parts, len(reading.shards) - 1))
        for index, result in enumerate(built):
            if isinstance(result, UserError):
                raise result
            counts, max_length, items = result
            chunked.add_file(chunk_path(loading.work, role, index), items, counts)
            if loading.store is not None and loading.encodes(role):
                loading.store.add_file(role == loading.fitting, items, max_length,
                                       token_path(loading.work, cut.tokens + index))
            loading.report(role, cut.cut[index])
            for path in cut.finished.pop(index, []):
                shutil.rmtree(path)
        if cut.error is not None:
            raise cut.error
        if not cut.cut:
            raise UserError(NO_ITEMS, path=source)
        add_skipped(chunked.skipped, lost)

    def read_split(self, directory: Path, options: EngineOptions, source: str, role: str,
                   fields: FieldMap, task: str | None,
                   skip_bad: bool) -> tuple[CompactSplit, TokenSequences]:
        """``source`` read for the statistics in memory: round 1 of :meth:`read`, each shard
        saved as one block, the blocks appended in shard order and their instance texts' ids
        mapped into one vocabulary (the local engine's split and :func:`encode`)."""
        reading, _, parts, lost = self._read_parts(source, role, task, fields, skip_bad, True,
                                                   options.include_premise, options.ngrams,
                                                   2 ** 62, directory)  # one block a shard
        merged, encoder = reading.split(), Encoder(options.ngrams)
        for shard, part in parts:
            vocab = part.words if options.ngrams == 1 else part.features
            for path, _ in part.blocks:
                arrays = load_mapped(path)
                block = CompactSplit.from_arrays(arrays, role, source, reading.shards,
                                                 iter_records)
                encoder.add_encoded(TokenSequences(arrays["seqs_indptr"], arrays["seqs"], vocab))
                block.skipped, block.findings = {}, LabelFindings()  # the part's count them all
                merged.extend(block, shard_offset=shard)
                shutil.rmtree(path)
            add_skipped(merged.skipped, part.skipped)
            merged.findings.merge(part.findings)
            if part.error is not None:
                raise part.error
            if options.progress is not None:
                options.progress(f"read {role} shards", (shard + 1) / len(reading.shards))
        if len(merged) == 0:
            raise UserError(NO_ITEMS, path=source)
        add_skipped(merged.skipped, lost)
        return merged, encoder.result()

    def count(self, store: TokenStore, folds: Folds, n_folds: int, fold_seed: int,
              sample_seed: int, outer: bool, keep: int) -> RunCounts:
        shipped = dealt(folds, fold_seed if outer else None, sample_seed)
        parts = self._map(_count_part, store, None,
                          (shipped, n_folds, fold_seed, sample_seed, outer, keep))
        first = next(parts)  # a store holds at least one chunk; its arrays are read-only
        counts = replace(first, joint=first.joint.copy(), labels=first.labels.copy(),
                         lengths=first.lengths.copy(), answers=first.answers.copy())
        for part in parts:
            counts.merge(part)
        counts.candidates.compact()
        return _with_vocabularies(counts, store.vocab, store.words_vocab)

    def tally(self, store: TokenStore, batch: list[FoldModels], folds: Folds, fold_seed: int,
              outer: bool, models: list[tuple[str, str]], bow_name: str | None,
              sink: ItemSink | None) -> Tally:
        tally = Tally(models)
        for part in self._map(_tally_part, store, False,
                              (batch, dealt(folds, fold_seed if outer else None), fold_seed,
                               outer, models, bow_name, sink)):
            tally.merge(part)
        return tally


def load_ray(data: str | None = None, *, train: str | None = None, test: str | None = None,
             fields: FieldMap = FieldMap(), skip_bad: bool = False,
             options: EngineOptions = EngineOptions()) -> Loaded:
    """The local engine's :class:`~cuelens.engine.options.Loaded` dataset (``--engine ray
    --stats exact``), its shards read and encoded by Ray workers (:meth:`RayPasses.read_split`; the
    blocks pass through a work directory: a shared filesystem on a multi-node cluster)."""
    encoded: dict[int, tuple[int, TokenSequences]] = {}

    def read(*args) -> CompactSplit:
        split, tokens = RayPasses(options.address).read_split(Path(directory), options, *args)
        encoded[id(split)] = (len(split), tokens)
        return split

    with ChunkDirectory(options.work_dir) as directory:
        dataset = load_streaming(data, train=train, test=test, fields=fields,
                                 skip_bad=skip_bad, reader=read)
    parts = [s for s in (dataset.train, dataset.test) if s is not None]
    if any(encoded[id(s)][0] != len(s) for s in parts):
        return Loaded(dataset)  # items were dropped after reading
    combined = Encoder(options.ngrams)
    for part in parts:
        combined.add_encoded(encoded[id(part)][1])
    return Loaded(dataset, combined.result())
