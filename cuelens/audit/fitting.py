"""Fitting cue scores on one portion of the data and scoring another (docs/methods.md §2–4).

A :class:`Fit` holds the cue scores of one fitting portion from its counts (``#(w,l)`` per
inner cross-fitting fold, summed by the passes of :mod:`cuelens.audit.passes`): the
cross-fitted counts of inner fold ``k`` are ``total − fold k`` (docs/methods.md §3), rescaled
by ``N_fit / N_complement`` so that count-scale metrics (Freq, WP, z) put training features on
the same scale as the test features, which come from the whole fitting portion; otherwise a
linear model extrapolates on test (the ratio metrics CP, PMI, LMI, Cos, AD are unaffected).
:func:`train_models` trains the linear aggregators on the fit's sample, :func:`score_items`
turns decisions into per-item correctness.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from joblib import Parallel, delayed

from cuelens.audit.aggregators import (AGGREGATORS, CueView, TokenView, decisions, fit_linear,
                                       one_blas_thread, quiet_single_thread, view_tokens)
from cuelens.audit.counts import TokenSequences
from cuelens.audit.config import ScoringOptions
from cuelens.audit.evaluate import item_correct, nli_correct
from cuelens.audit.metrics import METRICS, CountTable
from cuelens.data.dataset import Task


def instance_rows(items: np.ndarray, k: int) -> np.ndarray:
    """The instance rows of ``items`` (``k`` consecutive instances each: NLI 1, MCQ the
    choices), in item order."""
    items = np.asarray(items, dtype=np.int64)
    return items if k == 1 else (items[:, None] * k + np.arange(k)).ravel()


def score_table(metric: str, joint: np.ndarray, labels: np.ndarray, alpha: float,
                z_prior: str) -> np.ndarray:
    """``(V + 1) × L`` scores of ``metric``; the last row is the prior word (docs/methods.md §2)."""
    table = CountTable(np.vstack([joint, labels[None, :]]), labels, alpha=alpha, z_prior=z_prior)
    with np.errstate(all="ignore"):  # undefined / infinite scores (α = 0, N = 0) become 0 below
        scores = METRICS[metric](table)
    return np.nan_to_num(scores, nan=0.0, posinf=0.0, neginf=0.0)


FIT_THREADS = min(2, os.cpu_count() or 1)
PREDICT_CHUNK = 65_536  # evaluation items scored at once by model_decisions


def stratum_quotas(sizes: np.ndarray, n_take: int) -> np.ndarray:
    """How many of ``n_take`` items each stratum (``sizes`` items each, none empty) gives:
    proportional shares, rounded by largest remainders (ties toward the earlier stratum)."""
    exact = sizes * (n_take / sizes.sum())
    quota = np.floor(exact).astype(np.int64)
    quota[np.argsort(quota - exact, kind="stable")[:n_take - quota.sum()]] += 1
    return quota


@dataclass
class Sample:
    """The instances the linear models of a :class:`Fit` train on (rows of ``seqs``, in
    training order), with their labels and inner folds."""

    seqs: TokenSequences
    rows: np.ndarray
    labels: np.ndarray
    folds: np.ndarray


class Fit:
    """Cue scores fitted on one portion, from its counts: ``inner`` (``#(w,l)`` per inner fold,
    ``V × K × L``), ``fold_labels`` (items per inner fold and label, ``K × L``), the
    representation length ``d`` and the linear models' training :class:`Sample`."""

    def __init__(self, inner: np.ndarray, fold_labels: np.ndarray, d: int, sample: Sample,
                 options: ScoringOptions) -> None:
        self.options = options
        self.total = inner.sum(axis=1)
        self.label_counts = fold_labels.sum(axis=0)
        self.label_order = np.argsort(-self.label_counts, kind="stable")
        self.d = d
        self.seen = self.total.sum(axis=1) > 0
        if options.in_sample_features:
            self._parts = [(None, None, view_tokens(sample.seqs, sample.rows, self.seen),
                            sample.labels)]
        else:
            self._parts = []
            for k in range(len(fold_labels)):
                mine = sample.folds == k
                if not mine.any():
                    continue
                joint = self.total - inner[:, k, :]
                label_counts = self.label_counts - fold_labels[k]
                # a grouped inner fold may hold the whole fitting portion: nothing to score
                # its items with (every word unseen, prior word only)
                scale = self.label_counts.sum() / max(label_counts.sum(), 1.0)
                seen = joint.sum(axis=1) > 0
                self._parts.append((joint * scale, label_counts * scale,
                                    view_tokens(sample.seqs, sample.rows[mine], seen),
                                    sample.labels[mine]))
        self.train_labels = np.concatenate([part[3] for part in self._parts])

    def scores(self, metric: str) -> np.ndarray:
        o = self.options
        return score_table(metric, self.total, self.label_counts, o.alpha, o.z_prior)

    def training_view(self, metric: str, full_scores: np.ndarray) -> CueView:
        """Training features: cross-fitted (each inner fold scored by the others) or in-sample."""
        o = self.options
        indptrs, values = [np.zeros(1, dtype=np.int64)], []
        for joint, label_counts, tokens, _ in self._parts:
            table = full_scores if joint is None else score_table(
                metric, joint, label_counts, o.alpha, o.z_prior)
            indptrs.append(tokens.indptr[1:] + indptrs[-1][-1])
            values.append(tokens.scores(table).values)
        return CueView(np.concatenate(indptrs), np.concatenate(values))


