"""Is a probe interpretable, and what does it say? (docs/methods.md §6; docs/data-hygiene.md,
"Probe sanity"): the default word-cue selection (:func:`select_word_cues`), accuracy against
chance (:func:`probe_sanity`) and the plain-English verdict box (:func:`probe_verdict`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cuelens.audit.examples import sort_value
from cuelens.audit.results import CueRow
from cuelens.audit.uncertainty import accuracy_vs_chance
from cuelens.data.dataset import Task
from cuelens.probes.config import MIN_SUPPORT
from cuelens.probes.data_map import DYNAMICS_DIR
from cuelens.wording import plural

MAX_UNANSWERED = 0.5  # a larger share of items without an answer: no verdict (LLM probe too)


def select_word_cues(cues: list[CueRow], rank_by: str = "z", top: int = 5,
                     min_support: int = MIN_SUPPORT) -> tuple[list[str], dict]:
    """Distinct tokens to test and the ``cue_selection`` record saying how they were chosen.

    ``rank_by == "z"`` (default): significant cues only, by z. Another metric: every cue with
    enough support, by that metric (ties: z, support, token).
    """
    significant_only = rank_by == "z"
    by_label: dict[str, list[CueRow]] = {}
    for cue in cues:
        if cue.count >= min_support and (cue.significant or not significant_only):
            by_label.setdefault(cue.label, []).append(cue)
    tokens: list[str] = []
    for _, group in sorted(by_label.items()):
        group.sort(key=lambda c: (-sort_value(c.metrics[rank_by]),
                                  -sort_value(c.metrics["z"]), -c.count, c.token))
        tokens += [c.token for c in group[:top]]
    tokens = list(dict.fromkeys(tokens))
    rule = (f"significant cues (z above the Bonferroni threshold) with at least {min_support} "
            f"{'instance' if min_support == 1 else 'instances'}, top {top} per label by z"
            if significant_only else f"cues with at least {plural(min_support, 'instance')}, "
            f"top {top} per label by {rank_by}")
    return tokens, {"rank_by": rank_by, "min_support": min_support, "top": top,
                    "significant_only": significant_only, "rule": rule, "n_tokens": len(tokens)}


def data_map_epochs(model_dir: Path | None) -> int | None:
    """How many epochs of training dynamics a model directory holds (None: no data map)."""
    if model_dir is None or not (Path(model_dir) / DYNAMICS_DIR).is_dir():
        return None
    return len(list((Path(model_dir) / DYNAMICS_DIR).glob("dynamics_epoch_*.jsonl")))


def chance_level(gold: np.ndarray, task: str, choice_counts: Sequence[int] = ()) -> float:
    """Accuracy of guessing: ``mean(1/k_i)`` over the MCQ test items' numbers of choices
    ``choice_counts`` (as the scan's, docs/mcq-artifacts.md), the majority label's share of the
    test items for NLI."""
    if task == Task.MCQ:
        return float(np.mean(1.0 / np.asarray(choice_counts, dtype=np.float64))) \
            if len(choice_counts) else 0.5
    return float(np.bincount(gold).max() / len(gold)) if len(gold) else 0.0


def probe_sanity(correct: np.ndarray, chance: float, epochs: int | None, has_data_map: bool,
                 n_boot: int, seed: int, unanswered: int = 0) -> dict:
    """The ``probe.sanity`` section: accuracy vs chance, data-map epochs, the items without an
    answer (``unanswered``, counted wrong), notes; more than :data:`MAX_UNANSWERED` of them
    leave the probe not interpretable (all-wrong is not robustness)."""
    accuracy = accuracy_vs_chance(correct, chance, n_boot, seed)
    notes = []
    mostly_unanswered = unanswered > MAX_UNANSWERED * len(correct)
    if mostly_unanswered:
        notes.append(f"{unanswered:,} of {plural(len(correct), 'item')} "
                     f"{'has' if unanswered == 1 else 'have'} no answer from the model "
                     f"(more than {MAX_UNANSWERED:.0%}; counted wrong): ΔAcc, distribution and "
                     "easy/hard results are not interpretable")
    if accuracy["covers_chance"]:
        notes.append(f"the model's accuracy {100 * accuracy['accuracy']:.1f}% (95% CI "
                     f"{100 * accuracy['ci_low']:.1f}–{100 * accuracy['ci_high']:.1f}%) covers "
                     f"chance ({100 * chance:.1f}%): ΔAcc, distribution and easy/hard results "
                     "are not interpretable (a guessing model's gaps are noise)")
    if has_data_map and (epochs or 0) <= 1:
        notes.append("the data map comes from a single training epoch: variability is 0 for "
                     "every item, so its regions are not interpretable (train for 2+ epochs)")
    return {"accuracy": accuracy, "data_map_epochs": epochs, "unanswered": unanswered,
            "interpretable": not (accuracy["covers_chance"] or mostly_unanswered),
            "notes": notes}


def not_interpretable_why(sanity: dict) -> str:
    """Why a probe that is not interpretable is not: at chance, or mostly unanswered."""
    if sanity.get("accuracy", {}).get("covers_chance", True):
        return "the model performs at chance"
    return "the model gave no answer for most items"


#: A log with more unparseable answers than this is not interpretable (as the LLM probe's
#: templates: an all-wrong model is not a robust one; docs/eval-logs.md): the one threshold of
#: items without a usable answer.
MAX_UNPARSEABLE = MAX_UNANSWERED


def unparseable_sanity(sanity: dict, log: dict | None) -> dict:
    """``sanity`` of a probe of an evaluation ``log`` (``probe.model.log``) whose answers are
    mostly unparseable: not interpretable, with a note."""
    rate = ((log or {}).get("unparseable") or {}).get("rate", 0.0)
    if rate <= MAX_UNPARSEABLE:
        return sanity
    note = (f"{100 * rate:.1f}% of the log's answers name no choice (more than "
            f"{MAX_UNPARSEABLE:.0%}): the probe is not interpretable (check the solver's "
            "answer format)")
    return {**sanity, "interpretable": False, "notes": [*sanity["notes"], note]}


def probe_verdict(probe: dict) -> tuple[str, str]:
    """(level, sentence) for the probe's verdict box: ``unreliable``, ``relies`` or ``clean``."""
    sanity = probe.get("sanity", {})
    test = probe.get("accuracy_test", {})
    correction = test.get("correction", "no correction")
    if sanity and not sanity.get("interpretable", True):
        return "unreliable", (f"Not interpretable: {not_interpretable_why(sanity)}, so "
                              "differences between items with and without a cue are noise.")
    relied = sorted((c for c in test.get("cues", []) if c.get("significant") and c["delta"] > 0),
                    key=lambda c: (-c["delta"], c["cue"]))
    if relied:
        named = ", ".join(f"“{c['cue']}”: {100 * c['delta']:+.1f} points" for c in relied[:3])
        return "relies", (f"The model relies on cue {named} (accuracy with the cue minus "
                          f"without; {len(relied)} of {plural(len(test['cues']), 'tested cue')} "
                          f"significant after {correction}).")
    n = len(test.get("cues", []))
    return "clean", ("No tested cue changes the model's accuracy significantly "
                     f"({plural(n, 'cue')}; {correction}).")
