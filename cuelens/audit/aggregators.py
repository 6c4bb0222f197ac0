"""Aggregators of docs/methods.md §3: predict a label from the cue scores of an instance's words
(``average``, ``max``; ``sgd`` and ``lr`` on the positional representation). The choices the
paper leaves open — the *prior word* of an instance with no seen word, ties, the logistic loss
of SGD, warm starts of refits — are in docs/word-cues.md ("Aggregators").

An instance is seen through a :class:`CueView`: the ids of its words that occur in the fitting
portion, in order of first occurrence, and their ``L`` scores each; NLI predictions of
instances with no seen word are replaced by the majority label (:mod:`cuelens.audit.evaluate`).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.preprocessing import StandardScaler
from threadpoolctl import ThreadpoolController

from cuelens.audit.config import MAX_FIT_ITEMS
from cuelens.audit.counts import TokenSequences, row_starts
from cuelens.registry import Registry


@dataclass
class TokenView:
    """Seen-word ids of a set of instances (ragged, CSR layout, never empty per instance)."""

    indptr: np.ndarray  # int64, n + 1
    tokens: np.ndarray  # int32 ids; ``prior_id`` stands for the prior word
    fallback: np.ndarray  # bool, n: the instance had no seen word
    _first: dict[int, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def scores(self, table: np.ndarray) -> "CueView":
        """Attach the rows of a ``(V + 1) × L`` score table (last row: the prior word; a
        ``take``: several times faster than fancy indexing)."""
        return CueView(self.indptr, np.take(table, self.tokens, axis=0))

    def first_tokens(self, d: int) -> np.ndarray:
        """``n × d``: each instance's first ``d`` ids, −1 past its end (computed once per
        ``d``: the positions of every metric's :meth:`positional_features`)."""
        if d not in self._first:
            self._first[d] = np.append(self.tokens, -1).astype(np.intp)[
                first_positions(self.indptr, d)]
        return self._first[d]

    def positional_features(self, table: np.ndarray, d: int) -> np.ndarray:
        """:func:`positional_features` of :meth:`scores`, gathered straight from ``table``."""
        return gather_rows(padded_rows(table), self.first_tokens(d))


@dataclass
class CueView:
    indptr: np.ndarray
    values: np.ndarray  # nnz × L word scores

    def __len__(self) -> int:
        return len(self.indptr) - 1


def view_tokens(seqs: TokenSequences, rows: np.ndarray, seen: np.ndarray) -> TokenView:
    """The seen-word ids of instances ``rows`` in first-occurrence order (vectorised gather):
    the kept ids in place, each instance's count read off a running sum of the kept mask, the
    prior word inserted where an instance keeps none."""
    tokens, lengths = seqs.take(rows)
    keep = seen[tokens]
    kept_before = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(keep, out=kept_before[1:])
    counts = np.diff(kept_before[row_starts(lengths)])
    fallback = counts == 0
    out = tokens[keep].astype(np.int32, copy=False)
    if fallback.any():
        out = np.insert(out, row_starts(counts)[:-1][fallback], np.int32(len(seen)))
    return TokenView(indptr=row_starts(np.maximum(counts, 1)), tokens=out, fallback=fallback)


def average_scores(view: CueView) -> np.ndarray:
    """``mean_{w in h} f(w, l)`` per instance (``n × L``)."""
    sums = np.add.reduceat(view.values, view.indptr[:-1], axis=0)
    return sums / np.diff(view.indptr)[:, None]


def max_scores(view: CueView) -> np.ndarray:
    """``max_{w in h} f(w, l)`` per instance (``n × L``), over stored words only."""
    return np.maximum.reduceat(view.values, view.indptr[:-1], axis=0)


def first_positions(indptr: np.ndarray, d: int) -> np.ndarray:
    """``n × d``: the indices of each instance's first ``d`` values (``indptr`` layout), −1
    past its end."""
    where = indptr[:-1, None] + np.arange(d)
    where[np.arange(d) >= np.diff(indptr)[:, None]] = -1
    return where


def padded_rows(values: np.ndarray) -> np.ndarray:
    """``(m + 1) × L``: a float32 copy of ``m × L`` scores with a trailing row of 0 (the
    padding, index −1)."""
    rows = np.zeros((len(values) + 1, values.shape[1]), dtype=np.float32)
    rows[:-1] = values
    return rows


def gather_rows(rows: np.ndarray, where: np.ndarray) -> np.ndarray:
    """``n × L·d``: per label, ``rows[:, label]`` at the ``n × d`` indices ``where``: one
    gather of whole rows (the ``L`` scores of a word are adjacent), then the labels brought
    first (a third less time than one gather per label on the training features)."""
    n, d = where.shape
    return np.take(rows, where, axis=0).transpose(0, 2, 1).reshape(n, rows.shape[1] * d)