class ModelBank:
    """One aggregator instance per (metric, aggregator), reused across refits (warm start)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._models: dict[tuple[str, str, int], Any] = {}

    def get(self, metric: str, aggregator: str, d: int, n_labels: int):
        key = (metric, aggregator, d)
        if key not in self._models:
            self._models[key] = AGGREGATORS[aggregator](d, n_labels, self.seed)
        return self._models[key]


Trained = dict[str, tuple[np.ndarray, dict[tuple[str, str], Any]]]


def _per_metric(function: Callable[[str], Any], metrics: list[str]) -> list:
    """``function`` of each metric on :data:`FIT_THREADS` threads (every fit single-threaded,
    so results do not depend on the thread count)."""
    with quiet_single_thread():
        return Parallel(n_jobs=min(FIT_THREADS, len(metrics)), backend="threading")(
            delayed(function)(metric) for metric in metrics)


def train_models(fit: Fit, models: list[tuple[str, str]], bank: ModelBank,
                 n_labels: int) -> Trained:
    """Per metric: its full score table and its (metric, aggregator) models, the linear ones
    trained on ``fit``'s sample (warm-started from ``bank``)."""
    chosen = {(m, a): bank.get(m, a, fit.d, n_labels) for m, a in models}

    def one_metric(metric: str) -> tuple[np.ndarray, dict]:
        full = fit.scores(metric)
        mine = {key: model for key, model in chosen.items() if key[0] == metric}
        linear = [model for model in mine.values() if model.trained]
        if linear:
            fit_linear(linear, fit.training_view(metric, full), fit.train_labels,
                       fit.options.sgd_large)
        return full, mine

    metrics = list(dict.fromkeys(m for m, _ in models))
    return dict(zip(metrics, _per_metric(one_metric, metrics)))


def score_items(fit: Fit, trained: Trained, labels: np.ndarray, tokens: TokenView, task: str,
                k: int) -> dict[tuple[str, str], np.ndarray]:
    """Per-item correctness of every trained model on instances ``tokens`` (their ``labels``;
    NLI correctness as ``bool``)."""
    def one_metric(metric: str) -> dict:
        full, mine = trained[metric]
        return {key: nli_correct(decision, labels, fit.label_order, tokens.fallback)
                if task == Task.NLI else item_correct(decision, labels, task, k, fit.label_order)
                for key, decision in decisions(mine, tokens, full).items()}

    tokens.first_tokens(fit.d)  # the positions of every metric's features, before the threads
    return {key: value for part in _per_metric(one_metric, list(trained))
            for key, value in part.items()}


def signed_decisions(trained: Trained, model: tuple[str, str]) -> bool:
    """Whether the ``trained`` ``model``'s decision scores are signed (a linear model's margins,
    or an untrained aggregator over a metric whose score table holds negative values: PMI, z,
    …) rather than non-negative weights (CP, Freq, ``predict_proba``): a property of the fit,
    so an item's bias probabilities never depend on which other items are scored with it."""
    full, mine = trained[model[0]]
    aggregator = mine[model]
    if aggregator.trained:
        return not hasattr(aggregator.estimator, "predict_proba")
    return bool((full[np.isfinite(full)] < 0).any())


def model_decisions(fit: Fit, trained: Trained, model: tuple[str, str], seqs: TokenSequences,
                    rows: np.ndarray, k: int, n_labels: int) -> np.ndarray:
    """The ``len(rows) × L`` decision scores of the ``trained`` ``model`` of ``fit`` on instances
    ``rows`` of ``seqs``, :data:`PREDICT_CHUNK` items at a time (the held-out decisions of a
    leakage pass, in memory or streamed over chunks), on one BLAS thread (as
    :func:`~cuelens.audit.passes.tally_chunks`)."""
    full, mine = trained[model[0]]
    step = PREDICT_CHUNK * k
    with one_blas_thread():
        parts = [decisions({model: mine[model]}, view_tokens(seqs, rows[start:start + step],
                                                             fit.seen), full)[model]
                 for start in range(0, len(rows), step)]
    return np.concatenate(parts) if parts else np.zeros((0, n_labels))
