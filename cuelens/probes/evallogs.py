"""Evaluation logs of LLM harnesses as probe predictions (docs/methods.md §6):
lm-evaluation-harness ``--log_samples`` JSONL (arg-max log-likelihood, optionally length-normalised)
and Inspect ``.json`` / ``.eval`` logs (the answered letter), detected from the file, matched to
``dataset.test`` and cross-checked (fields, rules, checks: docs/eval-logs.md)."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.special import softmax

from cuelens.data.dataset import Dataset, Split, Task
from cuelens.data.readers import LineError, check_regular_file
from cuelens.errors import UserError, option_name
from cuelens.probes.config import check_norm
from cuelens.probes.logfiles import (is_archive, log_objects, member_json, open_archive,
                                     read_log_json, size_cap)
from cuelens.probes.predictions import MISSING, Predictions
from cuelens.registry import Registry
from cuelens.wording import plural

LOGGED_METRIC = {"none": "acc", "chars": "acc_norm"}  # lm-eval's metric for each norm


@dataclass
class LoggedItem:
    """One logged document: per-choice scores or a chosen index, and where it was read."""

    key: object  # lm-eval: doc_id or doc[id_field]; Inspect: sample id or metadata[id_field]
    n_choices: int
    where: str  # "line N", "samples[i]" or the archive member
    scores: np.ndarray | None = None  # per-choice log-likelihoods (lm-eval)
    continuations: list[str] | None = None
    answer: int | None = None  # chosen choice (Inspect); -1 = no answer
    answer_text: str = ""  # the logged answer as written (Inspect)
    choices: list[str] | None = None  # choice texts (Inspect)
    target: int | None = None  # the log's own gold answer index
    correct: dict[str, float] = field(default_factory=dict)  # logged metrics (acc, acc_norm, C/I)


@dataclass
class LogRead:
    """What a format reader returns: the entries and facts about the run."""

    items: list[LoggedItem]
    meta: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


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


def _number(value) -> float | None:
    """A JSON number or a numeric string (lm-eval writes ``"-38.79"``); None otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _loglikelihood(response) -> float:
    while isinstance(response, list) and response and isinstance(response[0], list):
        response = response[0]  # ``resps`` nests one level deeper
    value = _number(response[0] if isinstance(response, list) and response else response)
    if value is None:
        raise ValueError(f"a response must start with a log-likelihood, got {response!r}")
    return value


def _lm_eval_item(row: dict, id_field: str | None, where: str) -> LoggedItem:
    responses = row.get("filtered_resps") or row.get("resps")
    if not isinstance(responses, list) or not responses:
        raise ValueError('"filtered_resps" (or "resps") must list one response per choice')
    scores = np.array([_loglikelihood(r) for r in responses])
    if not np.isfinite(scores).all():
        raise ValueError("log-likelihoods must be finite numbers")
    key = row["doc_id"]
    if id_field is not None:
        doc = row.get("doc")
        if not isinstance(doc, dict) or id_field not in doc:
            raise ValueError(f'"doc" has no field {id_field!r} (--id-field)')
        key = str(doc[id_field])
    elif isinstance(key, bool) or not isinstance(key, int):
        raise ValueError(f'"doc_id" must be an integer, got {key!r}')
    target = row.get("target")
    correct = {m: float(v) for m in ("acc", "acc_norm")
               if (v := _number(row.get(m))) is not None}
    return LoggedItem(key=key, n_choices=len(scores), where=where, scores=scores,
                      continuations=_continuations(row.get("arguments")),
                      target=int(v) if (v := _number(target)) is not None and v == int(v)
                      else None, correct=correct)


def read_lm_eval(path: Path, id_field: str | None, cap: int | None = None) -> LogRead:
    items, chosen_filter = [], None
    for line_no, row in log_objects(path, cap):
        try:
            if "doc_id" not in row:
                raise ValueError('each line needs "doc_id"')
            name = row.get("filter")
            chosen_filter = chosen_filter if chosen_filter is not None else name
            if name == chosen_filter:
                items.append(_lm_eval_item(row, id_field, f"line {line_no}"))
        except ValueError as exc:
            raise UserError(str(exc), path=str(path), line=line_no) from None
    return LogRead(items, {"filter": chosen_filter})