def positional_features(view: CueView, d: int) -> np.ndarray:
    """docs/methods.md §3 representation: per label the first ``d`` word scores, 0-padded
    (``n × L·d``).

    One gather from a float32 copy of the scores with a trailing row of 0 (the padding)."""
    return gather_rows(padded_rows(view.values), first_positions(view.indptr, d))


def representation_length_counted(histogram: np.ndarray) -> int:
    """Default ``d``: the 95th percentile of instance length (distinct words), at least 1, of
    the instances counted in ``histogram`` (``histogram[n]`` instances of length ``n``): numpy's
    linear percentile, computed from the two order statistics it interpolates between."""
    n = int(histogram.sum())
    if n == 0:
        return 1
    virtual = (n - 1) * (np.float64(95) / 100)
    below = np.floor(virtual)
    gamma = virtual - below
    ends = np.cumsum(histogram)
    low, high = np.searchsorted(ends, [below, min(below + 1, n - 1)], side="right")
    low, high = np.float64(low), np.float64(high)
    value = high - (high - low) * (1 - gamma) if gamma >= 0.5 else low + (high - low) * gamma
    return max(1, int(np.ceil(value)))


@lru_cache(maxsize=1)
def _thread_pools(modules: int) -> ThreadpoolController:
    """The BLAS/OpenMP thread pools of the loaded libraries while ``modules`` Python modules
    are imported: finding them scans every loaded library (~2.5 ms, which a streamed pass
    paid per chunk and fold), so they are found again only once a module (which may bring a
    library) has been imported since."""
    return ThreadpoolController()


@contextmanager
def one_blas_thread():
    """Run the block with one thread in every BLAS/OpenMP pool (``threadpool_limits(limits=1)``
    on the pools of :func:`_thread_pools`)."""
    with _thread_pools(len(sys.modules)).limit(limits=1):
        yield


@contextmanager
def quiet_single_thread():
    """Fit small linear models with one BLAS/OpenMP thread and no convergence warnings.

    L-BFGS on a few dozen features spends its time in thread hand-offs: one thread is
    several times faster, more so on a loaded machine, and independent fits then run in
    parallel (:func:`cuelens.audit.fitting.score_items`). Process-wide state: enter it once
    around a parallel region, not in its threads. An iteration cap is a budget, not a problem
    the user can act on.
    """
    with one_blas_thread(), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


def _full_columns(classes: np.ndarray, scores: np.ndarray, n_labels: int) -> np.ndarray:
    """Spread a classifier's per-class scores over all ``n_labels`` columns (absent: −inf; with
    every label present, the scores themselves as float64)."""
    if np.array_equal(classes, np.arange(n_labels)):
        return scores.astype(np.float64, copy=False)
    out = np.full((scores.shape[0], n_labels), -np.inf)
    out[:, classes] = scores
    return out


class Average:
    """``argmax_l`` of the mean word score (no training)."""

    trained = False
    decision = staticmethod(average_scores)


class Maximum:
    """``argmax_l`` of the largest word score (no training)."""

    trained = False
    decision = staticmethod(max_scores)


@dataclass
class Standardised:
    """Positional features standardised by a ``StandardScaler`` fitted on training features.

    The SGD and LR models of one metric train on the same features, so they share one scaler
    (fitted once) and, at prediction, one standardised matrix (:func:`decisions`)."""

    scaler: StandardScaler
    values: np.ndarray

    @classmethod
    def fit(cls, view: CueView, d: int) -> "Standardised":
        features = positional_features(view, d)
        scaler = StandardScaler().fit(features)
        return cls(scaler, standardise(scaler, features))


def standardise(scaler: StandardScaler, features: np.ndarray) -> np.ndarray:
    """``scaler.transform(features)`` of the positional features (float32, finite, dense):
    the same two in-place steps on a copy, without the input validation, which cost a third of
    the transform on every fold's evaluated items."""
    out = features - scaler.mean_.astype(features.dtype)
    out /= scaler.scale_.astype(features.dtype)
    return out


def multinomial_probabilities(model: LogisticRegression, features: np.ndarray) -> np.ndarray:
    """``model.predict_proba(features)`` of a logistic regression of three or more classes on
    standardised features (float32, finite, dense): the same steps — the decision scores
    ``features @ coef_ᵀ + intercept_``, then scikit-learn's ``softmax`` in place — without
    the input validation, each row's maximum taken one column at a time (exact: numpy's
    maximum over rows of ``L`` values cost two thirds of the softmax)."""
    scores = features @ model.coef_.T + model.intercept_
    top = scores[:, 0].copy()
    for column in range(1, scores.shape[1]):
        np.maximum(top, scores[:, column], out=top)
    scores -= top.reshape(-1, 1)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=1).reshape(-1, 1)
    return scores


SGD_SAMPLES = 300_000
SGD_LARGE = MAX_FIT_ITEMS  # training instances (the default fitting cap) from which 10⁵ samples do
SGD_LARGE_SAMPLES = 100_000


