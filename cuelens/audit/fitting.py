"""Fitting cue scores on one portion of the data and predicting another (docs/methods.md §2–4).

A :class:`Pool` holds every instance of a scan (fitting split first, then evaluation split),
tokenised once, with a seeded, grouped question-level *inner fold* per item for cross-fitting
(items sharing a premise or text are in one fold, :mod:`cuelens.audit.groups`). Counts are
additive over instances, so the counts of any fitting portion are sums of cached blocks
(``#(w,l)`` per inner fold), and the cross-fitted counts of inner fold ``k`` are
``total − fold k`` (docs/methods.md §3) — no refit from text. Those complement counts are rescaled by
``N_fit / N_complement`` so that count-scale metrics (Freq, WP, z) put training features on the
same scale as the test features, which come from the whole fitting portion; otherwise a linear
model extrapolates on test (the ratio metrics CP, PMI, LMI, Cos, AD are unaffected).

:func:`over_folds` runs the outer loop shared by the leakage table (cross-validation when a
dataset has no train split) and the easy/hard split: for each outer fold, fit on a base portion
plus the other folds, predict the fold, and collect per-item correctness.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np
from joblib import Parallel, delayed

from cuelens.audit.aggregators import (AGGREGATORS, CueView, TokenView, decisions, fit_linear,
                                       quiet_single_thread, representation_length,
                                       view_tokens)
from cuelens.audit.counts import TokenSequences, encode, first_occurrences
from cuelens.audit.config import ScoringOptions
from cuelens.audit.evaluate import item_correct
from cuelens.audit.groups import group_sizes, grouped_folds, grouping, n_groups
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
    inner_fold: np.ndarray  # per instance
    inner_folds: int

    @classmethod
    def build(cls, texts: Sequence[str], labels: np.ndarray, n_labels: int, k: int, task: str,
              ngrams: int, item_fold: np.ndarray,
              tokens: TokenSequences | None = None) -> "Pool":
        """``item_fold``: the inner (cross-fitting) fold of each item (:mod:`cuelens.audit.groups`);
        ``tokens``: the texts already encoded (equal to their :func:`encode`)."""
        return cls(seqs=encode(texts, ngrams) if tokens is None else tokens,
                   labels=np.asarray(labels, dtype=np.int64),
                   n_labels=n_labels, k=k, task=task, inner_fold=np.repeat(item_fold, k),
                   inner_folds=int(item_fold.max()) + 1)

    @property
    def n_items(self) -> int:
        return len(self.labels) // self.k

    @property
    def vocab_size(self) -> int:
        return len(self.seqs.vocab)

    def rows(self, items: np.ndarray) -> np.ndarray:
        """Instance rows of ``items`` (in item order)."""
        items = np.asarray(items, dtype=np.int64)
        return (items[:, None] * self.k + np.arange(self.k)).ravel()

    def block_counts(self, rows: np.ndarray) -> np.ndarray:
        """``#(w,l)`` of ``rows`` per inner fold: ``V × K × L``, counted :data:`COUNT_CHUNK`
        instances at a time (one bincount of (feature, fold, label) cells per chunk)."""
        width = self.inner_folds * self.n_labels
        column = self.inner_fold[rows] * self.n_labels + self.labels[rows]
        joint = np.zeros(self.vocab_size * width, dtype=np.int64)
        for start in range(0, len(rows), COUNT_CHUNK):
            ids, lengths = self.seqs.take(rows[start:start + COUNT_CHUNK])
            cells = ids * np.int64(width) + np.repeat(column[start:start + COUNT_CHUNK], lengths)
            joint += np.bincount(cells, minlength=len(joint))
        return joint.reshape(self.vocab_size, self.inner_folds, self.n_labels).astype(np.float64)


def score_table(metric: str, joint: np.ndarray, labels: np.ndarray, alpha: float,
                z_prior: str) -> np.ndarray:
    """``(V + 1) × L`` scores of ``metric``; the last row is the prior word (docs/methods.md §2)."""
    table = CountTable(np.vstack([joint, labels[None, :]]), labels, alpha=alpha, z_prior=z_prior)
    with np.errstate(all="ignore"):  # undefined / infinite scores (α = 0, N = 0) become 0 below
        scores = METRICS[metric](table)
    return np.nan_to_num(scores, nan=0.0, posinf=0.0, neginf=0.0)


COUNT_CHUNK = 262_144  # instances counted at once by Pool.block_counts
FIT_THREADS = min(2, os.cpu_count() or 1)
PREDICT_CHUNK = 65_536  # evaluation items scored at once by predict_cues


def stratum_quotas(sizes: np.ndarray, n_take: int) -> np.ndarray:
    """How many of ``n_take`` items each stratum (``sizes`` items each, none empty) gives:
    proportional shares, rounded by largest remainders (ties toward the earlier stratum)."""
    exact = sizes * (n_take / sizes.sum())
    quota = np.floor(exact).astype(np.int64)
    quota[np.argsort(quota - exact, kind="stable")[:n_take - quota.sum()]] += 1
    return quota


def fit_subsample(pool: Pool, rows: np.ndarray, cap: int, seed: int) -> np.ndarray:
    """The rows a linear model is trained on: at most ``cap`` instances of ``rows``.

    ``cap <= 0`` or ``len(rows) <= cap``: ``rows`` unchanged. Otherwise whole items (MCQ:
    questions) in increasing row order: per label (NLI; MCQ has one stratum) a quota
    proportional to its share (largest remainders), filled in a seeded random order of all the
    scan's items. That order is fixed for a seed, so the refits of easy/hard, whose fitting
    portions overlap, get overlapping samples and warm-start from a nearby optimum. Cue scores
    are never computed from the sample — only SGD/LR and the BoW baseline see it
    (docs/word-cues.md).
    """
    if cap <= 0 or len(rows) <= cap:
        return rows
    k = pool.k
    member = np.zeros(pool.n_items, dtype=bool)
    member[rows[::k] // k] = True
    ordered = np.random.default_rng(seed).permutation(pool.n_items)
    ordered = ordered[member[ordered]]
    strata = pool.labels[ordered * k] if pool.task == Task.NLI else np.zeros(len(ordered), int)
    values, sizes = np.unique(strata, return_counts=True)
    quota = stratum_quotas(sizes, max(1, cap // k))
    chosen = np.zeros(pool.n_items, dtype=bool)
    for value, size in zip(values, quota):
        chosen[ordered[strata == value][:size]] = True
    return pool.rows(np.flatnonzero(chosen))


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

    @classmethod
    def of_rows(cls, pool: Pool, rows: np.ndarray, inner: np.ndarray,
                options: ScoringOptions) -> "Fit":
        """The fit of ``rows`` of ``pool`` (``inner``: their :meth:`Pool.block_counts`)."""
        labels = pool.labels[rows]
        fold_labels = np.zeros((pool.inner_folds, pool.n_labels))
        np.add.at(fold_labels, (pool.inner_fold[rows], labels), 1.0)
        sampled = np.zeros(len(pool.labels), dtype=bool)
        sampled[fit_subsample(pool, rows, options.max_fit_items, options.seed)] = True
        chosen = rows[sampled[rows]]
        sample = Sample(pool.seqs, chosen, pool.labels[chosen], pool.inner_fold[chosen])
        return cls(inner, fold_labels, representation_length(pool.seqs.lengths[rows]), sample,
                   options)

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
            values.append(table[tokens.tokens])
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
            fit_linear(linear, fit.training_view(metric, full), fit.train_labels)
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
        for key, decision in decisions(mine, tokens.scores(full)).items():
            correct = item_correct(decision, labels, task, k, fit.label_order, tokens.fallback)
            out[key] = correct.astype(bool) if task == Task.NLI else correct
        return out

    return {key: value for part in _per_metric(one_metric, list(trained))
            for key, value in part.items()}


def predict_cues(pool: Pool, fit: Fit, eval_rows: np.ndarray, models: list[tuple[str, str]],
                 bank: ModelBank) -> dict[tuple[str, str], np.ndarray]:
    """Per-item correctness of each (metric, aggregator) fitted on ``fit``, on ``eval_rows``."""
    return predict_trained(pool, fit, train_models(fit, models, bank, pool.n_labels), eval_rows)


def predict_trained(pool: Pool, fit: Fit, trained: Trained, eval_rows: np.ndarray
                    ) -> dict[tuple[str, str], np.ndarray]:
    """Per-item correctness of the ``trained`` models of ``fit`` on ``eval_rows``.

    Evaluation instances are scored :data:`PREDICT_CHUNK` items at a time (each item's
    prediction depends on that item alone), so the ``instances × labels`` score views stay
    small whatever the fold size.
    """
    step = PREDICT_CHUNK * pool.k  # MCQ: whole questions per chunk
    parts: dict[tuple[str, str], list[np.ndarray]] = {
        key: [] for _, mine in trained.values() for key in mine}
    for start in range(0, len(eval_rows), step):
        rows = eval_rows[start:start + step]
        scored = score_items(fit, trained, pool.labels[rows],
                             view_tokens(pool.seqs, rows, fit.seen), pool.task, pool.k)
        for key, correct in scored.items():
            parts[key].append(correct)
    return {key: np.concatenate(found) if found else np.zeros(0) for key, found in
            parts.items()}


@dataclass
class HeldOut:
    """One outer fold of a leakage pass: the fit, the rows it predicted and a copy of its
    trained models (the bank's own are refitted by the next fold), so a model chosen after the
    pass (the headline) gives its held-out decisions without a refit."""

    fit: Fit
    eval_rows: np.ndarray
    trained: Trained

    def decisions(self, pool: Pool, model: tuple[str, str]) -> np.ndarray:
        """The ``len(eval_rows) × L`` decision scores of ``model`` (what :func:`score_items`
        turns into correctness; :mod:`cuelens.audit.bias_items` into probabilities)."""
        return model_decisions(self.fit, self.trained, model, pool.seqs, self.eval_rows,
                               pool.k, pool.n_labels)


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
    leakage pass, in memory or streamed over chunks)."""
    full, mine = trained[model[0]]
    step = PREDICT_CHUNK * k
    parts = [mine[model].decision(view_tokens(seqs, rows[start:start + step],
                                              fit.seen).scores(full))
             for start in range(0, len(rows), step)]
    return np.concatenate(parts) if parts else np.zeros((0, n_labels))


@dataclass
class PassFits:
    """What a leakage pass leaves for later: its outer folds' :class:`HeldOut` fits and the
    :class:`ModelBank` they were trained with (its models in the last fold's state, so refits
    after the pass warm-start where the pass ended)."""

    folds: list[HeldOut] = field(default_factory=list)
    bank: ModelBank | None = None


# fold_fn(fit_rows, eval_rows, inner_counts): inner_counts is a count block, 0.0 or None
FoldFn = Callable[[np.ndarray, np.ndarray, Any], dict[str, np.ndarray]]


def over_folds(pool: Pool, eval_items: np.ndarray, base_items: np.ndarray | None,
               folds: np.ndarray | None, fold_fn: FoldFn, counts: bool = True) -> dict:
    """Per-item correctness over ``eval_items`` of every predictor ``fold_fn`` returns.

    ``folds`` None: one fit on ``base_items``, predicting every eval item. Otherwise, for each
    outer fold ``j``: fit on ``base_items`` plus the eval items outside ``j``, predict ``j``.
    ``fold_fn(fit_rows, eval_rows, inner_counts)`` returns name → per-item correctness;
    ``counts=False`` skips the counts (``inner_counts`` is then None).
    """
    block = pool.block_counts if counts else (lambda rows: None)
    base_rows = pool.rows(base_items) if base_items is not None else np.zeros(0, np.int64)
    base = block(base_rows) if len(base_rows) else 0.0
    # NLI correctness is 0/1: kept as bool (8× smaller; sums and means are the same numbers)
    dtype = bool if pool.task == Task.NLI else np.float64
    if folds is None:
        return {name: _stored(correct, dtype)
                for name, correct in fold_fn(base_rows, pool.rows(eval_items), base).items()}
    n_folds = int(folds.max()) + 1
    blocks: list[Any] = [block(pool.rows(eval_items[folds == j])) for j in range(n_folds)]
    everything: Any = sum(blocks) + base if counts else None
    out: dict = {}
    for j in range(n_folds):
        held = np.flatnonzero(folds == j)
        if len(held) == 0:
            continue
        fit_items = eval_items[folds != j]
        fit_rows = np.concatenate([base_rows, pool.rows(fit_items)])
        inner = everything - blocks[j] if counts else None
        result = fold_fn(fit_rows, pool.rows(eval_items[held]), inner)
        for name, correct in result.items():
            out.setdefault(name, np.zeros((len(eval_items),) + correct.shape[1:],
                                          dtype=_stored(correct, dtype).dtype))[held] = correct
    return out


def _stored(values: np.ndarray, dtype) -> np.ndarray:
    """Per-item correctness in ``dtype``; per-item rows (2-D, e.g. decision scores) as they are."""
    return values.astype(dtype, copy=False) if values.ndim == 1 else values


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

    @property
    def gold(self) -> np.ndarray:
        """MCQ: the right choice's position per item."""
        return self.pool.labels.reshape(-1, self.pool.k).argmin(axis=1)


def instance_texts(split, include_premise: bool):
    """Instance texts: the hypotheses/choices, optionally after the premise (docs/methods.md §1)."""
    if split.task == Task.NLI:
        if not include_premise:  # the common case, without copies
            return split.hypotheses
        return [f"{p} {h}" for p, h in zip(split.premises, split.hypotheses)]
    if not include_premise:
        return [choice for choices in split.choices for choice in choices]
    return [f"{split.premise_context(i)} {choice}" for i, choices in enumerate(split.choices)
            for choice in choices]


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
    n_labels = len(dataset.label_names)
    if dataset.train is None and inner_folds < 2:
        raise UserError("cross-validating a single file needs --folds 2 or more (or give "
                        "--train and --test)")
    # each split grouped on its own: a train/test scan never needs folds over both splits
    groupings = [grouping([split]) for split in splits]
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
    pool = Pool.build(texts, labels, n_labels, k, dataset.task, ngrams, item_fold, tokens)
    n_train = len(dataset.train) if dataset.train is not None else 0
    summary = combined_summary(groups, groupings, [s.name for s in splits])
    return ScanData(pool=pool, texts=texts,
                    train_items=np.arange(n_train) if dataset.train is not None else None,
                    eval_items=np.arange(n_train, pool.n_items), label_names=dataset.label_names,
                    groups=groups, strata=strata, words=words, group_summary=summary)
