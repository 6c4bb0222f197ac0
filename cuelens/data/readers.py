"""Read raw records from JSONL / CSV / TSV files (optionally gzipped), with line numbers.

Every reader yields ``(line_number, raw_text, record)`` where ``record`` is a dict, or a
:class:`LineError` for a line that cannot be parsed (the caller decides whether to stop or skip;
a generator that raised could not go on to the next line), and ``raw_text`` is the original line
(JSONL; without its '\\n' terminator, so a CRLF line keeps its '\\r') or a JSON rendering of the
row (CSV/TSV). A UTF-8 BOM at the start of a file is accepted and dropped. Errors name the file
and line.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path

from cuelens.errors import UserError

FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv",
           ".txt": "tsv"}


class LineError(UserError):
    """A per-line problem: ``--skip-bad`` may turn it into a counted warning."""


def file_format(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    if not suffixes or suffixes[-1] not in FORMATS:
        raise UserError("unknown file format (expected .jsonl, .csv or .tsv, optionally .gz)",
                        path=str(path))
    return FORMATS[suffixes[-1]]


def _read_bytes(path: Path) -> bytes:
    if not path.exists():
        raise UserError("file not found", path=str(path))
    if path.is_dir():
        raise UserError("expected a file, got a directory", path=str(path))
    try:
        data = path.read_bytes()
        if path.suffix.lower() == ".gz":
            data = gzip.decompress(data)
    except (OSError, EOFError) as exc:
        raise UserError(f"cannot read file: {exc}", path=str(path)) from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UserError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); re-encode the file as "
                        "UTF-8", path=str(path), line=line) from None


def iter_jsonl(path: Path, text: str) -> Iterator[tuple[int, str, dict | LineError]]:
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            record = LineError(f"malformed JSON ({exc.msg} at column {exc.colno})",
                               path=str(path), line=number)
        if not isinstance(record, (dict, LineError)):
            record = LineError("expected a JSON object per line", path=str(path), line=number)
        yield number, line, record


def iter_delimited(path: Path, text: str,
                   delimiter: str) -> Iterator[tuple[int, str, dict | LineError]]:
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    if not reader.fieldnames:
        return
    line = reader.line_num
    for row in reader:
        start, line = line + 1, reader.line_num
        if None in row or any(v is None for v in row.values()):
            yield start, "", LineError(f"expected {len(reader.fieldnames)} columns",
                                       path=str(path), line=start)
            continue
        yield start, json.dumps(row, ensure_ascii=False), row


def iter_records(path: str | Path) -> Iterator[tuple[int, str, dict | LineError]]:
    """Yield ``(line, raw, record)`` for every non-empty record of ``path``."""
    path = Path(path)
    fmt = file_format(path)
    text = _decode(_read_bytes(path), path)
    if fmt == "jsonl":
        return iter_jsonl(path, text)
    return iter_delimited(path, text, "," if fmt == "csv" else "\t")
