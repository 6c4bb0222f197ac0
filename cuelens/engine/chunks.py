"""Splits kept on disk in chunks, for statistics that stream (docs/large-datasets.md, "Statistics
that stream"): :func:`read_chunked` reads a source with the local engine's readers into
:class:`~cuelens.data.compact.CompactSplit` chunks of at most ``chunk_items`` items, each saved
with its texts' fingerprints (:func:`~cuelens.audit.text_keys.text_keys`) as a directory of
``.npy`` files (:func:`save_mapped`); iterating a :class:`ChunkedSplit` loads them back one at a
time, memory-mapped. Data whose chunks fit :data:`MEMORY_BUDGET` keep them in memory instead
(:func:`held_in_memory`: nothing spilled, as DuckDB and polars spill only past a memory limit).
:class:`ChunkDirectory` is the ``flock``-owned work directory whose dead owners' leftovers the
next run removes (docs/robustness.md, "Streaming work directory and full disks").
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time
import weakref
from array import array
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from itertools import accumulate
from pathlib import Path

import numpy as np

from cuelens.audit.text_keys import TextKeys, keep_text_keys, text_keys
from cuelens.data.compact import CompactSplit, ShardFiller
from cuelens.data.dataset import Split
from cuelens.data.labels import LabelFindings
from cuelens.data.readers import iter_records
from cuelens.data.schema import FieldMap
from cuelens.data.splits import NO_ITEMS
from cuelens.engine.sources import Record, shard_paths
from cuelens.engine.streaming import add_skipped, shard_records
from cuelens.errors import UserError

CHUNK_ITEMS = 125_000  # items a chunk (1M streamed items: peak RSS 684 MB, 731 MB at 250,000)
CHUNK_PREFIX = "cuelens-chunks-"
OWNER_FILE = "owner.lock"
#: A chunk directory whose owner file is missing or empty this long is a crashed start.
STALE_START_SECONDS = 3600
#: Chunks of a streamed scan whose estimated size (:func:`chunk_space`) is at most this many
#: bytes stay in memory, unspilled (:func:`held_in_memory`; docs/large-datasets.md, "Statistics
#: that stream"): a 100,000-item file (20 MB) is held, a 1,000,000-item one spilled
MEMORY_BUDGET = 64 * 2**20


def _lock(path: Path, blocking: bool) -> int | None:
    """An open descriptor of ``path`` holding its exclusive lock; None when another process
    holds it (non-blocking) or the file is gone."""
    try:
        fd = os.open(path, os.O_RDWR | (os.O_CREAT if blocking else 0), 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except OSError:
        os.close(fd)
        return None
    return fd


def remove_stale_chunk_directories(parent: Path) -> list[Path]:
    """Remove the chunk directories under ``parent`` whose owner is gone; return them."""
    removed = []
    for directory in sorted(parent.glob(CHUNK_PREFIX + "*")):
        if not directory.is_dir() or directory.is_symlink():
            continue
        fd = _lock(directory / OWNER_FILE, blocking=False)
        try:
            if fd is None:  # alive (locked), or no owner file: only a crashed start is stale
                if (directory / OWNER_FILE).exists() or not _old(directory):
                    continue
            elif not os.pread(fd, 32, 0).strip() and not _old(directory):
                continue  # an owner between creating the file and locking it
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(directory)
        finally:
            if fd is not None:
                os.close(fd)
    return removed


def _old(directory: Path) -> bool:
    try:
        return time.time() - directory.stat().st_mtime > STALE_START_SECONDS
    except OSError:
        return False


def work_parent(work_dir: str | os.PathLike | None) -> Path:
    """``--work-dir`` created when missing, or one :class:`UserError` (a file, unwritable)."""
    parent = Path(work_dir) if work_dir is not None else Path(tempfile.gettempdir())
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UserError("the work directory is a file; give a directory (--work-dir)",
                        path=str(parent)) from None
    except OSError as exc:
        raise UserError(f"cannot create the work directory (--work-dir): "
                        f"{exc.strerror or exc}", path=str(parent)) from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UserError("cannot write to the work directory (--work-dir)", path=str(parent))
    return parent


def chunk_space(sources: list[str]) -> int | None:
    """About the space the chunk files of ``sources`` take (docs/large-datasets.md: twice the
    text; a gzipped shard counted at four times its size); None when unknown."""
    total = 0
    for source in sources:
        try:
            for path in shard_paths(source):
                size = path.stat().st_size
                total += 2 * size * (4 if path.suffix.lower() == ".gz" else 1)
        except (UserError, OSError):
            return None
    return total or None


def held_in_memory(space: int | None) -> bool:
    """Whether chunks of ``space`` bytes (:func:`chunk_space`; None: unknown) stay in memory:
    at most :data:`MEMORY_BUDGET`."""
    return space is not None and space <= MEMORY_BUDGET


class ChunkDirectory:
    """A chunk work directory owned by this process (module docstring); ``name`` is its path.
    Removed by :meth:`cleanup`, at the end of a ``with`` block, or when garbage-collected."""

    def __init__(self, work_dir: str | os.PathLike | None = None) -> None:
        parent = work_parent(work_dir)
        remove_stale_chunk_directories(parent)
        try:
            self.name = tempfile.mkdtemp(prefix=CHUNK_PREFIX, dir=parent)
        except OSError as exc:
            raise UserError(f"cannot create a chunk directory: {exc.strerror or exc}",
                            path=str(parent)) from None
        fd = _lock(Path(self.name) / OWNER_FILE, blocking=True)
        if fd is None:
            shutil.rmtree(self.name, ignore_errors=True)
            raise UserError("cannot lock a chunk directory (--work-dir)", path=self.name)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._finalizer = weakref.finalize(self, _remove, self.name, fd)

    def cleanup(self) -> None:
        self._finalizer()

    def __enter__(self) -> str:
        return self.name

    def __exit__(self, *exc) -> None:
        self.cleanup()


def _remove(name: str, fd: int) -> None:
    shutil.rmtree(name, ignore_errors=True)
    os.close(fd)


@dataclass
class Chunk:
    """Items ``first … first + len(split) − 1`` of a split."""

    first: int
    split: Split  # a chunk file's CompactSplit, or a split held in memory


@dataclass
class ChunkedSplit:
    """A split stored as chunk files (or, held in memory, as the loaded splits themselves);
    ``len`` and the label, choice and skip counts are kept."""

    name: str
    path: str  # the source as given
    task: str
    shards: list[Path]
    files: list[Path | Split] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    label_counts: Counter = field(default_factory=Counter)  # label value → items
    choice_counts: Counter = field(default_factory=Counter)  # MCQ: choices → items
    skipped: dict[str, int] = field(default_factory=dict)
    findings: LabelFindings = field(default_factory=LabelFindings)

    @classmethod
    def held(cls, name: str, split: Split) -> ChunkedSplit:
        """A loaded ``split`` held in memory as one chunk (the exact scan's view)."""
        return cls(name, split.path, split.task, [], [split], [len(split)],
                   Counter(split.labels), Counter(split.choice_counts), dict(split.skipped),
                   split.findings)

    def __len__(self) -> int:
        return sum(self.sizes)

    def __iter__(self) -> Iterator[Chunk]:
        for first, path in zip(accumulate(self.sizes, initial=0), self.files):
            yield Chunk(first, _load(path, self) if isinstance(path, Path) else path)

    def per_file(self) -> list[tuple[int, "ChunkedSplit"]]:
        """Each chunk's first item, and the chunk as a split of its own file alone (e.g. one
        worker task's data)."""
        return [(first, replace(self, files=[path], sizes=[size]))
                for first, path, size in zip(accumulate(self.sizes, initial=0), self.files,
                                             self.sizes)]

    def read(self) -> Split:
        """The items of a split of one file (:meth:`per_file`)."""
        return next(iter(self)).split

    def add_file(self, path: Path | Split, size: int, counts: tuple[dict, dict]) -> None:
        """Count in a saved (or held) chunk: its ``size`` items, label and choice ``counts``."""
        self.files.append(path)
        self.sizes.append(size)
        self.label_counts.update(counts[0])
        self.choice_counts.update(counts[1])

    def _save(self, split: CompactSplit, directory: Path | None) -> None:
        """Count in a read chunk, saved under ``directory`` (None: held in memory)."""
        if directory is None:
            self.add_file(split, len(split), chunk_counts(split))
        else:
            path = chunk_path(directory, self.name, len(self.files))
            self.add_file(path, len(split), save_chunk(split, path))
        add_skipped(self.skipped, split.skipped)
        self.findings.merge(split.findings)


def save_mapped(path: Path, arrays: Mapping[str, np.ndarray]) -> Path:
    """``arrays`` in directory ``path`` (replacing one there), one ``.npy`` file each (no
    pickle), for :func:`load_mapped`. The data go through Python's file object, whose failed
    write says why (a full disk is ``ENOSPC``: docs/robustness.md), where numpy's ``tofile``
    does not."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir()
    for name, values in arrays.items():
        values = np.ascontiguousarray(values)
        with open(path / f"{name}.npy", "wb") as handle:
            np.lib.format.write_array_header_1_0(
                handle, np.lib.format.header_data_from_array_1_0(values))
            handle.write(values.reshape(-1).view(np.uint8).data)
    return path


def load_mapped(path: Path) -> dict[str, np.ndarray]:
    """The arrays :func:`save_mapped` wrote to ``path``: read-only views of the memory-mapped
    files, so a pass over spilled chunks copies nothing out of them (an ``.npz`` member is
    read into a new buffer each time: ten times the CPU time)."""
    return {file.stem: np.asarray(np.load(file, mmap_mode="r", allow_pickle=False))
            for file in path.glob("*.npy")}


def chunk_path(directory: Path, name: str, index: int) -> Path:
    """The directory of chunk ``index`` of split ``name`` (:func:`save_chunk`)."""
    return directory / f"{name}-{index:06d}"


def save_chunk(split: CompactSplit, path: Path) -> tuple[dict, dict]:
    """Save ``split`` as the chunk ``path`` (:func:`save_mapped`) with its text keys (their
    normal forms kept for encoding its words next); its label counts (value → items) and MCQ
    choice counts (choices → items)."""
    save_mapped(path, {**split.to_arrays(), **text_keys(split, keep_forms=True).to_arrays(),
                       "shard_of": np.asarray(split.shard_of, dtype=np.int32)})
    return chunk_counts(split)


def chunk_counts(split: CompactSplit) -> tuple[dict, dict]:
    """A chunk's label counts (value → items) and MCQ choice counts (choices → items)."""
    codes, counts = np.unique(np.asarray(split.label_column.codes, dtype=np.int16),
                              return_counts=True)
    return ({split.label_column.values[code]: count
             for code, count in zip(codes.tolist(), counts.tolist())},
            Counter(split.choice_counts))


def _load(path: Path, owner: ChunkedSplit) -> CompactSplit:
    arrays = load_mapped(path)
    split = CompactSplit.from_arrays(arrays, owner.name, owner.path, owner.shards,
                                     iter_records)
    shard_of = array("i", arrays["shard_of"].tobytes())
    keep_text_keys(split, TextKeys.from_arrays(arrays))
    split.shard_of[:] = shard_of  # in place: split.raw re-reads records through it
    return split


def until_full(records: Iterator[Record], split: CompactSplit, limit: int,
                state: dict) -> Iterator[Record]:
    """``records`` until ``split`` holds ``limit`` items; ``state["done"]`` once exhausted."""
    for record in records:
        yield record
        if len(split) >= limit:
            return
    state["done"] = True


def read_chunked(source: str, role: str, fields: FieldMap, task: str | None, skip_bad: bool,
                 directory: Path | None, chunk_items: int = CHUNK_ITEMS,
                 into: list[ChunkedSplit] | None = None) -> Iterator[Chunk]:
    """Read ``source`` into chunk files under ``directory`` (None: chunks held in memory),
    yielding each chunk once saved.

    The :class:`ChunkedSplit` is appended to ``into`` once its task is known (at the first
    parsable record); a source without any item raises the in-memory loader's error.
    """
    shards = shard_paths(source)
    chunked: ChunkedSplit | None = None
    current: CompactSplit | None = None
    first = 0
    lost: dict[str, int] = {}
    for index, path, records, found in shard_records(shards, fields, task, skip_bad, lost,
                                                     pieces=True):
        if chunked is None:
            chunked = ChunkedSplit(role, source, found, shards)
            if into is not None:
                into.append(chunked)
        filler = ShardFiller(records, path, fields, skip_bad)
        while not filler.done:
            if current is None:
                current = CompactSplit(role, source, chunked.task, shards, iter_records)
            current.shard = index
            filler.fill(current, chunk_items)
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
