"""On-disk cache of per-text feature annotations (SPEC §5, issue 3 "Speed").

Layout: ``<root>/<namespace>/shard-<random>.npz`` where the namespace names the spaCy pipeline
(package name and version) and the detector (name, version, components), see
:meth:`cuelens.audit.features.base.DocFeature.namespace`. A shard holds, for ``n`` texts:

* ``keys`` — ``S16`` BLAKE2b-128 digests of the UTF-8 text (the text itself is not stored);
* ``indptr``/``indices`` — the CSR rows of the text's values (:class:`Annotations`);
* ``vocab`` — the value strings (a unicode array).

Only plain numpy arrays are written (``np.savez``) and read (``allow_pickle=False``); a shard
that cannot be read is ignored. Writes are atomic (temp file + rename) and never modify an
existing shard, so concurrent runs are safe, and the whole directory is safe to delete. When a
namespace holds more than :data:`MAX_SHARDS` shards they are merged into one.
A process-wide in-memory layer serves repeated lookups without touching the disk.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import uuid
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from cuelens.audit.features.base import Annotations
from cuelens.io import atomic_write_bytes

MAX_SHARDS = 8
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

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(found mask, row of each found key)``."""
        if len(self.keys) == 0:
            return np.zeros(len(keys), dtype=bool), np.zeros(0, dtype=np.int64)
        pos = np.searchsorted(self.keys, keys).clip(max=len(self.keys) - 1)
        found = self.keys[pos] == keys
        return found, pos[found]


class ParseCache:
    """Annotation cache under ``root`` (``None``: in-memory only)."""

    _memory: dict[str, _Table] = {}

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else None

    def _dir(self, namespace: str) -> Path:
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
        self._merge_memory(namespace, keys, annotations)
        if self.root is None:
            return
        directory = self._dir(namespace)
        _write_shard(directory / f"shard-{uuid.uuid4().hex}.npz", keys, annotations)
        shards = sorted(directory.glob("shard-*.npz"))
        if len(shards) > MAX_SHARDS:
            self._compact(directory, shards)

    def _merge_memory(self, namespace: str, keys: np.ndarray, annotations: Annotations) -> None:
        old = self._memory.get(namespace)
        if old is not None:
            keys = np.concatenate([old.keys, keys])
            annotations = Annotations.stack([old.annotations, annotations])
        self._memory[namespace] = _Table(keys, annotations)

    def _load(self, namespace: str, table: _Table | None) -> _Table:
        parts = [] if table is None else [(table.keys, table.annotations)]
        if self.root is not None:
            parts += [part for path in sorted(self._dir(namespace).glob("shard-*.npz"))
                      if (part := _read_shard(path)) is not None]
        if not parts:
            return _Table(np.zeros(0, dtype="S16"), Annotations.empty(0))
        table = _Table(np.concatenate([k for k, _ in parts]),
                       Annotations.stack([a for _, a in parts]))
        self._memory[namespace] = table
        return table

    def _compact(self, directory: Path, shards: list[Path]) -> None:
        parts = [part for path in shards if (part := _read_shard(path)) is not None]
        if not parts:
            return
        table = _Table(np.concatenate([k for k, _ in parts]),
                       Annotations.stack([a for _, a in parts]))
        _write_shard(directory / f"shard-{uuid.uuid4().hex}.npz", table.keys, table.annotations)
        for path in shards:
            path.unlink(missing_ok=True)

    @classmethod
    def clear_memory(cls) -> None:
        cls._memory.clear()


def _write_shard(path: Path, keys: np.ndarray, annotations: Annotations) -> None:
    matrix = annotations.matrix.tocsr()
    buffer = io.BytesIO()
    np.savez(buffer, keys=keys.astype("S16"), indptr=matrix.indptr.astype(np.int64),
             indices=matrix.indices.astype(np.int32),
             vocab=np.array(annotations.vocab, dtype=str))
    atomic_write_bytes(path, buffer.getvalue())


def _read_shard(path: Path) -> tuple[np.ndarray, Annotations] | None:
    """``(keys, annotations)`` of a shard, or ``None`` when it is missing or malformed."""
    try:
        with np.load(path, allow_pickle=False) as data:
            keys, indptr, indices = data["keys"], data["indptr"], data["indices"]
            vocab = [str(v) for v in data["vocab"]]
        matrix = sp.csr_matrix((np.ones(len(indices), dtype=bool), indices, indptr),
                               shape=(len(keys), len(vocab)))
    except (OSError, ValueError, KeyError, IndexError):
        return None
    return keys, Annotations(matrix, vocab)
