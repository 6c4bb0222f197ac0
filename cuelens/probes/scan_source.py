"""Reuse a previous ``audit scan`` output directory: its results and its easy/hard split.

``results.json`` supplies the cues (and ICQ ``features`` when present); ``easy.jsonl`` /
``hard.jsonl`` hold the original test records, matched back to the test items by their exact
record text (ids may repeat across files; the raw line cannot lie about the item).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cuelens.data.dataset import Dataset
from cuelens.errors import UserError


def _raw_lines(path: Path) -> set[str]:
    if not path.is_file():
        raise UserError("scan directory lacks this file (run `audit scan` first)", path=str(path))
    with path.open(encoding="utf-8") as handle:
        return {line.rstrip("\n") for line in handle if line.strip()}


def load_scan_dir(directory: str | Path, dataset: Dataset) -> tuple[dict, np.ndarray]:
    """Results and per-test-item easy mask of the scan in ``directory``, checked against
    ``dataset`` (same task, every test item in exactly one of easy/hard)."""
    directory = Path(directory)
    results_path = directory / "results.json"
    if not results_path.is_file():
        raise UserError("not a scan output directory (no results.json)", path=str(directory))
    try:
        results = json.loads(results_path.read_text(encoding="utf-8"))
        task = results["dataset"]["task"]
        if not isinstance(results["cues"], list) or not isinstance(results["config"]["ngrams"],
                                                                   int):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        raise UserError("malformed scan results (schema 1.0 expected)",
                        path=str(results_path)) from None
    if task != dataset.task:
        raise UserError(f"the scan is of a {task} dataset, the data given is {dataset.task}",
                        path=str(results_path))
    easy, hard = _raw_lines(directory / "easy.jsonl"), _raw_lines(directory / "hard.jsonl")
    item_easy = np.asarray([raw in easy for raw in dataset.test.raw], dtype=bool)
    in_hard = np.asarray([raw in hard for raw in dataset.test.raw], dtype=bool)
    unmatched = int((~(item_easy | in_hard)).sum())
    if unmatched:
        raise UserError(f"{unmatched} test item(s) are in neither easy.jsonl nor hard.jsonl: "
                        "the scan was made from different data", path=str(directory))
    return results, item_easy
