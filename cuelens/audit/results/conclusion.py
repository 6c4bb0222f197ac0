"""The ``conclusion`` section (docs/methods.md §17): leakage, no meaningful leakage or
inconclusive, with its reason and evidence."""

from __future__ import annotations

import typing
from dataclasses import dataclass, field

from cuelens.audit.results.section import Section

CONCLUSIONS = ("leakage", "no_meaningful_leakage", "inconclusive")
CONCLUSION_TEXT = dict(zip(CONCLUSIONS, ("Leakage", "No meaningful leakage", "Inconclusive")))


@dataclass(frozen=True, repr=False)
class Conclusion(Section):
    """``conclusion`` (docs/methods.md §17): ``status`` (one of :data:`CONCLUSIONS`), the
    ``reason`` a dataset author reads first, the ``margin`` and ``level`` of the interval
    quoted, the headline leakage ``D`` with its interval (fractions, against the prior-matched
    baseline; None without word-cue statistics), the ``evidence`` behind the status and, when
    inconclusive, about how many more evaluated items would settle it (``items_needed``)."""

    key: typing.ClassVar[str] = "conclusion"
    nullable: typing.ClassVar[tuple[str, ...]] = ("D", "ci_low", "ci_high", "items_needed")

    status: str
    reason: str
    margin: float
    level: float
    D: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    evidence: list[dict] = field(default_factory=list)
    items_needed: int | None = None

    @property
    def headline(self) -> str:
        """``Leakage: <reason>`` — the one line every output opens with."""
        return f"{CONCLUSION_TEXT[self.status]}: {self.reason}"
