"""Preference pairs: detection, normalisation, loading (docs/preference.md, "Preference
records"; methods.md §16). The record shapes are :data:`SHAPES` (first match wins);
:func:`as_dataset` lays the pairs out as NLI-shaped items for the word-cue statistics.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import chain
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cuelens.data.dataset import Dataset, Split, Task
from cuelens.data.loading import _dataset_name, _find_split_files, assemble_dataset, \
    data_files, directory_name
from cuelens.data.readers import LineError, iter_records
from cuelens.data.schema import ID_ALIASES, RecordError, _text, subset_text
from cuelens.data.splits import NO_ITEMS, ROLES
from cuelens.errors import UserError

CHOSEN, REJECTED = "chosen", "rejected"
PREFERENCE_TASK = "preference"  # results.json ``dataset.task`` of a preference scan
#: a ``winner`` value's spellings → the winner (a, b or tie)
WINNERS = {**dict.fromkeys(("model_a", "a", "1", "response_a", "first"), "a"),
           **dict.fromkeys(("model_b", "b", "2", "response_b", "second"), "b"),
           **dict.fromkeys(("tie", "tie (bothbad)", "tie(bothbad)", "both_bad", "bothbad",
                            "draw"), "tie")}
_ASSISTANT = re.compile(r"\n\s*Assistant:\s*", re.IGNORECASE)
NO_POSITION = -1


@dataclass
class PreferenceSplit:
    """Normalised pairs of one file, column-wise; ``positions``: 0/1 position of the chosen
    response when the data records one (else :data:`NO_POSITION`); ``ties``: per subset."""

    name: str
    path: str
    shape: str = ""
    ids: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    chosen: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    subsets: list[str] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    ties: Counter = field(default_factory=Counter)
    skipped: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def append(self, pair: dict, raw: str, line: int) -> None:
        for column, key in ((self.ids, "id"), (self.prompts, "prompt"), (self.chosen, CHOSEN),
                            (self.rejected, REJECTED), (self.subsets, "subset"),
                            (self.positions, "position")):
            column.append(pair[key])
        self.raw.append(raw)
        self.lines.append(line)


@dataclass
class Preferences:
    """Loaded preference splits by role (``train``/``dev``/``test`` or ``all``)."""

    name: str
    format: str
    splits: dict[str, PreferenceSplit]

    @property
    def input_paths(self) -> list[str]:
        return [split.path for split in self.splits.values()]


# ------------------------------------------------------------------------------ record shapes
def _decoded(value: Any) -> Any:
    """A string holding a JSON list (the Arena Kaggle export) or a JSON chat message list (a
    CSV column of ``[{"role": …, "content": …}, …]``) as that list."""
    if isinstance(value, str) and value.startswith("[") and value.endswith("]"):
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        if isinstance(decoded, list) and all(isinstance(x, str) or x is None or _is_message(x)
                                             for x in decoded):
            return decoded
    return value


def _is_message(value: Any) -> bool:
    """A chat message: an object with a text under ``content``, ``value`` or ``text``."""
    return isinstance(value, dict) and any(isinstance(value.get(key), str)
                                           for key in ("content", "value", "text"))


def _message_text(message: Any, name: str) -> str:
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        # content in parts (OpenAI: [{"type": "text", "text": …}, …]): the text parts
        return _join(_message_text(part, name) for part in message["content"])
    if isinstance(message, dict):
        return str(message.get("content") or message.get("value") or message.get("text") or "")
    if message is None:
        return ""
    if isinstance(message, (list, bool)):
        raise RecordError(f"field '{name}' must hold messages or texts")
    return str(message)


def _messages(value: Any, name: str) -> list[str] | None:
    """A message list's texts, or None when ``value`` is a plain text."""
    value = _decoded(value)
    if isinstance(value, list):
        return [_message_text(m, name) for m in value]
    return None


def _join(texts: Iterable[str]) -> str:
    return "\n".join(t for t in texts if t.strip())


def split_dialogues(a: str, b: str) -> tuple[str, str, str]:
    """(prompt, rest of ``a``, rest of ``b``): the shared beginning of two dialogues, cut after
    the last ``Assistant:`` marker in it (HH-RLHF), else empty."""
    shared = os.path.commonprefix([a, b])
    markers = list(_ASSISTANT.finditer(shared))
    if not markers:
        return "", a, b
    cut = markers[-1].end()
    return a[:cut].strip(), a[cut:], b[cut:]


def _response(value: Any, name: str) -> str:
    """A response given as text: a number or a boolean is a misplaced field, not a response."""
    if value is not None and not isinstance(value, str):
        raise RecordError(f"field '{name}' must be a response text or a message list, got "
                          f"{json.dumps(value)}")
    return _text(value, name)


