"""Fitting cue scores on one portion of the data and scoring another (docs/methods.md §2–4).

A :class:`Fit` holds the cue scores of one fitting portion from its counts (``#(w,l)`` per
inner cross-fitting fold, summed by the passes of :mod:`cuelens.audit.passes`): the
cross-fitted counts of inner fold ``k`` are ``total − fold k`` (docs/methods.md §3), rescaled
by ``N_fit / N_complement`` so that count-scale metrics (Freq, WP, z) put training features on
the same scale as the test features, which come from the whole fitting portion; otherwise a
linear model extrapolates on test (the ratio metrics CP, PMI, LMI, Cos, AD are unaffected).
:func:`train_models` trains the linear aggregators on the fit's sample, :func:`score_items`
turns decisions into per-item correctness.

:class:`ScanData` lays a loaded dataset out for the exact scan (one :class:`Pool` of
instances, the grouped, stratified folds of :mod:`cuelens.audit.groups`);
:mod:`cuelens.audit.in_memory` hands it to the passes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np
from joblib import Parallel, delayed

from cuelens.audit.aggregators import (AGGREGATORS, CueView, TokenView, decisions, fit_linear,
                                       one_blas_thread, quiet_single_thread, view_tokens)
from cuelens.audit.counts import TokenSequences, encode, first_occurrences, instance_texts
from cuelens.audit.config import ScoringOptions
from cuelens.audit.evaluate import item_correct
from cuelens.audit.groups import check_cross_validation_folds, group_sizes, grouped_folds, \
    n_groups, split_grouping
from cuelens.audit.metrics import METRICS, CountTable
from cuelens.data.compact import concatenate
from cuelens.data.dataset import RIGHT, Task
from cuelens.errors import UserError


@dataclass
class Pool:
    """All instances of a scan, tokenised once. Item ``g`` owns rows ``g·k … g·k + k − 1``."""

    seqs: TokenSequences
    labels: np.ndarray  # label index per instance
    n_labels: int
    k: int  # instances per item: 1 (NLI) or the number of choices (MCQ)
    task: str
    inner_fold: np.ndarray  # per instance: its item's inner (cross-fitting) fold
    inner_folds: int

    @property
    def n_items(self) -> int:
        return len(self.labels) // self.k

    def rows(self, items: np.ndarray) -> np.ndarray:
        """Instance rows of ``items`` (in item order)."""
        return instance_rows(items, self.k)


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
        out = {}
        for key, decision in decisions(mine, tokens, full).items():
            correct = item_correct(decision, labels, task, k, fit.label_order, tokens.fallback)
            out[key] = correct.astype(bool) if task == Task.NLI else correct
        return out

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


@dataclass
class ScanData:
    """A dataset laid out for scanning: one :class:`Pool`, train items then evaluation items."""

    pool: Pool
    texts: Sequence[str]
    train_items: np.ndarray | None  # None: cross-validate over the evaluation items
    eval_items: np.ndarray
    label_names: list[str]
    groups: np.ndarray  # per item: items sharing a premise or text (cuelens.audit.groups)
    strata: np.ndarray  # per item: NLI label / MCQ gold position (fold stratification)
    words: TokenSequences  # every text's word ids in order, repeats kept (the BoW input)
    group_summary: dict  # leakage.groups of results.json (Grouping.summary per split)

    def split_words(self) -> list[TokenSequences]:
        """:attr:`words` of each split's instances, the fitting split's first (views)."""
        first_evaluated = self.pool.n_items - len(self.eval_items)
        fitting = [self._instance_words(0, first_evaluated)] if first_evaluated else []
        return [*fitting, self._instance_words(first_evaluated, self.pool.n_items)]

    def _instance_words(self, first_item: int, stop_item: int) -> TokenSequences:
        """:attr:`words` of the instances of items ``first_item … stop_item`` (a view)."""
        k = self.pool.k
        indptr = self.words.indptr[first_item * k:stop_item * k + 1]
        return TokenSequences(indptr - indptr[0], self.words.indices[indptr[0]:indptr[-1]],
                              self.words.vocab)

    def eval_folds(self, n_folds: int, seed: int) -> np.ndarray | None:
        """Grouped, stratified outer folds over ``eval_items`` (docs/methods.md §3–4).

        With a train split the train items are always fitted on, so the evaluation items need
        only as many folds as they have groups: fewer folds when they have fewer groups, and
        None (every item predicted by the fit on train alone) for one group or ``--folds 1``.
        """
        groups = self.groups[self.eval_items]
        if self.train_items is not None:
            n_folds = min(n_folds, n_groups(groups))
            if n_folds < 2:
                return None
        return grouped_folds(groups, self.strata[self.eval_items], n_folds, seed,
                             "evaluation items")


def instance_labels(split, label_names: list[str]) -> np.ndarray:
    """Per instance: the NLI label index, or whether the MCQ choice is right (``RIGHT``)."""
    if split.task == Task.NLI:
        return split.item_labels(label_names)
    k = split.n_choices or 1
    gold = split.item_labels(label_names)
    return np.where(np.arange(k)[None, :] == gold[:, None], RIGHT, 1 - RIGHT).ravel()


def choice_count_error(choice_counts: Sequence[int]) -> UserError:
    """The word-cue statistics lay out ``k`` instances per MCQ item: one ``k`` for all."""
    return UserError("the word-cue statistics need the same number of choices in every item; "
                     "this dataset's items have "
                     f"{', '.join(map(str, sorted(set(choice_counts))))} choices")


def check_choice_count(split, k: int) -> None:
    """:func:`choice_count_error` unless every item of ``split`` has ``k`` choices."""
    if set(split.choice_counts) - {k}:
        raise choice_count_error([k, *split.choice_counts])


def combined_summary(groups: np.ndarray, groupings: list, roles: list[str]) -> dict:
    """``leakage.groups``: the sizes of all the scan's groups (each split grouped on its own),
    the grouping unit, and any split's template limit and warning (:class:`Grouping`)."""
    out = {**group_sizes(groups), "unit": groupings[0].unit}
    limits = [g.template_limit for g in groupings if g.template_limit is not None]
    if limits:
        out["template_limit"] = min(limits)
    warnings = [f"{role}: {g.warning}" if len(groupings) > 1 else g.warning
                for role, g in zip(roles, groupings) if g.warning]
    if warnings:
        out["warning"] = "; ".join(warnings)
    return out


