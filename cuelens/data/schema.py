"""Field aliases and record normalisation to the NLI and MCQ record shapes (docs/methods.md §1;
the shapes and aliases: docs/api.md, "Data"; README, "Inputs"), overridable with ``FieldMap``."""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Container, Iterable
from dataclasses import dataclass
from typing import Any

from cuelens.data.dataset import Task
from cuelens.data.labels import lone_surrogate, normalise_label, unicode_form
from cuelens.errors import UserError, option_name

PREMISE_ALIASES = ("premise", "sentence1", "context", "startphrase", "sent1", "ctx", "question")
HYPOTHESIS_ALIASES = ("hypothesis", "sentence2", "sentence")
LABEL_ALIASES = ("label", "gold_label", "answerKey", "answer", "labels")
CHOICES_ALIASES = ("choices", "options", "endings", "answers")
ID_ALIASES = ("id", "pairID", "guid", "uid", "idx", "index", "qid")
_NLI_ALIASES = {"premise": PREMISE_ALIASES, "hypothesis": HYPOTHESIS_ALIASES,
                "label": LABEL_ALIASES}
MISSING_LABELS = {"-", "", "None", "null", "-1"}
#: Longest accepted text field: spaCy's default ``max_length``, far above any sentence or passage.
MAX_TEXT_CHARS = 1_000_000

_ENDING = re.compile(r"^(ending|choice|option)(\d+)$")


class RecordError(ValueError):
    """A record that cannot be normalised; the loader adds file and line."""


@dataclass(frozen=True)
class FieldMap:
    """User overrides for field names; ``None`` means auto-detect."""

    premise: str | None = None
    hypothesis: str | None = None
    label: str | None = None
    choices: str | None = None
    group: str | None = None  # --group-field: items sharing its value stay in one fold

    def __post_init__(self) -> None:
        """An empty name is a :class:`UserError` naming its option (it was taken as not given:
        the field was detected, or the run read a field '')."""
        for role in ("premise", "hypothesis", "label", "choices", "group"):
            if getattr(self, role) == "":
                raise UserError(f"{option_name(role + '_field')} is empty: give a field name, "
                                "or leave the option out to detect the field")
        named: dict[str, str] = {}  # field → the first role naming it
        for role in ("premise", "hypothesis", "label", "choices"):
            field = getattr(self, role)
            if field in named:
                raise UserError(f"{option_name(named[field] + '_field')} and "
                                f"{option_name(role + '_field')} both name the field {field!r}: "
                                "an item's parts are read from different fields")
            if field is not None:
                named[field] = role

    def item_fields(self) -> frozenset[str]:
        """The fields named to hold an item's texts and label (not its group)."""
        names = (self.premise, self.hypothesis, self.label, self.choices)
        return frozenset(name for name in names if name is not None)


def _first(record: Container[str], names: tuple[str, ...]) -> str | None:
    """The first of ``names`` that ``record`` holds (a plain loop: the common case, the first
    name, costs one lookup)."""
    for name in names:
        if name in record:
            return name
    return None


def _numbered_choice_fields(record: dict) -> list[str]:
    found = [(int(match.group(2)), key) for key in record if (match := _ENDING.match(key))]
    return [key for _, key in sorted(found)]


def other_fields(record: dict, overrides: Container[str] = ()) -> dict:
    """The fields of ``record`` that hold no part of its item: neither its id, texts, question
    or label under any name the readers take them from (the aliases, ``ending0``.., ``sent2``)
    nor under an ``overrides`` name (ids, metadata, groups, subsets)."""
    item = {*ID_ALIASES, *PREMISE_ALIASES, *HYPOTHESIS_ALIASES, *LABEL_ALIASES, *CHOICES_ALIASES,
            "sent2"}
    return {key: value for key, value in record.items()
            if key not in item and key not in overrides and not _ENDING.match(key)}


def detect_task(record: dict, fields: FieldMap) -> Task:
    """'mcq' when the record carries choices (a list, a dict of texts, or ending0.. fields)."""
    if fields.choices is not None:
        return Task.MCQ
    if fields.hypothesis is not None:
        return Task.NLI
    question = record.get("question")
    if isinstance(question, dict) and "choices" in question:
        return Task.MCQ
    if _first(record, CHOICES_ALIASES) or _numbered_choice_fields(record):
        return Task.MCQ
    return Task.NLI


