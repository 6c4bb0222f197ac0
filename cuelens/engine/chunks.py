"""Splits kept on disk in chunks, for statistics that stream (docs/large-datasets.md).

:func:`read_chunked` reads a source (file, directory of shards or glob) record by record with
the local engine's readers and normalisation (:func:`~cuelens.data.loading.build_split`), cuts
it into :class:`~cuelens.data.compact.CompactSplit` chunks of at most ``chunk_items`` items,
saves each as a plain ``.npz`` (no pickle) under a work directory, with its normalised texts’
fingerprints (:func:`~cuelens.audit.text_keys.text_keys`, computed once for the fold keys and
the hygiene checks), and yields it. Iterating the
returned :class:`ChunkedSplit` again loads the chunks back one at a time, so a pass over a split
holds one chunk in memory whatever the split's size.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cuelens.audit.text_keys import TextKeys, keep_text_keys, text_keys
from cuelens.data.compact import CompactSplit
from cuelens.data.labels import LabelFindings
from cuelens.data.loading import NO_ITEMS, build_split
from cuelens.data.schema import FieldMap
from cuelens.engine.sources import Record, iter_source_records, shard_paths
from cuelens.engine.streaming import add_skipped, shard_records
from cuelens.errors import UserError

CHUNK_ITEMS = 250_000


@dataclass
class Chunk:
    """Items ``first … first + len(split) − 1`` of a split."""

    first: int
    split: CompactSplit


@dataclass
class ChunkedSplit:
    """A split stored as chunk files; ``len`` and the label and skip counts are kept."""

    name: str
    path: str  # the source as given
    task: str
    shards: list[Path]
    files: list[Path] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    label_counts: Counter = field(default_factory=Counter)  # label value → items
    skipped: dict[str, int] = field(default_factory=dict)
    findings: LabelFindings = field(default_factory=LabelFindings)

    def __len__(self) -> int:
        return sum(self.sizes)

    def __iter__(self) -> Iterator[Chunk]:
        first = 0
        for path, size in zip(self.files, self.sizes):
            yield Chunk(first, _load(path, self))
            first += size

    def _save(self, split: CompactSplit, directory: Path) -> None:
        path = directory / f"{self.name}-{len(self.files):06d}.npz"
        with open(path, "wb") as handle:
            arrays = {**split.to_arrays(), **text_keys(split).to_arrays(),
                      "shard_of": np.asarray(split.shard_of, dtype=np.int32)}
            np.savez(handle, **arrays)  # type: ignore[arg-type]
        self.files.append(path)
        self.sizes.append(len(split))
        codes, counts = np.unique(np.asarray(split.label_column.codes, dtype=np.int16),
                                  return_counts=True)
        self.label_counts.update({split.label_column.values[code]: count
                                  for code, count in zip(codes.tolist(), counts.tolist())})
        add_skipped(self.skipped, split.skipped)
        self.findings.merge(split.findings)


def _load(path: Path, owner: ChunkedSplit) -> CompactSplit:
    with np.load(path, allow_pickle=False) as arrays:
        split = CompactSplit.from_arrays(arrays, owner.name, owner.path, owner.shards,
                                         iter_source_records)
        shard_of = array("i")
        shard_of.frombytes(arrays["shard_of"].tobytes())
        keep_text_keys(split, TextKeys.from_arrays(arrays))
    split.shard_of[:] = shard_of  # in place: split.raw re-reads records through it
    return split


def _until_full(records: Iterator[Record], split: CompactSplit, limit: int,
                state: dict) -> Iterator[Record]:
    """``records`` until ``split`` holds ``limit`` items; ``state["done"]`` once exhausted."""
    for record in records:
        yield record
        if len(split) >= limit:
            return
    state["done"] = True


def read_chunked(source: str, role: str, fields: FieldMap, task: str | None, skip_bad: bool,
                 directory: Path, chunk_items: int = CHUNK_ITEMS,
                 into: list[ChunkedSplit] | None = None) -> Iterator[Chunk]:
    """Read ``source`` into chunk files under ``directory``, yielding each chunk once saved.

    The :class:`ChunkedSplit` is appended to ``into`` once its task is known (at the first
    parsable record); a source without any item raises the in-memory loader's error.
    """
    shards = shard_paths(source)
    chunked: ChunkedSplit | None = None
    current: CompactSplit | None = None
    first = 0
    lost: dict[str, int] = {}
    for index, path, records, found in shard_records(shards, fields, task, skip_bad, lost):
        if chunked is None:
            chunked = ChunkedSplit(role, source, found, shards)
            if into is not None:
                into.append(chunked)
        state = {"done": False}
        while not state["done"]:
            if current is None:
                current = CompactSplit(role, source, chunked.task, shards, iter_source_records)
            current.shard = index
            build_split(_until_full(records, current, chunk_items, state), path, role, fields,
                        chunked.task, skip_bad, into=current)
            if len(current) >= chunk_items:
                chunked._save(current, directory)
                yield Chunk(first, current)
                first += len(current)
                current = None
    if chunked is not None and current is not None:
        if len(current):
            chunked._save(current, directory)
            yield Chunk(first, current)
        else:  # only skipped records since the last chunk
            add_skipped(chunked.skipped, current.skipped)
    if chunked is None or len(chunked) == 0:
        raise UserError(NO_ITEMS, path=source)
    add_skipped(chunked.skipped, lost)
