"""A scan's whole results.json (docs/results-schema.md), :class:`ScanSections`: every section,
built once, in the file's key order."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace

from cuelens.audit.results.conclusion import Conclusion
from cuelens.audit.results.config import ConfigSection
from cuelens.audit.results.cues import CueFinding, CueRow, CueStats, EasyHardSection, LeakageSection
from cuelens.audit.results.dataset import DatasetSummary
from cuelens.audit.results.examples import ExamplesSection
from cuelens.audit.results.features import FeatureRow, FeaturesSection
from cuelens.audit.results.hygiene import HygieneSection
from cuelens.audit.results.lengths import LengthsSection
from cuelens.audit.results.mcq import McqBaselinesSection
from cuelens.audit.results.section import Section, typed_reads
from cuelens.audit.results.segmentation import SegmentationSection
from cuelens.audit.results.shortcuts import PreferenceSection, SubsetsSection
from cuelens.version import __version__

SCHEMA_VERSION = "1.0"


@dataclass(frozen=True, kw_only=True, repr=False)
class ScanSections(Section):
    """A scan's whole results.json, built once from all its sections (``None``: not computed,
    e.g. no word-cue statistics for MCQ items with varying numbers of choices)."""

    schema_version: str = SCHEMA_VERSION
    tool: dict = field(default_factory=lambda: {"name": "cuelens", "version": __version__})
    config: ConfigSection
    dataset: DatasetSummary
    conclusion: Conclusion | None = None
    segmentation: SegmentationSection | None = None
    warnings: list[str] | None = None  # e.g. text that looks unsegmented (docs/languages.md)
    hygiene: HygieneSection | None = None
    cues: list[CueRow] | None = None
    cue_stats: CueStats | None = None
    cue_finding: CueFinding | None = None
    leakage: LeakageSection | None = None
    mcq_baselines: McqBaselinesSection | None = None
    easy_hard: EasyHardSection | None = None
    examples: ExamplesSection | None = None
    features: list[FeatureRow] | None = None
    features_config: FeaturesSection | None = None
    lengths: LengthsSection | None = None
    notes: list[str] | None = None
    next_steps: list | None = None
    preference: PreferenceSection | None = None
    subsets: SubsetsSection | None = None

    def advised(self, conclusion: Callable[[dict], Conclusion],
                next_steps: Callable[[dict], list]) -> tuple[ScanSections, dict]:
        """These sections with their ``conclusion`` and then their ``next_steps`` computed from
        every other section (:func:`cuelens.audit.advice.advise`), and their results.json
        content (their ``to_json``, built once): call it once the last section is in."""
        bare = replace(self, conclusion=None, next_steps=None)
        with typed_reads():  # the sections read as they are, never parsed back
            results = bare.to_json()  # once: the conclusion is the one section added
            concluded = conclusion(results)
            added = {**results, Conclusion.key: concluded.to_json()}
            steps = next_steps(added)
        advised = replace(bare, conclusion=concluded, next_steps=steps)
        added["next_steps"] = steps
        return advised, {f.name: added[f.name] for f in fields(advised) if f.name in added}
