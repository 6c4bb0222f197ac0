"""One section of the report page (:class:`Section`, or ``None`` when the results lack its part)
and the helpers the section modules share (docs/report.md, "Sections")."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from cuelens.reports.options import ReportOptions


@dataclass
class Figure:
    id: str
    caption: str
    spec: dict


@dataclass
class Section:
    key: str  # also the template name: templates/sections/<key>.html.j2 and the anchor id
    title: str
    context: dict = field(default_factory=dict)
    figures: dict[str, Figure] = field(default_factory=dict)
    client: dict = field(default_factory=dict)  # merged into the page's JSON data
    terms: list[str] = field(default_factory=list)  # abbreviations it shows (reports.glossary)

    def add_figure(self, name: str, caption: str, spec: dict) -> None:
        self.figures[name] = Figure(f"fig-{self.key}-{name}", caption, spec)


@dataclass
class Verdict:
    """One headline of the summary block: a verdict level (flagged / mild / clean), its
    sentence, the section holding the evidence and what it is about."""

    level: str
    text: str
    section: str
    about: str


Builder = Callable[[dict, ReportOptions], "Section | None"]


def pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{100 * x:.{digits}f}%"


def label_keys(label_names: list[str], *dists: Mapping[str, float]) -> list[str]:
    """The keys of ``dists``: dataset labels first, in their order, then any other keys (e.g. the
    MCQ distribution test's "cue choice" / "other choice")."""
    present = {k for d in dists for k in d}
    return [l for l in label_names if l in present] + sorted(present - set(label_names))
