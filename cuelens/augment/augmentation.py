"""Crossover / mutation augmentation of MCQ training data (docs/methods.md §8; the augmenters and
what a generated item keeps: docs/augmentation.md, "Augmenters")."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

from cuelens.errors import option_name
from cuelens.errors import check_seed
from cuelens.augment.operators import get_operator
from cuelens.augment.operators.registry import OpContext
from cuelens.augment.operators.text import normalise
from cuelens.augment.perturb import (SOURCE_IDS, apply_operator, is_valid, item_rng,
                                     question_record, unique_id)
from cuelens.data.dataset import Split, Task
from cuelens.errors import UserError
from cuelens.registry import Registry
from cuelens.wording import plural

MAX_PASSES = 3  # passes over the questions an augmenter may take to reach its share

Augmenter = Callable[[Split, int, OpContext, list[str]], list[list[str]]]
AUGMENTERS: Registry[Augmenter] = Registry("augmentation op")
augmenter = AUGMENTERS.register


@augmenter("crossover")
def _crossover(split: Split, i: int, ctx: OpContext, pool: list[str]) -> list[list[str]]:
    choices = list(split.choices[i])
    op = get_operator("co")
    for j in range(len(choices)):
        if j != split.labels[i]:
            new = apply_operator(op, _with_choices(split, i, choices), 0, ctx, {}, target=j)
            if new is None:
                return []
            choices = new
    return [choices]


@augmenter("mutation")
def _mutation(split: Split, i: int, ctx: OpContext, pool: list[str]) -> list[list[str]]:
    new = apply_operator(get_operator("mt"), split, i, ctx, {})
    return [new] if new is not None else []


@augmenter("mutation2")
def _mutation2(split: Split, i: int, ctx: OpContext, pool: list[str]) -> list[list[str]]:
    mt = get_operator("mt")
    choices = [c if j == split.labels[i] else mt.fn(c, ctx)
               for j, c in enumerate(split.choices[i])]
    complete = [c for c in choices if c is not None]
    second = [complete] if len(complete) == len(choices) and is_valid(complete) else []
    return _mutation(split, i, ctx, pool) + second


def _with_choices(split: Split, i: int, choices: list[str]) -> Split:
    """A one-question split: question ``i`` of ``split`` with ``choices``."""
    one = Split(name=split.name, path=split.path, task=Task.MCQ)
    one.append(question_record(split, i, choices), raw="", line=0)
    return one


def parse_augmenters(spec: str) -> list[str]:
    """The augmentation ops named in a comma-separated ``ops`` value (order kept, duplicates
    dropped); none or an unknown one is a :class:`UserError` naming ``ops (--ops)``."""
    names = list(dict.fromkeys(p.strip().lower() for p in spec.split(",") if p.strip()))
    unknown = [n for n in names if n not in AUGMENTERS]
    if not names:
        raise UserError(f"{option_name('ops')} names no augmentation op; choose from "
                        f"{AUGMENTERS.choices()}")
    if unknown:
        raise UserError(f"{option_name('ops')}: unknown augmentation op(s) {', '.join(unknown)}"
                        f"; choose from {AUGMENTERS.choices()}")
    return names


@dataclass
class Augmented:
    rows: list[dict]  # original records then generated ones
    counts: dict[str, int]  # augmenter -> generated items
    asked: int = 0  # generated items asked for: round(ratio × n)

    @property
    def shortfall(self) -> str | None:
        """Why fewer items than asked were generated, or None when all were."""
        made = sum(self.counts.values())
        if made >= self.asked:
            return None
        return (f"generated {made:,} of the {self.asked:,} asked for (ratio × questions): the "
                f"augmenters found no further new question in {MAX_PASSES} passes over the data")

    def __repr__(self) -> str:  # bounded: never the rows
        made = sum(self.counts.values())
        parts = "".join(f" + {name} {n:,}" for name, n in self.counts.items())
        short = f" ({made:,} of the {self.asked:,} asked for: .shortfall)" if self.shortfall else ""
        return (f"<Augmented {plural(len(self.rows), 'record')}: {len(self.rows) - made:,} "
                f"original{parts}{short}>")


def _key(premise: str, question: str | None, choices: list[str]) -> tuple:
    return normalise(premise), question, frozenset(normalise(c) for c in choices)


def augment(split: Split, names: list[str], ratio: float = 1.0, seed: int = 0) -> Augmented:
    """Original questions of ``split`` plus ``round(ratio × n)`` generated ones (docs/methods.md §8);
    ``split`` must hold multiple-choice items of two choices or more (their number may vary)."""
    if split.task != Task.MCQ or min(split.choice_counts, default=0) < 2:
        raise UserError("augmentation needs a multiple-choice dataset with k ≥ 2 choices",
                        path=split.path)
    if not isinstance(ratio, numbers.Real) or isinstance(ratio, bool) or ratio < 0 or \
            not math.isfinite(ratio):
        raise UserError(f"ratio (--ratio) must be a finite number of at least 0, not {ratio!r}")
    check_seed(seed)
    split.positions(SOURCE_IDS)
    n = len(split)
    rows = [question_record(split, i) for i in range(n)]
    seen = {_key(split.premises[i], split.questions[i], split.choices[i]) for i in range(n)}
    ids = set(split.ids)
    pool = [c[label] for c, label in zip(split.choices, split.labels)]
    total = round(ratio * n)
    counts = {}
    for rank, name in enumerate(names):
        share = total // len(names) + (rank < total % len(names))
        made = 0
        for attempt in range(MAX_PASSES):
            order = item_rng(seed, name + ":order", 0, attempt).permutation(n)
            for i in order:
                if made >= share:
                    break
                ctx = OpContext(rng=item_rng(seed, name, int(i), attempt), item=int(i), pool=pool)
                for choices in AUGMENTERS[name](split, int(i), ctx, pool)[:share - made]:
                    key = _key(split.premises[i], split.questions[i], choices)
                    if key in seen:
                        continue
                    seen.add(key)
                    new_id = unique_id(f"{split.ids[i]}~{name}{made}", ids)
                    rows.append(question_record(split, int(i), choices, id=new_id,
                                                source_id=split.ids[i], op=name))
                    made += 1
        counts[name] = made
    return Augmented(rows=rows, counts=counts, asked=total)
