"""The report of ``audit compare`` (kind ``compare``): two scans side by side."""

from __future__ import annotations

from cuelens.audit.results import CONCLUSION_TEXT
from cuelens.jsonio import format_number
from cuelens.reports.options import ReportOptions
from cuelens.audit.findings import d_with_ci
from cuelens.reports.section import Section, Verdict


COMPARE_STATUS = {"improved": "clean", "worsened": "flagged", "mixed": "mild",
                  "unchanged": "neutral", "still_leaking": "flagged"}
# verdict box class: no green when nothing changed, never green while the data still leak


def compare(results: dict, options: ReportOptions) -> Section | None:
    """Two scans side by side (``audit compare``): the status, protocol warnings, every measure
    coloured by the direction of its change, D with CIs, cues gained, lost and kept."""
    sides = [results["before"], results["after"]]
    from cuelens.audit.compare import format_value

    rows = [{**c, "before_text": format_value(c["before"], c["unit"]),
             "after_text": format_value(c["after"], c["unit"]),
             "marks": [" *" if flag else "" for flag in c.get("significant", [False, False])]}
            for c in results.get("changes", [])]
    return Section("compare", "Before and after", context={
        "c": results, "d_text": [d_with_ci(s) for s in sides], "rows": rows,
        "level": COMPARE_STATUS.get(results.get("status", ""), "neutral"),
        "conclusion_text": CONCLUSION_TEXT,
        "z": lambda cue, key="z": format_number(cue[key], 1), "strip": interval_strip(sides)})


def interval_strip(sides: list[dict]) -> dict:
    """Positions (percent of the strip's width) of each scan's D and 95% interval on one axis
    that includes 0: the compare page draws them with HTML alone, so it needs no plotly.js."""
    ends = [100 * s.get(key, s["D"]) for s in sides for key in ("ci_low", "ci_high")] + [0.0]
    low, high = min(ends), max(ends)
    span = (high - low) or 1.0

    def at(value: float) -> float:
        return round(100 * (100 * value - low) / span, 2)

    rows = [{"name": name, "source": s["source"], "D": 100 * s["D"],
             "left": at(s.get("ci_low", s["D"])),
             "width": max(at(s.get("ci_high", s["D"])) - at(s.get("ci_low", s["D"])), 0.4),
             "point": at(s["D"])} for name, s in zip(("before", "after"), sides)]
    return {"rows": rows, "zero": at(0.0), "low": low, "high": high}


def compare_verdict(results: dict) -> Verdict:
    """The page's verdict: the comparison's overall status and headline (as the terminal)."""
    return Verdict(COMPARE_STATUS.get(results.get("status", ""), "neutral"),
                   results.get("headline", ""), "compare", "before and after")
