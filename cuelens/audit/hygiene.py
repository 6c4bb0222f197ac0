"""Data hygiene: duplicates, train/test overlap, mirrored pairs and label-noise candidates.

The ``hygiene`` section of results.json (docs/data-hygiene.md). All comparisons use the normal
form of :func:`cuelens.audit.text_keys.normal_form` (lower-cased word tokens), so case, punctuation
and spacing never hide a copy.

* An item's *input* is its normalised premise (MCQ: with the question) and hypothesis (MCQ: its
  set of choices, in any order). Items with the same input are **exact duplicates**; those whose
  labels differ (NLI label; MCQ: the text of the right choice) are **label-noise candidates**.
* **Near duplicates**: different inputs whose word-bigram sets have a Jaccard similarity of at
  least :data:`NEAR_THRESHOLD`, found with MinHash LSH (``datasketch``, :data:`NUM_PERM`
  permutations, seeded) and confirmed with the exact Jaccard similarity.
* **Overlap**: evaluation items whose input (exactly, or nearly) occurs in the fitting split,
  and evaluation items sharing a premise with a fitting item.
* **Mirrored / contrastive pairs**: MCQ pairs with the same set of choices but a different right
  one (Balanced COPA's mirrors); NLI pairs with the same hypothesis (3+ tokens) and different
  labels. A cue model cannot score above chance on both members of a pair.

``warnings`` are plain sentences, values for the caller to show.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from cuelens.audit.groups import MIN_KEY_TOKENS
from cuelens.audit.text_keys import combine, normal_form, text_keys
from cuelens.data.dataset import Dataset, Split, Task

NEAR_THRESHOLD = 0.8
NUM_PERM = 64
NEAR_MAX_ITEMS = 200_000  # near duplicates of a larger split are counted on a sample this size
MAX_EXAMPLES = 5
TEXT_CHARS = 160


def _forms(split: Split, i: int) -> tuple[str, str]:
    """Item ``i``'s normalised premise (+ question) and hypothesis / sorted choice set."""
    if split.task == Task.NLI:
        text = normal_form(split.hypotheses[i])
    else:
        text = " | ".join(sorted(normal_form(c) for c in split.choices[i]))
    return normal_form(split.premise_context(i)), text


@dataclass(frozen=True)
class SplitKeys:
    """Compact per-item keys of one split (docs/methods.md §11): 64-bit hashes of the normalised
    input, premise, mirrored / contrastive pair text and answer; ``has_pair`` marks items with a
    pair text (NLI: hypotheses of 3+ tokens). ``near_items`` are the (sorted) items indexed for
    near duplicates and ``near_inputs`` their inputs."""

    inputs: np.ndarray
    premises: np.ndarray
    pairs: np.ndarray
    has_pair: np.ndarray
    answers: np.ndarray
    near_items: np.ndarray
    near_inputs: list[str]

    @classmethod
    def of(cls, split: Split, near_items: np.ndarray) -> "SplitKeys":
        """From the split's :func:`~cuelens.audit.text_keys.text_keys` (no text is normalised
        again, except the inputs of the ``near_items``)."""
        keys = text_keys(split)
        if split.task == Task.NLI:
            pairs, has_pair = keys.text, keys.text_words >= MIN_KEY_TOKENS
            codes: dict = {}
            answers = np.fromiter((codes.setdefault(label, len(codes)) for label in split.labels),
                                  dtype=np.uint64, count=len(split))
        else:
            pairs, has_pair = keys.text_sets(), np.ones(len(split), dtype=bool)
            answers = keys.text[keys.starts[:-1] + np.asarray(split.labels, dtype=np.int64)]
        near_inputs = [" || ".join(_forms(split, int(i))) for i in near_items]
        return cls(combine(keys.context, pairs), keys.context, pairs, has_pair, answers,
                   near_items, near_inputs)


