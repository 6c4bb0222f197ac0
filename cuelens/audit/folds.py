"""Fold strategies of the word-cue passes (docs/methods.md §3, docs/large-datasets.md): where an
item goes in each run — its inner (cross-fitting) fold, its outer fold under a run's seed and its
sampling priority. :class:`HashedFolds` follow a seeded hash of each item's fold key (flat memory);
:class:`FittingFolds` cross-validate the fitting split; the exact scan's grouped, stratified folds
are :class:`~cuelens.audit.in_memory.GroupedFolds`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from cuelens.audit.text_keys import mix64


class Folds(Protocol):
    """Where an item goes in each run: its inner (cross-fitting) fold (one of
    ``inner_folds``), its outer fold under a run's fold seed (evaluation items) and its
    sampling priority (lowest first) under a sample seed."""

    @property
    def inner_folds(self) -> int: ...

    def inner(self, items: np.ndarray, keys: np.ndarray) -> np.ndarray: ...

    def outer(self, items: np.ndarray, keys: np.ndarray, seed: int) -> np.ndarray: ...

    def priority(self, items: np.ndarray, seed: int) -> np.ndarray: ...


_INNER = np.uint64(0x5DEECE66D)  # the inner folds' hash stream, apart from every run seed


def seeded_hash(values: np.ndarray, seed: int | np.uint64) -> np.ndarray:
    """A seeded 64-bit hash of each value (integers or fingerprints)."""
    return mix64(values.astype(np.uint64) ^ mix64(np.asarray([seed], dtype=np.uint64))[0])


@dataclass(frozen=True)
class HashedFolds:
    """:class:`Folds` from seeded hashes: an item's folds follow its fold key, its priority its
    index (docs/large-datasets.md)."""

    inner_folds: int
    outer_folds: int
    seed: int

    def inner(self, items: np.ndarray, keys: np.ndarray) -> np.ndarray:
        mixed = seeded_hash(keys, np.uint64(self.seed) ^ _INNER)
        return (mixed % np.uint64(self.inner_folds)).astype(np.int64)

    def outer(self, items: np.ndarray, keys: np.ndarray, seed: int) -> np.ndarray:
        return (seeded_hash(keys, seed) % np.uint64(self.outer_folds)).astype(np.int64)

    def priority(self, items: np.ndarray, seed: int) -> np.ndarray:
        return seeded_hash(items, seed)



@dataclass(frozen=True)
class FittingFolds:
    """:class:`Folds` that cross-validate the fitting split (:meth:`TokenStore.fitting_store`):
    ``outer`` follows a seeded hash of the fold key over ``outer_folds`` folds (with hashed
    folds: the evaluated items' rule, at least 2 folds); inner folds and priorities as in
    ``folds``."""

    folds: Folds
    outer_folds: int

    @property
    def inner_folds(self) -> int:
        return self.folds.inner_folds

    def inner(self, items: np.ndarray, keys: np.ndarray) -> np.ndarray:
        return self.folds.inner(items, keys)

    def outer(self, items: np.ndarray, keys: np.ndarray, seed: int) -> np.ndarray:
        return (seeded_hash(keys, seed) % np.uint64(self.outer_folds)).astype(np.int64)

    def priority(self, items: np.ndarray, seed: int) -> np.ndarray:
        return self.folds.priority(items, seed)


