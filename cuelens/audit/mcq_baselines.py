"""MCQ artifact baselines: can the answer be found without reading the question?

The rules, their fitting, ties, tests and intervals: docs/mcq-artifacts.md ("Baselines in
`audit scan`") and docs/methods.md §3, §12. Three registries: :data:`RULES` (fitted on nothing),
:data:`FITTED` (fitted on the fitting split, or cross-fitted over the leakage table's folds) and
:data:`NO_CONTEXT` (items with a passage and a separate question; an item without a question has
the empty one). The choices-only bag-of-words row comes from the leakage table
(:mod:`cuelens.audit.leakage`) through ``extra``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from cuelens.audit.chance import (ALPHA, accuracy_row, clustered_upper_bound, p_text,
                                  position_chi_square, tie_credit)
from cuelens.audit.groups import split_folds
from cuelens.audit.results import GoldPositionTest, McqBaselinesSection, McqRuleRow
from cuelens.audit.text_keys import text_keys
from cuelens.audit.tokenize import text_length, tokenize
from cuelens.data.dataset import Dataset, Split
from cuelens.registry import Registry

Rule = Callable[[str, list[str]], np.ndarray]
FittedBaseline = Callable[[Split, Split], np.ndarray]

RULES: Registry[Rule] = Registry("MCQ rule")
FITTED: Registry[FittedBaseline] = Registry("fitted MCQ baseline")
NO_CONTEXT: Registry[FittedBaseline] = Registry("no-context MCQ baseline")

rule = RULES.register  # per-item choice scorer ``(context, choices) -> scores``
fitted = FITTED.register  # ``(fit_split, eval_split) -> per-item credit``
no_context = NO_CONTEXT.register  # as ``fitted``; only for items with a separate question


@rule("longest choice")
def _longest(context: str, choices: list[str]) -> np.ndarray:
    return np.array([len(c) for c in choices], dtype=np.float64)


@rule("shortest choice")
def _shortest(context: str, choices: list[str]) -> np.ndarray:
    return -_longest(context, choices)


@rule("longest in words")
def _longest_words(context: str, choices: list[str]) -> np.ndarray:
    return np.array([text_length(c) for c in choices], dtype=np.float64)


def content_tokens(text: str) -> set[str]:
    return {t for t in tokenize(text) if t not in ENGLISH_STOP_WORDS}


@rule("overlap with question")
def _overlap(context: str, choices: list[str]) -> np.ndarray:
    shared = content_tokens(context)
    return np.array([len(content_tokens(c) & shared) for c in choices], dtype=np.float64)


def choice_counts(split: Split) -> np.ndarray:
    return np.array([len(c) for c in split.choices], dtype=np.int64)


def gold_positions(split: Split) -> np.ndarray:
    return np.asarray(split.labels, dtype=np.int64)


def rule_credit(split: Split, name: str, context: Context = Split.premise_context) -> np.ndarray:
    """Per-item credit of the rule ``name`` on ``split``, reading each item's ``context``."""
    scores = [RULES[name](context(split, i), split.choices[i]) for i in range(len(split))]
    return tie_credit(scores, gold_positions(split))


@fitted("answer position")
def _answer_position(fit: Split, evaluate: Split) -> np.ndarray:
    position = int(np.argmax(np.bincount(gold_positions(fit))))
    k = choice_counts(evaluate)
    hit = (gold_positions(evaluate) == position).astype(np.float64)
    return np.where(position < k, hit, 1.0 / k)


def _key(text: str) -> str:
    return " ".join(text.lower().split())


Context = Callable[[Split, int], str]


def question_text(split: Split, i: int) -> str:
    """Item ``i``'s question without its passage (empty when it has none)."""
    return split.questions[i] or ""


def question_seen(fit: Split, evaluate: Split) -> np.ndarray:
    """1.0 per evaluated item whose premise + question occurs among the fitting items."""
    seen = {_key(fit.premise_context(i)) for i in range(len(fit))}
    return np.array([_key(evaluate.premise_context(i)) in seen for i in range(len(evaluate))],
                    dtype=np.float64)


