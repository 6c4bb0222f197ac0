"""The report's page table: for each kind of result, its section builders in page order; adding a
section is one entry here and its template (docs/report.md, "Sections")."""

from __future__ import annotations

from cuelens.reports.compare import compare
from cuelens.reports.contrast import contrast_judge, contrast_pairs
from cuelens.reports.glossary import GLOSSARY
from cuelens.reports.judge import judge_log
from cuelens.reports.llm_probe import llm_probe
from cuelens.reports.options import ReportOptions
from cuelens.reports.preference import preference
from cuelens.reports.probe import probe
from cuelens.reports.scan import (cue_words, easy_hard, explorer, features, hygiene, leakage,
                                  lengths, mcq_baselines, next_steps, overview)
from cuelens.reports.score_pairs import score_pairs
from cuelens.reports.section import Builder, Section
from cuelens.reports.subsets import subsets
from cuelens.reports.summary import summary
from cuelens.registry import Registry

SCAN_SECTIONS: tuple[Builder, ...] = (overview, hygiene, leakage, mcq_baselines, lengths,
                                      cue_words, explorer, easy_hard, features)

PAGES: Registry[tuple[Builder, ...]] = Registry("report page", {
    "scan": (summary, *SCAN_SECTIONS, subsets, next_steps),
    "preference": (summary, *SCAN_SECTIONS, preference, subsets, next_steps),
    # a model probed directly, through a predictions file or an eval log, or prompted (--llm),
    # on the data of a scan or of a preference scan
    "probe": (summary, probe, llm_probe, *SCAN_SECTIONS, preference, subsets, next_steps),
    "score_pairs": (summary, score_pairs),
    "contrast_judge": (summary, contrast_judge),
    "contrast_pairs": (summary, contrast_pairs),
    "compare": (summary, compare),
    "judge_log": (summary, judge_log),
})


def result_kind(results: dict) -> str:
    """The key of ``results``' page in :data:`PAGES`."""
    if "kind" in results:
        return str(results["kind"])
    if results.get("probe") is not None or "llm_probe" in results:
        return "probe"
    return "preference" if "preference" in results else "scan"


def build_sections(results: dict, options: ReportOptions | None = None) -> list[Section]:
    """The page's sections in order (those whose part the results lack are left out), ending
    with the key to the abbreviations they use."""
    options = options or ReportOptions()
    sections = [s for builder in PAGES[result_kind(results)]
                if (s := builder(results, options)) is not None]
    terms = [t for t in GLOSSARY if any(t in s.terms for s in sections)]
    if terms:
        sections.append(Section("glossary", "Key to abbreviations",
                                context={"terms": [(t, GLOSSARY[t]) for t in terms]}))
    return sections
