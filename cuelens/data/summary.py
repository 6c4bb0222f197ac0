"""Dataset overview for results.json ``dataset`` (docs/results-schema.md)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from cuelens.data.dataset import Dataset, Split, Task
from cuelens.data.labels import MIN_LABEL_ITEMS, label_report, split_counts


def split_summary(split: Split, label_names: list[str]) -> dict:
    """Sizes, label counts and (MCQ) answer-position counts of one split."""
    if split.task == Task.MCQ:
        positions = Counter(int(label) for label in split.labels)
        sizes = split.choice_counts
        instances = sum(sizes)
        label_counts = {"right": len(split), "wrong": instances - len(split)}
        answer_positions = {str(j): positions.get(j, 0) for j in range(max(sizes, default=0))}
    else:
        return nli_split_summary(split.path, len(split), Counter(split.labels), split.skipped,
                                 label_names)
    return {"file": Path(split.path).name, "items": len(split), "instances": instances,
            "label_counts": label_counts, "answer_position_counts": answer_positions,
            "skipped": dict(sorted(split.skipped.items()))}


def nli_split_summary(path: str, items: int, counts: Counter, skipped: dict[str, int],
                      label_names: list[str]) -> dict:
    """:func:`split_summary` of an NLI split from its label counts."""
    names = label_names + sorted(set(counts) - set(label_names))
    return {"file": Path(path).name, "items": items, "instances": items,
            "label_counts": {name: counts.get(name, 0) for name in names},
            "answer_position_counts": None, "skipped": dict(sorted(skipped.items()))}


def summary_of(name: str, fmt: str, task: str, n_choices: int | None, cross_validated: bool,
               label_names: list[str], splits: dict[str, dict], labels: dict | None = None
               ) -> dict:
    """results.json ``dataset`` from its parts (``splits``: role → split summary; ``labels``:
    :func:`~cuelens.data.labels.label_report`)."""
    out = {"name": name, "format": fmt, "task": task, "n_choices": n_choices,
           "cross_validated": cross_validated, "label_names": list(label_names),
           "splits": splits}
    if labels is not None:
        out["labels"] = labels
    return out


def dataset_labels(dataset: Dataset, min_label_items: int = MIN_LABEL_ITEMS) -> dict:
    """:func:`~cuelens.data.labels.label_report` of a loaded dataset (rare labels are those
    of the fitting split: the cross-validated file, else train)."""
    fitting = "train" if dataset.train is not None else "all"
    return label_report({role: (split.path, _label_counts(split), split.findings)
                         for role, split in dataset.splits.items()}, fitting, min_label_items)


def _label_counts(split: Split) -> dict[str, int]:
    if split.task == Task.MCQ:
        return split_summary(split, [])["label_counts"]
    return split_counts(split.labels)


def dataset_summary(dataset: Dataset, min_label_items: int = MIN_LABEL_ITEMS) -> dict:
    return summary_of(dataset.name, dataset.format, dataset.task, dataset.n_choices,
                      dataset.cross_validated, dataset.label_names,
                      {role: split_summary(split, dataset.label_names)
                       for role, split in dataset.splits.items()},
                      dataset_labels(dataset, min_label_items))
