"""On-disk cache of per-text feature annotations (docs/methods.md §5, issue 3 "Speed";
docs/cache.md).

Where it lives, its layout, size bound and damage handling: docs/cache.md. The namespace names
the spaCy pipeline and the detector (:meth:`cuelens.audit.features.base.DocFeature.namespace`).
A shard (``np.savez``, read with ``allow_pickle=False``) holds ``keys`` (``S16`` BLAKE2b-128
digests of the UTF-8 texts), ``indptr``/``indices`` (the CSR rows of their values,
:class:`Annotations`) and ``vocab_bytes``/``vocab_offsets`` (the value strings, UTF-8
concatenated, with their offsets). A process-wide in-memory layer serves repeated lookups
without touching the disk.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import uuid
import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from cuelens.audit.counts import row_starts
from cuelens.audit.features.base import Annotations
from cuelens.atomic import atomic_write_bytes
from cuelens.errors import UserError

MAX_SHARDS = 8
DEFAULT_MAX_BYTES = 2 * 1024**3
_UNSAFE = re.compile(r"[^A-Za-z0-9._+=-]+")


def default_cache_dir() -> Path:
    """``$CUELENS_CACHE_DIR``, else ``$XDG_CACHE_HOME/cuelens/parse`` (``~/.cache/cuelens/parse``).

    A per-user cache rather than the output directory: scans of the same data into different
    output directories share parses, and output directories hold only results.
    """
    if os.environ.get("CUELENS_CACHE_DIR"):
        return Path(os.environ["CUELENS_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "cuelens" / "parse"


def default_max_bytes() -> int:
    """``$CUELENS_CACHE_MAX_BYTES`` (bytes), else :data:`DEFAULT_MAX_BYTES` (2 GiB); a value
    that is not a whole number of bytes at least 0 is a :class:`UserError`."""
    value = os.environ.get("CUELENS_CACHE_MAX_BYTES", "").strip()
    if not value:
        return DEFAULT_MAX_BYTES
    try:
        limit = int(value)
    except ValueError:
        limit = -1
    if limit < 0:
        raise UserError(f"$CUELENS_CACHE_MAX_BYTES must be a whole number of bytes, at least 0 "
                        f"(e.g. 1073741824 for 1 GiB), not {value!r}")
    return limit


def text_keys(texts: list[str]) -> np.ndarray:
    """BLAKE2b-128 digest of each text, as an ``S16`` array."""
    digest = hashlib.blake2b
    return np.array([digest(t.encode("utf-8"), digest_size=16).digest() for t in texts],
                    dtype="S16")


class _Table:
    """Sorted keys with their annotations, for vectorised lookup."""

    def __init__(self, keys: np.ndarray, annotations: Annotations):
        keys, first = np.unique(keys, return_index=True)  # sorted, first occurrence wins
        self.keys = keys
        self.annotations = annotations.take(first)

    @classmethod
    def of(cls, parts: list[tuple[np.ndarray, Annotations]]) -> _Table:
        """One table of several ``(keys, annotations)`` parts (the first key occurrence wins)."""
        return cls(np.concatenate([keys for keys, _ in parts]),
                   Annotations.stack([annotations for _, annotations in parts]))

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(found mask, row of each found key)``."""
        if len(self.keys) == 0:
            return np.zeros(len(keys), dtype=bool), np.zeros(0, dtype=np.int64)
        pos = np.searchsorted(self.keys, keys).clip(max=len(self.keys) - 1)
        found = self.keys[pos] == keys
        return found, pos[found]