def lm_eval_results(path: Path) -> tuple[Path, dict] | None:
    """The lm-eval ``results_*.json`` written with ``samples_<task>_<date>.jsonl`` (same date
    stamp, else the only results file beside it) and that task's entry; None when absent."""
    match = re.match(r"samples_(.+)_(\d{4}-\d\d-\d\dT[\d\-.:]+)\.jsonl(\.gz)?$", path.name)
    candidates = sorted(path.parent.glob("results_*.json"))
    if match:
        stamped = [c for c in candidates if c.name == f"results_{match.group(2)}.json"]
        candidates = stamped or candidates
    if len(candidates) != 1:
        return None
    try:
        results = read_log_json(candidates[0]).get("results")
    except (UserError, AttributeError):
        return None
    if not isinstance(results, dict) or not results:
        return None
    stem = path.name.split(".")[0]
    names = [t for t in results if stem.startswith(f"samples_{t}_") or stem == f"samples_{t}"]
    name = max(names, key=len) if names else (next(iter(results)) if len(results) == 1
                                              else None)
    if name is None or not isinstance(results[name], dict):
        return None
    return candidates[0], {"task": name, **results[name]}


# --- Inspect -------------------------------------------------------------------------------

_LETTER = re.compile(r"\s*\(?([A-Za-z])\)?[.:]?\s*")


def _letter_index(text) -> int:
    """The choice a letter answer names (``"B"``, ``"(b)"``, ``"C."``); −1 for anything else
    (``"a bit unsure"`` is no answer, not choice A)."""
    match = _LETTER.fullmatch(text) if isinstance(text, str) else None
    return ord(match.group(1).upper()) - ord("A") if match else -1


def _sample_item(sample: dict, id_field: str | None, where: str) -> LoggedItem | None:
    if not isinstance(sample, dict) or "id" not in sample:
        raise ValueError(f"{where}: an Inspect sample needs an id")
    epoch = sample.get("epoch", 1)
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:  # "1" was epoch 2+
        raise ValueError(f"{where}: 'epoch' must be a whole number from 1, got {epoch!r}")
    if epoch != 1:
        return None
    choices = sample.get("choices")
    if not isinstance(choices, list) or len(choices) < 2:
        raise ValueError(f"{where}: sample {sample['id']!r} has no choices (not a "
                         "multiple-choice task)")
    scores = sample.get("scores") or {}
    if not isinstance(scores, dict):
        raise ValueError(f"{where}: 'scores' must be an object of scorer results, got "
                         f"{type(scores).__name__}")
    ordered = ([scores["choice"]] if "choice" in scores else []) + list(scores.values())
    score = next((s for s in ordered if isinstance(s, dict) and s.get("answer")), None)
    answer = score["answer"] if score is not None else None
    key: object = sample["id"]
    if id_field is not None and id_field != "id":
        metadata = sample.get("metadata") or {}
        if id_field not in metadata:
            raise ValueError(f"{where}: sample metadata has no field {id_field!r} (--id-field)")
        key = metadata[id_field]
    target = sample.get("target")
    value = score.get("value") if score is not None else None
    return LoggedItem(key=str(key) if id_field is not None else key, n_choices=len(choices),
                      answer=_letter_index(answer), answer_text=str(answer or ""),
                      choices=[str(c) for c in choices], where=where,
                      target=_letter_index(target) if isinstance(target, str) else None,
                      correct={"choice": float(value == "C")} if value in ("C", "I") else {})


_MEMBER = re.compile(r"samples/.+_epoch_(\d+)\.json$")


def _archive_samples(path: Path, cap: int | None, meta: dict):
    with open_archive(path) as archive:
        infos = {info.filename: info for info in archive.infolist()}
        if "header.json" in infos:
            header = member_json(archive, infos["header.json"], path, cap)
            meta.update(_run_facts(header))
        for name, info in infos.items():
            found = _MEMBER.match(name)
            if found and found.group(1) == "1":  # epoch 1 only: later epochs are not inflated
                yield member_json(archive, info, path, cap), name


def _run_facts(log) -> dict:
    spec = log.get("eval") if isinstance(log, dict) else None
    return {k: spec[k] for k in ("task", "model") if isinstance(spec, dict)
            and isinstance(spec.get(k), str)}


