"""Reuse a previous ``audit scan`` output directory: its results and its easy/hard split.

``results.json`` supplies the cues (and ICQ ``features`` when present); ``easy.jsonl`` /
``hard.jsonl`` hold the original test records, matched back to the test items by their exact
record text (ids may repeat across files; the raw line cannot lie about the item).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cuelens.data.dataset import Dataset
from cuelens.data.readers import open_lines
from cuelens.errors import UserError
from cuelens.reports.render import load_results
from cuelens.reports.schema import validate_results


def _raw_lines(path: Path) -> set[str]:
    if not path.is_file():
        raise UserError("scan directory lacks this file (run `audit scan` first)", path=str(path))
    return {line for _, line in open_lines(path) if line.strip()}


def load_scan_dir(directory: str | Path, dataset: Dataset) -> tuple[dict, np.ndarray]:
    """Results and per-test-item easy mask of the scan in ``directory``, checked against
    ``dataset`` (same task, every test item in exactly one of easy/hard). ``results.json`` must
    follow the results schema (docs/results-schema.md) and hold the scan sections."""
    directory = Path(directory)
    results_path = directory / "results.json"
    if not results_path.is_file():
        raise UserError("not a scan output directory (no results.json)", path=str(directory))
    results = load_results(results_path)
    validate_results(results, source=str(results_path))
    if not all(key in results for key in ("dataset", "cues", "config")):
        raise UserError("not a scan results file (no dataset/cues/config sections)",
                        path=str(results_path))
    task = results["dataset"]["task"]
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
