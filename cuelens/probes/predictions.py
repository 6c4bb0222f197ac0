"""The one :class:`Predictions` type of the probe and its two plain readers, a predictions file
(format: docs/api.md, "Probe options and prediction sources") and a loaded classifier
(docs/methods.md §6); evaluation logs: :mod:`cuelens.probes.evallogs`."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from cuelens.data.dataset import Dataset, Task
from cuelens.data.labels import normalise_label, unicode_form
from cuelens.data.readers import jsonl_objects
from cuelens.data.schema import id_text, nli_label
from cuelens.errors import UserError
from cuelens.wording import plural


MISSING = -2  # no line yet for the item (-1 is a logged "no answer")


@dataclass
class Predictions:
    """Per test item: predicted label index (NLI) or choice index (MCQ), optional probabilities,
    and where they came from (``info``: the results' ``probe.model`` section)."""

    pred: np.ndarray
    probs: np.ndarray | None = None
    covered: np.ndarray | None = None  # a log of some test items only: which ones (else all)
    notes: list[str] = field(default_factory=list)  # what the user should know (warnings)
    log: dict | None = None  # an evaluation log's facts (``probe.model.log``)
    info: dict = field(default_factory=dict)  # ``probe.model``: name, source, …

    def logged_subset(self, dataset: Dataset) -> tuple[Dataset, "Predictions"]:
        """``dataset`` with only the covered test items, and these predictions for them
        (unchanged when every item is covered)."""
        if self.covered is None:
            return dataset, self
        index = np.flatnonzero(self.covered)
        subset = replace(dataset, test=dataset.test.subset(index))
        return subset, replace(self, pred=self.pred[index], covered=None,
                               probs=None if self.probs is None else self.probs[index])

    def rows(self, dataset: Dataset, texts: list[str] | None = None) -> list[dict]:
        """The predictions-file rows for ``dataset.test`` (the format
        :func:`read_predictions_file` reads; ``null``: no answer), with the generated text of
        each answer when given (``texts``, an LLM's)."""
        out = []
        for i, item_id in enumerate(dataset.test.ids):
            p = int(self.pred[i])
            row: dict[str, object] = {"id": item_id, "prediction": None if p < 0 else
                                      dataset.label_names[p] if dataset.task == Task.NLI else p}
            if self.probs is not None:
                row["probs"] = [round(float(x), 6) for x in self.probs[i] if np.isfinite(x)]
            if texts is not None:
                row["answer"] = texts[i]
            out.append(row)
        return out


def _n_outputs(dataset: Dataset, i: int | None = None) -> int:
    """Outputs of test item ``i`` (MCQ: its choices; ``None``: the most of any item)."""
    if dataset.task == Task.NLI:
        return len(dataset.label_names)
    counts = dataset.test.choice_counts
    return max(counts) if i is None else counts[i]


def _parse_prediction(value, dataset: Dataset, lookup: dict[str, int], k: int) -> int:
    if value is None:
        return -1  # no answer (e.g. an unparseable reply): always wrong
    if dataset.task == Task.NLI:
        label = nli_label(value, "prediction")[0]  # as the dataset's labels were read
        if label in lookup:
            return lookup[label]
        raise ValueError(f"unknown label {value!r} (labels: {', '.join(dataset.label_names)})")
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < k:
        return value
    raise ValueError(f"prediction must be a choice index 0..{k - 1}, got {value!r}")


def _other_form(item_id: str, position: dict[str, int]) -> str:
    """Why an unknown ``item_id`` looks like a test id: the same text in another Unicode form
    (``""`` when no test id is)."""
    if item_id.isascii():
        return ""
    key = unicodedata.normalize("NFC", item_id)
    same = next((i for i in position if unicodedata.normalize("NFC", i) == key), None)
    if same is None:
        return ""
    return (f", which has it in another Unicode form ({unicode_form(same)}; this file: "
            f"{unicode_form(item_id)}): write the ids as the dataset does")


def parse_probs(value, dataset: Dataset, k: int) -> np.ndarray:
    """``probs`` of one item as ``k`` finite, non-negative numbers, not all zero (NLI: also a
    ``{label: p}`` object), scaled by their largest when their sum overflows; ValueError
    otherwise."""
    if isinstance(value, dict) and dataset.task == Task.NLI:
        value = {normalise_label(str(label)): p for label, p in value.items()}
        if set(value) != set(dataset.label_names):
            raise ValueError("probs object must have exactly the labels "
                             f"{', '.join(dataset.label_names)}")
        value = [value[label] for label in dataset.label_names]
    if (not isinstance(value, list) or len(value) != k
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value)):
        raise ValueError(f"probs must be a list of {k} numbers")
    probs = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(probs)) or np.any(probs < 0) or not probs.sum() > 0:
        raise ValueError("probs must be finite, non-negative and not all zero")
    if not np.isfinite(probs.sum()):  # finite numbers whose sum is not: the same proportions
        probs = probs / probs.max()  # (normalised by their sum, they were all 0)
    return probs


