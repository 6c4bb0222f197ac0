"""Fold strategies of the word-cue passes (docs/methods.md §3, docs/large-datasets.md): where an
item goes in each run — its inner (cross-fitting) fold, its outer fold under a run's seed and its
sampling priority. :class:`HashedFolds` follow a seeded hash of each item's fold key (flat memory);
the exact scan's folds are :class:`GroupedFolds` (grouped and stratified, the groups of
:mod:`cuelens.audit.groups` in memory). Each strategy's ``fitting()`` cross-validates the fitting
split.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from cuelens.audit.groups import Grouping, GroupTypes, grouped_folds, groups_summary, n_groups, \
    narrowed, split_grouping
from cuelens.audit.text_keys import mix64
from cuelens.data.dataset import Dataset


class Folds(Protocol):
    """Where an item goes in each run: its inner (cross-fitting) fold (one of
    ``inner_folds``), its outer fold under a run's fold seed (evaluation items) and its
    sampling priority (lowest first) under a sample seed."""

    @property
    def inner_folds(self) -> int: ...

    def inner(self, items: np.ndarray, keys: np.ndarray) -> np.ndarray: ...

    def outer(self, items: np.ndarray, keys: np.ndarray, seed: int) -> np.ndarray: ...

    def priority(self, items: np.ndarray, seed: int) -> np.ndarray: ...

    def fitting(self) -> Folds:
        """The same strategy over the fitting split (its items' out-of-fold predictions)."""


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

    def fitting(self) -> HashedFolds:
        """The folds over the fitting split (:meth:`TokenStore.fitting_store`): the evaluated
        items' rule over at least 2 outer folds."""
        return replace(self, outer_folds=max(self.outer_folds, 2))


def dealt(folds: Folds, fold_seed: int | None, sample_seed: int | None = None) -> Folds:
    """``folds`` with the outer folds of ``fold_seed`` and the priorities of ``sample_seed``
    (None: not used by the pass) dealt here, so that a copy shipped to the workers of a pass
    (Ray) holds them instead of dealing them again in every chunk's task (grouped folds deal
    over the whole split)."""
    empty = np.zeros(0, dtype=np.int64)
    if fold_seed is not None:
        folds.outer(empty, empty.astype(np.uint64), fold_seed)
    if sample_seed is not None:
        folds.priority(empty, sample_seed)
    return folds


def inner_fold_ids(groups: np.ndarray, strata: np.ndarray, inner_folds: int,
                   seed: int) -> np.ndarray:
    """The inner cross-fitting fold of each item of one split (at least 2 folds, at most one
    per group; one group: all in fold 0)."""
    if n_groups(groups) < 2:
        return np.zeros(len(groups), dtype=np.int64)
    return grouped_folds(groups, strata, min(max(inner_folds, 2), n_groups(groups)), seed)


@dataclass
class GroupedFolds:
    """The exact scan's :class:`Folds` (docs/methods.md §3–4) over the statistics' splits held
    in memory (fitting split first; items numbered across them): each split's union-find
    ``groupings`` and ``strata`` (NLI label, MCQ gold position), inner folds dealt per split;
    outer folds of a seed grouped and stratified over the evaluated items (with a fitting split
    no more folds than they have groups, all in fold 0 below 2) or, ``over_fitting``, over the
    fitting items (at least 2 folds: each needs a fold without it); sampling priority = rank in
    a seeded permutation of all items. ``summary``: results.json ``leakage.groups``. The
    per-item arrays it holds for a scan (strata, inner folds, each seed's outer folds and
    priorities) are kept in the narrowest integer type (:func:`narrowed`, ~1 byte per item
    and seed) and handed out as ``int64`` / ``uint64``."""

    groupings: list[Grouping]
    strata: list[np.ndarray]
    inner_fold: np.ndarray  # per item
    outer_folds: int
    summary: dict
    over_fitting: bool = False
    _cache: dict = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, dataset: Dataset, folds: int, seed: int) -> GroupedFolds:
        """The folds of ``dataset``'s statistics splits (fitting, if any, and evaluated)."""
        splits = [split for split in (dataset.train, dataset.test) if split is not None]
        return cls.over([split_grouping(split) for split in splits],
                        [split.item_labels(dataset.label_names) for split in splits],
                        [split.name for split in splits], folds, seed)

    @classmethod
    def over(cls, groupings: list[Grouping], strata: list[np.ndarray], names: list[str],
             folds: int, seed: int) -> GroupedFolds:
        """The folds of the statistics splits ``names`` (fitting, if any, then evaluated) from
        each split's grouping and strata, however they were read (held in memory, or chunk by
        chunk: :func:`cuelens.audit.chunk_scan.chunked_folds`)."""
        # inner folds dealt per split: how train is cross-fitted never depends on the test
        # split's labels (dealt jointly, the test gold positions moved train items between folds)
        inner = np.concatenate([inner_fold_ids(g.groups, s, folds, seed)
                                for g, s in zip(groupings, strata)])
        return cls(groupings, [narrowed(s) for s in strata], narrowed(inner), folds,
                   groups_summary(groupings, names))

    @property
    def inner_folds(self) -> int:
        return int(self.inner_fold.max()) + 1

    def inner(self, items: np.ndarray, keys: np.ndarray) -> np.ndarray:
        return self.inner_fold[items].astype(np.int64)

    def outer(self, items: np.ndarray, keys: np.ndarray, seed: int) -> np.ndarray:
        if ("outer", seed) not in self._cache:
            first, folds = self._outer(seed)
            self._cache["outer", seed] = first, narrowed(folds)
        first, folds = self._cache["outer", seed]
        return folds[items - first].astype(np.int64)

    def _outer(self, seed: int) -> tuple[int, np.ndarray]:
        """The first item of the folded split and its items' outer folds under ``seed``,
        dealt from the split's group types (found once for every seed of the scan)."""
        if self.over_fitting:
            return 0, self._types(0, max(self.outer_folds, 2), "training items").folds(
                max(self.outer_folds, 2), seed)
        groups, n_folds = self.groupings[-1].groups, self.outer_folds
        first = len(self.inner_fold) - len(groups)
        if len(self.groupings) > 1:  # a fitting split: its fit alone may predict every item
            n_folds = min(n_folds, n_groups(groups))
            if n_folds < 2:
                return first, np.zeros(len(groups), np.int64)
        return first, self._types(-1, n_folds, "evaluation items").folds(n_folds, seed)

    def _types(self, split: int, n_folds: int, what: str) -> GroupTypes:
        if "types" not in self._cache:
            self._cache["types"] = GroupTypes.of(self.groupings[split].groups,
                                                 self.strata[split], n_folds, what)
        return self._cache["types"]

    def priority(self, items: np.ndarray, seed: int) -> np.ndarray:
        if ("priority", seed) not in self._cache:
            n = len(self.inner_fold)
            rank = np.empty(n, dtype=np.min_scalar_type(max(n - 1, 0)))
            rank[np.random.default_rng(seed).permutation(n)] = np.arange(n)
            self._cache["priority", seed] = rank
        return self._cache["priority", seed][items].astype(np.uint64)

    def fitting(self) -> GroupedFolds:
        """The folds over the fitting split (the fitting items' out-of-fold predictions)."""
        return replace(self, over_fitting=True, _cache={})
