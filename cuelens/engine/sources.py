"""Input shards (a file, a directory of shards or a glob, read in sorted path order) and streaming
record readers yielding the readers' ``(line, raw, record)`` (docs/large-datasets.md)."""

from __future__ import annotations

import glob
import json
from collections.abc import Iterator
from pathlib import Path

from cuelens.data.readers import LineError, RecordTable, check_regular_file, file_format, \
    iter_records, jsonl_pieces
from cuelens.errors import UserError

PARQUET_BATCH = 65_536
Record = tuple[int, str, "dict | LineError"]


def source_format(path: Path) -> str:
    """``parquet`` for ``.parquet`` files, else the reader format of :func:`file_format`."""
    if path.suffix.lower() == ".parquet":
        return "parquet"
    return file_format(path)


def is_data_file(path: Path) -> bool:
    try:
        source_format(path)
    except UserError:
        return False
    return path.is_file()


def is_glob(text: str) -> bool:
    """Whether ``text`` is a glob pattern: it holds ``*``, ``?`` or ``[`` and names no existing
    file or directory (``data[v2].jsonl`` that exists is read as itself)."""
    return any(c in text for c in "*?[") and not Path(text).exists()


def shard_paths(source: str | Path) -> list[Path]:
    """The shard files of a source: the file itself, a directory's data files, or a glob's."""
    text = str(source)
    if is_glob(text):
        paths = [Path(p) for p in sorted(glob.glob(text)) if is_data_file(Path(p))]
        if not paths:
            raise UserError("no .jsonl/.csv/.tsv/.parquet file matches this pattern", path=text)
        return paths
    path = Path(text)
    if not path.exists():
        raise UserError("file or directory not found", path=text)
    if path.is_dir():
        paths = sorted(p for p in path.iterdir() if is_data_file(p))
        if not paths:
            raise UserError("no train/dev/test files and no .jsonl/.csv/.tsv/.parquet shards "
                            "in this directory", path=text)
        formats = {source_format(p) for p in paths}
        if len(formats) > 1:
            raise UserError(f"shards of mixed formats ({', '.join(sorted(formats))}) in this "
                            "directory", path=text)
        return paths
    source_format(path)
    return [check_regular_file(path)]


def iter_parquet_rows(path: Path, batch_size: int) -> Iterator[dict]:
    """Rows of a Parquet file as dicts, one record batch in memory at a time (pyarrow, a
    dependency of the ``cuelens[ray]`` extra)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError("reading Parquet needs pyarrow: pip install 'cuelens[ray]' "
                        "(or pip install pyarrow)") from None
    try:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_size):
            yield from batch.to_pylist()
    except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
        raise UserError(f"cannot read Parquet file: {exc}", path=str(path)) from None


def _parquet(path: Path, raw: bool) -> Iterator[Record]:
    for number, row in enumerate(iter_parquet_rows(path, PARQUET_BATCH), start=1):
        yield number, json.dumps(row, ensure_ascii=False, default=str) if raw else "", row


def iter_source_records(path: Path, raw: bool = True) -> Iterator[Record]:
    """Stream ``(line, raw, record)`` of one shard (text formats: the shared readers).

    ``raw=False``: Parquet rows come without their JSON rendering (``""``), for readers into
    compact columns, which never keep it (easy/hard records re-read it)."""
    if source_format(path) == "parquet":
        return _parquet(check_regular_file(path), raw)
    return iter_records(path)


def source_pieces(path: Path) -> Iterator[Record | RecordTable]:
    """:func:`iter_source_records` without ``raw``, but a JSONL shard's blocks of plain records
    as :class:`~cuelens.data.readers.RecordTable` where they parse whole
    (:func:`~cuelens.data.readers.jsonl_pieces`; docs/large-datasets.md)."""
    if source_format(path) == "jsonl":
        return jsonl_pieces(path)
    return iter_source_records(path, raw=False)
