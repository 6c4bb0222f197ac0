"""The report of ``audit judge`` (kind ``judge_log``, docs/preference.md): position consistency of
an LLM judge that saw every pair in both orders.
"""

from __future__ import annotations

from cuelens.reports import figures as F
from cuelens.reports.options import ReportOptions
from cuelens.reports.section import Section, pct


def judge_log(results: dict, options: ReportOptions) -> Section | None:
    """Position consistency of an LLM judge run in both orders."""
    from cuelens.audit.judge import judge_verdict

    biased = results["flips_to_first"].get("significant", False)
    sec = Section("judge_log", "Judge position consistency", context={
        "r": results, "verdict": judge_verdict(results),
        "level": "flagged" if biased else "clean"})
    parts = [("consistent", results["consistent"]), ("flipped", results["flips"]),
             ("tie in one order only", results["tie_inconsistent"])]
    sec.add_figure("rates", "Share of pairs by what happened when the two responses swapped "
                   "places, with 95% Wilson intervals.",
                   F.rate_bars([name for name, _ in parts], [p["rate"] or 0.0 for _, p in parts],
                               [p["ci"] for _, p in parts], "share of pairs",
                               text=[f"{pct(p['rate'])} ({p['count']:,})" for _, p in parts]))
    return sec
