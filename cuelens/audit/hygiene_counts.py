"""Hygiene counted by key partition (docs/methods.md §11): one partition's share of the copies,
label conflicts, contrast pairs, overlaps and item flags (:func:`partition_findings`, the core
both memory modes run), totalled over partitions in order (:func:`findings`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from functools import reduce
from itertools import combinations
from operator import add
from typing import Any, TypeVar

import numpy as np

from cuelens.audit.hygiene_keys import MAX_EXAMPLES, Groups, copy_flags, first_match
from cuelens.audit.near_duplicates import NearSample, items_of
from cuelens.data.dataset import Task

Part = dict[str, np.ndarray]
"""Columns of some items of a split: their ``key`` and ``item`` (ascending), for inputs and
pair texts their ``answer``, for inputs the input as ``shown``. A split's keys come as one or more
parts; all items holding one key are in the same part (docs/methods.md §11)."""

T = TypeVar("T", bound="Tally")


@dataclass(frozen=True)
class Tally:
    """Counts over the parts of a split's keys and example pairs ``(item, other item)``: adding
    two tallies adds the counts and keeps the :data:`MAX_EXAMPLES` pairs of the smallest items
    (in one part: those of its first groups, whose first items are distinct)."""

    def __add__(self: T, other: T) -> T:
        def merged(a: Any, b: Any) -> Any:
            return sorted(a + b)[:MAX_EXAMPLES] if isinstance(a, list) else a + b
        return type(self)(**{f.name: merged(getattr(self, f.name), getattr(other, f.name))
                             for f in fields(self)})


@dataclass(frozen=True)
class Copies(Tally):
    """Items sharing an input key: redundant copies (the same input as shown and the same
    answer as an earlier item) and the groups holding them, permuted copies (the same answer
    with the choices in another order), label-conflict groups (more than one answer) and their
    items, and example pairs of each kind."""

    redundant: int
    groups: int
    permuted: int
    conflict_groups: int
    conflict_items: int
    duplicates: list[tuple[int, int]]
    permutations: list[tuple[int, int]]
    conflicts: list[tuple[int, int]]

    @classmethod
    def of(cls, part: Part) -> Copies:
        groups, items = Groups.of(part["key"]), part["item"]
        answer, shown = part["answer"], part["shown"]
        mixed = groups.mixed(answer)
        variants = groups.distinct(shown, answer)  # distinct (input as shown, answer)
        redundant = groups.sizes - variants
        permuted = variants - groups.distinct(answer)
        same = lambda i, j: answer[i] == answer[j]  # noqa: E731
        return cls(int(redundant.sum()), int((redundant > 0).sum()), int(permuted.sum()),
                   int(mixed.sum()), int(groups.sizes[mixed].sum()),
                   items_of(items, items, groups.example_pairs(
                       redundant > 0, lambda i, j: same(i, j) and shown[i] == shown[j])),
                   items_of(items, items, groups.example_pairs(
                       permuted > 0, lambda i, j: same(i, j) and shown[i] != shown[j])),
                   items_of(items, items, groups.example_pairs(mixed, lambda i, j: True)))


@dataclass(frozen=True)
class Contrasts(Tally):
    """Pairs of items sharing a pair text with different answers, and for the first groups
    holding one its first item and that item's first partner."""

    pairs: int
    shown: list[tuple[int, int]]

    @classmethod
    def of(cls, part: Part) -> Contrasts:
        groups, answers = Groups.of(part["key"]), part["answer"]
        shown = groups.example_pairs(groups.mixed(answers), lambda i, j: answers[i] != answers[j])
        return cls(groups.discordant_pairs(answers), items_of(part["item"], part["item"], shown))


@dataclass(frozen=True)
class Matches(Tally):
    """Evaluation items whose input occurs in the fitting split, and the first few with the
    first fitting item holding it."""

    count: int
    shown: list[tuple[int, int]]


@dataclass(frozen=True)
class Keyed:
    """What the statistics read of one split on the driver: its size, task and near-duplicate
    sample (its keys, :data:`Partition` s, are read where :func:`partition_findings` runs)."""

    items: int
    task: str
    sample: NearSample


Partition = dict[str, dict[str, Part]]
"""One key partition of every split (role → ``inputs``, ``pairs``, ``premises`` → its
:data:`Part`): input keys with answers and inputs as shown, pair-text keys with answers (items
with a pair text only), premise keys."""

