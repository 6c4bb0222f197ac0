"""The leakage table of docs/methods.md §3: every metric × aggregator, ``D = Acc − Majority``,
and the baselines (docs/word-cues.md, "Leakage table and baselines")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression

from cuelens.audit.aggregators import AGGREGATORS, quiet_single_thread
from cuelens.audit.counts import BigramColumns, TokenSequences
from cuelens.audit.metrics import METRICS
from cuelens.audit.results import LeakageSection
from cuelens.audit.uncertainty import DIFFERENCE_CHUNK, EQUIVALENCE_QUANTILE, LEVEL, \
    SIGNIFICANT, DifferenceMoments, leakage_verdict, simultaneous_test
from cuelens.data.dataset import Task

MAJORITY = "majority"
PRIOR = "prior-matched constant"  # the evaluated items' most frequent label (MCQ: 1/k)
SELECTION_METHOD = ("max-T over every metric × aggregator against the prior-matched "
                    "baseline, two-sided 95% simultaneous intervals (one-sided 2.5% verdict); "
                    "headline = largest simultaneous lower bound")
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
    model: LogisticRegression | DummyClassifier

    @classmethod
    def fit(cls, columns: BigramColumns, words: TokenSequences, rows: np.ndarray,
            labels: np.ndarray) -> "BagOfWords":
        """Fitted on ``rows`` of ``words`` (their ``labels``): scikit-learn's default L2
        logistic regression (C = 1), solved by Newton-CG, which reaches the optimum in a few
        steps where L-BFGS stopped at its 100-iteration cap short of it (docs/methods.md §3).
        Without any column (no word occurs twice) the model is its unpenalised intercept alone:
        the training label shares."""
        matrix = columns.matrix(words, rows)
        if matrix.shape[1] == 0:
            return cls(columns, DummyClassifier(strategy="prior").fit(matrix, labels))
        with quiet_single_thread():
            return cls(columns, LogisticRegression(solver="newton-cg").fit(matrix, labels))

    def decision(self, words: TokenSequences, rows: np.ndarray, n_labels: int) -> np.ndarray:
        """``len(rows) × n_labels`` class probabilities (−inf for a label absent from
        training), :data:`BOW_CHUNK` rows at a time: never the whole evaluation matrix."""
        out = np.full((len(rows), n_labels), -np.inf)
        for start in range(0, len(rows), BOW_CHUNK):
            piece = slice(start, start + BOW_CHUNK)
            out[piece, self.model.classes_] = self.model.predict_proba(
                self.columns.matrix(words, rows[piece]))
        return out


def all_models() -> list[tuple[str, str]]:
    return [(metric, aggregator) for metric in METRICS for aggregator in AGGREGATORS]


def _entry(accuracy: float, majority: float) -> dict:
    return {"accuracy": round(float(accuracy), 6), "D": round(float(accuracy - majority), 6)}


def add_differences(moments: DifferenceMoments, results: dict,
                    models: list[tuple[str, str]]) -> None:
    """Fold the per-item differences ``results[model] − results[PRIOR]`` of ``models`` into
    ``moments``, :data:`~cuelens.audit.uncertainty.DIFFERENCE_CHUNK` items at a time (the exact
    scan passes every item at once, statistics that stream one chunk at a time)."""
    prior = np.asarray(results[PRIOR], dtype=np.float64)
    for start in range(0, len(prior), DIFFERENCE_CHUNK):
        piece = slice(start, start + DIFFERENCE_CHUNK)
        moments.add(np.stack([np.asarray(results[m][piece], np.float64) for m in models], axis=1)
                    - prior[piece, None])


def _degenerate_reason(task: str, D: float, n_items: int) -> str:
    """Why the headline's interval has zero width (its per-item difference never varies)."""
    if task == Task.MCQ:
        return (f"every one of the {n_items} evaluated questions scores the same under the "
                "headline model: its choices tie on every cue score (as in a mirrored, "
                "balanced dataset where each choice is once right and once wrong), and a tie "
                f"counts 1/k — so D is exactly {100 * D:+.1f} points with no sampling spread: "
                "there is no cue signal, and the zero-width interval says nothing varies, not "
                "that D is known precisely")
    return (f"the headline model's per-item difference from the baseline is the same on all "
            f"{n_items} evaluated items, so the interval has zero width because nothing "
            "varies, not because D is known precisely")


def leakage_section(accuracy: dict, moments: DifferenceMoments, metric: str,
                    flag_threshold: float, task: str, seed: int,
                    fold_seed_D: Callable[[tuple[str, str], float, float], list[float]],
                    groups: dict, training_cap: int | None = None) -> LeakageSection:
    """The ``leakage`` section (docs/results-schema.md) from every predictor's accuracy (cue models
    keyed (metric, aggregator), baselines by name, :data:`MAJORITY` and :data:`PRIOR` among them)
    and the ``moments`` of every cue model's per-item difference from :data:`PRIOR` (in
    :func:`all_models` order); the table, verdict and headline as docs/methods.md §3, §11.

    ``fold_seed_D(model, D, half_width)`` gives the headline's D under re-seeded folds
    (cross-validated files; ``D`` and ``half_width``: the run's, for a large scan's stopping rule);
    ``groups``: ``leakage.groups``; ``training_cap``: a large scan's lowered training cap
    (``selection.training_cap``), None when the configured cap holds.
    """
    accuracy = dict(accuracy)
    majority, prior = accuracy.pop(MAJORITY), accuracy.pop(PRIOR)
    models = all_models()
    table = [{"metric": m, "aggregator": a, **_entry(accuracy[(m, a)], majority)}
             for m, a in models]
    test = simultaneous_test(moments, seed)
    order = sorted(range(len(models)), key=lambda i: models[i][0] != metric)  # stable
    h = max(order, key=lambda i: test.low[i])
    best = {"metric": models[h][0], "aggregator": models[h][1],
            "accuracy": round(float(accuracy[models[h]]), 6),
            "D": round(float(test.D[h]), 6),
            "ci_low": round(float(max(test.low[h], -1.0)), 6),
            "ci_high": round(float(min(test.high[h], 1.0)), 6),
            "p_value": float(f"{test.p_value[h]:.6g}"),
            # the TOST bound of docs/methods.md §17: the largest of every model's one-sided
            # bound (all below the margin, or no equivalence)
            "equivalence_high": round(float(min(test.equivalence_high.max(), 1.0)), 6),
            "equivalence_level": EQUIVALENCE_QUANTILE}
    baselines = [{"name": name, **_entry(acc, prior)} for name, acc in accuracy.items()
                 if isinstance(name, str)]  # D against the verdict's baseline, as the headline
    verdict = leakage_verdict(test.low[h], test.high[h], flag_threshold)
    run_D = fold_seed_D(models[h], float(test.D[h]), float(test.high[h] - test.low[h]) / 2)
    selection = {"models": len(models), "method": SELECTION_METHOD,
                 "critical_z": round(test.critical, 6), "level": LEVEL}
    if training_cap is not None:
        selection["training_cap"] = training_cap
    return LeakageSection(
        majority=round(majority, 6), table=table, best=best, flagged=verdict == SIGNIFICANT,
        verdict=verdict, baselines=baselines,
        baseline={"name": PRIOR, "accuracy": round(float(prior), 6)},
        selection=selection,
        interval_note=_degenerate_reason(task, float(test.D[h]), moments.n)
        if test.degenerate[h] else None,
        fold_seed_D=[round(float(test.D[h]), 6)] + [round(D, 6) for D in run_D] if run_D else None,
        groups=groups)