def memorised_answers(fit: Split, evaluate: Split, context: Context) -> np.ndarray:
    """Per evaluated item: credit of the choice given most often as the answer among fitting
    items with the same ``context`` text."""
    answers: dict[str, Counter] = defaultdict(Counter)
    for i, (choices, gold) in enumerate(zip(fit.choices, fit.labels)):
        answers[_key(context(fit, i))][_key(choices[gold])] += 1
    scores = []
    for i, choices in enumerate(evaluate.choices):
        known = answers.get(_key(context(evaluate, i)), Counter())
        scores.append(np.array([known[_key(c)] for c in choices], dtype=np.float64))
    return tie_credit(scores, gold_positions(evaluate))


@fitted("question only")
def _question_only(fit: Split, evaluate: Split) -> np.ndarray:
    return memorised_answers(fit, evaluate, Split.premise_context)


NO_CONTEXT_OVERLAP = "no context: overlap"  # a rule: fitted on nothing


@no_context(NO_CONTEXT_OVERLAP)
def _no_context_overlap(fit: Split, evaluate: Split) -> np.ndarray:
    return rule_credit(evaluate, "overlap with question", question_text)


@no_context("no context: question only")
def _no_context_question(fit: Split, evaluate: Split) -> np.ndarray:
    return memorised_answers(fit, evaluate, question_text)


def cross_fit(dataset: Dataset, func: Callable[[Split, Split], np.ndarray], folds: int,
              seed: int, fold: np.ndarray | None = None) -> np.ndarray:
    """Per evaluated item: ``func`` fitted on train, or on the other folds (``fold``: each
    item's; default the leakage table's grouped folds)."""
    if dataset.train is not None:
        return func(dataset.train, dataset.test)
    split = dataset.test
    if fold is None:  # the leakage table's grouped folds (cuelens.audit.groups)
        fold = split_folds(split, dataset.label_names, folds, seed)
    out = np.zeros(len(split))
    for j in range(folds):
        held = np.flatnonzero(fold == j)
        if len(held):
            out[held] = func(split.subset(np.flatnonzero(fold != j)), split.subset(held))
    return out


