"""Sampled example instances for the report's cue explorer and easy/hard section.

Only a bounded sample is embedded (≤ ``per_cue`` instances for each listed cue, ≤ ``per_group``
easy and hard items), so reports stay small on SNLI-size data. Sampling is seeded.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import chain

import numpy as np

from cuelens.audit.counts import TokenSequences, encode
from cuelens.data.dataset import Dataset, Instances, Split, Task
from cuelens.jsonio import read_number


def sort_value(encoded) -> float:
    """A results.json metric value for ranking: ±∞ as such, undefined (null) last."""
    x = read_number(encoded)
    return -math.inf if math.isnan(x) else x


RANK_BY = "z"  # default cue ranking: significance (docs/methods.md §2)
LISTED_PER_LABEL = 20  # strongest cues of each label listed besides the significant ones
MAX_LISTED_CUES = 2000  # cap on the significant cues listed (report table, examples)
EXAMPLE_BUDGET = 4000  # sampled instances for the explorer in all (per cue at most ``per_cue``)


def cue_rank_key(rank_by: str = RANK_BY):
    """Sort key of a cue: ``rank_by`` descending, then z, support, token and label (ties are
    frequent with cp, where many rare words score 1.0: z puts the significant ones first)."""

    def key(c: dict) -> tuple:
        m = c["metrics"]
        return (-sort_value(m.get(rank_by)), -sort_value(m.get("z")), -c["count"], c["token"],
                c["label"])

    return key


def points_to_label(cue: dict) -> bool:
    """True when the word is positively associated with the cue's label (``z > 0``)."""
    return sort_value(cue["metrics"].get("z")) > 0


def top_cues_by_label(cues: list[dict], per_label: int,
                      rank_by: str = RANK_BY) -> dict[str, list[dict]]:
    """The ``per_label`` strongest cues of each label by ``rank_by`` (:func:`cue_rank_key`),
    among the words pointing to it (``z > 0``: more frequent with the label than without); a
    label no word points to is absent."""
    by_label: dict[str, list[dict]] = {}
    for cue in cues:
        if points_to_label(cue):
            by_label.setdefault(cue["label"], []).append(cue)
    key = cue_rank_key(rank_by)
    return {label: sorted(group, key=key)[:per_label] for label, group in sorted(by_label.items())}


def listed_cues(cues: list[dict], per_label: int = LISTED_PER_LABEL, rank_by: str = RANK_BY,
                limit: int = MAX_LISTED_CUES) -> list[dict]:
    """The cues a report lists, strongest first by ``rank_by``: every significant cue (at most
    ``limit``, by z) and the ``per_label`` strongest of each label."""
    significant = sorted((c for c in cues if c["significant"]), key=cue_rank_key("z"))[:limit]
    top = [c for group in top_cues_by_label(cues, per_label, rank_by).values() for c in group]
    chosen = {(c["token"], c["label"]): c for c in significant + top}
    return sorted(chosen.values(), key=cue_rank_key(rank_by))


def top_cue_tokens(cues: list[dict], per_label: int = LISTED_PER_LABEL) -> list[str]:
    """Distinct tokens of the :func:`listed_cues` (default ranking): those given examples."""
    return list(dict.fromkeys(c["token"] for c in listed_cues(cues, per_label)))


