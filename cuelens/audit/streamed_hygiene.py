"""Data hygiene of chunked splits in bounded memory (docs/methods.md §11; docs/large-datasets.md).

:func:`streamed_hygiene` returns exactly what :func:`cuelens.audit.hygiene.data_hygiene` returns
for the same splits, but reads each split's chunks (:class:`~cuelens.engine.chunks.ChunkedSplit`)
one at a time. The per-item 64-bit keys (input, pair text, premise) are not kept in memory: a
pass over the chunks spills them, with their item index and answer, to files partitioned by the
top bits of the key's hash (:class:`KeySpill`); all items holding one key land in the same
partition, in item order, so duplicates, label conflicts, contrastive / mirrored pairs, exact
overlap and shared premises are counted one partition at a time by the in-memory code
(:func:`cuelens.audit.hygiene.findings`), and its "first pair" examples and first matches come
out the same. Only the near-duplicate sample (:func:`~cuelens.audit.hygiene.near_items`, at most
:data:`~cuelens.audit.hygiene.NEAR_MAX_ITEMS` items per split) is held with its texts, and one
byte per evaluation item marks the exactly matched ones. Example texts are fetched in a last
pass for the few items shown.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from cuelens.audit.hygiene import ItemKeys, Keyed, NearIndex, NearSample, Part, copy_flags, \
    describe, example_refs, findings, first_match, hygiene_section, near_items, near_parts
from cuelens.audit.groups import sizes_summary
from cuelens.audit.text_keys import mix64, text_keys
from cuelens.engine.chunks import ChunkedSplit

PART_BITS = 6  # 64 partitions: of 50M keys, ~0.8M (19 MB with item and answer) in memory at once
BUFFERED = 1 << 18  # keys gathered before they are written out to their partitions
ANSWERED = (("item", "<i8"), ("answer", "<u8"))
INPUTS = (*ANSWERED, ("shown", "<u8"))


class KeySpill:
    """uint64 keys, each with optional columns (``(name, dtype)``), spilled to ``2**bits``
    partition files under ``directory`` by the top bits of ``mix64(key)``; every copy of a key
    is in the same partition, the rows of a partition in the order they were added. The caller
    owns ``directory`` (a partition file already there is overwritten)."""

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

    def _path(self, part: int) -> Path:
        return self.directory / f"{part:04d}.bin"

    def _flush(self) -> None:
        if not self._pending:
            return
        rows = np.concatenate(self._pending)
        self._pending = []
        part = mix64(rows["key"]) >> self.shift
        order = np.argsort(part, kind="stable")
        rows, bounds = rows[order], np.searchsorted(part[order], np.arange(self.n_parts + 1))
        for p in np.flatnonzero(np.diff(bounds)).tolist():
            with open(self._path(p), "ab" if p in self._written else "wb") as handle:
                rows[bounds[p]:bounds[p + 1]].tofile(handle)
            self._written.add(p)

    def parts(self) -> Iterator[Part]:
        """Each partition's columns (``key`` and the others), partition by partition."""
        self._flush()
        for p in range(self.n_parts):
            rows = np.fromfile(self._path(p), dtype=self.dtype) if p in self._written else \
                np.zeros(0, dtype=self.dtype)
            yield {name: rows[name] for name in ["key", *self.columns]}

    def group_summary(self) -> dict:
        """:func:`~cuelens.audit.groups.sizes_summary` of the keys (a group: one key's copies),
        one partition in memory at a time."""
        parts = [sizes_summary(np.unique(part["key"], return_counts=True)[1])
                 for part in self.parts()]
        return {"groups": sum(p["groups"] for p in parts),
                "largest": max((p["largest"] for p in parts), default=0),
                "grouped_items": sum(p["grouped_items"] for p in parts)}


def _spilled(split: ChunkedSplit, seed: int, directory: Path) -> Keyed:
    """One pass over ``split``'s chunks: its keys spilled under ``directory`` and its
    near-duplicate sample."""
    inputs, pairs = KeySpill(directory / "inputs", INPUTS), KeySpill(directory / "pairs", ANSWERED)
    premise_keys = KeySpill(directory / "premises", (("item", "<i8"),))
    sample = near_items(len(split), seed)
    sampled = []
    parts: list[list[str]] = [[], []]
    for chunk in split:
        keys = ItemKeys.of(chunk.split, text_keys(chunk.split))
        items = np.arange(chunk.first, chunk.first + len(chunk.split))
        inputs.add(keys.inputs, item=items, answer=keys.answers, shown=keys.shown)
        has = keys.has_pair
        pairs.add(keys.pairs[has], item=items[has], answer=keys.answers[has])
        premise_keys.add(keys.premises, item=items)
        local = sample[np.searchsorted(sample, chunk.first):
                       np.searchsorted(sample, chunk.first + len(items))] - chunk.first
        sampled.append(keys.take(local))
        for texts, more in zip(parts, near_parts(chunk.split, local)):
            texts += more
    near = NearSample(sample, ItemKeys.concat(sampled), NearIndex(parts, seed))
    return Keyed(len(split), split.task, near, inputs.parts, pairs.parts, premise_keys.parts)


