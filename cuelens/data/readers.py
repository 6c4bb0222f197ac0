"""The one place that reads user files: JSONL / JSON / CSV / TSV / plain text, optionally gzipped,
streamed in chunks of lines, and Parquet, a record batch at a time; every problem names the file
and the 1-based line (docs/robustness.md, "One reader for every file"). Record readers yield
``(line, raw, record | LineError)``."""

from __future__ import annotations

import codecs
import csv
import gzip
import json
import stat
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from json.scanner import make_scanner
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cuelens.errors import UserError

if TYPE_CHECKING:
    import pandas as pd

FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv",
           ".txt": "tsv", ".parquet": "parquet"}
PARQUET_BATCH = 65_536  # rows of a Parquet file in memory at a time
MAX_JSON_DEPTH = 200
MAX_INT_DIGITS = 100
_BOM = "\ufeff"
_CHUNK_BYTES = 1 << 16  # lines are read and decoded this much at a time


class LineError(UserError):
    """A per-line problem: ``--skip-bad`` may turn it into a counted warning."""


def file_format(path: Path) -> str:
    """``jsonl``, ``csv``, ``tsv`` or ``parquet`` from the file name (a trailing ``.gz`` is
    ignored)."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    if not suffixes or suffixes[-1] not in FORMATS:
        raise UserError("unknown file format (expected .jsonl, .csv or .tsv, optionally .gz, or "
                        ".parquet)", path=str(path))
    return FORMATS[suffixes[-1]]


def is_data_file(path: Path) -> bool:
    """Whether ``path`` is a file in a format :func:`file_format` knows."""
    try:
        file_format(path)
    except UserError:
        return False
    return path.is_file()


def check_regular_file(path: str | Path) -> Path:
    """``path`` when it is an existing regular file (symlinks followed); else a :class:`UserError`
    (missing, a directory, or a FIFO/socket/device that reading would block on or never end)."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise UserError("file not found", path=str(path)) from None
    except OSError as exc:
        raise UserError(f"cannot read file: {exc.strerror or exc}", path=str(path)) from None
    if stat.S_ISDIR(mode):
        raise UserError("expected a file, got a directory", path=str(path))
    if not stat.S_ISREG(mode):
        raise UserError("not a regular file (a pipe, socket or device); give a file",
                        path=str(path))
    return path


def _byte_chunks(path: Path, size: int = _CHUNK_BYTES) -> Iterator[list[bytes]]:
    """The file's lines (terminators kept) in lists of about ``size`` bytes; a gzip file's
    one by one, so that every line before a corrupt or truncated part comes first."""
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            if opener is gzip.open:
                yield from ([line] for line in handle)
            else:
                yield from iter(lambda: handle.readlines(size), [])
    except (OSError, EOFError, zlib.error) as exc:
        kind = "corrupt or truncated gzip file" if opener is gzip.open else "cannot read file"
        raise UserError(f"{kind}: {exc}", path=str(path)) from None


def _decodable_lines(chunk: list[bytes], path: Path, number: int) -> tuple[list[str], UserError]:
    """The lines of ``chunk`` (line ``number`` + 1 first) before its first non-UTF-8 one, and
    the error naming that line."""
    texts = []
    for number, data in enumerate(chunk, start=number + 1):
        try:
            texts.append(data.decode("utf-8").removesuffix("\n"))
        except UnicodeDecodeError as exc:
            return texts, UserError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); re-encode "
                                    "the file as UTF-8", path=str(path), line=number)
    raise AssertionError("a chunk that failed to decode has a line that fails")