def examples_per_cue(n_tokens: int, per_cue: int) -> int:
    """Examples sampled per cue: ``per_cue``, fewer (at least 5) when many cues share the
    :data:`EXAMPLE_BUDGET`."""
    return max(5, min(per_cue, EXAMPLE_BUDGET // max(n_tokens, 1)))


def token_ids(vocab: list[str], tokens: list[str]) -> list[int]:
    """The id of each of ``tokens`` in ``vocab`` (−1: not a word of it)."""
    index = {word: i for i, word in enumerate(vocab)}
    return [index.get(token, -1) for token in tokens]


def holders(words: TokenSequences, ids: list[int]) -> list[np.ndarray]:
    """Per word id of ``ids`` (:func:`token_ids`), the instances of ``words``
    (:func:`~cuelens.audit.counts.encode` with repeats) that hold it, in order: one lookup over
    all their word ids."""
    # word id → index in ids; the ids −1 land in the unused last slot
    wanted = np.full(len(words.vocab) + 1, -1, dtype=np.int64)
    wanted[np.asarray(ids, dtype=np.int64)] = np.arange(len(ids))
    which, n = wanted[words.indices], max(len(words), 1)
    held = which >= 0
    owner = np.repeat(np.arange(len(words), dtype=np.int64), words.lengths)[held]
    pairs = np.unique(which[held] * n + owner)  # sorted by id, then instance
    ends = np.searchsorted(pairs // n, np.arange(len(ids) + 1))
    return [pairs[start:end] % n for start, end in zip(ends, ends[1:])]


def sample_examples(dataset: Dataset, cues: list[dict], item_easy: np.ndarray,
                    seed: int, words: TokenSequences | None = None,
                    per_label: int = LISTED_PER_LABEL, per_cue: int = 20,
                    per_group: int = 10) -> dict:
    """results.json ``examples``: instances of the evaluated split containing each listed cue
    (:func:`listed_cues`; :func:`examples_per_cue` of each). ``words``: the scan's encoding
    of the evaluated instances' texts (:attr:`~cuelens.audit.scan.WordAudit.words`), else
    they are encoded here."""
    split = dataset.test
    instances = split.instances(dataset.label_names)
    rng = np.random.default_rng(seed)
    tokens = top_cue_tokens(cues, per_label)
    per_cue = examples_per_cue(len(tokens), per_cue)

    def sampled(pool: np.ndarray, size: int) -> np.ndarray:
        """``size`` of ``pool`` drawn without replacement, in order (all when fewer)."""
        return np.sort(rng.choice(pool, size=size, replace=False)) if len(pool) > size else pool

    words = encode(instances.texts, repeats=True) if words is None else words
    pools = [sampled(held, per_cue).tolist()
             for held in holders(words, token_ids(words.vocab, tokens))]
    shown = shown_instances(split, instances)
    pools += [shown[sampled(np.flatnonzero(mask), per_group)].tolist()
              for mask in (item_easy, ~item_easy)]
    return examples_section(tokens, pools, lambda instance: example_row(
        split, instances, dataset.label_names, instance, item_easy))


def examples_section(tokens: list[str], pools: list[list[int]],
                     row: Callable[[int], dict]) -> dict:
    """results.json ``examples`` from the instances chosen for each of ``tokens``, then for the
    easy and the hard items (``pools``): every distinct instance one ``items`` row (``row``),
    in order of first listing, and the lists as indices into them."""
    index: dict[int, int] = {}
    for instance in chain.from_iterable(pools):
        index.setdefault(instance, len(index))
    items = [row(instance) for instance in index]
    listed = [[index[instance] for instance in pool] for pool in pools]
    return {"items": items, "by_cue": dict(zip(tokens, listed)), "easy": listed[-2],
            "hard": listed[-1]}


def example_row(split: Split, instances: Instances, label_names: list[str], instance: int,
                item_easy: np.ndarray) -> dict:
    """An ``examples.items`` row: ``instances[instance]`` of ``split`` with its item's id and
    easy flag (docs/results-schema.md)."""
    item = int(instances.item[instance])
    return {"id": split.ids[item], "premise": instances.premises[instance],
            "text": instances.texts[instance],
            "label": label_names[int(instances.labels[instance])], "easy": bool(item_easy[item])}


def shown_instances(split: Split, instances: Instances) -> np.ndarray:
    """Per item of ``split``, the instance its easy/hard example shows: the first of its
    ``instances`` (MCQ: its right choice)."""
    first = np.searchsorted(instances.item, np.arange(len(split)))
    return first + split.item_labels([]) if split.task == Task.MCQ else first