def read_inspect(path: Path, id_field: str | None, cap: int | None = None) -> LogRead:
    meta: dict = {}
    try:
        if is_archive(path):
            samples = _archive_samples(path, cap, meta)
        else:
            log = read_log_json(path, cap)
            meta.update(_run_facts(log))
            listed = log.get("samples") if isinstance(log, dict) else None
            samples = ((s, f"samples[{i}]") for i, s in enumerate(listed or []))
        items = [item for sample, where in samples
                 if (item := _sample_item(sample, id_field, where)) is not None]
    except ValueError as exc:
        raise UserError(str(exc), path=str(path)) from None
    return LogRead(items, meta)


# --- detection ----------------------------------------------------------------------------------

def _first_json(path: Path, cap: int | None) -> object:
    """The whole document (``.json``) or the first JSONL object; None when unreadable (the
    plain predictions reader then reports the problem)."""
    try:
        if path.suffix.lower() == ".json":
            return read_log_json(path, cap)
        for _, record in log_objects(path, cap):
            return record
    except LineError:
        return None
    return None


Reader = Callable[[Path, "str | None", "int | None"], LogRead]
FORMATS: Registry[Reader] = Registry("log format",
                                     {"lm-eval": read_lm_eval, "inspect": read_inspect})


SAMPLES_GLOB = "samples_*.jsonl*"  # lm-eval's per-item logs (``--log_samples``), also gzipped


def samples_files(directory: Path) -> list[Path]:
    """The lm-eval samples files in ``directory`` and one level down (where lm-eval writes
    them, in a folder named after the model)."""
    found = [*directory.glob(SAMPLES_GLOB), *directory.glob(f"*/{SAMPLES_GLOB}")]
    return sorted(p for p in found if p.is_file())


def _is_results_file(first: object) -> bool:
    """lm-eval's ``results_*.json``: aggregate scores, no items."""
    return isinstance(first, dict) and isinstance(first.get("results"), dict) and \
        "samples" not in first and ("configs" in first or "versions" in first)


def _results_file_error(path: Path) -> UserError:
    beside = [p.name for p in samples_files(path.parent)] if path.parent.is_dir() else []
    what = (f"pass the samples file beside it: {', '.join(beside[:3])}"
            f"{' …' if len(beside) > 3 else ''}" if beside else
            "run lm_eval with --log_samples and pass the samples_<task>_<date>.jsonl it writes")
    return UserError(f"this is lm-eval's results file (aggregate scores, no items); {what}",
                     path=str(path))


def detect_format(path: Path, cap: int | None = None) -> str | None:
    """``"lm-eval"``, ``"inspect"`` or None (not an evaluation log); lm-eval's results file
    is refused, naming the samples file to pass instead."""
    check_regular_file(path)
    if is_archive(path):
        return "inspect"
    first = _first_json(path, cap)
    if _is_results_file(first):
        raise _results_file_error(path)
    if isinstance(first, dict) and "samples" in first and "eval" in first:
        return "inspect"
    if isinstance(first, dict) and isinstance(first.get("eval"), dict) and "status" in first:
        raise UserError("this Inspect log holds no samples (a header-only log, or one written "
                        "with --no-log-samples); pass a log with its samples", path=str(path))
    if isinstance(first, dict) and "doc_id" in first and (
            "filtered_resps" in first or "resps" in first):
        return "lm-eval"
    return None


# --- matching and checks --------------------------------------------------------------------------

def _order_key(key: object) -> tuple:
    return (0, key, "") if isinstance(key, int) and not isinstance(key, bool) else (1, 0, str(key))


