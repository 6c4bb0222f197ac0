"""The probe's results sections, typed and built once in the file's key order by
:func:`probe_section` (docs/methods.md §6–7; docs/results-schema.md ``probe``); a new section is
one more field and one more line of :func:`probe_section`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cuelens.audit.advice import next_steps
from cuelens.audit.results import LLMProbeSection, ProbeSection, ProbeSections, ScanSections
from cuelens.data.dataset import Dataset, Task
from cuelens.probes.accuracy import accuracy_test, easy_hard_gap
from cuelens.probes.cues import Cue
from cuelens.probes.data_map import other_data_note, read_data_map
from cuelens.probes.distribution import distribution_test
from cuelens.probes.position import PositionBiasOptions
from cuelens.probes.position import section as position_bias_section
from cuelens.probes.predictions import Predictions
from cuelens.probes.sanity import (chance_level, data_map_epochs, probe_sanity,
                                   unparseable_sanity)
from cuelens.probes.short_circuit import ShortCircuitOptions
from cuelens.probes.short_circuit import section as short_circuit_section


@dataclass
class ProbeContext:
    """Everything a probe section may read."""

    dataset: Dataset
    predictions: Predictions
    cues: list[Cue]
    model_info: dict = field(default_factory=dict)  # the ``probe.model`` section
    item_easy: np.ndarray | None = None
    model_dir: Path | None = None
    classifier: object | None = None  # the loaded model, when probing one (white-box probes)
    seed: int = 0
    n_boot: int = 1000
    min_items: int = 10
    short_circuit: ShortCircuitOptions | None = None  # None: the section is not run
    position_bias: PositionBiasOptions | None = None  # None: the section is not run
    cue_selection: dict | None = None  # how the word cues were chosen (probes.sanity)
    warnings: list[str] = field(default_factory=list)  # sections append what they skipped
    progress: Callable[[str, float], None] | None = None

    @property
    def gold(self) -> np.ndarray:
        return self.dataset.test.item_labels(self.dataset.label_names)

    @property
    def correct(self) -> np.ndarray:
        """1.0 where the prediction is right (MCQ: per question)."""
        return (self.predictions.pred == self.gold).astype(float)

    @property
    def accuracy(self) -> float:
        """``accuracy``: on the test items (MCQ: per question)."""
        return round(float(self.correct.mean()), 6)

    def multiple_choice(self, what: str) -> bool:
        """Whether the dataset is multiple choice, as section ``what`` ("the position-bias probe
        is") needs; else that section is skipped with a warning."""
        if self.dataset.task == Task.MCQ:
            return True
        self.warnings.append(f"{what} for multiple choice; skipped")
        return False

    def sanity(self, has_data_map: bool = False) -> dict:
        """``sanity``: accuracy against chance (:func:`~cuelens.probes.sanity.probe_sanity`)."""
        test = self.dataset.test
        chance = chance_level(self.gold, test.task, test.choice_counts)
        return unparseable_sanity(
            probe_sanity(self.correct, chance, data_map_epochs(self.model_dir), has_data_map,
                         self.n_boot, self.seed, int((self.predictions.pred == -1).sum())),
            self.model_info.get("log"))

    def accuracy_test(self) -> dict:
        """``accuracy_test``: ΔAcc per cue (:func:`~cuelens.probes.accuracy.accuracy_test`)."""
        return accuracy_test(self.correct, self.cues, n_boot=self.n_boot, seed=self.seed,
                             min_items=self.min_items)

    def distribution_test(self) -> dict:
        """``distribution_test`` over the answered items
        (:func:`~cuelens.probes.distribution.distribution_test`)."""
        return distribution_test(self.cues, self.predictions.pred, self.gold, self.dataset.task,
                                 self.dataset.label_names, seed=self.seed,
                                 min_items=self.min_items)

    def easy_hard(self) -> dict | None:
        """``easy_hard``: accuracy on the scan's easy and hard items (None: no split)."""
        return None if self.item_easy is None else easy_hard_gap(
            self.correct, self.item_easy, n_boot=self.n_boot, seed=self.seed)


def probe_section(ctx: ProbeContext) -> ProbeSection:
    """The ``probe`` section of ``ctx``; what a section skipped is appended to
    ``ctx.warnings``."""
    points = read_data_map(ctx.model_dir) if ctx.model_dir is not None else None
    sanity = ctx.sanity(points is not None)
    if points is not None and ctx.model_dir is not None:
        train = ctx.dataset.train
        note = other_data_note(points, None if train is None else train.ids, ctx.model_dir)
        sanity["notes"] += [note] if note else []
    return ProbeSection(
        model=ctx.model_info, accuracy=ctx.accuracy, sanity=sanity,
        cue_selection=ctx.cue_selection, accuracy_test=ctx.accuracy_test(),
        distribution_test=ctx.distribution_test(), easy_hard=ctx.easy_hard(),
        data_map=None if points is None else {"points": points,
                                              "epochs": data_map_epochs(ctx.model_dir)},
        short_circuit=short_circuit_section(ctx), position_bias=position_bias_section(ctx))


def probe_sections(scan: ScanSections, *, probe: ProbeSection | None = None,
                   llm_probe: LLMProbeSection | None = None) -> ProbeSections:
    """A probe's whole results sections: ``scan``'s, the probe's and the next steps about the
    model, derived once from them all (:func:`~cuelens.audit.advice.next_steps`)."""
    return ProbeSections.of(scan, next_steps, probe=probe, llm_probe=llm_probe)