def item_credit(dataset: Dataset, folds: int = 5, seed: int = 0,
                fold: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per-item credit of every registered baseline on the evaluated items (:func:`cross_fit`
    over ``fold``)."""
    out = {name: rule_credit(dataset.test, name) for name in RULES}
    # NO_CONTEXT applies when some item holds a passage and a separate question
    fitted_baselines = {**FITTED, **(NO_CONTEXT if any(dataset.test.questions) else {})}
    out.update({name: cross_fit(dataset, func, folds, seed, fold)
                for name, func in fitted_baselines.items()})
    return out


COMPLEMENTS = {"shortest choice": "longest choice"}  # with two choices per item


def complements(names: list[str], k: np.ndarray) -> dict[str, str]:
    """Rule → the rule it is the complement of, when every item has two choices."""
    if len(k) == 0 or not (k == 2).all():
        return {}
    return {rule: other for rule, other in COMPLEMENTS.items() if rule in names and other in names}


def mcq_baselines(dataset: Dataset, folds: int = 5, seed: int = 0,
                  extra: dict[str, float] | None = None,
                  fold: np.ndarray | None = None) -> McqBaselinesSection:
    """The ``mcq_baselines`` section of results.json (docs/results-schema.md), cross-fitted
    over ``fold`` (:func:`item_credit`).

    ``extra`` adds rows from accuracies computed elsewhere on the same evaluated items (the
    choices-only BoW of the leakage table).
    """
    k = choice_counts(dataset.test)
    credit = item_credit(dataset, folds, seed, fold)
    accuracy = {name: float(values.mean()) for name, values in credit.items()}
    accuracy.update(extra or {})
    paired = complements(list(accuracy), k)
    threshold = ALPHA / (len(accuracy) - len(paired))
    rows = [{"name": name, "fitted": name not in RULES and name != NO_CONTEXT_OVERLAP,
             **accuracy_row(acc, k, 1 - threshold),
             **({"complement_of": paired[name]} if name in paired else {})}
            for name, acc in accuracy.items()]
    coverage = float(cross_fit(dataset, question_seen, folds, seed, fold).mean())
    for row in rows:
        row["significant"] = bool(row["p_value"] < threshold)
        if row["name"] == "question only":
            row["coverage"] = round(coverage, 6)
    add_equivalence_bounds(rows, credit, k, choice_sets(dataset.test))
    positions = {role: position_chi_square(gold_positions(split), choice_counts(split))
                 for role, split in dataset.splits.items() if role in ("train", "test", "all")}
    return McqBaselinesSection(
        n_items=len(k), chance=rows[0]["chance"],
        choice_counts={str(c): int(n) for c, n in zip(*np.unique(k, return_counts=True))},
        fitted_on="train" if dataset.train is not None else f"{folds}-fold cross-fitting",
        bonferroni_alpha=round(threshold, 6), ci_level=round(1 - threshold, 6),
        rows=[McqRuleRow(**row) for row in rows],
        gold_position={role: GoldPositionTest(**test) for role, test in positions.items()})


EQUIVALENCE_CONFIDENCE = 0.95  # one-sided: the TOST bound of docs/methods.md §17


def choice_sets(split: Split) -> np.ndarray:
    """Per item, the fingerprint of its choices as a set (the hygiene module's mirrored-pair key,
    :meth:`~cuelens.audit.text_keys.TextKeys.text_sets`): items sharing it are one cluster."""
    return text_keys(split).text_sets()


def add_equivalence_bounds(rows: list[dict], credit: dict[str, np.ndarray], k: np.ndarray,
                           clusters: np.ndarray) -> None:
    """When some choice set is shared by more than one question (Balanced COPA's mirrored
    pairs), each row with per-item credit gets ``D_equivalence_high``: the one-sided 95% upper
    bound of its D with a cluster-robust (CR1) standard error over the choice sets, and
    ``equivalence_clusters``: their number (docs/methods.md §17). Otherwise nothing is added and
    the conclusion uses the exact interval (the items are independent)."""
    if len(clusters) == 0 or len(np.unique(clusters)) == len(clusters):
        return
    for row in rows:
        if row["name"] not in credit:  # the choices-only BoW: no per-item credit here
            continue
        high, n_clusters = clustered_upper_bound(credit[row["name"]] - 1.0 / k, clusters,
                                                 EQUIVALENCE_CONFIDENCE)
        row["D_equivalence_high"] = round(high, 6)
        row["equivalence_clusters"] = n_clusters


def ci_name(section: McqBaselinesSection) -> str:
    """``99.3% CI``: the intervals' confidence, Bonferroni-corrected like the test."""
    return f"{100 * (section.ci_level or 0.95):.3g}% CI"


def baseline_verdict(row: McqRuleRow, section: McqBaselinesSection) -> str:
    """A plain-English sentence for one row of :func:`mcq_baselines` (``section``)."""
    name, acc, chance = row.name, 100 * row.accuracy, 100 * row.chance
    if row.coverage == 0.0:
        return f"{name}: no evaluated question occurs among the fitting items, so it can only guess."
    if row.complement_of:
        return (f"{name}: the complement of “{row.complement_of}” — with two choices one is "
                f"right exactly when the other is wrong ({acc:.1f}%); tested once, as "
                f"“{row.complement_of}”.")
    head = (f"{name}: right {acc:.1f}% of the time against {chance:.1f}% by chance "
            f"({100 * row.D:+.1f} points, {ci_name(section)} {100 * row.D_ci[0]:+.1f} to "
            f"{100 * row.D_ci[1]:+.1f}; {p_text(row.p_value)})")
    if not row.significant:
        return f"{head}: not significantly different from guessing."
    if row.D > 0:
        return f"{head}: an artifact — the answer can be guessed this way without the question."
    if set(section.choice_counts or {}) == {"2"}:
        return (f"{head}: worse than guessing — with two choices, picking the other one is "
                f"right {100 - acc:.1f}% of the time, an artifact.")
    return (f"{head}: worse than guessing — the right answer is rarely the choice this rule "
            "picks, so the rule rules out a wrong choice: an artifact.")


def baselines_headline(section: McqBaselinesSection) -> tuple[str, str]:
    """(level, sentence) over the rules of :func:`mcq_baselines`, each complement counted once
    with its rule."""
    tested = [r for r in section.rows if not r.complement_of]
    flagged = [r for r in tested if r.significant]
    note = "".join(f" (“{r.name}” is the complement of “{r.complement_of}” with two "
                   "choices and is counted with it.)" for r in section.rows if r.complement_of)
    if flagged:
        return "flagged", (f"{len(flagged)} of {len(tested)} rules that never read the question "
                           f"differ significantly from chance.{note}")
    return "clean", (f"None of the {len(tested)} rules that never read the question differs "
                     f"significantly from chance.{note}")