class ParseCache:
    """Annotation cache under ``root`` (``None``: in-memory only), at most ``max_bytes`` on disk
    (default :func:`default_max_bytes`)."""

    _memory: dict[str, _Table] = {}

    def __init__(self, root: str | Path | None = None, max_bytes: int | None = None):
        self.root = Path(root) if root is not None else None
        self.max_bytes = default_max_bytes() if max_bytes is None else max_bytes

    def _dir(self, namespace: str) -> Path:
        assert self.root is not None, "in-memory caches have no directory"
        return self.root.joinpath(*(_UNSAFE.sub("_", part) for part in namespace.split("/")))

    def lookup(self, namespace: str, keys: np.ndarray) -> tuple[np.ndarray, Annotations]:
        """Which ``keys`` are cached, and their annotations (found rows, in query order)."""
        table = self._memory.get(namespace)
        if table is None or not np.all(table.lookup(keys)[0]):
            table = self._load(namespace, table)
        found, rows = table.lookup(keys)
        return found, table.annotations.take(rows)

    def store(self, namespace: str, keys: np.ndarray, annotations: Annotations) -> None:
        """Add annotations of ``keys`` (memory, and a new shard on disk)."""
        if len(keys) == 0:
            return
        old = self._memory.get(namespace)
        parts = [] if old is None else [(old.keys, old.annotations)]
        self._memory[namespace] = _Table.of(parts + [(keys, annotations)])
        if self.root is None:
            return
        directory = self._dir(namespace)
        _write_shard(directory / f"shard-{uuid.uuid4().hex}.npz", keys, annotations)
        shards = sorted(directory.glob("shard-*.npz"))
        if len(shards) > MAX_SHARDS:
            self._compact(directory, shards)
        evict(self.root, self.max_bytes)

    def _load(self, namespace: str, table: _Table | None) -> _Table:
        parts = [] if table is None else [(table.keys, table.annotations)]
        if self.root is not None:
            parts += [part for path in sorted(self._dir(namespace).glob("shard-*.npz"))
                      if (part := _read_shard(path)) is not None]
        if not parts:
            return _Table(np.zeros(0, dtype="S16"), Annotations.empty(0))
        table = self._memory[namespace] = _Table.of(parts)
        return table

    def _compact(self, directory: Path, shards: list[Path]) -> None:
        parts = [part for path in shards if (part := _read_shard(path)) is not None]
        if not parts:
            return
        table = _Table.of(parts)
        _write_shard(directory / f"shard-{uuid.uuid4().hex}.npz", table.keys, table.annotations)
        for path in shards:
            path.unlink(missing_ok=True)

    @classmethod
    def clear_memory(cls) -> None:
        cls._memory.clear()


def _write_shard(path: Path, keys: np.ndarray, annotations: Annotations) -> None:
    matrix = annotations.matrix.tocsr()
    encoded = [v.encode("utf-8") for v in annotations.vocab]
    offsets = row_starts([len(b) for b in encoded])
    buffer = io.BytesIO()
    np.savez(buffer, keys=keys.astype("S16"), indptr=matrix.indptr.astype(np.int64),
             indices=matrix.indices.astype(np.int32),
             vocab_bytes=np.frombuffer(b"".join(encoded), dtype=np.uint8),
             vocab_offsets=offsets)
    atomic_write_bytes(path, buffer.getvalue())


def _read_shard(path: Path) -> tuple[np.ndarray, Annotations] | None:
    """``(keys, annotations)`` of a shard, or ``None`` (and the file removed) when it is
    missing, truncated or malformed. A successful read marks the shard as recently used."""
    try:
        with np.load(path, allow_pickle=False) as data:
            keys, indptr, indices = data["keys"], data["indptr"], data["indices"]
            blob, offsets = data["vocab_bytes"].tobytes(), data["vocab_offsets"]
        vocab = [blob[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:])]
        matrix = sp.csr_matrix((np.ones(len(indices), dtype=bool), indices, indptr),
                               shape=(len(keys), len(vocab)))
        os.utime(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, IndexError, EOFError, UnicodeDecodeError,
            zipfile.BadZipFile):
        path.unlink(missing_ok=True)
        return None
    return keys, Annotations(matrix, vocab)


def _shards(root: Path) -> list[Path]:
    return sorted(root.rglob("shard-*.npz")) if root.is_dir() else []


def evict(root: Path, max_bytes: int) -> int:
    """Delete least recently used shards under ``root`` until they total at most ``max_bytes``;
    returns the bytes freed."""
    entries = []
    for path in _shards(root):
        try:
            info = path.stat()
        except OSError:
            continue
        entries.append((info.st_mtime, str(path), info.st_size))
    total, freed = sum(size for *_, size in entries), 0
    for _, name, size in sorted(entries):
        if total - freed <= max_bytes:
            break
        Path(name).unlink(missing_ok=True)
        freed += size
    return freed


def cache_info(root: Path) -> dict:
    """``{"path", "bytes", "shards", "namespaces", "max_bytes"}`` of the cache under ``root``."""
    shards = _shards(root)
    sizes = [p.stat().st_size for p in shards if p.exists()]
    return {"path": str(root), "bytes": int(sum(sizes)), "shards": len(sizes),
            "namespaces": len({p.parent for p in shards}), "max_bytes": default_max_bytes()}


def clear_cache(root: Path) -> int:
    """Delete every namespace directory of the cache under ``root`` (only directories that hold
    nothing but shards and temporaries: a wrong ``--cache-dir`` loses nothing else); returns
    the bytes freed."""
    freed = 0
    for shard in _shards(root):
        try:
            size = shard.stat().st_size
            shard.unlink()
        except FileNotFoundError:
            continue  # removed meanwhile (a concurrent scan's compaction or eviction)
        except OSError as exc:  # a read-only cache
            raise UserError(f"cannot delete this shard: {exc.strerror or exc}",
                            path=str(shard)) from None
        freed += size
    for directory in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True) \
            if root.is_dir() else []:
        if all(f.name.endswith(".tmp") for f in directory.iterdir()):
            shutil.rmtree(directory, ignore_errors=True)
    ParseCache.clear_memory()
    return freed
