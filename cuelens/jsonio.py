"""JSON and JSONL text (docs/results-schema.md): the encoding of numbers (:func:`json_number`,
and their display, :func:`format_number`), the deterministic, streamed results.json text (a
hand-written column-wise encoder for long lists of records, byte-identical to the standard
encoder's), JSONL lines, and their files (written atomically, :mod:`cuelens.atomic`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain, repeat
from json.encoder import encode_basestring
from operator import itemgetter
from typing import Any

from cuelens.atomic import PathLike, atomic_open_text, atomic_write_text

def json_number(x: float, digits: int = 6) -> float | str | None:
    """The results.json encoding of a float (docs/results-schema.md, "Non-finite numbers"):
    finite → rounded to ``digits``; +∞ → ``"inf"``; −∞ → ``"-inf"``; NaN (undefined) → null."""
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return round(float(x), digits)


def read_number(value: float | str | None) -> float:
    """Inverse of :func:`json_number` (null → NaN; ``float`` reads ``"inf"``/``"-inf"``)."""
    return math.nan if value is None else float(value)


def format_number(value: float | str | None, digits: int = 3) -> str:
    """Display text of an encoded number: ``∞``/``−∞`` for infinities, ``n/a`` for null."""
    x = read_number(value)
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.{digits}f}"


_JSON = json.JSONEncoder(ensure_ascii=False, indent=2, allow_nan=False)


def dumps_json(obj: Any) -> str:
    """Deterministic JSON text: sorted keys are NOT used (field order is part of the schema),
    but floats are plain, NaN is rejected, and the output ends with a newline."""
    return "".join(json_pieces(obj)) + "\n"


def write_json(path: PathLike, obj: Any) -> None:
    """Write :func:`dumps_json` of ``obj`` atomically, streamed from its pieces (a big results
    file is never one string in memory); the bytes are the same."""
    with atomic_open_text(path) as text:
        text.writelines(json_pieces(obj))
        text.write("\n")


RECORDS_MIN = 64  # a list of at least this many records is encoded column by column
RECORDS_BATCH = 4096  # records encoded at once (their texts in memory) and joined into one piece


def json_pieces(obj: Any, level: int = 0) -> Iterator[str]:
    """The text of ``_JSON.encode(obj)`` (2-space indent) at nesting ``level``, in pieces.

    The standard encoder's indented mode is pure Python, one call per value; a long list of
    records (dicts with the same string keys in the same order, whose values are scalars or
    such records, as the cue table of results.json) is encoded column by column instead, by
    C-level maps (:func:`json_texts`). Dicts with string keys are walked here to find those
    lists; anything else is the encoder's own text, re-indented (a JSON text has no raw
    newline inside a string, so every ``\\n`` starts a line)."""
    if type(obj) is dict and obj and all(type(key) is str for key in obj):
        inner = "\n" + "  " * (level + 1)
        yield "{"
        for i, (key, value) in enumerate(obj.items()):
            yield f"{',' if i else ''}{inner}{encode_basestring(key)}: "
            yield from json_pieces(value, level + 1)
        yield "\n" + "  " * level + "}"
        return
    if type(obj) is list and len(obj) >= RECORDS_MIN and \
            (rows := _record_rows(obj[:RECORDS_BATCH], level + 1)) is not None:
        inner = "\n" + "  " * (level + 1)
        yield "[" + inner
        for start in range(0, len(obj), RECORDS_BATCH):  # a batch's texts in memory at a time
            if start:
                yield "," + inner
                rows = _record_rows(obj[start:start + RECORDS_BATCH], level + 1)
            if rows is None:  # a batch of another layout: its items one by one
                for i, item in enumerate(obj[start:start + RECORDS_BATCH]):
                    if i:
                        yield "," + inner
                    yield from json_pieces(item, level + 1)
            else:
                yield ("," + inner).join(rows)
        yield "\n" + "  " * level + "]"
        return
    indent = "\n" + "  " * level
    for piece in _JSON.iterencode(obj):
        yield piece.replace("\n", indent) if level else piece


def _record_rows(rows: list, level: int) -> list[str] | None:
    """The indented text of each record of ``rows`` at nesting ``level``, or None when they
    are not all records of one layout (or a float is out of range: the encoder's error)."""
    try:
        layout = _record_layout(rows, level)
    except ValueError:
        return None
    if layout is None:
        return None
    return list(map("".join, _interleaved(*layout)))


def _interleaved(texts: list[str], columns: list[list[str]]) -> Iterator[tuple[str, ...]]:
    """Per row, the pieces of its text: ``texts[0]``, its value of ``columns[0]``,
    ``texts[1]``, … ``texts[-1]`` (the constant texts between the columns' values)."""
    pieces: list[Iterable[str]] = [repeat(texts[0])]
    for column, text in zip(columns, texts[1:]):
        pieces += [column, repeat(text)]
    return zip(*pieces)


def _record_layout(rows: list, level: int) -> tuple[list[str], list[list[str]]] | None:
    """The constant texts of records ``rows`` at nesting ``level`` and, between them, the
    texts of each scalar column (one per record); None unless ``rows`` are records of one
    layout."""
    first = rows[0]
    if type(first) is not dict or not first or not all(type(key) is str for key in first):
        return None
    keys = tuple(first)
    if set(map(type, rows)) != {dict} or list(map(tuple, rows)).count(keys) != len(rows):
        return None
    inner = "\n" + "  " * (level + 1)
    texts, columns = ["{"], []
    for i, key in enumerate(keys):
        texts[-1] += f"{',' if i else ''}{inner}{encode_basestring(key)}: "
        column = list(map(itemgetter(key), rows))
        kinds = set(map(type, column))
        if kinds == {dict}:
            nested = _record_layout(column, level + 1)
            if nested is None:
                return None
            texts[-1] += nested[0][0]
            texts += nested[0][1:]
            columns += nested[1]
        elif kinds <= _SCALARS:
            columns.append(json_texts(column))
            texts.append("")
        else:
            return None
    texts[-1] += "\n" + "  " * level + "}"
    return texts, columns


_JSON_LINE = json.JSONEncoder(ensure_ascii=False, allow_nan=False)  # json.dumps's bytes, one encoder


def jsonl_line(row: dict) -> str:
    """One JSONL line (with its newline) as :func:`write_jsonl` writes it; NaN/Infinity are
    refused (they are not JSON)."""
    return _JSON_LINE.encode(row) + "\n"


_JSON_CONSTANTS = {True: "true", False: "false", None: "null"}
_SCALARS = {str, int, float, bool, type(None)}
_FLOAT_NULLS = {"nan": "null", "None": "null"}  # repr of NaN / None in a float column


def json_texts(values: Sequence, nan_as_null: bool = False) -> list[str]:
    """The JSON text of each of ``values`` as :func:`jsonl_line` writes it inside a row (float
    NaN as ``null`` when ``nan_as_null``, else refused like infinities); a column of one plain
    type (str, int, float, bool or None) is encoded by C-level maps, not value by value."""
    kinds = set(map(type, values))
    if kinds <= {str}:
        return list(map(encode_basestring, values))
    if kinds <= {str, type(None)}:  # e.g. a cue or none: each distinct value encoded once
        texts = {value: "null" if value is None else encode_basestring(value)
                 for value in set(values)}
        return list(map(texts.__getitem__, values))
    if kinds <= {bool, type(None)}:
        return list(map(_JSON_CONSTANTS.__getitem__, values))
    if kinds <= {int}:
        return list(map(int.__repr__, values))
    if kinds <= {float, type(None)}:
        return _float_texts(values, nan_as_null)
    return [_JSON_LINE.encode(None if nan_as_null and isinstance(v, float) and v != v else v)
            for v in values]


def _float_texts(values: Sequence[float | None], nan_as_null: bool) -> list[str]:
    """Floats (or None) as JSON: their repr, like the encoder's."""
    texts = list(map(repr, values))
    odd = {"inf", "-inf", "nan", "None"}.intersection(texts)
    if not odd:
        return texts
    if odd & {"inf", "-inf"} or ("nan" in odd and not nan_as_null):
        raise ValueError("Out of range float values are not JSON compliant")
    return list(map(_FLOAT_NULLS.get, texts, texts))


def jsonl_lines(columns: Mapping[str, Sequence], nan_as_null: bool = False) -> str:
    """The JSONL lines of the rows of equal-length ``columns`` (row ``i``: each name with its
    ``i``-th value), the text :func:`jsonl_line` writes for each row dict, built column by
    column (:func:`json_texts`) and interleaved with the constant keys."""
    if not columns:
        return ""
    keys = [f"{', ' if k else '{'}{encode_basestring(name)}: " for k, name in enumerate(columns)]
    return "".join(chain.from_iterable(_interleaved(
        [*keys, "}\n"], [json_texts(values, nan_as_null) for values in columns.values()])))


def write_jsonl(path: PathLike, rows: Iterable[dict]) -> None:
    """One JSON object per line; NaN/Infinity are refused (they are not JSON)."""
    atomic_write_text(path, "".join(map(jsonl_line, rows)))


def null_non_finite(rows: list[dict]) -> list[dict]:
    """Rows with non-finite float values as ``null`` (log-probabilities of ``-inf``), which
    JSON cannot hold."""
    return [{k: None if isinstance(v, float) and not math.isfinite(v) else v
             for k, v in row.items()} for row in rows]


def append_jsonl(path: str | os.PathLike, row: dict) -> None:
    """Append one JSON line with a single ``O_APPEND`` write, flushed to disk: an interrupted
    run keeps every line it finished (see :func:`read_jsonl_lines` for a torn last line)."""
    data = jsonl_line(row).encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_jsonl_lines(path: str | os.PathLike) -> list[dict]:
    """The complete JSON-object lines of a file written by :func:`append_jsonl`; reading stops
    at the first line that is not a whole JSON object (a write cut short)."""
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                row = json.loads(line) if line.endswith("\n") else None
            except json.JSONDecodeError:
                row = None
            if not isinstance(row, dict):
                break
            rows.append(row)
    return rows