def match_items(items: list[LoggedItem], test: Split, fmt: str, id_field: str | None,
                notes: list[str]) -> tuple[list[int], str]:
    """The test position of every logged entry and how they were matched (docs/eval-logs.md);
    a :class:`UserError` for an entry that matches no test item or a second entry of one."""
    ids: dict[object, int] = {item_id: i for i, item_id in enumerate(test.ids)}
    lookup: dict[object, int]
    if fmt == "lm-eval" and id_field is None:
        how, lookup = "doc_id (position)", {i: i for i in range(len(test))}
        keys: list[object] = [item.key for item in items]
    elif id_field is not None:
        how = f"{'doc' if fmt == 'lm-eval' else 'sample metadata'} field {id_field!r}"
        how = "sample id" if fmt == "inspect" and id_field == "id" else how
        lookup, keys = ids, [item.key for item in items]
    elif items and all(str(item.key) in ids for item in items):
        how, lookup, keys = "sample id", ids, [str(item.key) for item in items]
    else:
        how = "order of sample ids"
        order = sorted(range(len(items)), key=lambda j: _order_key(items[j].key))
        keys = np.argsort(order).tolist()  # each entry's rank in that order
        lookup = {i: i for i in range(len(test))}
        duplicates = [k for k, n in Counter(str(item.key) for item in items).items() if n > 1]
        example = next((str(item.key) for item in items if str(item.key) not in ids), "")
        notes.append(f"Inspect sample ids are not the test item ids (e.g. {example!r}): "
                     f"samples matched to test items by the order of their ids; give "
                     "--id-field to match by a metadata field")
        if duplicates:
            occurs = plural(len(duplicates), "Inspect sample id occurs", "Inspect sample ids occur")
            notes.append(f"{occurs} more than once in epoch 1 (e.g. {duplicates[0]!r}); each entry "
                         "was matched by order")
    positions: list[int] = []
    seen: dict[int, str] = {}
    for item, key in zip(items, keys):
        i = lookup.get(key)
        if i is None:
            raise UserError(f"{item.where}: {item.key!r} matches no test item "
                            f"({plural(len(test), 'item')}; matched by {how})")
        if i in seen:
            raise UserError(f"{item.where}: a second entry for test item {test.ids[i]!r} "
                            f"(the first is {seen[i]}; duplicate ids)")
        seen[i] = item.where
        positions.append(i)
    return positions, how


