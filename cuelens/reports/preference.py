"""The preference-shortcut section of a preference scan's report (docs/preference.md): length,
formatting and position rules that predict the chosen response.
"""

from __future__ import annotations

from cuelens.audit.preference import shortcut_verdict
from cuelens.audit.results import PreferenceSection
from cuelens.reports import figures as F
from cuelens.reports.options import ReportOptions
from cuelens.reports.scan import calm
from cuelens.reports.section import Section, pct
from cuelens.wording import plural


def preference(results: dict, options: ReportOptions) -> Section | None:
    """Length, formatting and position shortcuts of preference pairs, per split."""
    pref = PreferenceSection.in_results(results)
    if pref is None:
        return None
    splits = {role: {**split, "verdicts": [shortcut_verdict(r) for r in split["shortcuts"]
                                           if r["decided"]]}
              for role, split in pref.splits.items()}
    flagged = sum(r["significant"] for _, r in pref.rows)
    sec = Section("preference", "Preference shortcuts: length, formatting, position", context={
        "splits": splits, "shape": pref.shape,
        "level": "flagged" if flagged else calm("clean", results),
        "headline": (f"{plural(flagged, 'shortcut predicts', 'shortcuts predict')} the chosen "
                     "response significantly (Holm-corrected)." if flagged else
                     "No length, formatting or position rule predicts the chosen response "
                     "significantly.")})
    role, split = next(iter(pref.splits.items()))
    rows = [r for r in split["shortcuts"] if r["rate"] is not None]
    if rows:
        sec.add_figure("rates", f"How often each rule picks the chosen response ({role} split) "
                       "among the pairs it tells apart, with 95% Wilson intervals; the dashed line "
                       "is a coin flip. Red: significant after Holm's correction.",
                       F.tested_rate_bars(rows, "shortcut", "rate", "win rate",
                                          text=[f"{pct(r['rate'])} of {r['decided']:,}"
                                                for r in rows],
                                          reference=(50, "coin flip")))
    return sec