def _shown(splits: dict[str, ChunkedSplit], wanted: dict[str, set[int]]) -> dict[tuple[str, int], dict]:
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


FLAG_BITS = {"duplicate": 1, "label_conflict": 2, "overlap": 4, "shared_premise": 8}
OVERLAP_FLAGS = ("overlap", "shared_premise")  # defined for evaluated items of a train/test scan


def item_flags(keyed: dict[str, Keyed], evaluated: str, fitting: str | None
               ) -> dict[str, np.ndarray]:
    """Per item of the ``fitting`` and ``evaluated`` splits, one byte of :data:`FLAG_BITS`: the
    exact-copy columns of the per-item bias table
    (:func:`~cuelens.audit.bias_items.hygiene_flags`; ``overlap``/``shared_premise``: evaluated
    items against the fitting split), found one key partition at a time (every copy of a key
    is in one partition, in each split's spill)."""
    out = {}
    for role in [r for r in (fitting, evaluated) if r is not None]:
        bits = np.zeros(keyed[role].items, dtype=np.uint8)
        for part in keyed[role].inputs():
            duplicate, conflict = copy_flags(part["key"], part["answer"])
            bits[part["item"]] |= (duplicate * FLAG_BITS["duplicate"]
                                   | conflict * FLAG_BITS["label_conflict"]).astype(np.uint8)
        out[role] = bits
    if fitting is not None:
        bits, fit = out[evaluated], keyed[fitting]
        for name, parts, fit_parts in (("overlap", keyed[evaluated].inputs, fit.inputs),
                                       ("shared_premise", keyed[evaluated].premises,
                                        fit.premises)):
            for part, fit_part in zip(parts(), fit_parts()):
                found = first_match(part["key"], fit_part["key"]) >= 0
                bits[part["item"][found]] |= np.uint8(FLAG_BITS[name])
    return out


def flags_of(bits: np.ndarray, against_fitting: bool) -> dict[str, np.ndarray | None]:
    """:data:`FLAG_BITS` bytes as bool columns; ``overlap``/``shared_premise`` None (null)
    unless ``against_fitting`` (evaluated items of a scan with a fitting split)."""
    return {name: (bits & bit) > 0 if against_fitting or name not in OVERLAP_FLAGS else None
            for name, bit in FLAG_BITS.items()}



def streamed_hygiene(splits: dict[str, ChunkedSplit], evaluated: str, cross_validated: bool,
                     seed: int, work_dir: Path, flags: dict[str, np.ndarray] | None = None,
                     fitting: str | None = None) -> dict:
    """The ``hygiene`` section of results.json for chunked ``splits`` (role → split, in the
    order of :attr:`~cuelens.data.Dataset.splits`; ``evaluated``: "test" with a train split,
    else "all") — what :func:`~cuelens.audit.hygiene.data_hygiene` returns for the loaded
    splits (docs/methods.md §11). Spill files live in a temporary directory under
    ``work_dir``, removed on return. ``flags``, when given, receives the :func:`item_flags` of
    the ``fitting`` (None: a cross-validated file) and ``evaluated`` splits."""
    work_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work_dir, prefix="hygiene-") as temp:
        keyed = {role: _spilled(split, seed, Path(temp) / f"split{k}")
                 for k, (role, split) in enumerate(splits.items())}
        found, overlaps = findings(keyed, evaluated)
        if flags is not None:
            flags.update(item_flags(keyed, evaluated, fitting))
    wanted: dict[str, set[int]] = {}
    for refs in example_refs(found, overlaps).values():
        for _, (role, i), (other, j) in refs:
            wanted.setdefault(role, set()).add(i)
            wanted.setdefault(other, set()).add(j)
    shown = _shown(splits, wanted)
    return hygiene_section(keyed, found, overlaps, cross_validated,
                           lambda role, i: dict(shown[role, i]))
