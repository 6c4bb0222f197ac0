"""MCQ artifact baselines (docs/mcq-artifacts.md, docs/methods.md §3, §12) in three registries:
:data:`RULES` (fitted on nothing), :data:`FITTED` (on the fitting split, or cross-fitted) and
:data:`NO_CONTEXT` (items with a passage and a separate question)."""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, partial
from itertools import chain
from typing import Protocol

import numpy as np

from cuelens.audit.chance import (ALPHA, accuracy_row, clustered_upper_bound, p_text,
                                  position_chi_square, tie_credit)
from cuelens.audit.item_parts import ItemParts, KeyCounts
from cuelens.audit.results import GoldPositionTest, McqBaselinesSection, McqRuleRow
from cuelens.audit.text_keys import as_keys, combine, text_key, text_keys
from cuelens.audit.tokenize import char_length, text_length, tokenize
from cuelens.data.dataset import Dataset, Split
from cuelens.registry import Registry
from cuelens.wording import plural

Rule = Callable[[str, list[str]], np.ndarray]


class FittedBaseline(Protocol):
    """A baseline fitted on the fitting items (docs/mcq-artifacts.md), part by part
    (:mod:`cuelens.audit.item_parts`): :meth:`add` counts a fitting part, :meth:`credit` gives
    each item of an evaluated part its credit from what the fitting items outside its plane
    taught."""

    def add(self, split: Split, planes: np.ndarray) -> None: ...

    def credit(self, split: Split, planes: np.ndarray) -> np.ndarray: ...


RULES: Registry[Rule] = Registry("MCQ rule")
#: name → a fresh baseline over that many planes
FITTED: Registry[Callable[[int], FittedBaseline]] = Registry("fitted MCQ baseline")
NO_CONTEXT: Registry[Callable[[int], FittedBaseline]] = Registry("no-context MCQ baseline")

rule = RULES.register  # per-item choice scorer ``(context, choices) -> scores``
fitted = FITTED.register
no_context = NO_CONTEXT.register  # as ``fitted``; only for items with a separate question


@rule("longest choice")
def _longest(context: str, choices: list[str]) -> np.ndarray:
    return np.array([char_length(c) for c in choices], dtype=np.float64)


@rule("shortest choice")
def _shortest(context: str, choices: list[str]) -> np.ndarray:
    return -_longest(context, choices)


@rule("longest in words")
def _longest_words(context: str, choices: list[str]) -> np.ndarray:
    return np.array([text_length(c) for c in choices], dtype=np.float64)


@cache
def stop_words() -> frozenset[str]:
    """scikit-learn's English stop words, imported on first use: the reports read this module's
    verdicts without loading scikit-learn."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return ENGLISH_STOP_WORDS


def content_tokens(text: str) -> set[str]:
    stop = stop_words()
    return {t for t in tokenize(text) if t not in stop}


@rule("overlap with question")
def _overlap(context: str, choices: list[str]) -> np.ndarray:
    shared = content_tokens(context)
    return np.array([len(content_tokens(c) & shared) for c in choices], dtype=np.float64)


def choice_counts(split: Split) -> np.ndarray:
    return np.array([len(c) for c in split.choices], dtype=np.int64)


def gold_positions(split: Split) -> np.ndarray:
    return np.asarray(split.labels, dtype=np.int64)


Context = Callable[[Split, int], str]


def rule_credit(split: Split, name: str, context: Context = Split.premise_context) -> np.ndarray:
    """Per-item credit of the rule ``name`` on ``split``, reading each item's ``context``."""
    scores = [RULES[name](context(split, i), split.choices[i]) for i in range(len(split))]
    return tie_credit(scores, gold_positions(split))


@fitted("answer position")
class _AnswerPosition:
    """The gold position most frequent among the fitting items (ties: the first)."""

    def __init__(self, planes: int) -> None:
        self.counts = np.zeros((planes, 0), dtype=np.int64)  # plane × gold position

    def add(self, split: Split, planes: np.ndarray) -> None:
        gold, (n_planes, known) = gold_positions(split), self.counts.shape
        width = max(known, int(gold.max(initial=-1)) + 1)
        grown = np.bincount(planes * width + gold,
                            minlength=n_planes * width).reshape(n_planes, width)
        grown[:, :known] += self.counts
        self.counts = grown

    def credit(self, split: Split, planes: np.ndarray) -> np.ndarray:
        outside = self.counts.sum(axis=0) - self.counts
        position = np.argmax(outside, axis=1)[planes] if outside.shape[1] else \
            np.zeros(len(planes), dtype=np.int64)
        k = choice_counts(split)
        hit = (gold_positions(split) == position).astype(np.float64)
        return np.where(position < k, hit, 1.0 / k)


