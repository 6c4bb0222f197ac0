"""Sampled example instances for the report's cue explorer and easy/hard section.

Only a bounded sample is embedded (≤ ``per_cue`` instances for each of the top cues, ≤ ``per_group``
easy and hard items), so reports stay small on SNLI-size data. Sampling is seeded.
"""

from __future__ import annotations

import math

import numpy as np

from cuelens.audit.tokenize import tokenize
from cuelens.data.dataset import Dataset, Task
from cuelens.io import read_number


def sort_value(encoded) -> float:
    """A results.json metric value for ranking: ±∞ as such, undefined (null) last."""
    x = read_number(encoded)
    return -math.inf if math.isnan(x) else x


def top_cues_by_label(cues: list[dict], metric: str, per_label: int) -> dict[str, list[dict]]:
    """The ``per_label`` highest-scoring cues of each label.

    Ties (frequent with CP, where many words score 1.0) are broken by z, then support, then token,
    so significant cues come before rare ones — the same order as the report's table.
    """
    by_label: dict[str, list[dict]] = {}
    for cue in cues:
        by_label.setdefault(cue["label"], []).append(cue)

    def rank(c: dict) -> tuple:
        return (-sort_value(c["metrics"][metric]), -sort_value(c["metrics"]["z"]), -c["count"],
                c["token"])

    return {label: sorted(group, key=rank)[:per_label] for label, group in sorted(by_label.items())}


def top_cue_tokens(cues: list[dict], metric: str, per_label: int) -> list[str]:
    """Distinct tokens among the top cues of every label."""
    ranked = top_cues_by_label(cues, metric, per_label)
    return list(dict.fromkeys(c["token"] for group in ranked.values() for c in group))


def sample_examples(dataset: Dataset, cues: list[dict], metric: str, item_easy: np.ndarray,
                    seed: int, per_label: int = 10, per_cue: int = 20,
                    per_group: int = 10) -> dict:
    """results.json ``examples``: instances of the evaluated split containing the top cues."""
    split = dataset.test
    instances = split.instances(dataset.label_names)
    rng = np.random.default_rng(seed)
    tokens = top_cue_tokens(cues, metric, per_label)
    wanted = set(tokens)
    holders: dict[str, list[int]] = {t: [] for t in tokens}
    for index, text in enumerate(instances.texts):
        for token in wanted.intersection(tokenize(text)):
            holders[token].append(index)

    chosen: dict[int, int] = {}
    items: list[dict] = []

    def add(instance: int) -> int:
        if instance not in chosen:
            item = int(instances.item[instance])
            chosen[instance] = len(items)
            items.append({"id": split.ids[item], "premise": instances.premises[instance],
                          "text": instances.texts[instance],
                          "label": dataset.label_names[int(instances.labels[instance])],
                          "easy": bool(item_easy[item])})
        return chosen[instance]

    by_cue = {}
    for token in tokens:
        pool = np.asarray(holders[token], dtype=np.int64)
        if len(pool) > per_cue:
            pool = np.sort(rng.choice(pool, size=per_cue, replace=False))
        by_cue[token] = [add(int(i)) for i in pool]

    first_instance: dict[int, int] = {}
    for index, item in enumerate(instances.item):
        first_instance.setdefault(int(item), index)
    groups = {}
    for name, mask in (("easy", item_easy), ("hard", ~item_easy)):
        pool = np.flatnonzero(mask)
        if len(pool) > per_group:
            pool = np.sort(rng.choice(pool, size=per_group, replace=False))
        # For MCQ show the correct choice of the question.
        groups[name] = [add(first_instance[int(q)] + _gold_offset(dataset, int(q))) for q in pool]
    return {"items": items, "by_cue": by_cue, **groups}


def _gold_offset(dataset: Dataset, item: int) -> int:
    return int(dataset.test.labels[item]) if dataset.task == Task.MCQ else 0
