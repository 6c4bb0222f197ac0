"""The summary block that opens every report (docs/methods.md §10): the headline verdicts of the
result, then the ranked findings (:func:`cuelens.audit.findings.findings`), each linking to
its evidence.
"""

from __future__ import annotations

from collections.abc import Callable

from cuelens.audit.conclusion import conclusion_of, measurable
from cuelens.audit.results import ConfigSection, LeakageSection, McqBaselinesSection
from cuelens.probes.sanity import probe_verdict
from cuelens.reports.compare import compare_verdict
from cuelens.reports.contrast import contrast_judge_verdict, contrast_pairs_verdict
from cuelens.reports.judge import judge_log_verdict
from cuelens.reports.llm_probe import llm_verdict
from cuelens.reports.options import ReportOptions
from cuelens.reports.probe import BOX_LEVEL
from cuelens.reports.scan import calm, verdict
from cuelens.reports.score_pairs import score_pairs_verdict
from cuelens.reports.section import Section, Verdict

MAX_FINDINGS_SHOWN = 6  # findings listed at once in the summary; the rest behind "show all"
SEVERITY_LEVEL = {"high": "flagged", "medium": "mild", "low": "clean", "info": "clean"}
#: the conclusion's box: green only for no meaningful leakage (docs/report.md)
CONCLUSION_LEVEL = {"leakage": "flagged", "inconclusive": "mild",
                    "no_meaningful_leakage": "clean"}


def conclusion_verdict(results: dict) -> Verdict | None:
    """The dataset's conclusion (:func:`cuelens.audit.conclusion.conclusion_of`) as the first
    headline of a scan's or probe's page; None for other kinds of results."""
    if results.get("kind") or not any(key in results for key in SCANNED):
        return None
    conclusion = conclusion_of(results)
    first = conclusion.evidence[0] if conclusion.evidence else {}
    section = EVIDENCE_SECTION.get(first.get("code", ""), first.get("kind", "overview"))
    return Verdict(CONCLUSION_LEVEL[conclusion.status], conclusion.headline, section,
                   "conclusion")


#: where the evidence of a conclusion's first measure is shown (its ``code``; else its kind)
EVIDENCE_SECTION = {"rule": "mcq_baselines", "preference_shortcut": "preference",
                    "subset_shortcut": "subsets"}


SCANNED = ("leakage", "mcq_baselines", "preference")  # sections a conclusion is drawn from


def effect_text(effect: float | None, low: float | None, high: float | None, unit: str) -> str:
    """``+23.1 points [+21.0, +25.2]``, ``57.0% [53.1, 60.8]`` or ``1,210 items`` (effects are
    already in ``unit``: :mod:`cuelens.audit.findings`)."""
    if effect is None:
        return "–"
    if unit == "points":
        fmt = "{:+.1f}"
    elif unit == "%":
        fmt = "{:.2f}" if 0 < abs(effect) < 1 else "{:.1f}"  # 2 copies of 9,842: 0.02%
    else:
        fmt = "{:,.0f}"
    text = fmt.format(effect) + ("%" if unit == "%" else f" {unit}")
    if low is not None and high is not None:
        text += f" [{fmt.format(low)}, {fmt.format(high)}]"
    return text


def verdicts(results: dict) -> list[Verdict]:
    """The headline verdicts of a results file: the model's first for a probe report, then the
    dataset's conclusion, then the scan's tests."""
    out = []
    pr = results.get("probe")
    if pr:
        level, sentence = probe_verdict(pr)
        out.append(Verdict(BOX_LEVEL.get(level, "clean"), sentence, "probe",
                           f"model {pr.get('model', {}).get('name', '')}"))
    lp = results.get("llm_probe")
    if lp and lp.get("templates"):
        out.append(llm_verdict(lp))
    conclusion = conclusion_verdict(results)
    if conclusion is not None:
        out.append(conclusion)
    leak = LeakageSection.in_results(results)
    if leak is not None and measurable(results):
        level, sentence = verdict(leak, ConfigSection.of(results).flag_threshold, results)
        out.append(Verdict(calm(level, results), sentence, "leakage", "cue leakage"))
    mb = McqBaselinesSection.in_results(results)
    if mb is not None:
        from cuelens.audit.mcq_baselines import baselines_headline

        level, sentence = baselines_headline(mb)
        out.append(Verdict(calm(level, results), sentence, "mcq_baselines",
                           "answer-order and length rules"))
    kind = results.get("kind")
    if kind in KIND_VERDICTS:
        out.append(KIND_VERDICTS[kind](results))
    return out


KIND_VERDICTS: dict[str, Callable[[dict], Verdict]] = {
    "score_pairs": score_pairs_verdict, "contrast_judge": contrast_judge_verdict,
    "contrast_pairs": contrast_pairs_verdict, "compare": compare_verdict,
    "judge_log": judge_log_verdict}


def summary(results: dict, options: ReportOptions) -> Section | None:
    """The page's first block: the verdicts, then the ranked findings
    (:func:`cuelens.audit.findings.findings`), each linking to its evidence."""
    from cuelens.audit.findings import findings  # read at call time (tests replace it)

    found = findings(results)
    rows = [{"kind": f.kind.replace("_", " "), "title": f.title, "severity": f.severity,
             "effect": effect_text(f.effect, f.ci_low, f.ci_high, f.unit), "items": f.items,
             "section": f.section, "level": SEVERITY_LEVEL.get(f.severity, "clean")}
            for f in found]
    return Section("summary", "Summary", context={
        "verdicts": verdicts(results), "findings": rows, "shown": MAX_FINDINGS_SHOWN},
        terms=["CI"] if any(f.ci_low is not None for f in found) else [])
