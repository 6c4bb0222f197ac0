"""Data hygiene of chunked splits in bounded memory (docs/methods.md §11; docs/large-datasets.md).

:func:`streamed_hygiene` reads each split's chunks (:class:`~cuelens.engine.chunks.ChunkedSplit`)
one at a time, whatever the chunking (a loaded dataset's splits held as one chunk each:
:func:`data_hygiene`): keys spilled per chunk to hash partitions (:class:`KeySpill`), counted per
partition and totalled on the driver, as docs/data-hygiene.md ("Streamed") describes; the
per-item flags stay in files that each partition's task writes (:class:`ItemFlags`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path

import numpy as np

from cuelens.audit.hygiene import describe, hygiene_section
from cuelens.audit.hygiene_counts import FLAG_BITS, Flags, Keyed, Part, PartFindings, \
    example_refs, findings, partition_findings
from cuelens.audit.hygiene_keys import ItemKeys, near_parts
from cuelens.audit.near_duplicates import NearIndex, NearSample, near_items
from cuelens.audit.groups import sizes_summary
from cuelens.audit.passes import ChunkPasses, LocalPasses
from cuelens.audit.results import HygieneSection
from cuelens.audit.text_keys import mix64
from cuelens.data.dataset import Dataset, role_names
from cuelens.engine.chunks import ChunkedSplit

PART_BITS = 6  # 64 partitions: of 50M keys, ~0.8M (19 MB with item and answer) in memory at once
PARTITION_KEYS = 1 << 20  # keys of a split kind in one partition before they are cut in more
BUFFERED = 1 << 18  # keys gathered before they are written out to their partitions
ANSWERED = (("item", "<i8"), ("answer", "<u8"))
INPUTS = (*ANSWERED, ("shown", "<u8"))
ITEMS = (("item", "<i8"),)


def _partition(directory: Path, part: int) -> Path:
    return directory / f"{part:04d}.bin"


class KeySpill:
    """uint64 keys, each with optional columns (``(name, dtype)``), spilled to ``2**bits``
    partition files under ``directory`` by the top bits of ``mix64(key)``; every copy of a key
    is in the same partition, the rows of a partition in the order they were added. The caller
    owns ``directory`` (a partition file already there is overwritten); :meth:`spilled` reads
    them back."""

    def __init__(self, directory: Path, columns: tuple[tuple[str, str], ...] = (),
                 bits: int = PART_BITS, buffered: int = BUFFERED) -> None:
        self.directory, self.buffered = directory, buffered
        self.dtype = np.dtype([("key", "<u8"), *columns])
        self.columns = [name for name, _ in columns]
        self.shift, self.n_parts = np.uint64(64 - bits), 1 << bits
        self._pending: list[np.ndarray] = []
        self._written: set[int] = set()
        directory.mkdir(parents=True, exist_ok=True)

    def add(self, keys: np.ndarray, **columns: np.ndarray) -> None:
        """Add ``keys`` with one array per column (all of the same length)."""
        if sorted(columns) != sorted(self.columns):
            raise ValueError(f"columns {sorted(columns)}, expected {self.columns}")
        rows = np.empty(len(keys), dtype=self.dtype)
        rows["key"] = keys
        for name, values in columns.items():
            rows[name] = values
        self._pending.append(rows)
        if sum(map(len, self._pending)) >= self.buffered:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        rows = np.concatenate(self._pending)
        self._pending = []
        part = mix64(rows["key"]) >> self.shift if self.n_parts > 1 else \
            np.zeros(len(rows), dtype=np.uint64)  # a shift by 64 bits is no shift
        order = np.argsort(part, kind="stable")
        rows, bounds = rows[order], np.searchsorted(part[order], np.arange(self.n_parts + 1))
        for p in np.flatnonzero(np.diff(bounds)).tolist():
            with open(_partition(self.directory, p), "ab" if p in self._written else "wb") as out:
                rows[bounds[p]:bounds[p + 1]].tofile(out)
            self._written.add(p)

    def spilled(self) -> SpilledKeys:
        """The keys added so far, written out."""
        self._flush()
        return SpilledKeys(self.dtype, self.n_parts,
                           ((self.directory, frozenset(self._written)),))


@dataclass(frozen=True)
class SpilledKeys:
    """Keys spilled by one or more :class:`KeySpill` s of one layout (``spills``: each one's
    directory and the partitions it wrote), read back partition by partition: partition ``p``
    is every spill's partition ``p``, one after the other."""

    dtype: np.dtype
    n_parts: int
    spills: tuple[tuple[Path, frozenset[int]], ...]

    @classmethod
    def joined(cls, parts: Sequence[SpilledKeys]) -> SpilledKeys:
        """``parts`` (e.g. a split's chunks, in order) one after the other."""
        return cls(parts[0].dtype, parts[0].n_parts, tuple(s for p in parts for s in p.spills))

    def part(self, p: int) -> Part:
        """Partition ``p``'s columns (``key`` and the others)."""
        rows = [np.fromfile(_partition(directory, p), dtype=self.dtype)
                for directory, written in self.spills if p in written]
        joined = np.concatenate(rows) if rows else np.zeros(0, dtype=self.dtype)
        return {name: joined[name] for name in self.dtype.names or ()}

    def parts(self) -> Iterator[Part]:
        """Each partition's columns, partition by partition."""
        return map(self.part, range(self.n_parts))

    def group_summary(self) -> dict:
        """:func:`~cuelens.audit.groups.sizes_summary` of the keys (a group: one key's copies),
        one partition in memory at a time."""
        parts = [sizes_summary(np.unique(part["key"], return_counts=True)[1])
                 for part in self.parts()]
        return {"groups": sum(p["groups"] for p in parts),
                "largest": max((p["largest"] for p in parts), default=0),
                "grouped_items": sum(p["grouped_items"] for p in parts)}