def inner_fold_ids(groups: np.ndarray, strata: np.ndarray, inner_folds: int,
                   seed: int) -> np.ndarray:
    """The inner cross-fitting fold of each item of one split (at least 2 folds, at most one
    per group; one group: all in fold 0)."""
    if n_groups(groups) < 2:
        return np.zeros(len(groups), dtype=np.int64)
    return grouped_folds(groups, strata, min(max(inner_folds, 2), n_groups(groups)), seed)


def scan_data(dataset, ngrams: int, include_premise: bool, inner_folds: int,
              seed: int, tokens: TokenSequences | None = None) -> ScanData:
    """Flatten a :class:`~cuelens.data.Dataset` into a :class:`ScanData` (docs/methods.md §1).

    ``tokens``: the instance texts already encoded (e.g. shard by shard on Ray workers, merged
    with :meth:`~cuelens.audit.counts.Encoder.add_encoded`); it must equal their :func:`encode`.
    """
    splits = [s for s in (dataset.train, dataset.test) if s is not None]
    if dataset.task == Task.MCQ and dataset.n_choices is None:
        raise choice_count_error(dataset.test.choice_counts)
    k = dataset.n_choices or 1
    texts = concatenate([instance_texts(split, include_premise) for split in splits])
    labels = np.concatenate([instance_labels(split, dataset.label_names) for split in splits])
    check_cross_validation_folds(dataset.train is None, inner_folds)
    # each split grouped on its own: a train/test scan never needs folds over both splits
    groupings = [split_grouping(split) for split in splits]
    offsets = np.cumsum([0] + [int(g.groups.max()) + 1 if len(g.groups) else 0
                               for g in groupings])
    groups = np.concatenate([g.groups + offset for g, offset in zip(groupings, offsets)])
    split_strata = [s.item_labels(dataset.label_names) for s in splits]
    strata = np.concatenate(split_strata)
    # inner folds dealt per split too: how train is cross-fitted never depends on the test
    # split's labels (dealt jointly, the test gold positions moved train items between folds)
    item_fold = np.concatenate([inner_fold_ids(g.groups, s, inner_folds, seed)
                                for g, s in zip(groupings, split_strata)])
    words = encode(texts, repeats=True)
    if tokens is None and ngrams == 1:  # tokenise once: the cue features are the distinct words
        tokens = first_occurrences(words)
    pool = Pool(encode(texts, ngrams) if tokens is None else tokens,
                np.asarray(labels, dtype=np.int64), len(dataset.label_names), k, dataset.task,
                np.repeat(item_fold, k), int(item_fold.max()) + 1)
    n_train = len(dataset.train) if dataset.train is not None else 0
    summary = combined_summary(groups, groupings, [s.name for s in splits])
    return ScanData(pool=pool, texts=texts,
                    train_items=np.arange(n_train) if dataset.train is not None else None,
                    eval_items=np.arange(n_train, pool.n_items), label_names=dataset.label_names,
                    groups=groups, strata=strata, words=words, group_summary=summary)
