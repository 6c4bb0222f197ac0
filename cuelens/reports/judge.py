"""The report of ``audit judge`` (kind ``judge_log``, docs/preference.md): position consistency of
an LLM judge that saw every pair in both orders.
"""

from __future__ import annotations

from cuelens.reports import figures as F
from cuelens.reports.options import ReportOptions
from cuelens.reports.section import Section, Verdict, pct


def judge_log_verdict(results: dict) -> Verdict:
    """The page's verdict: the judge's position consistency (as the terminal), flagged when
    its flips favour one position."""
    from cuelens.audit.judge import judge_verdict

    biased = results["flips_to_first"].get("significant", False)
    return Verdict("flagged" if biased else "clean", judge_verdict(results), "judge_log",
                   "judge position consistency")


def judge_log(results: dict, options: ReportOptions) -> Section | None:
    """Position consistency of an LLM judge run in both orders."""
    verdict = judge_log_verdict(results)
    sec = Section("judge_log", "Judge position consistency", context={
        "r": results, "verdict": verdict.text, "level": verdict.level})
    parts = [("consistent", results["consistent"]), ("flipped", results["flips"]),
             ("tie in one order only", results["tie_inconsistent"])]
    sec.add_figure("rates", "Share of pairs by what happened when the two responses swapped "
                   "places, with 95% Wilson intervals.",
                   F.rate_bars([name for name, _ in parts], [p["rate"] or 0.0 for _, p in parts],
                               [p["ci"] for _, p in parts], "share of pairs",
                               text=[f"{pct(p['rate'])} ({p['count']:,})" for _, p in parts]))
    return sec
