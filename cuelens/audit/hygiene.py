"""Data hygiene: duplicates, train/test overlap, mirrored pairs and label-noise candidates.

The ``hygiene`` section of results.json (docs/data-hygiene.md). All comparisons use the normal
form of :func:`cuelens.audit.groups.normal_form` (lower-cased word tokens), so case, punctuation
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

from collections import defaultdict
from itertools import combinations

from cuelens.audit.groups import MIN_KEY_TOKENS, normal_form
from cuelens.data.dataset import Dataset, Split, Task

NEAR_THRESHOLD = 0.8
NUM_PERM = 64
MAX_EXAMPLES = 5
TEXT_CHARS = 160


def item_input(split: Split, i: int) -> str:
    """The normalised input of item ``i``: premise (+ question) and hypothesis / choice set."""
    if split.task == Task.NLI:
        text = normal_form(split.hypotheses[i])
    else:
        text = " | ".join(sorted(normal_form(c) for c in split.choices[i]))
    return f"{normal_form(split.premise_context(i))} || {text}"


def item_answer(split: Split, i: int) -> str:
    """What the item's label says: the NLI label, or the normalised text of the right choice."""
    if split.task == Task.NLI:
        return str(split.labels[i])
    return normal_form(split.choices[i][split.labels[i]])


def _pair_key(split: Split, i: int) -> str | None:
    """The text mirrored / contrastive partners share: MCQ choice set, NLI hypothesis (3+ tokens)."""
    if split.task == Task.MCQ:
        return " | ".join(sorted(normal_form(c) for c in split.choices[i]))
    form = normal_form(split.hypotheses[i])
    return form if len(form.split()) >= MIN_KEY_TOKENS else None


def _example(role: str, split: Split, i: int, other: tuple[str, Split, int] | None = None) -> dict:
    shown = split.hypotheses[i] if split.task == Task.NLI else " / ".join(split.choices[i])
    row = {"split": role, "id": split.ids[i], "line": split.lines[i],
           "text": f"{split.premise_context(i)} → {shown}"[:TEXT_CHARS]}
    if other is not None:
        o_role, o_split, j = other
        row["other"] = {"split": o_role, "id": o_split.ids[j], "line": o_split.lines[j]}
    return row


def _contrast_pairs(split: Split) -> tuple[int, list[tuple[int, int]]]:
    """Pairs sharing :func:`_pair_key` with different answers (count, first few)."""
    by_key: dict[str, list[int]] = defaultdict(list)
    for i in range(len(split)):
        key = _pair_key(split, i)
        if key is not None:
            by_key[key].append(i)
    count, shown = 0, []  # type: int, list[tuple[int, int]]
    for members in by_key.values():
        if len(members) < 2:
            continue
        answers: dict[str, int] = defaultdict(int)
        for i in members:
            answers[item_answer(split, i)] += 1
        n = len(members)
        count += n * (n - 1) // 2 - sum(c * (c - 1) // 2 for c in answers.values())
        if len(shown) < MAX_EXAMPLES and len(answers) > 1:
            first = members[0]
            partner = next(j for j in members[1:]
                           if item_answer(split, j) != item_answer(split, first))
            shown.append((first, partner))
    return count, shown


def _shingles(text: str) -> set[str]:
    words = text.split()
    return {f"{a} {b}" for a, b in zip(words, words[1:])} or set(words)


class NearIndex:
    """MinHash LSH over item inputs (word bigrams); :meth:`query` confirms with exact Jaccard."""

    def __init__(self, inputs: list[str], seed: int = 0) -> None:
        from datasketch import MinHash, MinHashLSH

        self.sets = [_shingles(t) for t in inputs]
        self.lsh = MinHashLSH(threshold=NEAR_THRESHOLD, num_perm=NUM_PERM)
        self.hashes = MinHash.bulk([[s.encode() for s in sorted(x)] for x in self.sets],
                                   num_perm=NUM_PERM, seed=seed)
        for i, h in enumerate(self.hashes):
            self.lsh.insert(i, h)

    def query(self, shingles: set[str], hashed) -> list[int]:
        found = []
        for j in self.lsh.query(hashed):
            other = self.sets[j]
            union = len(shingles | other)
            if union and len(shingles & other) / union >= NEAR_THRESHOLD:
                found.append(j)
        return sorted(found)