FLAG_BITS = {"duplicate": 1, "label_conflict": 2, "overlap": 4, "shared_premise": 8}
Flags = list[tuple[np.ndarray, np.ndarray]]
"""Per-item :data:`FLAG_BITS` found in one partition: ``(items, bits)`` pairs, the items of
each pair distinct, only those with a bit set."""


def overlap_pairs(roles: Iterable[str], evaluated: str) -> list[tuple[str, str]]:
    """``(fitting role, evaluated role)`` of each overlap row: the evaluated split against each
    fitting split, then the fitting splits against each other."""
    fitting = [role for role in roles if role != evaluated]
    return [(f, evaluated) for f in fitting] + list(combinations(fitting, 2))


@dataclass(frozen=True)
class Exact:
    """One partition's share of an overlap row: its exact matches, the near-sample positions of
    the evaluated items matched, and the evaluated items whose premise occurs in the fitting
    split (every matched item's too: an input key combines the premise key with the rest)."""

    matches: Matches
    sampled: np.ndarray
    shared_premise: int


@dataclass(frozen=True)
class PartFindings:
    """One key partition's share of the :func:`findings`: per split (in order) its
    :class:`Copies`, :class:`Contrasts` and items in premise groups, per overlap row
    (:func:`overlap_pairs`) its :class:`Exact`, per flagged role its :data:`Flags`."""

    copies: list[Copies]
    contrasts: list[Contrasts]
    premise_grouped: list[int]
    exact: list[Exact]
    flags: dict[str, Flags]


def _matches(fit: dict[str, Part], evaluate: dict[str, Part]) -> tuple[np.ndarray, np.ndarray]:
    """Per input row of ``evaluate``, the first input row of ``fit`` holding its key (-1: none);
    per premise row, whether ``fit`` holds its premise."""
    return (first_match(evaluate["inputs"]["key"], fit["inputs"]["key"]),
            first_match(evaluate["premises"]["key"], fit["premises"]["key"]) >= 0)


def _exact(fit: Part, evaluate: dict[str, Part], sample: np.ndarray,
           found: tuple[np.ndarray, np.ndarray]) -> Exact:
    """The :class:`Exact` of ``found`` (:func:`_matches`); ``sample``: the evaluated split's
    near-sample items (sorted)."""
    (match, premised), items = found, evaluate["inputs"]["item"]
    hit = np.flatnonzero(match >= 0)
    shown = hit[:MAX_EXAMPLES]
    return Exact(Matches(len(hit), items_of(items, fit["item"], zip(shown, match[shown]))),
                 np.flatnonzero(np.isin(sample, items[hit])), int(premised.sum()))


def _flags(split: dict[str, Part], found: tuple[np.ndarray, np.ndarray] | None) -> Flags:
    """One split's :data:`Flags` in a partition: duplicates and label conflicts among its
    inputs and, with ``found`` against the fitting split (:func:`_matches`), overlap and shared
    premises."""
    inputs, premises = split["inputs"], split["premises"]
    duplicate, conflict = copy_flags(inputs["key"], inputs["answer"])
    rows = [(inputs["item"], (duplicate * FLAG_BITS["duplicate"]
                              | conflict * FLAG_BITS["label_conflict"]).astype(np.uint8))]
    if found is not None:
        match, premised = found
        rows[0][1][match >= 0] |= np.uint8(FLAG_BITS["overlap"])
        rows.append((premises["item"],
                     np.where(premised, FLAG_BITS["shared_premise"], 0).astype(np.uint8)))
    return [(items[bits > 0], bits[bits > 0]) for items, bits in rows]


def partition_findings(partition: Partition, evaluated: str, samples: dict[str, np.ndarray],
                       flagged: Sequence[str] = (), fitting: str | None = None) -> PartFindings:
    """One key partition's :class:`PartFindings` (``samples``: each split's near-sample items);
    :data:`Flags` for the ``flagged`` roles, overlap and shared premises of ``evaluated``
    against ``fitting``."""
    pairs = overlap_pairs(partition, evaluated)
    found: dict[tuple[str | None, str], tuple[np.ndarray, np.ndarray]] = {
        (f, e): _matches(partition[f], partition[e]) for f, e in pairs}
    splits = partition.values()
    return PartFindings(
        [Copies.of(split["inputs"]) for split in splits],
        [Contrasts.of(split["pairs"]) for split in splits],
        [int(Groups.of(split["premises"]["key"]).sizes.sum()) for split in splits],
        [_exact(partition[f]["inputs"], partition[e], samples[e], found[f, e])
         for f, e in pairs],
        {role: _flags(partition[role], found.get((fitting, role))) for role in flagged})


