"""Short-circuit tests (docs/methods.md §7): the white-box attention test AW
(:mod:`cuelens.probes.attention`) and the black-box pass rates of the stress operators of
:mod:`cuelens.augment.operators` on the correctly answered questions (CO and AW are the headline
numbers)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from cuelens.augment.defaults import DEFAULT_STRESS_OPS as DEFAULT_OPS
from cuelens.data.dataset import Split
from cuelens.probes.attention import (T1, T2, AWResult, aw_test, check_threshold_mode,
                                      check_thresholds)
from cuelens.wording import plural

if TYPE_CHECKING:
    from cuelens.augment.operators import Operator


def pass_rates(stress_rows: Sequence[dict], predicted: np.ndarray) -> dict[str, dict]:
    """Per operator: number of stress questions and the fraction answered correctly."""
    per_op: dict[str, dict] = {}
    ops = np.asarray([row["op"] for row in stress_rows])
    right = predicted == np.asarray([row["label"] for row in stress_rows])
    for op in dict.fromkeys(ops.tolist()):
        mask = ops == op
        per_op[op] = {"n": int(mask.sum()), "pass_rate": round(float(right[mask].mean()), 6)}
    return per_op


def not_applicable(op: Operator, language: str, n_correct: int) -> str:
    """Why ``op`` built no stress question from the ``n_correct`` correctly answered questions
    of text in ``language`` (its ``per_op`` entry's ``not_applicable``)."""
    if op.english_only and language != "en":
        return f"works on English text only and this text is {language!r}"
    if n_correct == 0:
        return "the model answered no question correctly"
    return f"it could change none of the {plural(n_correct, 'correctly answered question')}"


def summary(aw: AWResult, per_op: dict[str, dict]) -> dict:
    """``probe.short_circuit`` (docs/results-schema.md): {aw, aw_n, aw_ci, aw_thresholds, co,
    per_op}."""
    out: dict = {"aw": None if aw.score is None else round(aw.score, 6)}
    if aw.score is not None:
        out["aw_n"] = len(aw.considers)
        out["aw_ci"] = [round(aw.ci[0], 6), round(aw.ci[1], 6)] if aw.ci else None
        out["aw_thresholds"] = aw.thresholds.as_dict() if aw.thresholds else None
    out |= {"co": per_op.get("co", {}).get("pass_rate"), "per_op": per_op}
    if aw.note:
        out["aw_note"] = aw.note
    return out


def short_circuit(split: Split, correct: np.ndarray, classifier, *, ops: str = DEFAULT_OPS,
                  aw_thresholds: str = "calibrated", t1: float = T1, t2: float = T2,
                  seed: int = 0, progress=None) -> dict:
    """Both short-circuit tests of a loaded classifier on the correctly answered questions;
    an operator of ``ops`` that builds no question (English-only on other text, or no question
    it can change) is in ``per_op`` with ``n`` 0, ``pass_rate`` None and why
    (:func:`not_applicable`)."""
    from cuelens.audit.segmentation import split_language
    from cuelens.augment.operators import parse_ops
    from cuelens.augment.stress import build_stress, stress_split

    items = np.flatnonzero(correct)
    premises = [split.premise_context(int(i)) for i in items]
    right = [split.choices[i][split.labels[i]] for i in items]
    aw = aw_test(classifier.model, classifier.tokenizer, premises, right,
                 thresholds=aw_thresholds, t1=t1, t2=t2, seed=seed, device=classifier.device,
                 max_length=classifier.max_length, on_batch=progress)
    chosen = parse_ops(ops)
    language = split_language(split)
    usable = [op for op in chosen if language == "en" or not op.english_only]
    rates: dict[str, dict] = {}
    if usable and len(items):
        stress = build_stress(split, usable, seed=seed, items=items.tolist())
        if stress.rows:
            probs = classifier.predict_proba(stress_split(stress))
            rates = pass_rates(stress.rows, probs.argmax(axis=1))
    return summary(aw, {op.name: rates.get(op.name) or {
        "n": 0, "pass_rate": None, "not_applicable": not_applicable(op, language, len(items))}
        for op in chosen})


# --- the probe section ``short_circuit`` (listed in cuelens.probes.sections) ------------------

@dataclass
class ShortCircuitOptions:
    """Settings of the probe's short-circuit section (``audit probe --short-circuit``)."""

    aw_thresholds: str = "calibrated"  # or "fixed" (t1, t2)
    t1: float = T1
    t2: float = T2
    ops: str = DEFAULT_OPS

    def validate(self) -> None:
        """Unknown operator names or threshold modes and thresholds outside 0–1 fail
        (``UserError``) before any model work."""
        from cuelens.augment.operators import parse_ops

        parse_ops(self.ops, "--sc-ops")
        check_threshold_mode(self.aw_thresholds)
        check_thresholds(self.t1, self.t2)


def section(ctx) -> dict | None:
    """``probe.short_circuit`` of a :class:`~cuelens.probes.sections.ProbeContext`: ``None``
    unless asked for (``ctx.short_circuit``); skipped with a warning without an MCQ dataset
    or a loaded model."""
    opts: ShortCircuitOptions | None = ctx.short_circuit
    if opts is None or not ctx.multiple_choice("short-circuit tests are"):
        return None
    if ctx.classifier is None:
        ctx.warnings.append("short-circuit tests need a model (they ask the model new "
                            "questions); skipped")
        return None
    correct = ctx.correct.astype(bool)
    total, done = max(int(correct.sum()), 1), 0

    def advance(k: int) -> None:
        nonlocal done
        done += k
        if ctx.progress is not None:
            ctx.progress("short-circuit tests", done / total)

    return short_circuit(ctx.dataset.test, correct, ctx.classifier, ops=opts.ops,
                         aw_thresholds=opts.aw_thresholds, t1=opts.t1, t2=opts.t2,
                         seed=ctx.seed, progress=advance)
