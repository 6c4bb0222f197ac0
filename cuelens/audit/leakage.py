"""The leakage table of docs/methods.md §3: every metric × aggregator, ``D = Acc − Majority``, baselines.

With a train split, cues are fitted on train and scored on test. Without one, accuracies come
from seeded, grouped K-fold cross-validation over the file (MCQ folds at question level; items
sharing a premise or a text in one fold, :mod:`cuelens.audit.groups`), so a cue is never scored
on data that includes the item being predicted or a copy of it.

Baselines in the same units: a partial-input bag-of-words logistic regression on the
hypothesis / choice text only (unigrams + bigrams occurring in at least ``BOW_MIN_COUNT`` = 2
fitting instances, binary features, scikit-learn's defaults; trained on at most
``max_fit_items`` of them, :func:`~cuelens.audit.fitting.fit_subsample`) and,
for MCQ, the answer-position baseline (always pick the most frequent training answer position,
ties toward the lower position).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from sklearn.linear_model import LogisticRegression

from cuelens.audit.aggregators import AGGREGATORS, quiet_single_thread
from cuelens.audit.counts import BigramColumns, TokenSequences, bigram_columns
from cuelens.audit.evaluate import item_correct
from cuelens.audit.fitting import Fit, ModelBank, ScanData, ScoringOptions, fit_subsample, \
    over_folds, predict_cues
from cuelens.audit.groups import FOLD_SEEDS, iteration_seed
from cuelens.audit.metrics import METRICS
from cuelens.audit.uncertainty import SIGNIFICANT, difference_interval, leakage_verdict
from cuelens.data.dataset import Task

MAJORITY = "majority"
BOW_MIN_COUNT = 2
BOW_CHUNK = 65_536  # evaluation rows per piece: the BoW memory is bounded by it plus the sample
ANSWER_POSITION = "answer position"
EXTRA_FOLD_SEEDS = 2  # cross-validated files: re-seeded runs of the headline model (its CI)


def bow_name(task: str) -> str:
    return "choice-only BoW LR" if task == Task.MCQ else "hypothesis-only BoW LR"


@dataclass
class BagOfWords:
    """The partial-input BoW baseline: its uni+bigram columns and logistic regression."""

    columns: BigramColumns
    model: LogisticRegression

    @classmethod
    def fit(cls, columns: BigramColumns, words: TokenSequences, rows: np.ndarray,
            labels: np.ndarray) -> "BagOfWords":
        """Fitted on ``rows`` of ``words`` (their ``labels``), scikit-learn's defaults."""
        with quiet_single_thread():
            return cls(columns, LogisticRegression().fit(columns.matrix(words, rows), labels))

    def decision(self, words: TokenSequences, rows: np.ndarray, n_labels: int) -> np.ndarray:
        """``len(rows) × n_labels`` class probabilities (−inf for a label absent from
        training), :data:`BOW_CHUNK` rows at a time: never the whole evaluation matrix."""
        out = np.full((len(rows), n_labels), -np.inf)
        for start in range(0, len(rows), BOW_CHUNK):
            piece = slice(start, start + BOW_CHUNK)
            out[piece, self.model.classes_] = self.model.predict_proba(
                self.columns.matrix(words, rows[piece]))
        return out