def _responses(record: dict, first: str, second: str) -> tuple[str | None, str, str]:
    """(prompt from the texts or None, response ``first``, response ``second``)."""
    a, b = _messages(record[first], first), _messages(record[second], second)
    if a is not None and b is not None:
        n = len(os.path.commonprefix([a, b]))
        return _join(a[:n]) or None, _join(a[n:]), _join(b[n:])
    if a is None and b is None:
        text_a, text_b = _response(record[first], first), _response(record[second], second)
        prompt, rest_a, rest_b = split_dialogues(text_a, text_b)
        return prompt or None, rest_a, rest_b
    raise RecordError(f"fields '{first}' and '{second}' must both be texts or both be messages")


def _prompt(record: dict, derived: str | None) -> str:
    for name in ("prompt", "instruction", "question", "input"):
        if name in record and record[name] is not None:
            value = _decoded(record[name])
            if isinstance(value, dict):  # one message, not in a list
                if not (_is_message(value) or isinstance(value.get("content"), list)):
                    raise RecordError(f"field '{name}' must be a text or messages, got an object "
                                      "without 'content', 'value' or 'text'")
                value = [value]
            text = (_join(_message_text(m, name) for m in value) if isinstance(value, list)
                    else str(value))
            if text.strip():
                return text
    return derived or ""


def _flag(value: Any, name: str) -> bool:
    """A ``winner_model_*`` flag: 0/1 (a number, a boolean or a number as text); missing,
    null or an empty cell is 0."""
    if value is None or value == "" or isinstance(value, bool):
        return bool(value)
    try:
        number = float(value)  # a number, or one written as text ("1", "1.0")
    except (TypeError, ValueError):
        number = math.nan
    if number in (0, 1):
        return bool(number)
    raise RecordError(f"field '{name}' must be 0 or 1, got {json.dumps(value)}")


def _winner(record: dict) -> str:
    """``a``, ``b`` or ``tie`` from ``winner`` or the ``winner_model_*`` flags."""
    if "winner" in record:
        winner = WINNERS.get(str(record["winner"]).strip().lower())
        if winner is None:
            raise RecordError(f"winner '{record['winner']}' is not model_a, model_b or tie")
        return winner
    flags = [_flag(record.get(f"winner_{x}"), f"winner_{x}") for x in ("model_a", "model_b", "tie")]
    if sum(flags) != 1:
        raise RecordError("exactly one of winner_model_a, winner_model_b, winner_tie must be 1")
    return ("a", "b", "tie")[flags.index(True)]


def _arena(record: dict) -> dict:
    first, second = (("response_a", "response_b") if "response_a" in record
                     else ("conversation_a", "conversation_b"))
    derived, a, b = _responses(record, first, second)
    winner = _winner(record)
    if winner == "tie":
        return {"prompt": _prompt(record, derived), "tie": True}
    chosen, rejected = (a, b) if winner == "a" else (b, a)
    return {"prompt": _prompt(record, derived), CHOSEN: chosen, REJECTED: rejected,
            "position": 0 if winner == "a" else 1}


def _pairs(record: dict) -> dict:
    derived, chosen, rejected = _responses(record, CHOSEN, REJECTED)
    return {"prompt": _prompt(record, derived), CHOSEN: chosen, REJECTED: rejected,
            "position": NO_POSITION}


def _has(*names: str) -> Callable[[dict], bool]:
    return lambda record: all(name in record for name in names)


#: shape name → (detector, normaliser); the first detector that accepts a record names its shape.
SHAPES: dict[str, tuple[Callable[[dict], bool], Callable[[dict], dict]]] = {
    "arena": (lambda r: _has("response_a", "response_b")(r)
              or _has("conversation_a", "conversation_b")(r), _arena),
    "pairs": (_has(CHOSEN, REJECTED), _pairs),
}


def record_shape(record: dict) -> str | None:
    """The :data:`SHAPES` name of a preference record, or None for any other record."""
    return next((name for name, (accepts, _) in SHAPES.items() if accepts(record)), None)


def normalise_preference(record: dict, shape: str, default_id: str,
                         subset_field: str | None = None) -> dict:
    """``{"id", "prompt", "chosen", "rejected", "subset", "position"}`` or, for a tie,
    ``{"id", "prompt", "subset", "tie": True}``; :class:`RecordError` when it cannot be read."""
    if not SHAPES[shape][0](record):
        raise RecordError(f"not a '{shape}' preference record like the first one; fields "
                          f"present: {', '.join(sorted(record))}")
    pair = SHAPES[shape][1](record)
    for key in (CHOSEN, REJECTED):
        if key in pair:
            pair[key] = _text(pair[key], key)
    name = next((n for n in ID_ALIASES + ("prompt_id", "question_id") if record.get(n) is not None),
                None)
    pair["id"] = str(record[name]) if name else default_id
    if subset_field is not None:
        pair["subset"] = subset_text(record.get(subset_field), subset_field)
    else:
        given = record.get("subset")
        pair["subset"] = "" if given in (None, "") else subset_text(given, "subset")
    return pair