def split_hygiene(role: str, split: Split, index: NearIndex, inputs: list[str]) -> tuple[dict,
                                                                                         dict]:
    """Counts of one split and its examples."""
    by_input: dict[str, list[int]] = defaultdict(list)
    for i, key in enumerate(inputs):
        by_input[key].append(i)
    copies = [members for members in by_input.values() if len(members) > 1]
    conflicts = [m for m in copies if len({item_answer(split, i) for i in m}) > 1]
    near_pairs = []
    for i, hashed in enumerate(index.hashes):
        near_pairs += [(i, j) for j in index.query(index.sets[i], hashed)
                       if j > i and inputs[j] != inputs[i]]
    n_contrast, contrast = _contrast_pairs(split)
    counts = {"items": len(split), "duplicate_items": sum(len(m) - 1 for m in copies),
              "duplicate_groups": len(copies), "near_duplicate_pairs": len(near_pairs),
              "label_conflict_groups": len(conflicts),
              "label_conflict_items": sum(len(m) for m in conflicts),
              ("mirrored_pairs" if split.task == Task.MCQ else "contrastive_pairs"): n_contrast}
    pick = lambda pairs: [_example(role, split, i, (role, split, j))  # noqa: E731
                          for i, j in pairs[:MAX_EXAMPLES]]
    examples = {"duplicates": pick([(m[0], m[1]) for m in copies]),
                "near_duplicates": pick(near_pairs),
                "label_conflicts": pick([(m[0], m[1]) for m in conflicts]),
                "mirrored": pick(contrast)}
    return counts, examples


def overlap(fit_role: str, fit: Split, fit_inputs: list[str], fit_index: NearIndex,
            eval_role: str, evaluate: Split, eval_inputs: list[str],
            eval_index: NearIndex) -> tuple[dict, list[dict]]:
    """Evaluation items that occur (exactly or nearly) in the fitting split, or share a premise."""
    first_fit: dict[str, int] = {}
    for j, key in enumerate(fit_inputs):
        first_fit.setdefault(key, j)
    premises: dict[str, int] = {}
    for j in range(len(fit)):
        premises.setdefault(normal_form(fit.premise_context(j)), j)
    exact, near, shared_premise = [], [], 0
    for i, key in enumerate(eval_inputs):
        if key in first_fit:
            exact.append((i, first_fit[key]))
            continue
        hits = fit_index.query(eval_index.sets[i], eval_index.hashes[i])
        if hits:
            near.append((i, hits[0]))
        shared_premise += normal_form(evaluate.premise_context(i)) in premises
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
    return out


def data_hygiene(dataset: Dataset, seed: int = 0) -> dict:
    """The ``hygiene`` section of results.json for every loaded split of ``dataset``."""
    splits = dataset.splits
    inputs = {role: [item_input(s, i) for i in range(len(s))] for role, s in splits.items()}
    indexes = {role: NearIndex(inputs[role], seed) for role in splits}
    section: dict = {"near_threshold": NEAR_THRESHOLD, "num_perm": NUM_PERM, "splits": {},
                     "overlap": [], "examples": {}}
    for role, split in splits.items():
        counts, examples = split_hygiene(role, split, indexes[role], inputs[role])
        section["splits"][role] = counts
        for kind, rows in examples.items():
            section["examples"].setdefault(kind, []).extend(rows)
    evaluated = "test" if dataset.train is not None else "all"
    fitting = [role for role in splits if role != evaluated]
    pairs = [(f, evaluated) for f in fitting] + [(a, b) for a, b in combinations(fitting, 2)]
    for fit_role, eval_role in pairs:
        row, found = overlap(fit_role, splits[fit_role], inputs[fit_role], indexes[fit_role],
                             eval_role, splits[eval_role], inputs[eval_role], indexes[eval_role])
        section["overlap"].append(row)
        section["examples"].setdefault("overlap", []).extend(found)
    section["warnings"] = _warnings(section, dataset.cross_validated)
    return section


def shares_items(section: dict) -> bool:
    """Whether the evaluation split shares items with a fitting split (exactly or nearly)."""
    return any(row["exact"] or row["near"] for row in section["overlap"])