def _check_not_a_table(path: Path) -> None:
    """A CSV, TSV or Parquet file given as predictions is one error saying what to write (it
    was a JSON error on line 1)."""
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    if suffixes and suffixes[-1] in (".csv", ".tsv", ".parquet"):
        raise UserError(f"a predictions file is JSON Lines, one {{\"id\", \"prediction\"}} "
                        f"object per line (docs/api.md), not {suffixes[-1][1:].upper()}",
                        path=str(path))


def read_predictions_file(path: str | Path, dataset: Dataset) -> Predictions:
    """Read and check a JSONL predictions file (format: docs/api.md) against ``dataset.test``."""
    path = Path(path)
    _check_not_a_table(path)
    position = dataset.test.positions("so predictions cannot be matched to items")
    lookup = {label: i for i, label in enumerate(dataset.label_names)}
    pred = np.full(len(position), MISSING, dtype=np.int64)
    probs: np.ndarray | None = None
    n_with_probs = 0
    disagree: list[tuple[int, int, int]] = []  # (line, prediction, most probable answer)
    line_no = 0  # stays 0 when the file holds no JSON line
    for line_no, row in jsonl_objects(path):
        try:
            if "id" not in row or "prediction" not in row:
                raise ValueError('each line needs "id" and "prediction"')
            if isinstance(row["id"], (dict, list)):
                raise ValueError('"id" must be a string or a number')
            item_id = str(id_text(row["id"]))
            if item_id not in position:
                raise ValueError(f"id {item_id!r} is not in the test split"
                                 f"{_other_form(item_id, position)}")
            i = position[item_id]
            if pred[i] != MISSING:
                raise ValueError(f"duplicate prediction for id {item_id!r}")
            k = _n_outputs(dataset, i)
            pred[i] = _parse_prediction(row["prediction"], dataset, lookup, k)
            if "probs" in row:
                if probs is None:
                    probs = np.full((len(position), _n_outputs(dataset)), np.nan)
                probs[i, :k] = parse_probs(row["probs"], dataset, k)
                n_with_probs += 1
                top = int(np.argmax(probs[i, :k]))
                if pred[i] >= 0 and probs[i, pred[i]] < probs[i, top] * (1 - 1e-6):
                    disagree.append((line_no, int(pred[i]), top))
        except ValueError as exc:
            raise UserError(str(exc), path=str(path), line=line_no) from None
    if line_no == 0:
        raise UserError(f"no predictions (an empty file); it needs one line per test item "
                        f"({len(position):,})", path=str(path))
    missing = [item_id for item_id, i in position.items() if pred[i] == MISSING]
    if missing:
        shown = ", ".join(repr(x) for x in missing[:5])
        raise UserError(f"{plural(len(missing), 'test item has', 'test items have')} no "
                        f"prediction (e.g. {shown})", path=str(path))
    if probs is not None and n_with_probs != len(position):
        raise UserError('"probs" must be given for every line or for none', path=str(path))
    notes = [_disagreement_note(path, disagree, len(position), dataset)] if disagree else []
    return Predictions(pred=pred, probs=probs, notes=notes)


def _disagreement_note(path: Path, disagree: list[tuple[int, int, int]], n: int,
                       dataset: Dataset) -> str:
    """The warning for lines whose ``probs`` favour another answer than their ``prediction``
    (``(line, prediction, most probable)``): the probe scores ``prediction``."""
    def name(index: int) -> str:
        return repr(dataset.label_names[index]) if dataset.task == Task.NLI else f"choice {index}"

    line, said, top = disagree[0]
    order = (f"; probs are read in the dataset's label order ({', '.join(dataset.label_names)})"
             if dataset.task == Task.NLI else "")
    return (f"{path}: on {len(disagree):,} of {n:,} lines \"probs\" favour another answer than "
            f"\"prediction\" (e.g. line {line}: {name(said)} predicted, {name(top)} most "
            f"probable); the probe scores \"prediction\"{order}")


def classifier_predictions(clf, dataset: Dataset, batch_size: int | None = None,
                           on_batch=None, predict_proba=None) -> Predictions:
    """Predict ``dataset.test`` with a loaded :class:`~cuelens.models.classifier.Classifier`;
    NLI probabilities are reordered to the dataset's label order. ``predict_proba(split,
    batch_size, on_batch)`` replaces ``clf.predict_proba`` (e.g. the Ray engine's)."""
    from cuelens.models.classifier import label_columns

    predict = predict_proba or clf.predict_proba
    probs = predict(dataset.test, batch_size=batch_size, on_batch=on_batch)
    notes: list[str] = []
    if dataset.task == Task.NLI:
        id2label = clf.model.config.id2label
        columns = label_columns(id2label, dataset.label_names)
        probs = probs[:, columns]
        unused = [str(id2label[i]) for i in sorted(id2label, key=int)
                  if int(i) not in set(columns.tolist())]
        if unused:
            notes.append(f"the model also predicts {', '.join(unused)}, not a label of this "
                         f"dataset: each item's prediction is the most probable of its labels "
                         f"({', '.join(dataset.label_names)}), and probs leave "
                         f"{'it' if len(unused) == 1 else 'them'} out")
    return Predictions(pred=probs.argmax(axis=1), probs=probs, notes=notes)