# ----------------------------------------------------------------------------------- loading
def first_record(path: Path) -> dict | None:
    """The first readable record of a file (or of a directory's first split file)."""
    if path.is_dir():
        try:
            files = _find_split_files(path)
        except UserError:
            return None
        path = next(iter(files.values()))
    try:
        return next((record for _, _, record in iter_records(path) if isinstance(record, dict)),
                    None)
    except UserError:
        return None


def is_preference_source(*paths: str | Path | None) -> bool:
    """True when the first record of the first given path is a preference record."""
    given = [Path(p) for p in paths if p is not None]
    if not given or not given[0].exists():
        return False
    record = first_record(given[0])
    return record is not None and record_shape(record) is not None


def read_preferences(path: Path, role: str, subset_field: str | None = None,
                     skip_bad: bool = False) -> PreferenceSplit:
    """Read and normalise one file of preference records (shape from its first record)."""
    split = PreferenceSplit(name=role, path=str(path))
    for line, raw, record in iter_records(path):
        if isinstance(record, LineError):
            if not skip_bad:
                raise record
            split.skipped["malformed line"] = split.skipped.get("malformed line", 0) + 1
            continue
        if not split.shape:
            split.shape = record_shape(record) or ""
            if not split.shape:
                raise UserError("not a preference record (chosen/rejected or "
                                "response_a/response_b/winner)", path=str(path), line=line)
        try:
            pair = normalise_preference(record, split.shape, f"{path.name}:{line}", subset_field)
        except RecordError as exc:
            if not skip_bad:
                raise UserError(str(exc), path=str(path), line=line) from None
            split.skipped["bad record"] = split.skipped.get("bad record", 0) + 1
            continue
        if pair.get("tie"):
            split.ties[pair["subset"]] += 1
            continue
        split.append(pair, raw, line)
    if not len(split):
        raise UserError(NO_ITEMS, path=str(path))
    return split


def load_preferences(data: str | Path | None = None, *, train: str | Path | None = None,
                     test: str | Path | None = None, subset_field: str | None = None,
                     skip_bad: bool = False) -> Preferences:
    """Load preference pairs from a file, a directory of split files or ``train``/``test``."""
    if (data is None) == (train is None and test is None):
        raise UserError("give exactly one of: DATA (a file or directory) or --train/--test")
    files, named_by, fmt = data_files(data, train, test)
    name = _dataset_name(named_by) if data else \
        directory_name(named_by.parent) if named_by.parent.name else "data"
    splits: dict[str, PreferenceSplit] = {
        role: read_preferences(files[role], role, subset_field, skip_bad)
        for role in ROLES if role in files}
    return Preferences(name=name, format=fmt, splits=splits)


def prompt_group(prompt: str, pair_id: str) -> str:
    """The fold group of a pair: its whitespace- and case-normalised prompt (its id when the
    prompt is empty), so responses to one prompt are never split across folds."""
    key = " ".join(prompt.lower().split())
    return f"prompt:{key}" if key else f"id:{pair_id}"


def _twice(values: list) -> list:
    """``[a, a, b, b, …]``: each value once per response of its pair (shared, not copied)."""
    return list(chain.from_iterable(zip(values, values)))


def response_split(pairs: PreferenceSplit) -> Split:
    """The pairs as NLI-shaped items: premise = prompt, hypothesis = response, label
    ``chosen``/``rejected``, the chosen response first; group = :func:`prompt_group`. Built
    column by column: the texts and record lines are the pairs' own strings, not copies."""
    split = Split(name=pairs.name, path=pairs.path, task=Task.NLI)
    split.skipped = dict(pairs.skipped)
    split.ids = [f"{pair_id}:{label}" for pair_id in pairs.ids for label in (CHOSEN, REJECTED)]
    split.premises = _twice(pairs.prompts)
    split.hypotheses = list(chain.from_iterable(zip(pairs.chosen, pairs.rejected)))
    split.labels = [CHOSEN, REJECTED] * len(pairs)
    split.raw, split.lines = _twice(pairs.raw), _twice(pairs.lines)
    split.groups = _twice([prompt_group(p, i) for p, i in zip(pairs.prompts, pairs.ids)])
    return split


def as_dataset(preferences: Preferences) -> Dataset:
    """The :class:`Dataset` of :func:`response_split` items (roles as for any dataset)."""
    loaded = {role: response_split(split) for role, split in preferences.splits.items()}
    return assemble_dataset(loaded, preferences.name, preferences.format, skip_bad=False)