@dataclass(frozen=True)
class SplitFindings:
    """One split's counts and example pairs."""

    role: str
    items: int
    task: str
    copies: Copies
    contrasts: Contrasts
    near: list[tuple[int, int]]
    shared_premise: int

    def counts(self) -> dict:
        return {"items": self.items, "duplicate_items": self.copies.redundant,
                "duplicate_groups": self.copies.groups, "near_duplicate_pairs": len(self.near),
                "label_conflict_groups": self.copies.conflict_groups,
                "label_conflict_items": self.copies.conflict_items,
                ("mirrored_pairs" if self.task == Task.MCQ else "contrastive_pairs"):
                    self.contrasts.pairs,
                "permuted_copies": self.copies.permuted,
                "shared_premise_items": self.shared_premise}

    def examples(self) -> dict[str, list[tuple[int, int]]]:
        return {"duplicates": self.copies.duplicates, "near_duplicates": self.near[:MAX_EXAMPLES],
                "label_conflicts": self.copies.conflicts, "mirrored": self.contrasts.shown,
                "permuted": self.copies.permutations}


@dataclass(frozen=True)
class OverlapFindings:
    """Evaluation items found (exactly or nearly) in a fitting split, or sharing a premise."""

    fit: str
    eval: str
    eval_items: int
    exact: Matches
    near: list[tuple[int, int]]
    shared_premise: int

    def row(self) -> dict:
        n, found = self.eval_items, self.exact.count + len(self.near)
        return {"fit": self.fit, "eval": self.eval, "eval_items": n, "exact": self.exact.count,
                "near": len(self.near), "shared_premise": self.shared_premise,
                "fraction": round(found / n, 6) if n else 0.0}

    def examples(self) -> dict[str, list[tuple[int, int]]]:
        return {"exact": self.exact.shown, "near": self.near[:MAX_EXAMPLES]}


def _overlap(fit_role: str, fit: Keyed, eval_role: str, evaluate: Keyed,
             parts: Sequence[Exact]) -> OverlapFindings:
    """An overlap row from its partitions' :class:`Exact` (in partition order); near copies are
    looked for among the sampled evaluation items without an exact one, in the sampled fitting
    items."""
    unmatched = np.ones(len(evaluate.sample.items), dtype=bool)
    for part in parts:
        unmatched[part.sampled] = False
    near = fit.sample.first_near(evaluate.sample, unmatched)
    return OverlapFindings(fit_role, eval_role, evaluate.items,
                           reduce(add, (part.matches for part in parts)), near,
                           sum(part.shared_premise for part in parts))


def findings(keyed: dict[str, Keyed], evaluated: str, parts: Sequence[PartFindings]
             ) -> tuple[list[SplitFindings], list[OverlapFindings]]:
    """Every split's findings, then the overlap of the evaluated split with each fitting split
    and of the fitting splits with each other (docs/methods.md §11), the partitions' shares
    (:func:`partition_findings`, in partition order) totalled."""
    found = [SplitFindings(role, k.items, k.task, reduce(add, (p.copies[s] for p in parts)),
                           reduce(add, (p.contrasts[s] for p in parts)), k.sample.pairs(),
                           sum(p.premise_grouped[s] for p in parts))
             for s, (role, k) in enumerate(keyed.items())]
    return found, [_overlap(f, keyed[f], e, keyed[e], [p.exact[o] for p in parts])
                   for o, (f, e) in enumerate(overlap_pairs(keyed, evaluated))]


Ref = tuple[str, int]  # (role, item)


def example_refs(found: list[SplitFindings], overlaps: list[OverlapFindings]
                 ) -> dict[str, list[tuple[str | None, Ref, Ref]]]:
    """Per list of examples, ``(overlap kind or None, item, other item)`` of each example."""
    out: dict[str, list[tuple[str | None, Ref, Ref]]] = {}
    for f in found:
        for name, pairs in f.examples().items():
            out.setdefault(name, []).extend((None, (f.role, i), (f.role, j)) for i, j in pairs)
    for o in overlaps:
        out.setdefault("overlap", []).extend((kind, (o.eval, i), (o.fit, j))
                                             for kind, pairs in o.examples().items()
                                             for i, j in pairs)
    return out
