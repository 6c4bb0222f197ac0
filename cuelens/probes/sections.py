"""The probe's results sections, as a registry (docs/methods.md §6; docs/results-schema.md ``probe``).

Each section is a function ``ProbeContext -> dict | None`` listed under its results key;
``None`` means "not computed" and leaves the key absent. :func:`run_sections` fills ``probe``
in the order of :data:`SECTIONS`, an explicit table: a new section is one more entry there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cuelens.data.dataset import Dataset
from cuelens.probes.accuracy import accuracy_test, easy_hard_gap
from cuelens.probes.cues import Cue
from cuelens.probes.data_map import read_data_map
from cuelens.probes.distribution import distribution_test
from cuelens.probes.position import PositionBiasOptions
from cuelens.probes.position import section as _position_bias
from cuelens.probes.predictions import Predictions
from cuelens.probes.sanity import chance_level, data_map_epochs, probe_sanity
from cuelens.probes.short_circuit import ShortCircuitOptions
from cuelens.probes.short_circuit import section as _short_circuit


@dataclass
class ProbeContext:
    """Everything a probe section may read."""

    dataset: Dataset
    predictions: Predictions
    cues: list[Cue]
    model_info: dict
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


def _model(ctx: ProbeContext) -> dict:
    return ctx.model_info


def _accuracy(ctx: ProbeContext) -> float:
    return round(float(ctx.correct.mean()), 6)


def _accuracy_test(ctx: ProbeContext) -> dict:
    return accuracy_test(ctx.correct, ctx.cues, n_boot=ctx.n_boot, seed=ctx.seed,
                         min_items=ctx.min_items)


def _distribution_test(ctx: ProbeContext) -> dict:
    return distribution_test(ctx.cues, ctx.predictions.pred, ctx.gold, ctx.dataset.task,
                             ctx.dataset.label_names, seed=ctx.seed, min_items=ctx.min_items)


def _easy_hard(ctx: ProbeContext) -> dict | None:
    return None if ctx.item_easy is None else easy_hard_gap(ctx.correct, ctx.item_easy)


def _data_map(ctx: ProbeContext) -> dict | None:
    points = read_data_map(ctx.model_dir) if ctx.model_dir is not None else None
    return None if points is None else {"points": points,
                                        "epochs": data_map_epochs(ctx.model_dir)}


def _cue_selection(ctx: ProbeContext) -> dict | None:
    return ctx.cue_selection


def _sanity(ctx: ProbeContext) -> dict:
    test = ctx.dataset.test
    chance = chance_level(ctx.gold, test.task, test.n_choices)
    has_map = ctx.model_dir is not None and read_data_map(ctx.model_dir) is not None
    return probe_sanity(ctx.correct, chance, data_map_epochs(ctx.model_dir), has_map,
                        ctx.n_boot, ctx.seed)


SECTIONS: dict[str, Callable[[ProbeContext], dict | float | None]] = {
    "model": _model,
    "accuracy": _accuracy,
    "sanity": _sanity,
    "cue_selection": _cue_selection,
    "accuracy_test": _accuracy_test,
    "distribution_test": _distribution_test,
    "easy_hard": _easy_hard,
    "data_map": _data_map,
    "short_circuit": _short_circuit,
    "position_bias": _position_bias,
}


def run_sections(ctx: ProbeContext, skip: frozenset[str] | set[str] = frozenset()) -> dict:
    """The ``probe`` section: every section of :data:`SECTIONS` not in ``skip`` that produced a value."""
    out = {}
    for name, func in SECTIONS.items():
        if name not in skip:
            value = func(ctx)
            if value is not None:
                out[name] = value
    return out