class Linear:
    """A linear classifier on standardised :func:`positional_features`; refits warm-start."""

    trained = True

    def __init__(self, estimator, d: int, n_labels: int) -> None:
        self.estimator = estimator
        self.scaler: StandardScaler | None = None
        self.d, self.n_labels = d, n_labels

    def fit_standardised(self, train: Standardised, y: np.ndarray,
                         large: int = SGD_LARGE) -> "Linear":
        """Fit on features standardised by ``train.scaler`` (``large``: the SGD budget's
        threshold, :class:`SGD` only). A warm start needs the same classes as the previous
        fit: a fitting portion that lacks a rare label (or gains one) restarts from
        scratch."""
        present = np.flatnonzero(np.bincount(y))  # np.unique(y) of label indices, O(n)
        if hasattr(self.estimator, "classes_") and not np.array_equal(self.estimator.classes_,
                                                                       present):
            self.estimator = clone(self.estimator)
        self.scaler = train.scaler
        self.estimator.fit(train.values, y)
        return self

    def decision_standardised(self, features: np.ndarray) -> np.ndarray:
        """Scores of features already standardised by this model's scaler."""
        classes = self.estimator.classes_
        if isinstance(self.estimator, LogisticRegression) and len(classes) > 2:
            return _full_columns(classes, multinomial_probabilities(self.estimator, features),
                                 self.n_labels)
        if hasattr(self.estimator, "predict_proba"):
            return _full_columns(classes, self.estimator.predict_proba(features), self.n_labels)
        margin = self.estimator.decision_function(features)
        if margin.ndim == 1:
            margin = np.stack([-margin, margin], axis=1)
        return _full_columns(classes, margin, self.n_labels)


def sgd_epochs(n: int, large: int = SGD_LARGE) -> int:
    """Epochs of an SGD fit on ``n`` instances (docs/word-cues.md): ``ceil(3·10⁵ / n)`` below
    ``large`` instances (:data:`SGD_LARGE`, a large scan's lower training cap,
    docs/methods.md §3), ``ceil(10⁵ / n)`` from there on (2 on a default-capped sample), at
    least one."""
    budget = SGD_SAMPLES if n < large else SGD_LARGE_SAMPLES
    return max(1, int(np.ceil(budget / max(n, 1))))


class SGD(Linear):
    """``SGDClassifier`` run for :func:`sgd_epochs` epochs, no early stopping: each fit sees
    about 3·10⁵ samples below ``large`` training instances, about 10⁵ (at least one epoch)
    from there on."""

    def fit_standardised(self, train: Standardised, y: np.ndarray,
                         large: int = SGD_LARGE) -> "Linear":
        self.estimator.set_params(max_iter=sgd_epochs(len(y), large))
        return super().fit_standardised(train, y)


def fit_linear(models: list[Linear], view: CueView, y: np.ndarray,
               sgd_large: int = SGD_LARGE) -> None:
    """Fit ``models`` (same ``d``) on one training view: features and scaler computed once
    (``sgd_large``: :func:`sgd_epochs`' threshold)."""
    if models:
        train = Standardised.fit(view, models[0].d)
        for model in models:
            model.fit_standardised(train, y, sgd_large)


def decisions(models: dict, tokens: TokenView, table: np.ndarray) -> dict:
    """The ``n × L`` decision scores of each of ``models`` (key → aggregator) on instances
    ``tokens`` scored by ``table``: the word scores gathered once (for the untrained ones),
    the positional features built once and standardised once per distinct scaler."""
    view: CueView | None = None
    features: dict[int, np.ndarray] = {}
    standardised: dict[int, np.ndarray] = {}
    out = {}
    for key, model in models.items():
        if not model.trained:
            view = tokens.scores(table) if view is None else view
            out[key] = model.decision(view)
            continue
        if id(model.scaler) not in standardised:
            if model.d not in features:
                features[model.d] = tokens.positional_features(table, model.d)
            standardised[id(model.scaler)] = standardise(model.scaler, features[model.d])
        out[key] = model.decision_standardised(standardised[id(model.scaler)])
    return out


def make_sgd(d: int, n_labels: int, seed: int) -> Linear:
    return SGD(SGDClassifier(loss="log_loss", tol=None, random_state=seed, warm_start=True),
               d, n_labels)


def make_lr(d: int, n_labels: int, seed: int) -> Linear:
    return Linear(LogisticRegression(max_iter=100, warm_start=True, random_state=seed),
                  d, n_labels)


#: aggregator name → ``make(d, n_labels, seed)``: the cue-score aggregators of the leakage table
AGGREGATORS: Registry[Callable[[int, int, int], Any]] = Registry("aggregator", {
    "average": lambda d, n_labels, seed: Average(),
    "max": lambda d, n_labels, seed: Maximum(),
    "sgd": make_sgd,
    "lr": make_lr,
})
