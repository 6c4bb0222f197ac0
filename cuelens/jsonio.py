"""JSON and JSONL text (docs/results-schema.md): the encoding of numbers (:func:`json_number`,
and their display, :func:`format_number`), the deterministic, streamed results.json text (a
hand-written column-wise encoder for long lists of records, byte-identical to the standard
encoder's), JSONL lines, and their files (written atomically, :mod:`cuelens.atomic`).
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from json.encoder import encode_basestring
from operator import itemgetter
from typing import Any

import numpy as np

from cuelens.atomic import PathLike, atomic_open_text, atomic_write_bytes, atomic_write_text

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


_JSON_LINE = json.JSONEncoder(ensure_ascii=False, allow_nan=False)  # json.dumps's bytes


def jsonl_line(row: dict) -> str:
    """One JSONL line (with its newline) as :func:`write_jsonl` writes it; NaN/Infinity are
    refused (they are not JSON)."""
    return _JSON_LINE.encode(row) + "\n"


_JSON_CONSTANTS = {True: "true", False: "false", None: "null"}
_SCALARS = {str, int, float, bool, type(None)}
_FLOAT_NULLS = {"None": "null"}  # repr of None in a float column


def json_texts(values: Sequence) -> list[str]:
    """The JSON text of each of ``values`` as :func:`jsonl_line` writes it inside a row (NaN and
    infinities refused); a column of one plain type (str, int, float, bool or None) is encoded
    by C-level maps, not value by value."""
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
        return _float_texts(values)
    return list(map(_JSON_LINE.encode, values))


def _float_texts(values: Sequence[float | None]) -> list[str]:
    """Floats (or None) as JSON: their repr, like the encoder's."""
    texts = list(map(repr, values))
    odd = {"inf", "-inf", "nan", "None"}.intersection(texts)
    if not odd:
        return texts
    if odd != {"None"}:
        raise ValueError("Out of range float values are not JSON compliant")
    return list(map(_FLOAT_NULLS.get, texts, texts))


@dataclass(frozen=True)
class Coded:
    """A column as codes into its distinct ``values`` (JSON scalars: str, int, bool or None),
    e.g. a label or a flag: each value encoded once, not once per row."""

    codes: np.ndarray  # per row, an index into values
    values: Sequence

    def __len__(self) -> int:
        return len(self.codes)

    def rows(self, rows: slice) -> "Coded":
        return Coded(self.codes[rows], self.values)

    def used(self) -> "Coded":
        """The same column over the values its rows use (a long table of values, e.g. every
        listed cue, cut to those of a slice of rows)."""
        if len(self.values) <= TABLE_MAX:
            return self
        used, codes = np.unique(self.codes, return_inverse=True)
        return Coded(codes.reshape(-1), [self.values[i] for i in used.tolist()])




def column_rows(column: JsonlColumn, rows: slice) -> JsonlColumn:
    """The ``rows`` of a :func:`jsonl_rows` column."""
    return column.rows(rows) if isinstance(column, Coded) else column[rows]


_Piece = tuple[list[str], np.ndarray | None]  # texts and each row's index (None: the first)
#: A column of :func:`jsonl_rows`: codes into values, float64 numbers (NaN: null), or strings.
JsonlColumn = Coded | np.ndarray | Sequence[str]
TABLE_MAX = 256  # neighbouring pieces of a row are merged while their table of texts is this small


def jsonl_rows(columns: Mapping[str, JsonlColumn], nan_as_null: bool = False) -> str:
    """The JSONL lines of the rows of equal-length ``columns`` (row ``i``: each name with its
    ``i``-th value), the text :func:`jsonl_line` writes for each row dict (float NaN as
    ``null`` when ``nan_as_null``, else refused like infinities). Each row is a few pieces of
    text, each taken by code from a table (the constant keys merged into the tables of the
    coded columns beside them, :func:`_number_pieces` for floats) and joined in one C call."""
    if not columns:
        return ""
    n = len(next(iter(columns.values())))
    pieces: list[_Piece] = []
    for k, (name, column) in enumerate(columns.items()):
        pieces.append(([f"{', ' if k else '{'}{encode_basestring(name)}: "], None))
        if isinstance(column, Coded):
            column = column.used()
            pieces.append((json_texts(column.values), column.codes.astype(np.int64)))
        elif isinstance(column, np.ndarray) and column.dtype.kind == "f":
            pieces += _number_pieces(column, nan_as_null)
        else:
            pieces += _string_pieces(list(column))
    pieces.append((["}\n"], None))
    merged = _merged(pieces)
    matrix = np.empty((n, len(merged)), dtype=object)
    for j, (texts, codes) in enumerate(merged):
        matrix[:, j] = texts[0] if codes is None else np.asarray(texts, dtype=object)[codes]
    return "".join(matrix.ravel().tolist())



