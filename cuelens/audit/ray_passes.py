"""Statistics that stream, with their passes on Ray workers (docs/large-datasets.md, "Ray runs
the passes").

:class:`RayPasses` is the :class:`~cuelens.audit.streamed.ChunkPasses` of ``audit scan --stats
streaming --engine ray``: every chunk file of the token store is one Ray task, which runs the
local pass (:func:`~cuelens.audit.streamed.count_chunks`: counts and sample candidates;
:func:`~cuelens.audit.streamed.tally_chunks`: per-fold prediction tallies) over that chunk
alone. The driver merges the partial results in chunk order (:meth:`RunCounts.merge`,
:meth:`Tally.merge`: sums, and the lowest-priority candidates), which gives the local engine's
results exactly. The driver holds the vocabulary-sized count tables, the bounded candidates and
the fold models, and at most ``in_flight`` partial results; the workers read the chunk files
from the work directory (a shared filesystem on a multi-node cluster).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cuelens.audit.streamed import FoldModels, Folds, ItemSink, LocalPasses, RunCounts, Tally, \
    TokenStore, count_chunks, tally_chunks
from cuelens.engine.ray_engine import connect

ChunkFile = tuple[bool, int, Path]  # TokenStore.files: (fitting, first item, path)


def _with_vocabularies(counts: RunCounts, vocab: list[str], words_vocab: list[str]
                       ) -> RunCounts:
    """``counts`` with its candidates' token sequences pointing at these vocabularies."""
    candidates = counts.candidates
    if candidates.seqs is not None and candidates.words is not None:
        candidates.seqs = replace(candidates.seqs, vocab=vocab)
        candidates.words = replace(candidates.words, vocab=words_vocab)
    return counts


def _count_part(shipped: tuple[TokenStore, tuple], chunk: ChunkFile) -> RunCounts:
    """Pass 1 over one chunk (a Ray task); its candidates' tokens without the vocabularies,
    which stay on the driver."""
    store, args = shipped
    return _with_vocabularies(count_chunks(replace(store, files=[chunk]), *args), [], [])


def _tally_part(shipped: tuple[TokenStore, tuple], chunk: ChunkFile
                ) -> tuple[Tally, list[tuple[int, Any, dict]]]:
    """Pass 2 over one chunk (a Ray task): its tally and, when the driver has a sink, the
    per-item results it would have received."""
    store, (batch, folds, fold_seed, outer, models, bow_name, keep_items) = shipped
    records: list[tuple[int, Any, dict]] = []
    sink = (lambda *record: records.append(record)) if keep_items else None
    tally = tally_chunks(replace(store, files=[chunk]), batch, folds, fold_seed, outer, models,
                         bow_name, sink)
    return tally, records


@dataclass(frozen=True)
class RayPasses:
    """:class:`~cuelens.audit.streamed.ChunkPasses` on the Ray cluster at ``address`` (None: a
    local one, started on first use), one task per chunk file."""

    address: str | None = None
    in_flight: int = 0  # partial results held at once (0: twice the cluster's CPUs)

    def _map(self, part: Callable, store: TokenStore, fitting: bool | None,
             args: tuple) -> Iterator:
        """``part`` run on every chunk file of ``store`` (of one split with ``fitting``), the
        results in chunk order; the store's columns (vocabularies included) are shipped once."""
        ray = connect(self.address)
        task = ray.remote(num_cpus=1)(part)
        shipped = ray.put((replace(store, files=[], passes=LocalPasses()), args))
        limit = self.in_flight or 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
        pending: deque = deque()
        for chunk in store.files:
            if fitting is None or chunk[0] == fitting:
                pending.append(task.remote(shipped, chunk))
                if len(pending) >= limit:
                    yield ray.get(pending.popleft())
        while pending:
            yield ray.get(pending.popleft())

    def count(self, store: TokenStore, folds: Folds, n_folds: int, fold_seed: int,
              sample_seed: int, outer: bool, keep: int) -> RunCounts:
        parts = self._map(_count_part, store, None,
                          (folds, n_folds, fold_seed, sample_seed, outer, keep))
        first = next(parts)  # a store holds at least one chunk; its arrays are read-only
        counts = replace(first, joint=first.joint.copy(), labels=first.labels.copy(),
                         lengths=first.lengths.copy(), answers=first.answers.copy())
        for part in parts:
            counts.merge(part)
        return _with_vocabularies(counts, store.vocab, store.words_vocab)

    def tally(self, store: TokenStore, batch: list[FoldModels], folds: Folds, fold_seed: int,
              outer: bool, models: list[tuple[str, str]], bow_name: str | None,
              sink: ItemSink | None) -> Tally:
        tally = Tally(models)
        for part, records in self._map(_tally_part, store, False, (
                batch, folds, fold_seed, outer, models, bow_name, sink is not None)):
            tally.merge(part)
            for first, positions, results in records:
                assert sink is not None
                sink(first, positions, results)
        return tally
