"""Input shards (a file, a directory of shards or a glob, read in sorted path order) and streaming
record readers yielding the readers' ``(line, raw, record)`` (docs/large-datasets.md)."""

from __future__ import annotations

import glob
from collections.abc import Iterator
from pathlib import Path

from cuelens.data.readers import LineError, RecordTable, check_regular_file, file_format, \
    is_data_file, iter_records, jsonl_pieces
from cuelens.errors import UserError

Record = tuple[int, str, "dict | LineError"]


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
        formats = {file_format(p) for p in paths}
        if len(formats) > 1:
            raise UserError(f"shards of mixed formats ({', '.join(sorted(formats))}) in this "
                            "directory", path=text)
        return paths
    file_format(path)
    return [check_regular_file(path)]


def source_pieces(path: Path) -> Iterator[Record | RecordTable]:
    """:func:`~cuelens.data.readers.iter_records` without ``raw``, but a JSONL shard's blocks of
    plain records as :class:`~cuelens.data.readers.RecordTable` where they parse whole
    (:func:`~cuelens.data.readers.jsonl_pieces`; docs/large-datasets.md)."""
    if file_format(path) == "jsonl":
        return jsonl_pieces(path)
    return iter_records(path, raw=False)