def choice_key(text: str) -> str:
    """A choice text as choices are matched (docs/eval-logs.md): Unicode NFC, case folded,
    whitespace runs as one space, no leading or trailing space — a task that lowercases or
    re-spaces its choices (``doc_to_choice: … | map('lower')``) still matches its dataset."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def _same(a: str, b: str) -> bool:
    return choice_key(a) == choice_key(b)


def _logged_texts(item: LoggedItem) -> list[str] | None:
    if item.choices is not None:
        return item.choices
    return None if item.continuations is None else [c.lstrip() for c in item.continuations]


def check_choices(items: list[LoggedItem], positions: list[int], test: Split, how: str,
                  notes: list[str]) -> int:
    """Matched entries must have the test item's number of choices and (where logged) its
    choice texts, compared by :func:`choice_key`; an Inspect entry with the same texts in
    another order is remapped. Returns the number of entries whose texts match only so."""
    mismatched: list[str] = []
    compared = differ = 0
    for item, i in zip(items, positions):
        expected = [str(c) for c in test.choices[i]]
        if item.n_choices != len(expected):
            raise UserError(f"{item.where}: {plural(item.n_choices, 'choice')} logged but test "
                            f"item {test.ids[i]!r} has {len(expected)} (matched by {how})")
        texts = _logged_texts(item)
        if texts is None:
            continue
        if all(_same(a, b) for a, b in zip(texts, expected)):
            compared += 1
            differ += any(a.strip() != b.strip() for a, b in zip(texts, expected))
            continue
        order = [next((j for j, e in enumerate(expected) if _same(t, e)), -1) for t in texts]
        if item.choices is not None and sorted(order) == list(range(len(expected))):
            compared += 1  # same choices, shuffled in the log: map the letters back
            back: dict[int | None, int] = dict(enumerate(order))
            item.answer, item.target = (back.get(k, k) for k in (item.answer, item.target))
            continue
        mismatched.append(f"{item.where}: {texts[:3]!r} vs test item {test.ids[i]!r} "
                          f"{expected[:3]!r}")
    if mismatched and (compared or items[0].choices is not None):
        raise UserError(f"{len(mismatched)} of {len(items)} logged entries have choices that "
                        f"differ from their test item's (matched by {how}), e.g. "
                        f"{mismatched[0]}: the log is not of this dataset, or its entries are "
                        "matched to the wrong items (--id-field)")
    if mismatched:
        notes.append("the log's continuations are not the bare choice texts (the task formats "
                     "its choices), so choice texts were not compared; only choice counts")
    elif differ:
        notes.append(f"{differ} of {len(items)} logged entries write their choices differently "
                     "from the dataset (case, spacing or Unicode form): matched as the same "
                     "texts")
    return differ


def _unanswered(items: list[LoggedItem], notes: list[str]) -> int:
    """Inspect samples without an answer (Inspect records an answer outside the choices as
    empty): counted, noted, and counted wrong as "no answer"."""
    empty = [item for item in items if not item.answer_text.strip()]
    if empty:
        notes.append(f"{len(empty)} of {len(items)} Inspect samples have no answer (e.g. "
                     f"{empty[0].where}): counted as no answer (wrong)")
    return len(empty)


def _out_of_range(items: list[LoggedItem], notes: list[str]) -> int:
    bad = [item for item in items if item.answer is not None and item.answer >= item.n_choices]
    for item in bad:
        item.answer = -1
    if bad:
        notes.append(f"{plural(len(bad), 'Inspect answer names', 'Inspect answers name')} a "
                     f"letter outside their sample's choices (e.g. {bad[0].where}: "
                     f"{bad[0].answer_text!r} with {plural(bad[0].n_choices, 'choice')}); counted "
                     "as wrong")
    return len(bad)


def _unparseable(items: list[LoggedItem], notes: list[str]) -> dict:
    """Inspect answers written but naming no choice (``"a bit unsure"``): counted like the LLM
    probe's unparseable answers (docs/eval-logs.md); over half of them make the probe not
    interpretable (:data:`MAX_UNPARSEABLE`)."""
    bad = [item for item in items if item.answer == -1 and item.answer_text.strip()]
    rate = len(bad) / len(items)
    if bad:
        notes.append(f"{len(bad):,} of {plural(len(items), 'Inspect answer')} "
                     f"{'names' if len(bad) == 1 else 'name'} no choice (e.g. "
                     f"{bad[0].where}: {bad[0].answer_text[:40]!r}); counted as wrong")
    return {"n": len(bad), "rate": round(rate, 6)}


def _agreement(items: list[LoggedItem], positions: list[int], pred: np.ndarray,
               gold: np.ndarray, metric: str | None, notes: list[str]) -> dict | None:
    """Item by item: the log's own correctness against prediction == dataset gold."""
    if metric is None:
        return None
    pairs = [(item, i) for item, i in zip(items, positions) if metric in item.correct]
    if not pairs:
        return None
    differ = [(item, i) for item, i in pairs
              if bool(item.correct[metric]) != bool(pred[i] == gold[i])]
    if differ:
        item, i = differ[0]
        notes.append(f"for {len(differ)} of {len(pairs)} logged entries the log's own "
                     f"{metric!r} disagrees with the prediction scored against the dataset's "
                     f"gold answer (e.g. {item.where}, test item {i + 1}): the log's gold "
                     "answers or documents are not this dataset's")
    return {"metric": metric, "agree": len(pairs) - len(differ), "of": len(pairs)}


def _results_check(path: Path, metric: str | None, accuracy: float, n: int,
                   notes: list[str]) -> dict | None:
    found = lm_eval_results(path)
    if found is None or metric is None:
        return None
    results_path, entry = found
    key = next((k for k in entry if k == metric or k.startswith(metric + ",")), None)
    value = _number(entry.get(key)) if key is not None else None
    if value is None:
        return None
    check = {"file": results_path.name, "task": entry["task"], "metric": key,
             "reported": value, "recomputed": round(accuracy, 6)}
    if abs(value - accuracy) > 1e-6:
        notes.append(f"{results_path.name} reports {key} = {value:.4f} for task "
                     f"{entry['task']!r}, but the {n} logged items score {accuracy:.4f} "
                     "against this dataset's gold answers")
    return check


# --- predictions ---------------------------------------------------------------------------

def _lengths(continuations: list[str], norm: str) -> np.ndarray:
    texts = [c.lstrip() for c in continuations]
    sizes = [len(t) if norm == "chars" else len(t.encode("utf-8")) for t in texts]
    return np.maximum(np.array(sizes, dtype=np.float64), 1.0)


def _predict(item: LoggedItem, norm: str) -> tuple[int, np.ndarray | None]:
    if item.scores is None:
        return (item.answer if item.answer is not None else -1), None
    scores = item.scores
    if norm != "none":
        if item.continuations is None or len(item.continuations) != item.n_choices:
            raise UserError(f"{item.where}: {option_name('norm')} needs the continuations in "
                            "\"arguments\"")
        scores = scores / _lengths(item.continuations, norm)
    return int(np.argmax(scores)), softmax(scores)


