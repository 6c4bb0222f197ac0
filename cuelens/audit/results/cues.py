"""The word-cue sections (docs/methods.md §2–4): ``cues`` rows, ``cue_stats``, ``cue_finding``,
``leakage`` and ``easy_hard``."""

from __future__ import annotations

import typing
from dataclasses import dataclass, field

from cuelens.audit.results.section import Section


@dataclass(frozen=True, kw_only=True, repr=False)
class CueRow(Section):
    """One row of ``cues`` (docs/methods.md §2): a word and a label, their counts, every cue
    metric and whether its z passes the Bonferroni threshold."""

    key: typing.ClassVar[str] = "cues"

    token: str
    label: str
    count: int
    label_count: int
    metrics: dict[str, float | None]
    significant: bool
    excluded: str | None = None  # why the row is never significant (a rare label)

    @property
    def z(self) -> float:
        """The row's z statistic (0 when it has none)."""
        z = self.metrics.get("z")
        return float(z) if isinstance(z, (int, float)) else 0.0


@dataclass(frozen=True, kw_only=True, repr=False)
class CueStats(Section):
    """``cue_stats``: the cue test's Bonferroni threshold, its number of tests and level, the
    minimum count and the split the cues were counted on."""

    key: typing.ClassVar[str] = "cue_stats"

    bonferroni_z: float
    n_tests: int | None = None
    alpha: float | None = None
    min_count: int | None = None
    fitted_on: str | None = None


@dataclass(frozen=True, kw_only=True, repr=False)
class CueFinding(Section):
    """``cue_finding`` (docs/results-schema.md): how many cues are significant, the evaluated
    items they cover (None: not recorded) and the strongest (``token``, ``label``, ``z``)."""

    key: typing.ClassVar[str] = "cue_finding"
    nullable: typing.ClassVar[tuple[str, ...]] = ("items_covered", "share_items",
                                                  "bonferroni_z")

    n_significant: int
    items_covered: int | None = None
    share_items: float | None = None
    bonferroni_z: float | None = None
    top: list[dict]


@dataclass(frozen=True, kw_only=True, repr=False)
class LeakageSection(Section):
    """``leakage`` (docs/methods.md §3): the metric × aggregator table, its headline ``best``
    and verdict, the baselines and the fold groups; the verdict, the baselines and the
    selection ``None`` in files written before them."""

    key: typing.ClassVar[str] = "leakage"

    majority: float
    table: list[dict] = field(default_factory=list)  # empty: a hand-made file without one
    best: dict
    flagged: bool | None = None
    verdict: str | None = None
    baselines: list[dict] | None = None
    baseline: dict | None = None
    selection: dict | None = None
    interval_note: str | None = None
    fold_seed_D: list[float] | None = None
    groups: dict | None = None

    @property
    def headline_verdict(self) -> str:
        """The verdict; in files written before verdicts, ``significant`` when flagged, else
        ``mild`` above chance and ``chance`` at or below it (every reader's one rule)."""
        return self.verdict or ("significant" if self.flagged else
                                "mild" if self.best["D"] > 0 else "chance")

    @property
    def reference(self) -> dict:
        """The baseline every D is read against (``name``, ``accuracy``): the prior-matched
        constant (docs/methods.md §11), or the majority in files written before it."""
        return self.baseline or {"name": "majority", "accuracy": self.majority}

    @property
    def level(self) -> float:
        """The confidence level of the headline's interval (95% in files written before it)."""
        return float((self.selection or {}).get("level", 0.95))


@dataclass(frozen=True, kw_only=True, repr=False)
class EasyHardSection(Section):
    """``easy_hard`` (docs/methods.md §4): how many evaluated items the headline cue-only
    classifier answers (easy) in most repetitions, under which folds and model; the settings
    ``None`` in hand-made or older files."""

    key: typing.ClassVar[str] = "easy_hard"

    easy: int
    hard: int
    hard_fraction: float | None = None
    folds: int | None = None
    iterations: int | None = None
    seed: int | None = None
    metric: str | None = None
    aggregator: str | None = None
    split: str | None = None
    # the headline's accuracy interval covers the majority baseline: the split separates
    # lucky from unlucky items, not cue-bearing from clean ones
    chance_level: bool | None = None

    @property
    def easy_share(self) -> float | None:
        """The easy items' share of the evaluated ones (None: no item)."""
        total = self.easy + self.hard
        return self.easy / total if total else None
