"""Stress questions for the black-box short-circuit tests: per operator, the premise and correct
choice with a constructed wrong one; items an operator cannot change are skipped and counted
(docs/methods.md §7; docs/augmentation.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cuelens.errors import check_seed
from cuelens.audit.segmentation import split_language
from cuelens.augment.operators import OpContext, Operator
from cuelens.augment.operators.registry import check_language
from cuelens.augment.perturb import (SOURCE_IDS, apply_operator, item_rng, needed_texts,
                                     parse_texts, question_record, unique_id)
from cuelens.data.dataset import Split, Task
from cuelens.errors import UserError
from cuelens.wording import plural


@dataclass
class StressSet:
    rows: list[dict]  # normalised MCQ records + source_id, op, constructed
    counts: dict[str, dict[str, int]]  # op -> {"generated", "skipped"}

    def __repr__(self) -> str:  # bounded: never the rows
        ops = ", ".join(f"{op} {c['generated']:,} generated, {c['skipped']:,} skipped"
                        for op, c in self.counts.items())
        return f"<StressSet {plural(len(self.rows), 'question')}: {ops}>"


def build_stress(split: Split, ops: Sequence[Operator], seed: int = 0,
                 items: Sequence[int] | None = None, progress=None) -> StressSet:
    """Stress questions from the MCQ ``split`` (restricted to ``items`` when given); a split
    of another task is a :class:`UserError`."""
    if split.task != Task.MCQ:
        raise UserError("stress tests need a multiple-choice dataset", path=split.path)
    check_seed(seed)
    split.positions(SOURCE_IDS)
    check_language(ops, split_language(split))
    index = list(range(len(split))) if items is None else list(items)
    docs = parse_texts(needed_texts(split.subset(index), list(ops)), progress) \
        if any(op.needs_parse for op in ops) else {}
    pool = [choices[label] for choices, label in zip(split.choices, split.labels)]
    rows, counts, ids = [], {}, set(split.ids)
    for op in ops:
        made = 0
        for i in index:
            ctx = OpContext(rng=item_rng(seed, op.name, i), item=i, pool=pool)
            choices = apply_operator(op, split, i, ctx, docs)
            if choices is None:
                continue
            wrong = next(j for j, (a, b) in enumerate(zip(choices, split.choices[i])) if a != b)
            rows.append(question_record(split, i, choices,
                                        id=unique_id(f"{split.ids[i]}:{op.name}", ids),
                                        source_id=split.ids[i], op=op.name,
                                        constructed=choices[wrong]))
            made += 1
        counts[op.name] = {"generated": made, "skipped": len(index) - made}
    return StressSet(rows=rows, counts=counts)


def stress_split(stress: StressSet) -> Split:
    """The stress questions as a :class:`Split` named ``stress`` (for prediction)."""
    split = Split(name="stress", path="stress", task=Task.MCQ)
    for n, row in enumerate(stress.rows):
        split.append(row, raw="", line=n + 1)
    return split
