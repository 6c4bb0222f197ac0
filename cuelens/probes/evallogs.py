"""Evaluation logs of LLM harnesses as probe predictions (docs/methods.md §6; docs/eval-logs.md).

Two formats, detected from the file:

- **lm-evaluation-harness** ``--log_samples`` JSONL (``samples_<task>_<date>.jsonl``, also
  gzipped): one line per document with ``doc_id``, ``doc``, ``target``, ``arguments`` (one
  ``(context, continuation)`` request per choice: a list of pairs, or
  ``{"gen_args_<j>": {"arg_0": context, "arg_1": continuation}}``) and ``filtered_resps`` (per
  choice ``[log-likelihood, is_greedy]``; ``resps`` holds the same one level deeper). When a
  task logged several filters, the lines of the first filter name in the file are used.
  Prediction = arg-max log-likelihood; ``norm="chars"`` divides each log-likelihood by the
  character length of its continuation after leading whitespace is removed (the target
  delimiter, a space by default), which is what lm-eval's ``acc_norm`` divides by;
  ``norm="bytes"`` by the UTF-8 byte length of that string. Probabilities = softmax over the
  choices of the scores the prediction used.
- **Inspect** eval logs: ``.json`` (one object with ``eval`` and ``samples``) or ``.eval`` (a
  zip archive whose ``samples/<id>_epoch_<n>.json`` members each hold one sample). A sample has
  ``id``, ``epoch``, ``choices``, ``target`` (letter) and ``scores``; the prediction is the first
  letter of a score's ``answer`` (the ``choice`` scorer's, or the first score that has one).
  Only epoch 1 is read. A sample without an answer is predicted ``-1`` (always wrong). Inspect
  logs carry no per-choice likelihoods, so no probabilities and no ``norm``.

Items are matched to ``dataset.test`` by order (lm-eval ``doc_id`` = 0-based position; Inspect
samples sorted by ``id``) or, with ``id_field``, by that field of ``doc`` (lm-eval) or of the
sample's ``metadata`` (Inspect; ``id`` means the sample id) equal to the test item's id.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cuelens.data.dataset import Dataset, Task
from cuelens.data.readers import (LineError, check_regular_file, iter_jsonl, jsonl_objects,
                                  parse_json, read_json)
from cuelens.errors import UserError

NORMS = ("none", "chars", "bytes")


@dataclass
class LoggedItem:
    """One logged document: per-choice scores or a chosen index, and where it was read."""

    key: object  # position (int) or id-field value
    n_choices: int
    scores: np.ndarray | None = None  # per-choice log-likelihoods
    continuations: list[str] | None = None
    answer: int | None = None  # chosen choice (Inspect); -1 = no answer
    where: str = ""  # "line N" or the archive member


# --- lm-evaluation-harness ------------------------------------------------------------------

def _continuations(arguments) -> list[str] | None:
    pairs: object = arguments
    if isinstance(arguments, dict):
        ordered = sorted(arguments.items(), key=lambda kv: int(re.sub(r"\D", "", kv[0]) or 0))
        pairs = [[v.get("arg_0"), v.get("arg_1")] for _, v in ordered if isinstance(v, dict)]
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) >= 2
                                              and isinstance(p[1], str) for p in pairs):
        return None
    return [p[1] for p in pairs]


def _loglikelihood(response) -> float:
    while isinstance(response, list) and response and isinstance(response[0], list):
        response = response[0]  # ``resps`` nests one level deeper
    value = response[0] if isinstance(response, list) and response else response
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"a response must start with a log-likelihood, got {response!r}")
    return float(value)


def read_lm_eval(path: Path, id_field: str | None) -> list[LoggedItem]:
    items, chosen_filter = [], None
    for line_no, row in jsonl_objects(path):
        try:
            if "doc_id" not in row:
                raise ValueError('each line needs "doc_id"')
            name = row.get("filter")
            chosen_filter = chosen_filter if chosen_filter is not None else name
            if name != chosen_filter:
                continue
            responses = row.get("filtered_resps", row.get("resps"))
            if not isinstance(responses, list) or not responses:
                raise ValueError('"filtered_resps" (or "resps") must list one response per '
                                 "choice")
            scores = np.array([_loglikelihood(r) for r in responses])
            if not np.isfinite(scores).all():
                raise ValueError("log-likelihoods must be finite numbers")
            key = row["doc_id"]
            if id_field is not None:
                doc = row.get("doc")
                if not isinstance(doc, dict) or id_field not in doc:
                    raise ValueError(f'"doc" has no field {id_field!r} (--id-field)')
                key = str(doc[id_field])
            items.append(LoggedItem(key=key, n_choices=len(scores), scores=scores,
                                    continuations=_continuations(row.get("arguments")),
                                    where=f"line {line_no}"))
        except ValueError as exc:
            raise UserError(str(exc), path=str(path), line=line_no) from None
    return items


# --- Inspect -------------------------------------------------------------------------------

def _letter_index(text) -> int:
    match = re.match(r"\s*([A-Za-z])\b", text) if isinstance(text, str) else None
    return ord(match.group(1).upper()) - ord("A") if match else -1


def _sample_item(sample: dict, id_field: str | None, where: str) -> LoggedItem | None:
    if not isinstance(sample, dict) or "id" not in sample:
        raise ValueError(f"{where}: an Inspect sample needs an id")
    if sample.get("epoch", 1) != 1:
        return None
    choices = sample.get("choices")
    if not isinstance(choices, list) or len(choices) < 2:
        raise ValueError(f"{where}: sample {sample['id']!r} has no choices (not a "
                         "multiple-choice task)")
    scores = sample.get("scores") or {}
    ordered = ([scores["choice"]] if "choice" in scores else []) + list(scores.values())
    answer = next((s["answer"] for s in ordered if isinstance(s, dict) and s.get("answer")),
                  None)
    key: object = sample["id"]
    if id_field is not None and id_field != "id":
        metadata = sample.get("metadata") or {}
        if id_field not in metadata:
            raise ValueError(f"{where}: sample metadata has no field {id_field!r} (--id-field)")
        key = metadata[id_field]
    return LoggedItem(key=str(key) if id_field is not None else key, n_choices=len(choices),
                      answer=_letter_index(answer), where=where)


def _inspect_samples(path: Path) -> Iterator[tuple[dict, str]]:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                if name.startswith("samples/") and name.endswith(".json"):
                    text = archive.read(name).decode("utf-8", errors="strict")
                    yield parse_json(text, f"{path}:{name}"), name
        return
    log = read_json(path)
    samples = log.get("samples") if isinstance(log, dict) else None
    for i, sample in enumerate(samples or []):
        yield sample, f"samples[{i}]"


def read_inspect(path: Path, id_field: str | None) -> list[LoggedItem]:
    items = []
    try:
        for sample, where in _inspect_samples(path):
            item = _sample_item(sample, id_field, where)
            if item is not None:
                items.append(item)
    except LineError:
        raise
    except (ValueError, zipfile.BadZipFile) as exc:  # UnicodeDecodeError is a ValueError
        raise UserError(str(exc), path=str(path)) from None
    if id_field is None:
        items.sort(key=lambda item: (str(type(item.key)), item.key))
        for position, item in enumerate(items):
            item.key = position
    return items


# --- detection and predictions ----------------------------------------------------------------

def _first_json(path: Path) -> object:
    """The whole document (``.json``) or the first JSONL object; None when unreadable (the
    plain predictions reader then reports the problem)."""
    try:
        if path.suffix.lower() == ".json":
            return read_json(path)
        for _, _, record in iter_jsonl(path):
            return record
    except UserError:
        return None
    return None


Reader = Callable[[Path, "str | None"], list[LoggedItem]]
FORMATS: dict[str, Reader] = {"lm-eval": read_lm_eval, "inspect": read_inspect}


def detect_format(path: Path) -> str | None:
    """``"lm-eval"``, ``"inspect"`` or None (not an evaluation log)."""
    check_regular_file(path)
    if zipfile.is_zipfile(path):
        return "inspect"
    first = _first_json(path)
    if isinstance(first, dict) and "samples" in first and "eval" in first:
        return "inspect"
    if isinstance(first, dict) and "doc_id" in first and (
            "filtered_resps" in first or "resps" in first):
        return "lm-eval"
    return None


def _lengths(continuations: list[str], norm: str) -> np.ndarray:
    texts = [c.lstrip() for c in continuations]
    sizes = [len(t) if norm == "chars" else len(t.encode("utf-8")) for t in texts]
    return np.maximum(np.array(sizes, dtype=np.float64), 1.0)


def softmax(scores: np.ndarray) -> np.ndarray:
    shifted = np.exp(scores - scores.max())
    return shifted / shifted.sum()


def read_eval_log(path: str | Path, dataset: Dataset, id_field: str | None = None,
                  norm: str = "none", fmt: str | None = None):
    """:class:`~cuelens.probes.predictions.Predictions` of ``dataset.test`` from a log."""
    from cuelens.probes.predictions import MISSING, Predictions

    path = Path(path)
    if norm not in NORMS:
        raise UserError(f"unknown normalisation {norm!r}; choose from {', '.join(NORMS)}")
    if dataset.task != Task.MCQ:
        raise UserError("evaluation logs are read for multiple-choice datasets only",
                        path=str(path))
    fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        raise UserError("not an lm-evaluation-harness samples file or an Inspect log",
                        path=str(path))
    items = FORMATS[fmt](path, id_field)
    if fmt == "inspect" and norm != "none":
        raise UserError("--norm needs per-choice log-likelihoods; an Inspect log records the "
                        "chosen letter only", path=str(path))
    test = dataset.test
    position: dict[object, int] = ({item_id: i for i, item_id in enumerate(test.ids)}
                                   if id_field is not None else
                                   {i: i for i in range(len(test))})
    pred = np.full(len(test), MISSING, dtype=np.int64)
    probs = np.full((len(test), max(len(c) for c in test.choices)), np.nan) \
        if fmt == "lm-eval" else None
    for item in items:
        i = position.get(item.key)
        if i is None:
            raise UserError(f"{item.where}: {item.key!r} matches no test item "
                            f"({len(test)} items)", path=str(path))
        if pred[i] != MISSING:
            raise UserError(f"{item.where}: a second entry for test item {test.ids[i]!r}",
                            path=str(path))
        k = len(test.choices[i])
        if item.n_choices != k:
            raise UserError(f"{item.where}: {item.n_choices} choices logged but test item "
                            f"{test.ids[i]!r} has {k}", path=str(path))
        if item.scores is not None:
            scores = item.scores
            if norm != "none":
                if item.continuations is None or len(item.continuations) != k:
                    raise UserError(f"{item.where}: --norm needs the continuations in "
                                    '"arguments"', path=str(path))
                scores = scores / _lengths(item.continuations, norm)
            pred[i] = int(np.argmax(scores))
            if probs is not None:
                probs[i, :k] = softmax(scores)
        else:
            pred[i] = item.answer if item.answer is not None and item.answer < k else -1
    missing = np.flatnonzero(pred == MISSING)
    if len(missing):
        shown = ", ".join(repr(test.ids[i]) for i in missing[:5])
        raise UserError(f"{len(missing)} test item(s) are not in the log (e.g. {shown})",
                        path=str(path))
    return Predictions(pred=pred, probs=probs)
