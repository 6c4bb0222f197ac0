"""Dataset overview for results.json ``dataset`` (docs/results-schema.md)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from cuelens.data.dataset import Dataset, Task
from cuelens.data.labels import MIN_LABEL_ITEMS, label_report


def split_summary(path: str, task: str, items: int, counts: Counter, choices: Counter,
                  skipped: dict[str, int], label_names: list[str]) -> dict:
    """Sizes, label counts and (MCQ) answer-position counts of one split from its label counts
    (MCQ: items per position of the right choice) and MCQ items per number of choices."""
    positions = None
    if task == Task.MCQ:
        instances = sum(k * n for k, n in choices.items())
        label_counts = {"right": items, "wrong": instances - items}
        positions = {str(j): counts.get(j, 0) for j in range(max(choices, default=0))}
    else:
        instances, names = items, label_names + sorted(set(counts) - set(label_names))
        label_counts = {name: counts.get(name, 0) for name in names}
    return {"file": Path(path).name, "items": items, "instances": instances,
            "label_counts": label_counts, "answer_position_counts": positions,
            "skipped": dict(sorted(skipped.items()))}


def summary_of(name: str, fmt: str, task: str, n_choices: int | None, label_names: list[str],
               splits: dict[str, tuple[Any, dict]], fitting: str,
               min_label_items: int = MIN_LABEL_ITEMS, split_roles: dict | None = None) -> dict:
    """results.json ``dataset`` from each split (role → the split, with its ``path`` and label
    ``findings``, and its :func:`split_summary`); ``fitting``: the split whose labels decide
    which are rare (:func:`~cuelens.data.labels.label_report`), "all" when cross-validated;
    ``split_roles``: a role given to a file whose name does not say it
    (:func:`~cuelens.data.dataset.inferred_roles`), recorded when there is one."""
    roles = {} if split_roles is None else {"split_roles": split_roles}
    return {"name": name, "format": fmt, "task": task, "n_choices": n_choices,
            "cross_validated": fitting == "all", "label_names": list(label_names),
            "splits": {role: summary for role, (_, summary) in splits.items()}, **roles,
            "labels": label_report({role: (split.path, summary["label_counts"], split.findings)
                                    for role, (split, summary) in splits.items()},
                                   fitting, min_label_items)}


def dataset_summary(dataset: Dataset) -> dict:
    return summary_of(dataset.name, dataset.format, dataset.task, dataset.n_choices,
                      dataset.label_names,
                      {role: (split, split_summary(
                          split.path, split.task, len(split), Counter(split.labels),
                          Counter(split.choice_counts), split.skipped, dataset.label_names))
                       for role, split in dataset.splits.items()},
                      "train" if dataset.train is not None else "all", MIN_LABEL_ITEMS,
                      dataset.split_roles)
