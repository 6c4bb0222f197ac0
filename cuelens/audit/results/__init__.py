"""The typed results.json sections (docs/results-schema.md), one module per kind of section; the
whole file is :class:`ScanSections` (docs/ARCHITECTURE.md)."""

from cuelens.audit.results.conclusion import CONCLUSION_TEXT, CONCLUSIONS, Conclusion
from cuelens.audit.results.config import DEFAULT_MARGIN, ConfigSection, ScanSettings
from cuelens.audit.results.cues import (CueFinding, CueRow, CueStats, EasyHardSection,
                                        LeakageSection)
from cuelens.audit.results.dataset import DatasetSummary, SplitSummary
from cuelens.audit.results.examples import ExamplesSection
from cuelens.audit.results.features import FeatureRow, FeaturesSection
from cuelens.audit.results.hygiene import HygieneSection, OverlapRow, SplitHygiene
from cuelens.audit.results.lengths import LengthBaseline, LengthsSection, LengthSummary
from cuelens.audit.results.mcq import GoldPositionTest, McqBaselinesSection, McqRuleRow
from cuelens.audit.results.probe import (LLMProbeSection, ProbeSection, ProbeSections,
                                         about_a_model, model_name)
from cuelens.audit.results.scan import SCHEMA_VERSION, ScanSections
from cuelens.audit.results.section import Section, typed_reads
from cuelens.audit.results.segmentation import SegmentationSection
from cuelens.audit.results.shortcuts import PreferenceSection, SubsetsSection

__all__ = ["CONCLUSIONS", "CONCLUSION_TEXT", "DEFAULT_MARGIN", "SCHEMA_VERSION", "Conclusion",
           "ConfigSection", "CueFinding", "CueRow", "CueStats", "DatasetSummary",
           "EasyHardSection", "ExamplesSection", "FeatureRow", "FeaturesSection",
           "GoldPositionTest", "HygieneSection", "LLMProbeSection", "LeakageSection",
           "LengthBaseline", "LengthSummary", "LengthsSection", "McqBaselinesSection",
           "McqRuleRow", "OverlapRow", "PreferenceSection", "ProbeSection", "ProbeSections",
           "ScanSections", "ScanSettings", "Section", "SegmentationSection", "SplitHygiene",
           "SplitSummary", "SubsetsSection", "about_a_model", "model_name", "typed_reads"]