def _as_text(value: Any, field: str) -> str:
    """A field value that is not a ``str`` as text: numbers are written as text; null, objects,
    lists and booleans are errors."""
    if value is None:
        raise RecordError(f"field '{field}' is missing or null")
    if isinstance(value, (dict, list, bool)):
        kind = {dict: "an object", list: "a list", bool: "a boolean"}[type(value)]
        raise RecordError(f"field '{field}' must be a text, got {kind}")
    return value if isinstance(value, str) else str(value)


def subset_text(value: Any, field: str) -> str:
    """A ``--subset-field`` value as the subset's name: a text or a number (written as text);
    missing, empty, a list or an object is a :class:`RecordError` (docs/robustness.md)."""
    if value is None or value == "":

        raise RecordError(f"no subset in field '{field}' ({option_name('subset_field')})")
    if isinstance(value, (dict, list)):
        kind = "an object" if isinstance(value, dict) else "a list"
        raise RecordError(f"subset field '{field}' holds {kind}; give each item one subset name "
                          "(a text)")
    return str(value)


def _text(value: Any, field: str) -> str:
    """A text field: a string (:func:`_as_text` for other values); an empty text is an error,
    and so is a text longer than :data:`MAX_TEXT_CHARS` (no parser could take it)."""
    if type(value) is not str:
        value = _as_text(value, field)
    if not value.strip():
        raise RecordError(f"field '{field}' is an empty text")
    if len(value) > MAX_TEXT_CHARS:
        raise RecordError(f"field '{field}' is a text of {len(value):,} characters (at most "
                          f"{MAX_TEXT_CHARS:,})")
    return value if value.isascii() else _unicode(value, field)


def _unicode(value: str, field: str) -> str:
    """``value`` unless it holds a lone surrogate (a ``\\ud800`` escape no encoder can write)."""
    if not value.isascii() and (surrogate := lone_surrogate(value)) is not None:
        raise RecordError(f"field '{field}' holds a lone surrogate (\\u{ord(surrogate):04x}), "
                          "which is not Unicode text; fix the escape in the file")
    return value


def nli_label(value: Any, field: str) -> tuple[str, str | None]:
    """An NLI label in its normal form (:func:`~cuelens.data.labels.normalise_label`; an
    integral number ``1.0`` is ``1``) and the original text when that differs."""
    original = _text(value, field)
    integral = isinstance(value, float) and value.is_integer()
    label = str(int(value)) if integral else normalise_label(original)
    if not label:
        raise RecordError(f"field '{field}' is a label of invisible characters only")
    return label, (original if original != label else None)


def id_text(value: Any) -> str | None:
    """An item id as text: an integral number ``1.0`` is ``"1"`` (pandas makes a column of
    integer ids with a missing one floats), a missing one (``None``, NaN) ``None``."""
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if value.is_integer():
            return str(int(value))
    return None if value is None else str(value)


def _record_id(record: dict, default: str) -> str:
    """The record's id (its first id field), or ``default`` when it has none: no id field, or a
    missing or blank one (null, NaN, a CSV file's empty cell)."""
    name = _first(record, ID_ALIASES)
    text = None if name is None else id_text(record[name])
    return default if name is None or text is None or not text.strip() else _unicode(text, name)


def is_missing_label(value: Any) -> bool:
    return value is None or str(value).strip() in MISSING_LABELS


def _missing_nli_field(record: dict, names: tuple[str | None, ...]) -> RecordError:
    """The error for the first of the premise/hypothesis/label ``names`` that ``record`` lacks."""
    role, name = next((role, name) for role, name in zip(_NLI_ALIASES, names)
                      if name is None or name not in record)
    wanted = name or "/".join(_NLI_ALIASES[role])
    return RecordError(f"missing {role} field ({wanted}); fields present: "
                       f"{', '.join(sorted(record))}{other_form(name, record)}")


def _shared_nli_field(names: tuple[str | None, ...]) -> RecordError:
    """The error for a field that would hold two of an NLI item's parts (an override naming a
    field that another part is detected from: ``--premise-field hypothesis``)."""
    roles = [role for role, name in zip(_NLI_ALIASES, names) if names.count(name) > 1]
    options = " and ".join(option_name(role + "_field") for role in roles)
    return RecordError(f"the {roles[0]} and the {roles[1]} would both be read from field "
                       f"{names[list(_NLI_ALIASES).index(roles[0])]!r}: name their fields with "
                       f"{options}")