def read_eval_log(path: str | Path, dataset: Dataset, id_field: str | None = None,
                  norm: str = "none", fmt: str | None = None, *,
                  require_all: bool = False) -> Predictions:
    """:class:`~cuelens.probes.predictions.Predictions` of ``dataset.test`` from a log (module
    docstring); ``require_all``: refuse a log that misses test items. Lines and archive members
    are capped (:func:`cuelens.probes.logfiles.size_cap`)."""
    path = Path(path)
    check_norm(norm)
    if dataset.task != Task.MCQ:
        raise UserError("evaluation logs are read for multiple-choice datasets only",
                        path=str(path))
    cap = size_cap()
    fmt = fmt or detect_format(path, cap)
    if fmt is None or fmt not in FORMATS:
        raise UserError("not an lm-evaluation-harness samples file or an Inspect log",
                        path=str(path))
    if fmt == "inspect" and norm != "none":
        raise UserError(f"{option_name('norm')} needs per-choice log-likelihoods; an Inspect "
                        "log records the chosen letter only", path=str(path))
    read = FORMATS[fmt](path, id_field, cap)
    if not read.items:
        raise UserError("the log has no entries", path=str(path))
    test, notes = dataset.test, read.notes
    try:
        positions, how = match_items(read.items, test, fmt, id_field, notes)
        n_rewritten = check_choices(read.items, positions, test, how, notes)
        for item in read.items:
            _predict(item, norm)  # reports a missing continuation before anything is kept
    except UserError as exc:
        raise UserError(exc.message, path=str(path)) from None
    n_outside = _out_of_range(read.items, notes) if fmt == "inspect" else 0
    n_unanswered = _unanswered(read.items, notes) if fmt == "inspect" else 0
    unparseable = _unparseable(read.items, notes) if fmt == "inspect" else None
    pred = np.full(len(test), MISSING, dtype=np.int64)
    probs = np.full((len(test), max(len(c) for c in test.choices)), np.nan) \
        if fmt == "lm-eval" else None
    for item, i in zip(read.items, positions):
        pred[i], p = _predict(item, norm)
        if probs is not None and p is not None:
            probs[i, :len(p)] = p
    covered = pred != MISSING
    n_logged, n_left = int(covered.sum()), int((~covered).sum())
    if n_left and require_all:
        shown = ", ".join(repr(test.ids[i]) for i in np.flatnonzero(~covered)[:5])
        raise UserError(f"{plural(n_left, 'test item is', 'test items are')} not in the log "
                        f"(e.g. {shown})", path=str(path))
    if n_left:
        notes.append(f"the log covers {n_logged:,} of {plural(len(test), 'test item')} "
                     f"(e.g. lm_eval --limit): the probe uses the "
                     f"{plural(n_logged, 'logged item')}; {n_left:,} left out "
                     "(--require-all-items refuses such a log)")
    gold = test.item_labels(dataset.label_names)
    metric = LOGGED_METRIC.get(norm) if fmt == "lm-eval" else "choice"
    accuracy = float((pred[covered] == gold[covered]).mean())
    targets = [(item, i) for item, i in zip(read.items, positions) if item.target is not None]
    off = [(item, i) for item, i in targets if item.target != gold[i]]
    if off:
        notes.append(f"{len(off)} of {len(targets)} logged entries name a gold answer that "
                     f"differs from the dataset's (e.g. {off[0][0].where})")
    log = {"format": fmt, **read.meta, "entries": len(read.items), "test_items": len(test),
           "left_out": n_left, "matched_by": how, "choices_written_differently": n_rewritten,
           "answers_outside_choices": n_outside, "unanswered": n_unanswered,
           "logged_correct": _agreement(read.items, positions, pred, gold, metric, notes)}
    if unparseable is not None:
        log["unparseable"] = unparseable
    if fmt == "lm-eval":
        log["results_check"] = _results_check(path, metric, accuracy, n_logged, notes)
    return Predictions(pred=pred, probs=probs, covered=None if not n_left else covered,
                       notes=notes, log=log)
