"""Model predictions for the probe: from a predictions file or a loaded classifier (SPEC §6).

A predictions file is JSONL, one line per test item: ``{"id", "prediction"}`` with an optional
``"probs"``. NLI: ``prediction`` is a label name, ``probs`` a list in the dataset's label order
(sorted label names) or a ``{label: p}`` object. MCQ: ``prediction`` is the chosen choice's
0-based index, ``probs`` a list over the choices. Every test id must be present exactly once;
unknown ids and labels are errors naming the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cuelens.data.dataset import Dataset
from cuelens.data.readers import jsonl_objects
from cuelens.errors import UserError


@dataclass
class Predictions:
    """Per test item: predicted label index (NLI) or choice index (MCQ), optional probabilities."""

    pred: np.ndarray
    probs: np.ndarray | None = None

    def rows(self, dataset: Dataset) -> list[dict]:
        """The predictions-file rows for ``dataset.test`` (the same format :func:`read` reads)."""
        out = []
        for i, item_id in enumerate(dataset.test.ids):
            p = int(self.pred[i])
            row = {"id": item_id,
                   "prediction": dataset.label_names[p] if dataset.task == "nli" else p}
            if self.probs is not None:
                row["probs"] = [round(float(x), 6) for x in self.probs[i]]
            out.append(row)
        return out


def _n_outputs(dataset: Dataset) -> int:
    return dataset.n_choices if dataset.task == "mcq" else len(dataset.label_names)


def _parse_prediction(value, dataset: Dataset, lookup: dict[str, int]) -> int:
    if dataset.task == "nli":
        if isinstance(value, str) and value in lookup:
            return lookup[value]
        raise ValueError(f"unknown label {value!r} (labels: {', '.join(dataset.label_names)})")
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < dataset.n_choices:
        return value
    raise ValueError(f"prediction must be a choice index 0..{dataset.n_choices - 1}, "
                     f"got {value!r}")


def _parse_probs(value, dataset: Dataset) -> np.ndarray:
    if isinstance(value, dict) and dataset.task == "nli":
        if set(value) != set(dataset.label_names):
            raise ValueError("probs object must have exactly the labels "
                             f"{', '.join(dataset.label_names)}")
        value = [value[label] for label in dataset.label_names]
    if (not isinstance(value, list) or len(value) != _n_outputs(dataset)
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value)):
        raise ValueError(f"probs must be a list of {_n_outputs(dataset)} numbers")
    probs = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(probs)) or np.any(probs < 0) or not probs.sum() > 0:
        raise ValueError("probs must be finite, non-negative and not all zero")
    return probs


def _id_text(value) -> str:
    if isinstance(value, (dict, list)):
        raise ValueError('"id" must be a string or a number')
    return str(value)


def read_predictions(path: str | Path, dataset: Dataset) -> Predictions:
    """Read and check a predictions file against ``dataset.test``."""
    path = Path(path)
    if not path.exists():
        raise UserError("predictions file not found", path=str(path))
    position = {item_id: i for i, item_id in enumerate(dataset.test.ids)}
    if len(position) != len(dataset.test):
        raise UserError("test item ids are not unique, so predictions cannot be matched to items",
                        path=dataset.test.path)
    lookup = {label: i for i, label in enumerate(dataset.label_names)}
    pred = np.full(len(position), -1, dtype=np.int64)
    probs: np.ndarray | None = None
    n_with_probs = 0
    for line_no, row in jsonl_objects(path):
        try:
            if "id" not in row or "prediction" not in row:
                raise ValueError('each line needs "id" and "prediction"')
            item_id = _id_text(row["id"])
            if item_id not in position:
                raise ValueError(f"id {item_id!r} is not in the test split")
            i = position[item_id]
            if pred[i] >= 0:
                raise ValueError(f"duplicate prediction for id {item_id!r}")
            pred[i] = _parse_prediction(row["prediction"], dataset, lookup)
            if "probs" in row:
                if probs is None:
                    probs = np.full((len(position), _n_outputs(dataset)), np.nan)
                probs[i] = _parse_probs(row["probs"], dataset)
                n_with_probs += 1
        except ValueError as exc:
            raise UserError(str(exc), path=str(path), line=line_no) from None
    missing = [item_id for item_id, i in position.items() if pred[i] < 0]
    if missing:
        shown = ", ".join(repr(x) for x in missing[:5])
        raise UserError(f"{len(missing)} test item(s) have no prediction (e.g. {shown})",
                        path=str(path))
    if probs is not None and n_with_probs != len(position):
        raise UserError('"probs" must be given for every line or for none', path=str(path))
    return Predictions(pred=pred, probs=probs)


def classifier_predictions(clf, dataset: Dataset, batch_size: int | None = None,
                           on_batch=None, predict_proba=None) -> Predictions:
    """Predict ``dataset.test`` with a loaded :class:`~cuelens.models.classifier.Classifier`;
    NLI probabilities are reordered to the dataset's label order. ``predict_proba(split,
    batch_size, on_batch)`` replaces ``clf.predict_proba`` (e.g. the Ray engine's)."""
    from cuelens.models.classifier import label_columns

    predict = predict_proba or clf.predict_proba
    probs = predict(dataset.test, batch_size=batch_size, on_batch=on_batch)
    if dataset.task == "nli":
        probs = probs[:, label_columns(clf.model.config.id2label, dataset.label_names)]
    return Predictions(pred=probs.argmax(axis=1), probs=probs)