def _key(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return " ".join(text.lower().split())


def hashed_keys(texts: Iterable[str]) -> np.ndarray:
    """The 64-bit fingerprint (:func:`~cuelens.audit.text_keys.text_key`) of each text's
    composed (NFC), lower-cased, space-normalised form (two texts collide with odds of about
    texts² / 2⁶⁵)."""
    return as_keys(b"".join(text_key(_key(text)) for text in texts))


def context_keys(split: Split, context: Context) -> np.ndarray:
    return hashed_keys(context(split, i) for i in range(len(split)))


def question_text(split: Split, i: int) -> str:
    """Item ``i``'s question without its passage (empty when it has none)."""
    return split.questions[i] or ""


class QuestionSeen:
    """1.0 per evaluated item whose premise + question occurs among the fitting items (hashed
    keys, :class:`~cuelens.audit.item_parts.KeyCounts`)."""

    def __init__(self, planes: int) -> None:
        self.contexts = KeyCounts(planes)

    def add(self, split: Split, planes: np.ndarray) -> None:
        self.contexts.add(context_keys(split, Split.premise_context), planes)

    def credit(self, split: Split, planes: np.ndarray) -> np.ndarray:
        keys = context_keys(split, Split.premise_context)
        return (self.contexts.outside(keys, planes) > 0).astype(np.float64)


class MemorisedAnswers:
    """Per evaluated item: credit of the choice given most often as the answer among fitting
    items with the same ``context`` text (their (context, answer) pairs as hashed keys)."""

    def __init__(self, planes: int, context: Context) -> None:
        self.answers, self.context = KeyCounts(planes), context

    def add(self, split: Split, planes: np.ndarray) -> None:
        answers = hashed_keys(choices[gold] for choices, gold in
                              zip(split.choices, gold_positions(split)))
        self.answers.add(combine(context_keys(split, self.context), answers), planes)

    def credit(self, split: Split, planes: np.ndarray) -> np.ndarray:
        k = choice_counts(split)
        pairs = combine(np.repeat(context_keys(split, self.context), k),
                        hashed_keys(chain.from_iterable(split.choices)))
        known = self.answers.outside(pairs, np.repeat(planes, k)).astype(np.float64)
        return tie_credit(np.split(known, np.cumsum(k)[:-1]), gold_positions(split))


fitted("question only")(partial(MemorisedAnswers, context=Split.premise_context))

NO_CONTEXT_OVERLAP = "no context: overlap"  # a rule: fitted on nothing


@no_context(NO_CONTEXT_OVERLAP)
class _NoContextOverlap:
    """The overlap rule reading the question alone."""

    def __init__(self, planes: int) -> None:
        pass

    def add(self, split: Split, planes: np.ndarray) -> None:
        pass

    def credit(self, split: Split, planes: np.ndarray) -> np.ndarray:
        return rule_credit(split, "overlap with question", question_text)


no_context("no context: question only")(partial(MemorisedAnswers, context=question_text))


@dataclass
class ItemCredit:
    """Per evaluated item: each baseline's credit (:data:`RULES`, :data:`FITTED`, then
    :data:`NO_CONTEXT` when some item has a separate question), its choices, whether its
    premise + question was seen among the fitting items, its choice set (:func:`choice_sets`);
    per split role, the gold positions and choice counts."""

    credit: dict[str, np.ndarray]
    k: np.ndarray
    seen: np.ndarray
    clusters: np.ndarray
    positions: dict[str, tuple[np.ndarray, np.ndarray]]


def credit_of_parts(parts: ItemParts) -> ItemCredit:
    """:class:`ItemCredit` of ``parts``: the fitted baselines count the fitting parts, then
    every baseline scores the evaluated parts, one part in memory at a time (besides a few
    numbers and hashed keys per item)."""
    learners = {name: make(parts.planes) for name, make in {**FITTED, **NO_CONTEXT}.items()}
    seen = QuestionSeen(parts.planes)
    positions: dict[str, list[tuple[np.ndarray, np.ndarray]]] = defaultdict(list)
    for split, planes in parts.fitting():
        for learner in (*learners.values(), seen):
            learner.add(split, planes)
        if not parts.cross_fitted:
            positions["train"].append((gold_positions(split), choice_counts(split)))
    evaluated = "all" if parts.cross_fitted else "test"
    columns: dict[str, list[np.ndarray]] = defaultdict(list)
    was_seen, clusters, questions = [], [], False
    for split, planes in parts.evaluated():
        questions = questions or any(split.questions)
        for name in RULES:
            columns[name].append(rule_credit(split, name))
        for name, learner in learners.items():
            columns[name].append(learner.credit(split, planes))
        was_seen.append(seen.credit(split, planes))
        clusters.append(choice_sets(split))
        positions[evaluated].append((gold_positions(split), choice_counts(split)))
    by_role = {role: (np.concatenate([gold for gold, _ in arrays]),
                      np.concatenate([k for _, k in arrays])) for role, arrays in positions.items()}
    names = [*RULES, *FITTED, *(NO_CONTEXT if questions else [])]
    return ItemCredit({name: np.concatenate(columns[name]) for name in names},
                      by_role[evaluated][1], np.concatenate(was_seen), np.concatenate(clusters),
                      by_role)


def item_credit(dataset: Dataset, folds: int = 5, seed: int = 0) -> dict[str, np.ndarray]:
    """Per-item credit of every registered baseline on the evaluated items of a dataset in
    memory (:func:`credit_of_parts`, fitted on train or cross-fitted over the grouped folds)."""
    return credit_of_parts(ItemParts.of_dataset(dataset, folds, seed)).credit


COMPLEMENTS = {"shortest choice": "longest choice"}  # with two choices per item


def complements(names: list[str], k: np.ndarray) -> dict[str, str]:
    """Rule → the rule it is the complement of, when every item has two choices."""
    if len(k) == 0 or not (k == 2).all():
        return {}
    return {rule: other for rule, other in COMPLEMENTS.items() if rule in names and other in names}


def mcq_baselines(dataset: Dataset, folds: int = 5, seed: int = 0,
                  extra: dict[str, float] | None = None) -> McqBaselinesSection:
    """:func:`baselines_of_parts` of a dataset held in memory, fitted on train or cross-fitted
    over the leakage table's grouped folds."""
    return baselines_of_parts(ItemParts.of_dataset(dataset, folds, seed), extra)


def baselines_of_parts(parts: ItemParts,
                       extra: dict[str, float] | None = None) -> McqBaselinesSection:
    """The ``mcq_baselines`` section (docs/results-schema.md) of ``parts``
    (:func:`credit_of_parts`): the in-memory and the streamed scan's; ``extra`` adds rows computed
    elsewhere on the same evaluated items (the choices-only BoW of the leakage table)."""
    items = credit_of_parts(parts)
    k, credit = items.k, items.credit
    accuracy = {name: float(values.mean()) for name, values in credit.items()}
    accuracy.update(extra or {})
    paired = complements(list(accuracy), k)
    threshold = ALPHA / (len(accuracy) - len(paired))
    rows = [{"name": name, "fitted": name not in RULES and name != NO_CONTEXT_OVERLAP,
             **accuracy_row(acc, k, 1 - threshold),
             **({"complement_of": paired[name]} if name in paired else {})}
            for name, acc in accuracy.items()]
    coverage = float(items.seen.mean())
    for row in rows:
        row["significant"] = bool(row["p_value"] < threshold)
        if row["name"] == "question only":
            row["coverage"] = round(coverage, 6)
    add_equivalence_bounds(rows, credit, k, items.clusters)
    positions = {role: position_chi_square(gold, k_role)
                 for role, (gold, k_role) in items.positions.items()}
    return McqBaselinesSection(
        n_items=len(k), chance=rows[0]["chance"],
        choice_counts={str(c): int(n) for c, n in zip(*np.unique(k, return_counts=True))},
        fitted_on=f"{parts.folds}-fold cross-fitting" if parts.cross_fitted else "train",
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
        return (f"{name}: no evaluated question occurs among the fitting items, so it can only "
                "guess.")
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
        return "flagged", (f"{len(flagged)} of {plural(len(tested), 'rule')} that never read the "
                           f"question {'differs' if len(flagged) == 1 else 'differ'} significantly "
                           f"from chance.{note}")
    return "clean", (f"None of the {plural(len(tested), 'rule')} that never read the question "
                     f"differs significantly from chance.{note}")