def open_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` for every line of a UTF-8 file: the terminator removed (a CRLF
    line keeps its ``'\\r'``), a UTF-8 BOM dropped; not a regular file, a corrupt ``.gz`` or
    non-UTF-8 bytes are one error naming the line.

    A chunk of lines is decoded at once (the same as line by line: no UTF-8 sequence holds a
    newline byte), and line by line only to find the line of an undecodable byte."""
    path = check_regular_file(path)
    number = 0
    for chunk in _byte_chunks(path):
        if number == 0:
            chunk[0] = chunk[0].removeprefix(codecs.BOM_UTF8)
        yield from _numbered(chunk, path, number)
        number += len(chunk)


def _numbered(chunk: list[bytes], path: Path, number: int) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of the lines of ``chunk`` (line ``number`` + 1 first), as
    :func:`open_lines` gives them."""
    try:
        texts = b"".join(chunk).decode("utf-8").removesuffix("\n").split("\n")
    except UnicodeDecodeError:
        texts, error = _decodable_lines(chunk, path, number)
        yield from enumerate(texts, start=number + 1)
        raise error from None
    yield from enumerate(texts, start=number + 1)


def text_lines(path: str | Path, keep_blank: bool = False) -> list[str]:
    """Stripped lines of a plain text file (sentences, words); blank lines are dropped unless
    ``keep_blank`` (a corpus whose line numbers index an array: then only the blank lines after
    the last text go, as they index nothing)."""
    lines = [line.strip() for _, line in open_lines(path) if keep_blank or line.strip()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


# ---------------------------------------------------------------- JSON
def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (write null)")


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits (at most "
                         f"{MAX_INT_DIGITS})")
    return int(text)


def _depth(text: str) -> int:
    """Deepest bracket nesting outside strings (cheap guard before the recursive parser)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


class RepeatedKeys(dict):
    """A JSON object that repeats a key: the last value is kept (as every JSON parser does)
    and ``repeated`` names the keys, so that the loader can warn."""

    repeated: list[str]


def _object(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    out = RepeatedKeys(obj)
    keys = [key for key, _ in pairs]
    out.repeated = sorted({key for key in keys if keys.count(key) > 1})
    return out


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_int)
_PAIRS_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_int,
                                  object_pairs_hook=_object)
# the C scanner that _DECODER.decode runs (typeshed mistypes the argument)
_SCAN = make_scanner(_DECODER)  # type: ignore[arg-type]


def _decode(text: str) -> Any:
    """``_DECODER.decode(text)``. A text that is one JSON value from its first character to its
    last goes straight to the C scanner (what ``decode`` runs once it has skipped whitespace:
    the same value, a third of the time); any other text, errors included, takes ``decode``."""
    try:
        value, end = _SCAN(text, 0)
    except StopIteration:
        end = -1
    return value if end == len(text) else _DECODER.decode(text)


def parse_json(text: str, path: str | Path | None = None, line: int | None = None) -> Any:
    """Parse one JSON value; a :class:`LineError` naming ``path``/``line`` when it is malformed,
    nested deeper than :data:`MAX_JSON_DEPTH`, holds an over-long integer or NaN/Infinity."""
    try:
        if text.startswith(_BOM):  # json.loads' own check (the decoders are built once, not by it)
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = _decode(text)
        if isinstance(value, dict) and text.count(":") > len(value):  # maybe a repeated key
            value = _PAIRS_DECODER.decode(text)
        return value
    except json.JSONDecodeError as exc:
        if line is None:  # a whole-file document: the error's own line
            message, line = f"not valid JSON: {exc.msg} (column {exc.colno})", exc.lineno
        else:
            message = f"malformed JSON ({exc.msg} at column {exc.colno})"
    except RecursionError:
        message = f"malformed JSON (nested deeper than {MAX_JSON_DEPTH} levels)"
    except ValueError as exc:
        message = f"malformed JSON ({exc})"
    raise LineError(message, path=None if path is None else str(path), line=line) from None


def _parse_line(text: str, path: Path, line: int) -> Any:
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and _depth(text) > MAX_JSON_DEPTH:
        raise LineError(f"malformed JSON (nested deeper than {MAX_JSON_DEPTH} levels)",
                        path=str(path), line=line)
    return parse_json(text, path, line)


def read_json(path: str | Path) -> Any:
    """One JSON document (the whole file), with the reader's checks and error messages."""
    path = Path(path)
    return parse_json("\n".join(line for _, line in open_lines(path)), path)


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, str, dict | LineError]]:
    """``(line, raw line, object or LineError)`` for every non-blank line of a JSONL file."""
    path = Path(path)
    return _jsonl_records(open_lines(path), path)


def _jsonl_records(lines: Iterable[tuple[int, str]],
                   path: Path) -> Iterator[tuple[int, str, dict | LineError]]:
    """:func:`iter_jsonl` of the numbered ``lines`` of ``path``."""
    for number, line in lines:
        if not line.strip():
            continue
        try:
            record = _parse_line(line, path, number)
            if not isinstance(record, dict):
                raise LineError("expected a JSON object per line", path=str(path), line=number)
        except LineError as exc:
            record = exc
        yield number, line, record


TABLE_BYTES = 1 << 20  # a JSONL file is parsed this much at a time by :func:`jsonl_pieces`


@dataclass(frozen=True)
class RecordTable:
    """Lines ``line …`` of a JSONL file, one JSON object each whose values are all non-null
    strings, parsed together by pyarrow (``table``: a row per line, its keys the columns)."""

    line: int
    table: Any  # pyarrow.Table

    def __len__(self) -> int:
        return int(self.table.num_rows)

    def head(self, rows: int) -> RecordTable:
        return RecordTable(self.line, self.table.slice(0, rows))

    def after(self, rows: int) -> RecordTable:
        return RecordTable(self.line + rows, self.table.slice(rows))

    def records(self) -> Iterator[tuple[int, str, dict]]:
        """The ``(line, raw, record)`` triples of :func:`iter_jsonl`, but ``raw`` is ``""``."""
        return ((number, "", row) for number, row in
                enumerate(self.table.to_pylist(), start=self.line))


def jsonl_pieces(path: str | Path) -> Iterator[tuple[int, str, dict | LineError] | RecordTable]:
    """The records of a JSONL file as :func:`iter_jsonl` reads them, but a block of lines
    (:data:`TABLE_BYTES`) that :func:`_string_table` parses whole comes as one
    :class:`RecordTable` instead of its records (their ``raw`` is ``""`` anyway: a caller that
    keeps no raw line). Any other block, and a gzip file, is read line by line as always, so
    its errors name the same line with the same message."""
    path = check_regular_file(path)
    if path.suffix.lower() == ".gz":
        yield from iter_jsonl(path)
        return
    number = 0
    for chunk in _byte_chunks(path, TABLE_BYTES):
        if number == 0:
            chunk[0] = chunk[0].removeprefix(codecs.BOM_UTF8)
        table = _string_table(b"".join(chunk), len(chunk))
        if table is not None:
            yield RecordTable(number + 1, table)
        else:
            yield from _jsonl_records(_numbered(chunk, path, number), path)
        number += len(chunk)


def _string_table(data: bytes, lines: int) -> Any:
    """The ``lines`` lines of ``data`` parsed by pyarrow's JSON reader when that gives exactly
    the objects the line reader would: valid UTF-8, every line starting with ``{`` and ending
    with ``}`` (before an optional ``\\r``; so no blank line and no object across lines), a row
    per line, and only string columns without nulls (no number, nesting, NaN or missing key the
    line reader would check or refuse); None otherwise (pyarrow refuses repeated keys, lone
    surrogates and malformed JSON). Blocks with more brackets than one per line and
    :data:`MAX_JSON_DEPTH` never reach pyarrow, whose parser recursion has no limit."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.json as pj

    if data.count(b"{") + data.count(b"[") > lines + MAX_JSON_DEPTH:
        return None  # maybe a line nested too deep (pyarrow's parser recurses without limit)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    buffer = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(buffer == ord("\n"))
    if len(ends) < lines:  # the last line has no terminator
        ends = np.append(ends, len(buffer))
    starts = np.r_[0, ends[:-1] + 1]
    if (ends <= starts).any():
        return None
    last = buffer[ends - 1]
    last = np.where((last == ord("\r")) & (ends - 2 >= starts), buffer[ends - 2], last)
    if not ((buffer[starts] == ord("{")).all() and (last == ord("}")).all()):
        return None
    try:
        table = pj.read_json(pa.py_buffer(data), read_options=pj.ReadOptions(
            use_threads=False, block_size=len(data) + 1))
    except (ValueError, pa.ArrowException):
        return None
    if table.num_rows != lines or any(kind != pa.string() for kind in table.schema.types) \
            or any(column.null_count for column in table.columns):
        return None
    return table


def jsonl_objects(path: str | Path) -> Iterator[tuple[int, dict]]:
    """``(line, object)`` of a JSONL file, raising on the first bad line."""
    for number, _, record in iter_jsonl(path):
        if isinstance(record, LineError):
            raise record
        yield number, record


# ---------------------------------------------------------------- CSV / TSV
class _Lines:
    """Feeds ``csv.reader`` physical lines while remembering their numbers and texts."""

    def __init__(self, lines: Iterable[tuple[int, str]]):
        self._lines = iter(lines)
        self.number = 0
        self.current: list[str] = []

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        self.number, text = next(self._lines)
        self.current.append(text)
        return text + "\n"


def _swallowed_row(lines: list[str], delimiter: str, n_columns: int) -> int | None:
    """Index of the first line swallowed whole by a quote opened and never closed on its line,
    or None for a valid quoted field holding newlines (RFC 4180).

    The sign: read with the quote as a plain character, the record's first line is already a
    whole row (as many fields as the header), and a line strictly inside the quoted field looks
    like a row of its own (as many delimiters as a row has). The last line, where a legitimate
    multi-line field closes and the row's other fields follow, is never counted."""
    if n_columns < 2 or len(lines) < 3:
        return None
    first = next(csv.reader([lines[0]], delimiter=delimiter, quoting=csv.QUOTE_NONE))
    if len(first) < n_columns:
        return None
    return next((k for k, text in enumerate(lines[1:-1], start=1)
                 if text.count(delimiter) >= n_columns - 1), None)


def _check_header(names: list[str], path: Path, delimiter: str, line: int) -> None:
    """Refuse a header that names one column twice (each row kept only the last one's value,
    silently); blank names (a spreadsheet's trailing empty columns) are never read."""
    seen: dict[str, int] = {}
    for number, name in enumerate(names, start=1):
        if name.strip() and name in seen:
            raise UserError(f"malformed {'CSV' if delimiter == ',' else 'TSV'} header: the "
                            f"column {name!r} occurs twice (columns {seen[name]} and {number}); "
                            "rename one", path=str(path), line=line)
        seen.setdefault(name, number)


def iter_delimited(path: str | Path, delimiter: str) -> Iterator[tuple[int, str, dict | LineError]]:
    """``(line, JSON of the row, row or LineError)`` for every row of a CSV/TSV file with a
    header."""
    path = Path(path)
    lines = _Lines(open_lines(path))
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    header: list[str] | None = None
    while True:
        lines.current = []
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            start = lines.number - len(lines.current) + 1
            message = str(exc)
            if "field larger than field limit" in message:
                message = f"a field is longer than {csv.field_size_limit():,} characters"
            elif "unexpected end of data" in message:
                message = "a quote is opened and never closed (unbalanced quote)"
            elif len(lines.current) > 1:
                message = (f"unbalanced quote: the quoted field opened here runs on to line "
                           f"{lines.number} ({message})")
            raise UserError(f"malformed {'CSV' if delimiter == ',' else 'TSV'}: {message}",
                            path=str(path), line=start) from None
        start = lines.number - len(lines.current) + 1
        if not values or values == [""] and len(lines.current) == 1:
            continue
        if header is None:
            _check_header(values, path, delimiter, start)
            header = values
            continue
        if len(lines.current) > 1:
            swallowed = _swallowed_row(lines.current, delimiter, len(header))
            if swallowed is not None:
                raise UserError(f"unbalanced quote: the quoted field opened here runs over "
                                f"line {start + swallowed}, which looks like a row of its own "
                                '(close the quote, or write a literal quote as "")',
                                path=str(path), line=start)
        if len(values) != len(header):
            yield start, "", LineError(f"expected {len(header)} columns, found {len(values)}",
                                       path=str(path), line=start)
            continue
        row = dict(zip(header, values))
        yield start, json.dumps(row, ensure_ascii=False), row


def iter_records(path: str | Path, raw: bool = True
                 ) -> Iterator[tuple[int, str, dict | LineError]]:
    """``(line, raw, record)`` for every non-empty record of ``path`` (format from its name);
    ``raw=False``: Parquet rows come without their JSON rendering (``""``), for readers into
    compact columns, which never keep it (easy/hard records re-read it)."""
    path = Path(path)
    fmt = file_format(path)
    check_regular_file(path)
    if fmt == "jsonl":
        return iter_jsonl(path)
    if fmt == "parquet":
        return parquet_records(path, raw)
    return iter_delimited(path, "," if fmt == "csv" else "\t")


def parquet_records(path: Path, raw: bool = True) -> Iterator[tuple[int, str, dict]]:
    """``(row number, raw, record)`` of a Parquet file, one record batch in memory at a time
    (pyarrow); ``raw``: the row's JSON rendering, as for CSV (else ``""``)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError("reading Parquet needs pyarrow: pip install pyarrow") from None
    try:
        number = 0
        for batch in pq.ParquetFile(path).iter_batches(batch_size=PARQUET_BATCH):
            for row in batch.to_pylist():
                number += 1
                yield number, json.dumps(row, ensure_ascii=False, default=str) if raw else "", row
    except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
        raise UserError(f"cannot read Parquet file: {exc}", path=str(path)) from None


def read_table(path: str | Path) -> pd.DataFrame:
    """A CSV/TSV file (optionally .gz) as a DataFrame, read by :func:`iter_delimited` (so every
    check above applies and errors name the line); a column whose non-empty cells are all
    numbers becomes numeric, empty cells NaN (the ``pandas.read_csv`` inference). The index is
    the line each row starts on (a quoted cell may span lines), for errors about a row."""
    import pandas as pd

    path = Path(path)
    if file_format(path) not in ("csv", "tsv"):
        raise UserError("expected a .csv or .tsv file (optionally .gz)", path=str(path))
    rows, lines = [], []
    header: list[str] | None = None
    for number, _, row in iter_records(path):
        if isinstance(row, LineError):
            raise row
        header = header or list(row)
        rows.append(list(row.values()))
        lines.append(number)
    if header is None:
        raise UserError("no rows (an empty file or a header only)", path=str(path))
    frame = pd.DataFrame(rows, columns=header, index=lines)
    for column in frame.columns:
        text = frame[column].replace("", None)
        numbers = pd.to_numeric(text, errors="coerce")
        if numbers.notna().sum() == text.notna().sum():
            frame[column] = numbers
    return frame
