"""Reuse a previous ``audit scan`` output directory: its results and its easy/hard split, read from
the first of the per-item table, ``easy/hard.jsonl`` or ``easy/hard.ids.txt`` it holds
(docs/api.md, "Probe options and prediction sources")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from cuelens.audit.bias_items import ITEMS_JSONL, ITEMS_PARQUET, item_table
from cuelens.audit.results import DatasetSummary
from cuelens.data.dataset import Dataset, Split, Task
from cuelens.data.readers import jsonl_objects, open_lines
from cuelens.errors import UserError
from cuelens.reports.schema import load_results, validate_results
from cuelens.wording import plural

RECORDS = ("easy.jsonl", "hard.jsonl")
IDS = ("easy.ids.txt", "hard.ids.txt")
SCAN_FILES = ("results.json", ITEMS_PARQUET, ITEMS_JSONL, *RECORDS, *IDS)  # what the probe reads


def _parquet_rows(path: Path) -> Iterator[tuple[str, object]]:
    """``(id, easy)`` of every row of items.parquet (``easy`` None: a fitting item)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=["id", "easy"]).to_pydict()
    return zip(map(str, table["id"]), table["easy"])


def _jsonl_rows(path: Path) -> Iterator[tuple[str, object]]:
    """``(id, easy)`` of every line of items.jsonl, streamed."""
    for line, row in jsonl_objects(path):
        if "id" not in row or "easy" not in row:
            raise UserError('the per-item table needs "id" and "easy"', path=str(path),
                            line=line)
        yield str(row["id"]), row["easy"]


def _unique_positions(test: Split, what: str, directory: Path) -> dict[str, int]:
    return test.positions(f"so the scan's {what} in {directory} cannot be matched to the test "
                          "items")


def _table_mask(table: Iterator[tuple[str, object]], directory: Path, test: Split) -> np.ndarray:
    rows = [(item_id, easy) for item_id, easy in table if easy is not None]
    ids = [item_id for item_id, _ in rows]
    easy = np.asarray([bool(flag) for _, flag in rows], dtype=bool)
    if ids == list(test.ids):
        return easy
    position = _unique_positions(test, "per-item table", directory)
    if len(ids) != len(test) or set(ids) != set(position):
        raise UserError(f"the per-item table's {len(ids)} evaluated items are not the "
                        f"{len(test)} test items: the scan was made from different data",
                        path=str(directory))
    out = np.zeros(len(test), dtype=bool)
    out[[position[i] for i in ids]] = easy
    return out


def _lines(path: Path) -> list[str]:
    return [line for _, line in open_lines(path) if line.strip()]


def _flags(directory: Path, keys: list[str], names: tuple[str, str], what: str) -> np.ndarray:
    """Easy mask of the items whose ``keys`` are lines of ``names`` (easy, hard)."""
    easy_lines, hard_lines = (_lines(directory / name) for name in names)
    easy, hard = set(easy_lines), set(hard_lines)
    item_easy = np.asarray([key in easy for key in keys], dtype=bool)
    unmatched = int((~item_easy & ~np.asarray([key in hard for key in keys], dtype=bool)).sum())
    n_lines = len(easy_lines) + len(hard_lines)
    if unmatched or n_lines != len(keys):
        raise UserError(f"{names[0]} and {names[1]} list {plural(n_lines, 'item')}, "
                        f"{unmatched:,} of the {plural(len(keys), 'test item')} in neither "
                        f"({what}): the scan was made from different data", path=str(directory))
    return item_easy


def scan_easy_mask(directory: str | Path, test: Split) -> np.ndarray:
    """The easy flag of every item of ``test`` from the first source of them the scan in
    ``directory`` holds (the order: docs/api.md, "Probe options and prediction sources")."""
    directory = Path(directory)

    def has(*names: str) -> bool:
        return all((directory / name).is_file() for name in names)

    table = item_table(directory)
    if table is not None:
        rows = _parquet_rows(table) if table.name == ITEMS_PARQUET else _jsonl_rows(table)
        return _table_mask(rows, directory, test)
    if has(*RECORDS):
        return _flags(directory, list(test.raw), RECORDS, "matched by record text")
    if has(*IDS):
        _unique_positions(test, "id lists", directory)
        return _flags(directory, list(test.ids), IDS, "matched by id")
    raise UserError(f"the scan directory has no per-item easy/hard flags ({ITEMS_PARQUET}, "
                    f"{ITEMS_JSONL}, {' + '.join(RECORDS)} or {' + '.join(IDS)}); rerun "
                    "`audit scan` with --item-files records or ids", path=str(directory))


def load_scan_dir(directory: str | Path, dataset: Dataset) -> tuple[dict, np.ndarray | None]:
    """Results and per-test-item easy mask of the scan in ``directory``, checked against
    ``dataset`` (same task, as many items in each split both have, every test item flagged
    once). ``results.json`` must follow the results schema (docs/results-schema.md) and hold
    the scan sections; the scan of MCQ items with different numbers of choices has no
    word-cue statistics, so no cues and no mask (None), as the probe's own scan of them."""
    directory = Path(directory)
    results_path = directory / "results.json"
    if not results_path.is_file():
        raise UserError("not a scan output directory (no results.json)", path=str(directory))
    results = load_results(results_path)
    validate_results(results, source=str(results_path))
    summary = DatasetSummary.in_results(results) if "config" in results else None
    word_cues = summary is None or summary.task != Task.MCQ or summary.n_choices is not None
    if summary is None or word_cues and "cues" not in results:
        raise UserError("not a scan results file (no dataset/cues/config sections)",
                        path=str(results_path))
    if summary.task != dataset.task:
        raise UserError(f"the scan is of a {summary.task} dataset, the data given is "
                        f"{dataset.task}", path=str(results_path))
    for role, split in dataset.splits.items():
        recorded = summary.splits.get(role)
        if recorded is not None and recorded.items != len(split):
            raise UserError(f"the scan's {role} split has {plural(recorded.items, 'item')}, the "
                            f"data given {len(split):,}: the scan was made from different data",
                            path=str(results_path))
    if word_cues:
        return results, scan_easy_mask(directory, dataset.test)
    if dataset.n_choices is not None:
        raise UserError(f"the scan's items have different numbers of choices, every item of "
                        f"the data given has {dataset.n_choices}: the scan was made from "
                        "different data", path=str(results_path))
    return results, None
