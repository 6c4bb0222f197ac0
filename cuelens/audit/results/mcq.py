"""The ``mcq_baselines`` section (docs/mcq-artifacts.md): the rules that never read the question
and where the right answers sit."""

from __future__ import annotations

import typing
from dataclasses import dataclass

from cuelens.audit.results.section import Section


@dataclass(frozen=True, kw_only=True, repr=False)
class McqRuleRow(Section):
    """One MCQ artifact rule (docs/mcq-artifacts.md): its accuracy against chance with the
    Bonferroni-corrected intervals, p-value and verdict; ``complement_of``: the rule it mirrors
    with two choices; ``coverage``: the question-only rule's share of questions seen in fitting;
    ``D_equivalence_high``: the cluster-robust equivalence bound (docs/methods.md §17)."""

    name: str
    fitted: bool | None = None
    accuracy: float
    accuracy_ci: list[float]
    chance: float
    D: float
    D_ci: list[float]
    p_value: float
    n_items: int
    complement_of: str | None = None
    significant: bool
    coverage: float | None = None
    D_equivalence_high: float | None = None
    equivalence_clusters: int | None = None


@dataclass(frozen=True, kw_only=True, repr=False)
class GoldPositionTest(Section):
    """Where the right answers of one split sit: counts per position against the balanced
    expectation, the chi-square test and the most common position (docs/mcq-artifacts.md)."""

    counts: list[int]
    expected: list[float]
    shares: list[float] | None = None
    chi2: float
    df: int
    p_value: float
    significant: bool
    most_common: dict | None = None
    warning: str | None = None


@dataclass(frozen=True, kw_only=True, repr=False)
class McqBaselinesSection(Section):
    """``mcq_baselines`` (docs/mcq-artifacts.md): the rules that never read the question, each
    an :class:`McqRuleRow` tested against chance (Bonferroni at ``bonferroni_alpha``), and a
    :class:`GoldPositionTest` per split role."""

    key: typing.ClassVar[str] = "mcq_baselines"

    n_items: int
    chance: float
    choice_counts: dict[str, int] | None = None
    fitted_on: str | None = None
    bonferroni_alpha: float | None = None
    ci_level: float | None = None
    rows: list[McqRuleRow]
    gold_position: dict[str, GoldPositionTest]