class Baselines:
    """Reference predictors fitted on the same portions as the cue aggregators."""

    def __init__(self, data: ScanData, options: ScoringOptions | None = None) -> None:
        self.data, self.options = data, options or ScoringOptions()

    def bow_columns(self, sample: np.ndarray, eval_rows: np.ndarray) -> BigramColumns:
        """The uni+bigram features occurring in at least ``BOW_MIN_COUNT`` ``sample`` instances
        (a repeated sample row counts each time), columns in order of first appearance over the
        sorted union of ``sample`` and ``eval_rows`` — the columns of
        ``encode(texts of the union, ngrams=2)``, from the scan's word ids by
        :func:`~cuelens.audit.counts.bigram_columns`."""
        fitted, weights = np.unique(sample, return_counts=True)
        return bigram_columns(self.data.words, fitted, weights, BOW_MIN_COUNT,
                              np.union1d(sample, eval_rows), BOW_CHUNK)

    def majority(self, fit_rows: np.ndarray, eval_rows: np.ndarray) -> np.ndarray:
        pool = self.data.pool
        if pool.task == Task.MCQ:
            return np.full(len(eval_rows) // pool.k, 1.0 / pool.k)
        counts = np.bincount(pool.labels[fit_rows], minlength=pool.n_labels)
        return (pool.labels[eval_rows] == np.argmax(counts)).astype(np.float64)

    def bag_of_words(self, fit_rows: np.ndarray, eval_rows: np.ndarray) -> np.ndarray:
        pool = self.data.pool
        sample = fit_subsample(pool, fit_rows, self.options.max_fit_items, self.options.seed)
        bow = BagOfWords.fit(self.bow_columns(sample, eval_rows), self.data.words, sample,
                             pool.labels[sample])
        decision = bow.decision(self.data.words, eval_rows, pool.n_labels)
        order = np.argsort(-np.bincount(pool.labels[fit_rows], minlength=pool.n_labels),
                           kind="stable")
        return item_correct(decision, pool.labels[eval_rows], pool.task, pool.k, order)

    def answer_position(self, fit_rows: np.ndarray, eval_rows: np.ndarray) -> np.ndarray:
        k, gold = self.data.pool.k, self.data.gold
        position = np.argmax(np.bincount(gold[fit_rows[::k] // k], minlength=k))
        return (gold[eval_rows[::k] // k] == position).astype(np.float64)

    def predictors(self) -> dict:
        out = {MAJORITY: self.majority, bow_name(self.data.pool.task): self.bag_of_words}
        if self.data.pool.task == Task.MCQ:
            out[ANSWER_POSITION] = self.answer_position
        return out


def all_models() -> list[tuple[str, str]]:
    return [(metric, aggregator) for metric in METRICS for aggregator in AGGREGATORS]


def evaluation_folds(data: ScanData, n_folds: int, seed: int) -> np.ndarray | None:
    """Outer folds over the evaluation items when there is no train split, else None."""
    if data.train_items is not None:
        return None
    return data.eval_folds(n_folds, seed)


def correctness(data: ScanData, options: ScoringOptions, n_folds: int,
                models: list[tuple[str, str]], with_baselines: bool, progress=None) -> dict:
    """Per-item correctness of every cue model (and baseline) on the evaluation items.

    Reports progress as stage ``leakage`` (cue models), then ``baselines``.
    """
    bank = ModelBank(options.seed)
    folds = evaluation_folds(data, n_folds, options.seed)
    n_steps = 1 if folds is None else n_folds
    done = {"leakage": 0, "baselines": 0}

    def step(stage: str) -> None:
        done[stage] += 1
        if progress is not None:
            progress(stage, done[stage] / n_steps)

    def cue_models(fit_rows, eval_rows, inner):
        out = predict_cues(data.pool, Fit.of_rows(data.pool, fit_rows, inner, options), eval_rows,
                           models, bank)
        step("leakage")
        return out

    out = over_folds(data.pool, data.eval_items, data.train_items, folds, cue_models)
    if with_baselines:
        predictors = Baselines(data, options).predictors()

        def baselines(fit_rows, eval_rows, inner):
            result = {name: fn(fit_rows, eval_rows) for name, fn in predictors.items()}
            step("baselines")
            return result

        out.update(over_folds(data.pool, data.eval_items, data.train_items, folds, baselines,
                              counts=False))
    return out


def _entry(accuracy: float, majority: float) -> dict:
    return {"accuracy": round(float(accuracy), 6), "D": round(float(accuracy - majority), 6)}


def seed_runs(data: ScanData, options: ScoringOptions, n_folds: int,
              model: tuple[str, str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Cross-validated files: (headline correctness, majority correctness) per item under
    :data:`EXTRA_FOLD_SEEDS` more fold seeds (:func:`~cuelens.audit.groups.iteration_seed`)."""
    if data.train_items is not None:
        return []
    runs = []
    for r in range(1, EXTRA_FOLD_SEEDS + 1):
        reseeded = replace(options, seed=iteration_seed(options.seed, r, FOLD_SEEDS))
        bank, folds = ModelBank(reseeded.seed), evaluation_folds(data, n_folds, reseeded.seed)
        majority = Baselines(data, reseeded).majority

        def fold_fn(fit_rows, eval_rows, inner):
            out = predict_cues(data.pool, Fit.of_rows(data.pool, fit_rows, inner, reseeded),
                               eval_rows, [model], bank)
            return {model: out[model], MAJORITY: majority(fit_rows, eval_rows)}

        out = over_folds(data.pool, data.eval_items, data.train_items, folds, fold_fn)
        runs.append((out[model], out[MAJORITY]))
    return runs


HeadlineRuns = Callable[[tuple[str, str]], tuple[tuple[float, float], list[float]]]


def leakage_section(accuracy: dict, metric: str, flag_threshold: float,
                    headline_runs: HeadlineRuns) -> dict:
    """The ``leakage`` section from every predictor's accuracy (cue models keyed (metric,
    aggregator), baselines by name, :data:`MAJORITY` among them); ``headline_runs(model)`` gives
    the headline's 95% interval of D and its D in each run (docs/results-schema.md)."""
    accuracy = dict(accuracy)
    majority = accuracy.pop(MAJORITY)
    table = [{"metric": m, "aggregator": a, **_entry(accuracy[(m, a)], majority)}
             for m, a in all_models()]
    best = dict(max((row for row in table if row["metric"] == metric), key=lambda row: row["D"]))
    (low, high), run_D = headline_runs((best["metric"], best["aggregator"]))
    best.update(ci_low=round(low, 6), ci_high=round(high, 6))
    baselines = [{"name": name, **_entry(acc, majority)} for name, acc in accuracy.items()
                 if isinstance(name, str)]
    verdict = leakage_verdict(low, high, flag_threshold)
    section = {"majority": round(majority, 6), "table": table, "best": best,
               "flagged": verdict == SIGNIFICANT, "verdict": verdict, "baselines": baselines}
    if len(run_D) > 1:
        section["fold_seed_D"] = [round(D, 6) for D in run_D]
    return section


def leakage_table(data: ScanData, options: ScoringOptions, metric: str, n_folds: int,
                  flag_threshold: float, progress=None) -> dict:
    """The ``leakage`` section of results.json (docs/results-schema.md).

    The headline's 95% interval (:mod:`cuelens.audit.uncertainty`) pools the item bootstrap of
    this run with, for a cross-validated file, that of :data:`EXTRA_FOLD_SEEDS` re-seeded runs;
    ``verdict`` and ``flagged`` follow the interval, not the point estimate.
    """
    results = correctness(data, options, n_folds, all_models(), True, progress)

    def headline_runs(model: tuple[str, str]) -> tuple[tuple[float, float], list[float]]:
        runs = [(results[model], results[MAJORITY])] + seed_runs(data, options, n_folds, model)
        return (difference_interval(runs, seed=options.seed),
                [float(np.mean(a) - np.mean(b)) for a, b in runs])

    return leakage_section({name: float(np.mean(correct)) for name, correct in results.items()},
                           metric, flag_threshold, headline_runs)
