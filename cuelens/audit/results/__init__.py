"""The typed results.json sections (docs/results-schema.md), one module per kind of section:
``section`` (the base: writing, reading, the bounded repr), ``dataset``, ``conclusion``,
``hygiene``, ``cues`` (cues, cue_stats, cue_finding, leakage, easy_hard), ``mcq``, ``features``,
``shortcuts`` (preference, subsets), ``segmentation``, ``scan`` (:class:`ScanSections`, a scan's whole file) and
``probe`` (a probe's). The files a scan writes are :mod:`cuelens.audit.scan_outputs`'.
"""

from cuelens.audit.results.conclusion import CONCLUSION_TEXT, CONCLUSIONS, Conclusion
from cuelens.audit.results.cues import (CueFinding, CueRow, CueStats, EasyHardSection,
                                        LeakageSection)
from cuelens.audit.results.dataset import DatasetSummary, SplitSummary
from cuelens.audit.results.features import FeatureRow, FeaturesSection
from cuelens.audit.results.hygiene import HygieneSection, OverlapRow, SplitHygiene
from cuelens.audit.results.mcq import GoldPositionTest, McqBaselinesSection, McqRuleRow
from cuelens.audit.results.probe import (LLMProbeSection, ProbeSection, ProbeSections,
                                         about_a_model, model_name)
from cuelens.audit.results.scan import SCHEMA_VERSION, ScanSections
from cuelens.audit.results.section import Section, typed_reads
from cuelens.audit.results.segmentation import SegmentationSection
from cuelens.audit.results.shortcuts import PreferenceSection, SubsetsSection

__all__ = ["CONCLUSIONS", "CONCLUSION_TEXT", "SCHEMA_VERSION", "Conclusion", "CueFinding",
           "CueRow", "CueStats", "DatasetSummary", "EasyHardSection", "FeatureRow",
           "FeaturesSection", "GoldPositionTest", "HygieneSection", "LLMProbeSection",
           "LeakageSection", "McqBaselinesSection", "McqRuleRow", "OverlapRow",
           "PreferenceSection", "ProbeSection", "ProbeSections", "ScanSections", "Section",
           "SegmentationSection",
           "SplitHygiene", "SplitSummary", "SubsetsSection", "about_a_model", "model_name",
           "typed_reads"]
