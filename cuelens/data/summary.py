"""Dataset overview for results.json ``dataset`` (docs/results-schema.md)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from cuelens.data.dataset import Dataset, Split, Task


def split_summary(split: Split, label_names: list[str]) -> dict:
    """Sizes, label counts and (MCQ) answer-position counts of one split."""
    if split.task == Task.MCQ:
        positions = Counter(int(label) for label in split.labels)
        sizes = split.choice_counts
        instances = sum(sizes)
        label_counts = {"right": len(split), "wrong": instances - len(split)}
        answer_positions = {str(j): positions.get(j, 0) for j in range(max(sizes, default=0))}
    else:
        counts = Counter(split.labels)
        names = label_names + sorted(set(counts) - set(label_names))
        label_counts = {name: counts.get(name, 0) for name in names}
        answer_positions = None
        instances = len(split)
    return {"file": Path(split.path).name, "items": len(split), "instances": instances,
            "label_counts": label_counts, "answer_position_counts": answer_positions,
            "skipped": dict(sorted(split.skipped.items()))}


def dataset_summary(dataset: Dataset) -> dict:
    return {"name": dataset.name, "format": dataset.format, "task": dataset.task,
            "n_choices": dataset.n_choices, "cross_validated": dataset.cross_validated,
            "label_names": list(dataset.label_names),
            "splits": {role: split_summary(split, dataset.label_names)
                       for role, split in dataset.splits.items()}}