_ESCAPED = re.compile(r'[\x00-\x1f"\\]')  # what the encoder writes otherwise in a string


def _string_pieces(values: list) -> list[_Piece]:
    """A column of strings as JSON: each one between constant quotes when none needs an escape
    (one C-level scan of them all), else each one's :func:`json_texts`."""
    rows = np.arange(len(values))
    try:
        plain = _ESCAPED.search("".join(values)) is None
    except TypeError:  # not all strings
        plain = False
    if plain:
        return [(['"'], None), (values, rows), (['"'], None)]
    return [(json_texts(values), rows)]


def _merged(pieces: list[_Piece]) -> list[_Piece]:
    """Neighbouring pieces joined into one while the product of their tables is at most
    :data:`TABLE_MAX` texts (a constant key into the values beside it)."""
    out = [pieces[0]]
    for texts, codes in pieces[1:]:
        before, before_codes = out[-1]
        if len(before) * len(texts) > TABLE_MAX:
            out.append((texts, codes))
            continue
        joined = [a + b for a in before for b in texts]
        left = 0 if before_codes is None else before_codes * len(texts)
        out[-1] = (joined, None if codes is None and before_codes is None else
                   np.asarray(left + (0 if codes is None else codes)))
    return out


GRID = 10**6  # floats on this grid (6 decimals) are written from digit tables, not one by one


@functools.cache
def _fraction_tables() -> tuple[list[str], list[str]]:
    """The digits after the point of ``f = 1000 * hi + lo`` (0 ≤ f < :data:`GRID`), without
    trailing zeros (at least one digit) as two texts: ``hi``'s (``hi`` + 1000 when ``lo`` is
    0, index 2000: nothing) and ``lo``'s (index 0: nothing)."""
    high = [f"{h:03d}" for h in range(1000)] + \
        [f"{h:03d}".rstrip("0") or "0" for h in range(1000)] + [""]
    return high, [""] + [f"{lo:03d}".rstrip("0") for lo in range(1, 1000)]


def _number_pieces(values: np.ndarray, nan_as_null: bool) -> list[_Piece]:
    """Floats as JSON (their repr, like the encoder's) in three pieces per row: sign, whole
    part and point; the first three digits after it; the last three. A float is on the grid
    when it is the double nearest to a number of at most 6 decimals (``x == k / 10**6``, a
    correctly rounded division), and then its repr is that number's shortest form (positional
    between 1e-4 and 1e16; below 1e9 no other decimal of at most 15 digits reads back as
    it); every other float's repr is taken whole."""
    values = np.asarray(values, dtype=np.float64)
    null = np.isnan(values)
    if np.isinf(values).any() or (null.any() and not nan_as_null):
        raise ValueError("Out of range float values are not JSON compliant")
    size = np.abs(values)
    with np.errstate(invalid="ignore"):
        scaled = np.rint(size * GRID)
        grid = (size == scaled / GRID) & (((size >= 1e-4) & (size < 1e9)) | (size == 0))
    whole, fraction = np.divmod(np.where(grid, scaled, 0).astype(np.int64), GRID)
    heads = whole * 2 + np.signbit(values)
    top = int(heads.max(initial=0))
    kinds, heads = (np.arange(top + 1), heads) if top < 2 * TABLE_MAX else \
        np.unique(heads, return_inverse=True)
    texts = [f"{'-' if head & 1 else ''}{head >> 1}." for head in kinds.tolist()]
    other = ~grid & ~null
    heads = np.where(null, len(texts), heads.reshape(-1))
    heads[other] = len(texts) + 1 + np.arange(int(other.sum()))
    texts += ["null", *map(float.__repr__, values[other].tolist())]
    high, low = fraction // 1000, fraction % 1000
    return [(texts, heads), (_fraction_tables()[0], np.where(grid, high + 1000 * (low == 0), 2000)),
            (_fraction_tables()[1], np.where(grid, low, 0))]


def write_jsonl(path: PathLike, rows: Iterable[dict]) -> None:
    """One JSON object per line; NaN/Infinity are refused (they are not JSON). A ``path``
    ending in ``.gz`` is gzipped (as the data readers read it), without a timestamp."""
    text = "".join(map(jsonl_line, rows))
    if os.fspath(path).lower().endswith(".gz"):
        atomic_write_bytes(path, gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        atomic_write_text(path, text)


def null_non_finite(rows: list[dict]) -> list[dict]:
    """Rows with non-finite float values as ``null`` (log-probabilities of ``-inf``), which
    JSON cannot hold, also inside nested objects and lists (``{model: logprob}``)."""
    return [_null_non_finite(row) for row in rows]


def _null_non_finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _null_non_finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_null_non_finite(v) for v in value]
    return value


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
