"""A dataset's items as parts with planes: the one input of the statistics that the in-memory
and the streamed scan share (the ICQ features, the MCQ baselines, the lengths; docs/methods.md
§3: fitted on train, or cross-fitted over the leakage table's folds).

A part is a split, or a chunk of one, of whole items, with each item's *plane*: its outer fold
when the statistic is cross-fitted (the fitting items are the evaluated ones), else 0 (fitting)
or 1 (evaluated). A statistic fitted for plane ``j`` learns from the fitting items outside plane
``j`` and scores the evaluated items in it, so one loop over the parts serves a split held in
memory (:meth:`ItemParts.of_dataset`) and the chunks of one read from disk, one at a time (as
Hugging Face datasets' one generator behind two adapters).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache

import numpy as np

from cuelens.audit.groups import split_folds
from cuelens.data.dataset import Dataset, Split

Part = tuple[Split, np.ndarray]  # a split or a chunk of one, and the plane of each item


@dataclass(frozen=True)
class ItemParts:
    """The parts of a dataset: ``fitting()`` those a fitted statistic learns from (read afresh on
    each call), ``evaluated()`` those it scores; ``cross_fitted``: both are the evaluated split,
    planes its ``folds`` outer folds."""

    fitting: Callable[[], Iterable[Part]]
    evaluated: Callable[[], Iterable[Part]]
    cross_fitted: bool
    folds: int

    @property
    def planes(self) -> int:
        """The number of planes: the folds when cross-fitted, else fitting and evaluated."""
        return self.folds if self.cross_fitted else 2

    def all(self) -> Iterator[Part]:
        """Every item once: the fitting parts, then the evaluated ones (cross-fitted: once)."""
        if not self.cross_fitted:
            yield from self.fitting()
        yield from self.evaluated()

    @classmethod
    def of_dataset(cls, dataset: Dataset, folds: int, seed: int,
                   fold: np.ndarray | None = None) -> "ItemParts":
        """A dataset held in memory: its fitting split (plane 0) and evaluated split (plane 1),
        or without a fitting split the evaluated items in their ``fold`` (default: ``folds``
        seeded, grouped item-level folds, :func:`~cuelens.audit.groups.split_folds`)."""
        test = dataset.test
        if dataset.train is not None:
            train = dataset.train
            return cls(lambda: [(train, np.zeros(len(train), dtype=np.int64))],
                       lambda: [(test, np.ones(len(test), dtype=np.int64))], False, folds)

        @cache
        def parts() -> list[Part]:  # the folds dealt on first use
            return [(test, split_folds(test, list(dataset.label_names), folds, seed)
                     if fold is None else fold)]

        return cls(parts, parts, True, folds)


class KeyCounts:
    """How often each hashed key (``uint64``) occurs in each plane among the fitting items,
    counted part by part (8 bytes and a plane per counted item, no text), and how often among
    those outside a plane (:meth:`outside`)."""

    def __init__(self, planes: int) -> None:
        self.planes = planes
        self._keys: list[np.ndarray] = []
        self._planes: list[np.ndarray] = []
        self._table: tuple[np.ndarray, np.ndarray] | None = None

    def add(self, keys: np.ndarray, planes: np.ndarray) -> None:
        """Count ``keys``, each in its plane (before any :meth:`outside`)."""
        assert self._table is None, "counted after the first look-up"
        self._keys.append(np.asarray(keys, dtype=np.uint64))
        self._planes.append(np.asarray(planes, dtype=np.int64))

    def _counted(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct keys (sorted) and their counts per plane, one row per key."""
        if self._table is None:
            keys = np.concatenate([np.zeros(0, np.uint64), *self._keys])
            planes = np.concatenate([np.zeros(0, np.int64), *self._planes])
            distinct, row = np.unique(keys, return_inverse=True)
            counts = np.bincount(row * self.planes + planes, minlength=len(distinct) * self.planes)
            self._table = distinct, counts.reshape(len(distinct), self.planes)
            self._keys, self._planes = [], []
        return self._table

    def outside(self, keys: np.ndarray, planes: np.ndarray) -> np.ndarray:
        """Per key: its count among the fitting items in planes other than its own."""
        distinct, counts = self._counted()
        if not len(distinct):
            return np.zeros(len(keys), dtype=np.int64)
        at = np.minimum(np.searchsorted(distinct, keys), len(distinct) - 1)
        return np.where(distinct[at] == keys, counts[at].sum(axis=1) - counts[at, planes], 0)