def partition_bits(n_keys: int) -> int:
    """Partition bits of splits holding ``n_keys`` items: one partition up to
    :data:`PARTITION_KEYS` keys (a loaded dataset: no more files than needed), at most
    ``2**PART_BITS`` partitions. Every partitioning gives the same findings."""
    return min(PART_BITS, max(0, (max(n_keys, 1) - 1) // PARTITION_KEYS).bit_length())


def _spill(directory: Path, columns: tuple[tuple[str, str], ...], keys: np.ndarray, bits: int,
           **values: np.ndarray) -> SpilledKeys:
    """``keys`` with their column ``values`` spilled under ``directory`` at once."""
    spill = KeySpill(directory, columns, bits)
    spill.add(keys, **values)
    return spill.spilled()


@dataclass(frozen=True)
class ChunkKeys:
    """One chunk's spilled keys (inputs with their answer and input as shown, pair texts with
    their answer, premises) and its part of the near-duplicate sample: the sampled items' keys
    and :func:`~cuelens.audit.hygiene.near_parts`."""

    inputs: SpilledKeys
    pairs: SpilledKeys
    premises: SpilledKeys
    sampled: ItemKeys
    texts: list[list[str]]


def _chunk_keys(shared: tuple[Path, int], index: int, chunk: ChunkedSplit, first: int,
                sampled: np.ndarray) -> ChunkKeys:
    """Chunk ``index`` of a split (``chunk``: the split of that chunk file alone, items
    ``first …``) keyed (a task of :meth:`~cuelens.audit.passes.ChunkPasses.map`): its rows
    spilled under ``directory/<index>`` to ``2**bits`` partitions (``shared``: both), the keys
    and texts of its ``sampled`` positions."""
    directory, bits = shared
    split = chunk.read()
    keys, items = ItemKeys.of(split), np.arange(first, first + len(split))
    has, into = keys.has_pair, directory / f"{index:06d}"
    return ChunkKeys(
        _spill(into / "inputs", INPUTS, keys.inputs, bits, item=items, answer=keys.answers,
               shown=keys.shown),
        _spill(into / "pairs", ANSWERED, keys.pairs[has], bits, item=items[has],
               answer=keys.answers[has]),
        _spill(into / "premises", ITEMS, keys.premises, bits, item=items),
        keys.take(sampled), near_parts(split, sampled))


KINDS = ("inputs", "pairs", "premises")
Spilled = dict[str, SpilledKeys]  # one split's spilled keys of each of KINDS


def _keyed(split: ChunkedSplit, seed: int, directory: Path, bits: int,
           passes: ChunkPasses) -> tuple[Keyed, Spilled]:
    """``split`` keyed one chunk per task on ``passes`` (:func:`_chunk_keys`), its keys spilled
    under ``directory`` to ``2**bits`` partitions; the chunks' near-duplicate samples joined
    here."""
    sample = near_items(len(split), seed)
    calls = ((index, chunk, first, sample[np.searchsorted(sample, first):
                                          np.searchsorted(sample, first + len(chunk))] - first)
             for index, (first, chunk) in enumerate(split.per_file()))
    chunks = list(passes.map(_chunk_keys, (directory, bits), calls))
    texts = [list(chain.from_iterable(chunk.texts[k] for chunk in chunks)) for k in range(2)]
    near = NearSample(sample, ItemKeys.concat([chunk.sampled for chunk in chunks]),
                      NearIndex(texts, seed))
    return (Keyed(len(split), split.task, near),
            {kind: SpilledKeys.joined([getattr(chunk, kind) for chunk in chunks])
             for kind in KINDS})


def _partition_findings(shared: tuple[dict[str, Spilled], str, dict[str, np.ndarray],
                                      list[str], str | None, ItemFlags | None],
                        p: int) -> PartFindings:
    """Key partition ``p`` of every split read back and counted (a task of
    :meth:`~cuelens.audit.passes.ChunkPasses.map`; ``shared``: the splits' spilled keys, the
    other arguments of :func:`~cuelens.audit.hygiene.partition_findings`, the
    :class:`ItemFlags` that receive its flagged items, which are not returned)."""
    spilled, evaluated, samples, flagged, fitting, flags = shared
    found = partition_findings({role: {kind: keys.part(p) for kind, keys in kinds.items()}
                                for role, kinds in spilled.items()},
                               evaluated, samples, flagged, fitting)
    if flags is not None:
        flags.write(p, found.flags)
    return replace(found, flags={})


def _shown(splits: dict[str, ChunkedSplit],
           wanted: dict[str, set[int]]) -> dict[tuple[str, int], dict]:
    """The examples' items as :func:`~cuelens.audit.hygiene.describe` shows them, from one more
    pass over each split's chunks (up to the last wanted item)."""
    out = {}
    for role, items in wanted.items():
        todo = np.array(sorted(items), dtype=np.int64)
        for chunk in splits[role]:
            end = chunk.first + len(chunk.split)
            for i in todo[(todo >= chunk.first) & (todo < end)].tolist():
                out[role, i] = describe(role, chunk.split, i - chunk.first)
            if end > todo[-1]:
                break
    return out


OVERLAP_FLAGS = ("overlap", "shared_premise")  # defined for evaluated items of a train/test scan


@dataclass(frozen=True)
class ItemFlags:
    """Per item of each flagged split, the :data:`~cuelens.audit.hygiene.FLAG_BITS` of the
    exact-copy columns of the per-item bias table
    (:func:`~cuelens.audit.bias_items.hygiene_flags`; ``overlap``/``shared_premise``: evaluated
    items against the fitting split), as each key partition's task found them: a file per
    partition and split under ``directory`` (its flagged items, sorted, then their bits), read
    back per item range (:meth:`of`), so no per-item array is built on the driver."""

    directory: Path

    @classmethod
    def under(cls, work_dir: Path) -> ItemFlags:
        """Flags in a new directory under ``work_dir`` (removed with it)."""
        work_dir.mkdir(parents=True, exist_ok=True)
        return cls(Path(tempfile.mkdtemp(prefix="flags-", dir=work_dir)))

    def write(self, p: int, flags: dict[str, Flags]) -> None:
        """Partition ``p``'s :data:`~cuelens.audit.hygiene.Flags` of each role."""
        for role, rows in flags.items():
            items = np.concatenate([found for found, _ in rows]).astype("<i8")
            if len(items):
                order = np.argsort(items, kind="stable")
                (self.directory / role).mkdir(exist_ok=True)
                with open(self.directory / role / f"{p:04d}.bin", "wb") as out:
                    items[order].tofile(out)
                    np.concatenate([bits for _, bits in rows])[order].astype(np.uint8).tofile(out)

    def of(self, role: str, first: int, size: int) -> np.ndarray:
        """One byte per item ``first … first + size`` of ``role``: every partition's bits."""
        out = np.zeros(size, dtype=np.uint8)
        for path in sorted((self.directory / role).glob("*.bin")):
            n = path.stat().st_size // 9  # an item (8 bytes) and its bits (1)
            lo, hi = np.searchsorted(np.memmap(path, dtype="<i8", mode="r", shape=(n,)),
                                     [first, first + size]).tolist()
            np.bitwise_or.at(out, np.fromfile(path, "<i8", hi - lo, offset=8 * lo) - first,
                             np.fromfile(path, np.uint8, hi - lo, offset=8 * n + lo))
        return out


def flags_of(bits: np.ndarray, against_fitting: bool) -> dict[str, np.ndarray | None]:
    """:data:`FLAG_BITS` bytes as bool columns; ``overlap``/``shared_premise`` None (null)
    unless ``against_fitting`` (evaluated items of a scan with a fitting split)."""
    return {name: (bits & bit) > 0 if against_fitting or name not in OVERLAP_FLAGS else None
            for name, bit in FLAG_BITS.items()}


@dataclass(frozen=True)
class ChunkedRoles:
    """Chunked splits (role → split, in the order of :attr:`~cuelens.data.Dataset.splits`) and
    the two the statistics use: ``evaluated`` ("test" with a train split, else "all") and
    ``fitting`` (None: a cross-validated file)."""

    splits: dict[str, ChunkedSplit]
    evaluated: str
    fitting: str | None = None
    names: dict[str, str] | None = None  # how the warnings name a role (hygiene_section)


def streamed_hygiene(roles: ChunkedRoles, seed: int, work_dir: Path, *,
                     flags: ItemFlags | None = None,
                     passes: ChunkPasses = LocalPasses()) -> HygieneSection:
    """The ``hygiene`` section of results.json for the chunked splits of ``roles`` — what
    :func:`data_hygiene` returns for the loaded splits (docs/methods.md
    §11). The chunks are keyed on ``passes``; the spill files live in a temporary directory
    under ``work_dir`` (which the workers see), removed on return. ``flags``, when given,
    receives (from the partitions' tasks) the :class:`ItemFlags` of the fitting and evaluated
    splits."""
    splits, evaluated, fitting = roles.splits, roles.evaluated, roles.fitting
    work_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work_dir, prefix="hygiene-") as temp:
        bits = partition_bits(sum(map(len, splits.values())))
        both = {role: _keyed(split, seed, Path(temp) / f"split{k}", bits, passes)
                for k, (role, split) in enumerate(splits.items())}
        keyed = {role: k for role, (k, _) in both.items()}
        flagged = [] if flags is None else [r for r in (fitting, evaluated) if r is not None]
        shared = ({role: spilled for role, (_, spilled) in both.items()}, evaluated,
                  {role: k.sample.items for role, k in keyed.items()}, flagged, fitting, flags)
        n_parts = next(iter(both.values()))[1]["inputs"].n_parts
        parts = list(passes.map(_partition_findings, shared, ((p,) for p in range(n_parts))))
    found, overlaps = findings(keyed, evaluated, parts)
    wanted: dict[str, set[int]] = {}
    for refs in example_refs(found, overlaps).values():
        for _, (role, i), (other, j) in refs:
            wanted.setdefault(role, set()).add(i)
            wanted.setdefault(other, set()).add(j)
    return hygiene_section(keyed, found, overlaps, fitting is None, _shown(splits, wanted),
                           roles.names)


def data_hygiene(dataset: Dataset, seed: int = 0) -> HygieneSection:
    """The ``hygiene`` section of a loaded ``dataset`` (docs/methods.md §11):
    :func:`streamed_hygiene` of its splits held in memory, one chunk each, the spill files in a
    temporary directory."""
    fitting = None if dataset.train is None else "train"
    roles = ChunkedRoles({role: ChunkedSplit.held(role, split)
                          for role, split in dataset.splits.items()},
                         "all" if fitting is None else "test", fitting,
                         role_names(dataset.split_roles))
    return streamed_hygiene(roles, seed, Path(tempfile.gettempdir()))
