"""The whole scan of preference pairs (docs/preference.md): the word-cue scan of the responses
plus the ``preference`` shortcuts and, per subset, the ``subsets`` table.

The responses are laid out as NLI-shaped items labelled ``chosen``/``rejected`` and grouped by
prompt (:func:`cuelens.data.preference.as_dataset`), so :func:`~cuelens.audit.pipeline.scan_dataset`
runs unchanged (docs/preference.md, "Word cues and the response-only baseline"). Nothing here
prints.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from cuelens.audit.config import ScanConfig
from cuelens.audit.pipeline import Progress, Scan, scan_sections
from cuelens.audit.preference import preference_section, shortcut_rows, shortcut_scores
from cuelens.audit.subsets import (grouped, leakage_column, normal_subsets, preference_cells,
                                   scanned_subsets, subset_table)
from cuelens.audit.leakage import bow_name
from cuelens.audit.results import PreferenceSection, ScanSections, SubsetsSection
from cuelens.data.dataset import Split, Task
from cuelens.data.labels import LabelFindings
from cuelens.data.preference import PREFERENCE_TASK, Preferences, as_dataset

RESPONSE_BOW = "response-only BoW LR"
RESPONSE_GROUPS = "prompt (both responses of a pair and every pair of one prompt)"


def preference_subsets(preferences: Preferences, scanned, config: ScanConfig,
                       field: str, scores: dict[str, np.ndarray]) -> SubsetsSection | None:
    """The ``subsets`` table of the evaluated pairs (None when they hold one subset only);
    ``scores``: their :func:`~cuelens.audit.preference.shortcut_scores`."""
    findings = LabelFindings()
    normal = {name: normal_subsets(split.subsets, findings)
              for name, split in preferences.splits.items()}
    evaluated = normal[scanned.test.name]
    if len(set(evaluated)) < 2:
        return None

    def values(split: Split) -> list[str]:  # a response's subset is its pair's
        return list(np.repeat(np.asarray(normal[split.name], dtype=object), 2))

    groups = grouped(evaluated)
    cells = {s: preference_cells(shortcut_rows(scores, index)) for s, index in groups.items()}
    sizes = {s: len(i) for s, i in groups.items()}
    leakage = leakage_column(scanned, field, scanned_subsets(sizes), values, config)
    return subset_table(field, "win rate", sizes, cells, preference_cells(shortcut_rows(scores)),
                        leakage=leakage, rewritten=findings.rewritten())


def scan_preferences(preferences: Preferences, config: ScanConfig | None = None, *,
                     subset_field: str | None = None,
                     progress: Progress | None = None) -> Scan:
    """Scan preference pairs: results.json with ``dataset.task`` = ``preference``, the word-cue
    sections of the responses, ``preference`` and (with subsets) ``subsets``."""
    config = config or ScanConfig()
    dataset = as_dataset(preferences)
    result = scan_sections(dataset, config, features=(), progress=progress)
    shape = next(iter(preferences.splits.values())).shape
    scores = {role: shortcut_scores(split) for role, split in preferences.splits.items()}
    preference = preference_section(preferences.splits, shape, scores)
    if progress is not None:
        progress("preference shortcuts", 1.0)
    table = preference_subsets(preferences, dataset, config, subset_field or "subset",
                               scores[dataset.test.name])
    if table is not None and progress is not None:
        progress("subsets", 1.0)
    return replace(result, sections=_in_preference_terms(result.sections, preference,
                                                         table)).advised()


def _in_preference_terms(sections: ScanSections, preference: PreferenceSection,
                         subsets: SubsetsSection | None) -> ScanSections:
    """The word-cue sections with their texts named as responses of pairs grouped by prompt,
    and the ``preference`` and ``subsets`` sections."""
    leakage, lengths = sections.leakage, sections.lengths
    assert leakage is not None and leakage.groups is not None and lengths is not None  # NLI-shaped
    baselines = [{**row, "name": RESPONSE_BOW} if row["name"] == bow_name(Task.NLI) else row
                 for row in leakage.baselines or []]
    baseline = lengths.baseline and replace(lengths.baseline, name="response length only")
    return replace(sections, dataset=replace(sections.dataset, task=PREFERENCE_TASK),
                   leakage=replace(leakage, baselines=baselines,
                                   groups={**leakage.groups, "unit": RESPONSE_GROUPS}),
                   lengths=replace(lengths, unit=lengths.unit.replace("hypothesis", "response"),
                                   baseline=baseline),
                   preference=preference, subsets=subsets)
