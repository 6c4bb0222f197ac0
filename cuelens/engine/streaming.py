"""The streaming local engine: shards read record by record through the loader's normalisation
into compact columns, the Dataset ``load_dataset`` gives (docs/large-datasets.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain
from pathlib import Path

from cuelens.data.compact import CompactSplit, ShardFiller
from cuelens.data.dataset import Dataset, Split
from cuelens.data.loading import _dataset_name, assemble_dataset, directory_name, split_entries
from cuelens.data.readers import LineError, RecordTable, file_format, is_data_file, iter_records
from cuelens.data.schema import FieldMap, detect_task
from cuelens.data.splits import NO_ITEMS, ROLES
from cuelens.engine.sources import Record, is_glob, shard_paths, source_pieces
from cuelens.errors import UserError

SplitReader = Callable[[str, str, FieldMap, "str | None", bool], CompactSplit]


def resolve_sources(data: str | None, train: str | None = None,
                    test: str | None = None) -> tuple[dict[str, str], str, str]:
    """``(role → source, dataset name, format)`` of the data arguments (no Hugging Face)."""
    if (data is None) == (train is None and test is None):
        raise UserError("give exactly one of: DATA (a file, directory or glob) or --train/--test")
    if data is None:
        if not (train and test):
            raise UserError("--train and --test must be given together")
        first = shard_paths(train)[0]
        return {"train": train, "test": test}, _dataset_name(Path(train)), file_format(first)
    if is_glob(data):
        first = shard_paths(data)[0]
        folder = Path(data).parent
        return {"all": data}, directory_name(folder) if folder.name else first.stem, \
            file_format(first)
    path = Path(data)
    if not path.exists():
        raise UserError("file or directory not found", path=data)
    if not path.is_dir():
        return {"all": data}, _dataset_name(path), file_format(path)
    roles = {role: str(entry) for role, entry in
             split_entries(path, lambda entry: entry.is_dir() or is_data_file(entry)).items()}
    return roles or {"all": data}, _dataset_name(path), "directory"


def peek_task(records: Iterator, fields: FieldMap) -> tuple[Iterator, str | None]:
    """The task of the first parsable record (of records or
    :class:`~cuelens.data.readers.RecordTable` blocks), and the records with it put back."""
    seen: list = []
    for item in records:
        seen.append(item)
        record = item.table.slice(0, 1).to_pylist()[0] if isinstance(item, RecordTable) \
            else item[2]
        if not isinstance(record, LineError):
            return chain(seen, records), detect_task(record, fields)
    return iter(seen), None


def shard_records(shards: list[Path], fields: FieldMap, task: str | None, skip_bad: bool,
                  skipped: dict[str, int], pieces: bool = False
                  ) -> Iterator[tuple[int, Path, Iterator[Record], str]]:
    """``(index, path, records, task)`` of each shard. ``task`` None: the task of the first
    parsable record; leading shards holding only bad lines raise the first one (or, with
    ``skip_bad``, are skipped, their lines counted in ``skipped``). ``pieces``: a JSONL
    shard's records in blocks where they parse whole (:func:`~cuelens.engine.sources.source_pieces`,
    for :class:`~cuelens.data.compact.ShardFiller`)."""
    for index, path in enumerate(shards):
        records: Iterator = source_pieces(path) if pieces else iter_records(path,
                                                                                   raw=False)
        if task is None:
            records, task = peek_task(records, fields)
            if task is None:
                for _, _, error in records:  # only bad lines: stop on the first (or skip all)
                    if not skip_bad:
                        raise error
                    skipped["malformed line"] = skipped.get("malformed line", 0) + 1
                continue
        yield index, path, records, task


def add_skipped(into: dict[str, int], skipped: dict[str, int]) -> None:
    for reason, count in skipped.items():
        into[reason] = into.get(reason, 0) + count


def read_compact_split(source: str, role: str, fields: FieldMap, task: str | None,
                       skip_bad: bool) -> CompactSplit:
    """Read every shard of ``source`` into one :class:`CompactSplit`, streaming."""
    shards = shard_paths(source)
    split: CompactSplit | None = None
    lost: dict[str, int] = {}
    for index, path, records, found in shard_records(shards, fields, task, skip_bad, lost,
                                                     pieces=True):
        if split is None:
            split = CompactSplit(role, source, found, shards, iter_records)
        split.shard = index
        ShardFiller(records, path, fields, skip_bad).fill(split)
    if split is None or len(split) == 0:
        raise UserError(NO_ITEMS, path=source)
    add_skipped(split.skipped, lost)
    return split


def load_streaming(data: str | None = None, *, train: str | None = None,
                   test: str | None = None, fields: FieldMap = FieldMap(),
                   skip_bad: bool = False,
                   reader: SplitReader = read_compact_split) -> Dataset:
    """The :class:`Dataset` of the data arguments, read by ``reader`` (one split at a time)."""
    sources, name, fmt = resolve_sources(data, train, test)
    loaded: dict[str, Split] = {}
    task = None
    for role in ROLES:
        if role in sources:
            loaded[role] = split = reader(sources[role], role, fields, task, skip_bad)
            task = task or split.task
    return assemble_dataset(loaded, name, fmt, skip_bad)
