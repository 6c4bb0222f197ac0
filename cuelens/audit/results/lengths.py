"""The ``lengths`` section (docs/methods.md §4b): words per text by label and the length-only
baseline."""

from __future__ import annotations

import typing
from dataclasses import dataclass

from cuelens.audit.results.section import Section


@dataclass(frozen=True, kw_only=True, repr=False)
class LengthSummary(Section):
    """One label's texts: how many, their histogram (texts with 0, 1, … ``max_words`` − 1
    words, then ``max_words`` or more) and their mean and median (null without a text)."""

    nullable: typing.ClassVar[tuple[str, ...]] = ("mean", "median")

    n: int
    histogram: list[int]
    mean: float | None = None
    median: float | None = None


@dataclass(frozen=True, kw_only=True, repr=False)
class LengthBaseline(Section):
    """The length-only baseline (NLI, docs/methods.md §4b): the out-of-fold accuracy of a tree
    on the text's length with its exact 95% interval, the majority label's on the same
    protocol and D, their difference."""

    name: str
    accuracy: float
    ci_low: float
    ci_high: float
    majority: float
    D: float
    protocol: str


@dataclass(frozen=True, kw_only=True, repr=False)
class LengthsSection(Section):
    """``lengths`` (docs/methods.md §4b): the ``unit`` counted (words per hypothesis, choice or
    response), the histograms' last bin, a :class:`LengthSummary` per label (MCQ: the correct
    and the other choices) and, for NLI, the :class:`LengthBaseline`."""

    key: typing.ClassVar[str] = "lengths"

    unit: str
    max_words: int
    by_label: dict[str, LengthSummary]
    baseline: LengthBaseline | None = None
