"""The exact scan's adapters to the word-cue passes (:mod:`cuelens.audit.passes`): its
:class:`~cuelens.audit.fitting.ScanData` as a :class:`~cuelens.audit.passes.TokenStore` held
in memory (one chunk per split), and its grouped, stratified folds as a
:class:`~cuelens.audit.folds.Folds` strategy (docs/methods.md §3–4)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cuelens.audit.fitting import ScanData
from cuelens.audit.groups import grouped_folds
from cuelens.audit.passes import TokenStore, subset


def token_store(data: ScanData) -> TokenStore:
    """``data``'s instances as a store in memory: the fitting split's chunk (if any), then the
    evaluated split's; each item's fold key is its index."""
    pool = data.pool
    store = TokenStore(None, pool.task, pool.k, pool.n_labels, vocab=list(pool.seqs.vocab),
                       words_vocab=list(data.words.vocab),
                       label_map=np.arange(pool.n_labels, dtype=np.int64))
    for fitting, items in ((True, data.train_items), (False, data.eval_items)):
        if items is not None:
            rows = pool.rows(items)
            store.add(fitting, subset(data.words, rows), subset(pool.seqs, rows),
                      pool.labels[rows], items.astype(np.uint64))
    return store


@dataclass
class GroupedFolds:
    """The exact scan's fold strategy: inner folds dealt per split
    (:func:`~cuelens.audit.fitting.inner_fold_ids`), outer folds of a seed grouped and stratified
    over the evaluated items (:meth:`~cuelens.audit.fitting.ScanData.eval_folds`; all in fold 0
    where it gives none) or, ``over_fitting``, over the fitting items (at least 2 folds: each
    needs a fold without it); sampling priority = rank in a seeded permutation of all items."""

    data: ScanData
    outer_folds: int
    over_fitting: bool = False
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def inner_folds(self) -> int:
        return self.data.pool.inner_folds

    def inner(self, items: np.ndarray, keys: np.ndarray) -> np.ndarray:
        return self.data.pool.inner_fold[items * self.data.pool.k]

    def outer(self, items: np.ndarray, keys: np.ndarray, seed: int) -> np.ndarray:
        if ("outer", seed) not in self._cache:
            self._cache["outer", seed] = self._outer(seed)
        first, folds = self._cache["outer", seed]
        return folds[items - first]

    def _outer(self, seed: int) -> tuple[int, np.ndarray]:
        data = self.data
        if self.over_fitting:
            train = data.train_items
            assert train is not None
            return 0, grouped_folds(data.groups[train], data.strata[train],
                                    max(self.outer_folds, 2), seed, "training items")
        folds = data.eval_folds(self.outer_folds, seed)
        return int(data.eval_items[0]) if len(data.eval_items) else 0, \
            np.zeros(len(data.eval_items), np.int64) if folds is None else folds

    def priority(self, items: np.ndarray, seed: int) -> np.ndarray:
        if ("priority", seed) not in self._cache:
            n = self.data.pool.n_items
            rank = np.empty(n, dtype=np.uint64)
            rank[np.random.default_rng(seed).permutation(n)] = np.arange(n, dtype=np.uint64)
            self._cache["priority", seed] = rank
        return self._cache["priority", seed][items]

    def fitting(self) -> GroupedFolds:
        """The folds over the fitting split (the fitting items' out-of-fold predictions)."""
        return GroupedFolds(self.data, self.outer_folds, True)