@dataclass(frozen=True)
class Groups:
    """Items sharing a key, groups of two or more only, in order of their first item, members
    ascending: group ``g`` is ``members[bounds[g]:bounds[g + 1]]``."""

    members: np.ndarray
    bounds: np.ndarray

    @classmethod
    def of(cls, keys: np.ndarray, items: np.ndarray | None = None) -> "Groups":
        """Group ``items`` (default: all) by ``keys[item]``."""
        items = np.arange(len(keys)) if items is None else items
        items = items[np.argsort(keys[items], kind="stable")]  # equal keys: ascending items
        starts = _run_starts(keys[items])
        sizes = np.diff(np.r_[starts, len(items)])
        shared = np.repeat(sizes > 1, sizes)
        first = np.repeat(items[starts], sizes)[shared]  # the first item of each one's group
        order = np.lexsort((items[shared], first))
        return cls(items[shared][order], np.r_[_run_starts(first[order]), order.size])

    def __len__(self) -> int:
        return len(self.bounds) - 1

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.bounds)

    def __getitem__(self, g: int) -> np.ndarray:
        return self.members[self.bounds[g]:self.bounds[g + 1]]

    def mixed(self, answers: np.ndarray) -> np.ndarray:
        """Whether each group's members carry more than one distinct answer."""
        if not len(self):
            return np.zeros(0, dtype=bool)
        values, starts = answers[self.members], self.bounds[:-1]
        return np.minimum.reduceat(values, starts) != np.maximum.reduceat(values, starts)

    def discordant_pairs(self, answers: np.ndarray) -> int:
        """Pairs of members of one group whose answers differ."""
        group, values = np.repeat(np.arange(len(self)), self.sizes), answers[self.members]
        order = np.lexsort((values, group))
        same = np.diff(np.r_[_run_starts(group[order], values[order]), order.size])
        return int((self.sizes * (self.sizes - 1) // 2).sum() - (same * (same - 1) // 2).sum())

    def first_pairs(self, which: np.ndarray) -> list[tuple[int, int]]:
        """The first two members of the first :data:`MAX_EXAMPLES` groups where ``which``."""
        return [(int(self[g][0]), int(self[g][1]))
                for g in np.flatnonzero(which)[:MAX_EXAMPLES]]


def _run_starts(*columns: np.ndarray) -> np.ndarray:
    """Where each run of equal rows of the (sorted) ``columns`` starts."""
    changed = np.zeros(len(columns[0]), dtype=bool)
    changed[:1] = True
    for column in columns:
        changed[1:] |= column[1:] != column[:-1]
    return np.flatnonzero(changed)


def first_match(keys: np.ndarray, table: np.ndarray) -> np.ndarray:
    """For each key, the first position in ``table`` holding it (-1: none)."""
    values, first = np.unique(table, return_index=True)
    at = np.searchsorted(values, keys)
    inside = np.flatnonzero(at < len(values))
    hit = inside[values[at[inside]] == keys[inside]]
    out = np.full(len(keys), -1, dtype=np.int64)
    out[hit] = first[at[hit]]
    return out


def _example(role: str, split: Split, i: int, other: tuple[str, Split, int] | None = None) -> dict:
    shown = split.hypotheses[i] if split.task == Task.NLI else " / ".join(split.choices[i])
    row = {"split": role, "id": split.ids[i], "line": split.lines[i],
           "text": f"{split.premise_context(i)} → {shown}"[:TEXT_CHARS]}
    if other is not None:
        o_role, o_split, j = other
        row["other"] = {"split": o_role, "id": o_split.ids[j], "line": o_split.lines[j]}
    return row


def _contrast_pairs(keys: SplitKeys) -> tuple[int, list[tuple[int, int]]]:
    """Pairs sharing a pair text with different answers (count, first few)."""
    groups = Groups.of(keys.pairs, np.flatnonzero(keys.has_pair))
    shown = []
    for g in np.flatnonzero(groups.mixed(keys.answers))[:MAX_EXAMPLES]:
        first, *rest = groups[g]
        partner = next(j for j in rest if keys.answers[j] != keys.answers[first])
        shown.append((int(first), int(partner)))
    return groups.discordant_pairs(keys.answers), shown


def _shingles(text: str) -> set[str]:
    words = text.split()
    return {f"{a} {b}" for a, b in zip(words, words[1:])} or set(words)


def _jaccard(a: set[str], b: set[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


class NearIndex:
    """MinHash LSH over item inputs (word bigrams); :meth:`query` confirms with exact Jaccard.

    Position ``k`` of the index is the ``k``-th of ``texts``; only the texts are kept (each
    candidate's shingles are recomputed to confirm it), not a shingle set per item."""

    def __init__(self, texts: list[str], seed: int = 0) -> None:
        from datasketch import MinHash, MinHashLSH

        self.texts = texts
        self.lsh = MinHashLSH(threshold=NEAR_THRESHOLD, num_perm=NUM_PERM)
        shingled = ([s.encode() for s in sorted(_shingles(t))] for t in texts)
        self.hashes = list(MinHash.generator(shingled, num_perm=NUM_PERM, seed=seed))
        for k, h in enumerate(self.hashes):
            self.lsh.insert(k, h)

    def query(self, text: str, hashed: Any,
              keep: Callable[[int], bool] = lambda k: True) -> list[int]:
        """Positions (ascending) whose input is near ``text`` (MinHash ``hashed``) and ``keep``."""
        shingles = _shingles(text)
        return sorted(k for k in self.lsh.query(hashed)
                      if keep(k) and _jaccard(shingles, _shingles(self.texts[k])) >= NEAR_THRESHOLD)

    def near_pairs(self, inputs: np.ndarray) -> Iterator[tuple[int, int]]:
        """Position pairs ``(k, m)``, ``k < m``, of different inputs (keys ``inputs`` by
        position) that are near each other, in order."""
        for k, hashed in enumerate(self.hashes):
            for m in self.query(self.texts[k], hashed,
                                lambda m: m > k and inputs[m] != inputs[k]):
                yield k, m


def split_hygiene(role: str, split: Split, keys: SplitKeys, index: NearIndex) -> tuple[dict, dict]:
    """Counts of one split and its examples."""
    copies = Groups.of(keys.inputs)
    conflicts = copies.mixed(keys.answers)
    sample = keys.near_items
    near_pairs = [(int(sample[k]), int(sample[m]))
                  for k, m in index.near_pairs(keys.inputs[sample])]
    n_contrast, contrast = _contrast_pairs(keys)
    counts = {"items": len(split), "duplicate_items": int(copies.sizes.sum()) - len(copies),
              "duplicate_groups": len(copies), "near_duplicate_pairs": len(near_pairs),
              "label_conflict_groups": int(conflicts.sum()),
              "label_conflict_items": int(copies.sizes[conflicts].sum()),
              ("mirrored_pairs" if split.task == Task.MCQ else "contrastive_pairs"): n_contrast}
    pick = lambda pairs: [_example(role, split, i, (role, split, j))  # noqa: E731
                          for i, j in pairs[:MAX_EXAMPLES]]
    examples = {"duplicates": pick(copies.first_pairs(np.ones(len(copies), dtype=bool))),
                "near_duplicates": pick(near_pairs),
                "label_conflicts": pick(copies.first_pairs(conflicts)),
                "mirrored": pick(contrast)}
    return counts, examples


def overlap(fit_role: str, fit: Split, fit_keys: SplitKeys, fit_index: NearIndex,
            eval_role: str, evaluate: Split, eval_keys: SplitKeys,
            eval_index: NearIndex) -> tuple[dict, list[dict]]:
    """Evaluation items that occur (exactly or nearly) in the fitting split, or share a premise;
    near copies are looked for among the sampled evaluation items in the sampled fitting ones."""
    match = first_match(eval_keys.inputs, fit_keys.inputs)
    exact = [(int(i), int(match[i])) for i in np.flatnonzero(match >= 0)]
    near = []
    for k, i in enumerate(eval_keys.near_items):
        if match[i] < 0:
            hits = fit_index.query(eval_index.texts[k], eval_index.hashes[k])
            if hits:
                near.append((int(i), int(fit_keys.near_items[hits[0]])))
    shared_premise = int((first_match(eval_keys.premises, fit_keys.premises) >= 0)[match < 0]
                         .sum())
    n = len(evaluate)
    row = {"fit": fit_role, "eval": eval_role, "eval_items": n, "exact": len(exact),
           "near": len(near), "shared_premise": shared_premise + len(exact),
           "fraction": round((len(exact) + len(near)) / n, 6) if n else 0.0}
    examples = [{**_example(eval_role, evaluate, i, (fit_role, fit, j)), "kind": kind}
                for kind, pairs in (("exact", exact), ("near", near))
                for i, j in pairs[:MAX_EXAMPLES]]
    return row, examples


def _warnings(section: dict, cross_validated: bool) -> list[str]:
    out = []
    for row in section["overlap"]:
        if row["exact"] or row["near"]:
            out.append(f"the evaluation split ({row['eval']}) shares {row['exact']} exact and "
                       f"{row['near']} near-duplicate item(s) with the fitting split "
                       f"({row['fit']}), {100 * row['fraction']:.1f}% of its "
                       f"{row['eval_items']} items: scores on it are inflated by memorisation")
    for role, counts in section["splits"].items():
        if counts["duplicate_items"]:
            kept = " (cross-validation keeps copies in one fold)" if cross_validated else ""
            out.append(f"{role}: {counts['duplicate_items']} redundant exact duplicate item(s) "
                       f"in {counts['duplicate_groups']} group(s){kept}")
        if counts["label_conflict_groups"]:
            out.append(f"{role}: {counts['label_conflict_groups']} group(s) of identical inputs "
                       f"carry different labels ({counts['label_conflict_items']} items; "
                       "label-noise candidates)")
    for role, size in section.get("near_sample", {}).items():
        out.append(f"{role}: near-duplicate counts come from a random sample of {size} of its "
                   f"{section['splits'][role]['items']} items (near overlap: sampled evaluation "
                   "items against sampled fitting items); exact counts cover every item")
    return out


def near_items(n: int, seed: int) -> np.ndarray:
    """The items of an ``n``-item split indexed for near duplicates: all of them, or a seeded
    random sample of :data:`NEAR_MAX_ITEMS` (sorted) when the split is larger."""
    if n <= NEAR_MAX_ITEMS:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, NEAR_MAX_ITEMS, replace=False))


def data_hygiene(dataset: Dataset, seed: int = 0) -> dict:
    """The ``hygiene`` section of results.json for every loaded split of ``dataset``
    (docs/methods.md §11): exact counts over all items, near duplicates on at most
    :data:`NEAR_MAX_ITEMS` items per split."""
    splits = dataset.splits
    keys = {role: SplitKeys.of(s, near_items(len(s), seed)) for role, s in splits.items()}
    indexes = {role: NearIndex(k.near_inputs, seed) for role, k in keys.items()}
    section: dict = {"near_threshold": NEAR_THRESHOLD, "num_perm": NUM_PERM, "splits": {},
                     "overlap": [], "examples": {}}
    sampled = {role: len(k.near_items) for role, k in keys.items()
               if len(k.near_items) < len(splits[role])}
    if sampled:
        section["near_sample"] = sampled
    for role, split in splits.items():
        counts, examples = split_hygiene(role, split, keys[role], indexes[role])
        section["splits"][role] = counts
        for kind, rows in examples.items():
            section["examples"].setdefault(kind, []).extend(rows)
    evaluated = "test" if dataset.train is not None else "all"
    fitting = [role for role in splits if role != evaluated]
    pairs = [(f, evaluated) for f in fitting] + [(a, b) for a, b in combinations(fitting, 2)]
    for fit_role, eval_role in pairs:
        row, found = overlap(fit_role, splits[fit_role], keys[fit_role], indexes[fit_role],
                             eval_role, splits[eval_role], keys[eval_role], indexes[eval_role])
        section["overlap"].append(row)
        section["examples"].setdefault("overlap", []).extend(found)
    section["warnings"] = _warnings(section, dataset.cross_validated)
    return section


def shares_items(section: dict) -> bool:
    """Whether the evaluation split shares items with a fitting split (exactly or nearly)."""
    return any(row["exact"] or row["near"] for row in section["overlap"])