def other_form(name: str | None, record: Iterable[str]) -> str:
    """Why a named field (``--label-field``) that ``record`` lacks looks present: a field that is
    the same text in another Unicode form (a header written on macOS: NFD), else ``""``."""
    if name is None or name.isascii():
        return ""
    key = unicodedata.normalize("NFC", name)
    same = next((f for f in record if isinstance(f, str) and f != name
                 and unicodedata.normalize("NFC", f) == key), None)
    if same is None:
        return ""
    return (f"; the field {same!r} has that name in another Unicode form ({unicode_form(same)}; "
            f"the name given: {unicode_form(name)}): write it as the data does")


def normalise_nli(record: dict, fields: FieldMap, default_id: str) -> dict | None:
    """Normalise a pair-classification record; ``None`` when its label is missing or '-'."""
    names = p_name, h_name, l_name = (fields.premise or _first(record, PREMISE_ALIASES),
                                      fields.hypothesis or _first(record, HYPOTHESIS_ALIASES),
                                      fields.label or _first(record, LABEL_ALIASES))
    if p_name is None or h_name is None or l_name is None or not (
            p_name in record and h_name in record and l_name in record):
        raise _missing_nli_field(record, names)
    if len(set(names)) < 3:
        raise _shared_nli_field(names)
    if is_missing_label(record[l_name]):
        return None
    label, original = nli_label(record[l_name], l_name)
    item = {"id": _record_id(record, default_id),
            "premise": _text(record[p_name], p_name),
            "hypothesis": _text(record[h_name], h_name),
            "label": label}
    if original is not None:
        item["label_from"] = original
    return item


def _choices(record: dict, fields: FieldMap) -> tuple[list[str], list[str] | None, str]:
    """Return (choice texts, choice letters if given, field name)."""
    if fields.choices is not None:
        if fields.choices not in record:
            raise RecordError(f"missing choices field '{fields.choices}'"
                              f"{other_form(fields.choices, record)}")
        raw, name = record[fields.choices], fields.choices
    else:
        question = record.get("question")
        if isinstance(question, dict) and "choices" in question:
            raw, name = question["choices"], "question.choices"
        elif (alias := _first(record, CHOICES_ALIASES)) is not None:
            raw, name = record[alias], alias
        else:
            numbered = _numbered_choice_fields(record)
            if not numbered:
                raise RecordError("missing choices field (choices, ending0.., choice1..)")
            return [_text(record[k], k) for k in numbered], None, "ending*"
    if isinstance(raw, dict) and "text" in raw:
        texts, labels = raw["text"], raw.get("label", [])
        if not isinstance(texts, list) or not isinstance(labels, list):
            raise RecordError(f"field '{name}' must hold lists under 'text' and 'label'")
        letters = [_text(x, f"{name}.label") for x in labels] or None
        return [_text(t, f"{name}.text") for t in texts], letters, name
    if isinstance(raw, list):
        if raw and all(isinstance(c, dict) for c in raw):
            letters = [str(c.get("label", "")) for c in raw]
            return [_text(c.get("text"), f"{name}.text") for c in raw], letters, name
        if any(isinstance(c, dict) for c in raw):
            raise RecordError(f"field '{name}' mixes choice objects and plain texts")
        return [_text(t, name) for t in raw], None, name
    if isinstance(raw, str):  # a CSV/TSV cell, or a DataFrame read from one
        raise RecordError(f"field '{name}' is one text, not a list of choices (a CSV or TSV "
                          "cell holds one text: give each choice its own column, choice1, "
                          "choice2, … or ending0, ending1, …)")
    raise RecordError(f"field '{name}' must be a list of choices")


def _premise(record: dict, fields: FieldMap) -> str:
    if fields.premise is not None:
        if fields.premise not in record:
            raise RecordError(f"missing premise field '{fields.premise}'"
                              f"{other_form(fields.premise, record)}")
        return _text(record[fields.premise], fields.premise)
    question = record.get("question")
    if isinstance(question, dict) and "stem" in question:
        return _text(question["stem"], "question.stem")
    for name in ("premise", "context", "startphrase", "ctx", "sent1", "question", "sentence1"):
        if name in record and isinstance(record[name], str):
            text = record[name]
            if name == "sent1" and isinstance(record.get("sent2"), str):
                text = f"{text} {record['sent2']}"
            return _text(text, name)
    raise RecordError("missing premise field (premise, question, context, sent1, ...); "
                      f"fields present: {', '.join(sorted(record))}")


def _choice_index(value: Any, letters: list[str] | None, k: int, field: str) -> int:
    """The correct choice's 0-based index: a choice label, a letter, or a whole number (an
    integral float ``1.0`` too: a pandas column of indices with a missing label is float)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    if letters and text in letters:
        return letters.index(text)
    if len(text) == 1 and text.isalpha() and text.isupper() and not letters:
        index = ord(text) - ord("A")
    else:
        try:
            index = int(text)
        except ValueError:
            raise RecordError(f"label '{text}' in field '{field}' is not a choice index") from None
    if not 0 <= index < k:
        raise RecordError(f"label {index} is out of range for {k} choices")
    return index


def normalise_mcq(record: dict, fields: FieldMap, default_id: str) -> dict | None:
    """Normalise a multiple-choice record; ``None`` when its label is missing."""
    choices, letters, _ = _choices(record, fields)
    if len(choices) < 2:
        raise RecordError("a multiple-choice item needs at least 2 choices")
    l_name = fields.label or _first(record, LABEL_ALIASES)
    if l_name is None or l_name not in record:
        raise RecordError(f"missing label field ({fields.label or '/'.join(LABEL_ALIASES)})"
                          f"{other_form(fields.label, record)}")
    if is_missing_label(record[l_name]):
        return None
    out = {"id": _record_id(record, default_id),
           "premise": _premise(record, fields),
           "choices": choices,
           "label": _choice_index(record[l_name], letters, len(choices), l_name)}
    question = record.get("question")
    if isinstance(question, str) and fields.premise != "question" and "premise" in record:
        out["question"] = _unicode(question, "question")
    return out


@functools.cache
def blank_pattern() -> str:
    """Every character ``str.strip()`` removes, as an RE2 class: a text of only these is blank
    (built on first use: testing every code point costs a tenth of a second)."""
    return "^[" + "".join(f"\\x{{{c:x}}}" for c in range(0x110000) if chr(c).isspace()) + "]*$"


@dataclass(frozen=True)
class NliColumns:
    """Normalised NLI items of a table of records, column by column (:func:`normalise_nli_table`):
    pyarrow string arrays of ids (None: the default ids), premises and hypotheses; per item its
    label's index into ``originals``, the distinct label texts in order of first appearance, and
    their normal forms ``labels``."""

    ids: Any
    premises: Any
    hypotheses: Any
    label_index: Any  # numpy int array
    originals: list[str]
    labels: list[str]


def normalise_nli_table(table: Any, fields: FieldMap) -> NliColumns | None:
    """:func:`normalise_nli` of every record of ``table`` (a pyarrow table whose columns are all
    non-null strings, one record per row) at once, when each record gives an item and no note:
    its fields found, no label missing, no text blank or longer than :data:`MAX_TEXT_CHARS`,
    no ``fields.group`` (lone surrogates cannot occur: pyarrow refuses them); None otherwise
    (the caller then normalises the records one by one, with their errors and skips)."""
    import numpy as np
    import pyarrow.compute as pc

    names = set(table.column_names)
    p_name, h_name, l_name = (fields.premise or _first(names, PREMISE_ALIASES),
                              fields.hypothesis or _first(names, HYPOTHESIS_ALIASES),
                              fields.label or _first(names, LABEL_ALIASES))
    if fields.group is not None or not table.num_rows or p_name not in names or \
            h_name not in names or l_name is None or l_name not in names or \
            len({p_name, h_name, l_name}) < 3:  # a field of two parts: the records' error
        return None
    texts = [table.column(name).combine_chunks() for name in (p_name, h_name)]
    for text in texts:
        if pc.any(pc.match_substring_regex(text, blank_pattern())).as_py() or \
                pc.max(pc.utf8_length(text)).as_py() > MAX_TEXT_CHARS:
            return None
    encoded = table.column(l_name).combine_chunks().dictionary_encode()
    originals = encoded.dictionary.to_pylist()
    try:
        if any(is_missing_label(value) for value in originals):
            return None
        labels = [nli_label(value, l_name)[0] for value in originals]
    except RecordError:
        return None
    id_name = _first(names, ID_ALIASES)
    ids = None if id_name is None else table.column(id_name).combine_chunks()
    if ids is not None and pc.any(pc.match_substring_regex(ids, blank_pattern())).as_py():
        return None  # a blank id is none: the default id, given record by record
    return NliColumns(ids, texts[0], texts[1], np.asarray(encoded.indices), originals, labels)
