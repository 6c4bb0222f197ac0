"""Assemble and write a scan's outputs (docs/results-schema.md).

``results.json`` is deterministic (same inputs and seed → identical bytes); run metadata
(timestamp, durations, command line, versions, input paths) goes to ``run.json``. All files are
computed first and written atomically, so a failed run leaves no partial results.
"""

from __future__ import annotations

import csv
import io
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from cuelens import __version__
from cuelens.audit.metrics import METRICS
from cuelens.data.dataset import Dataset
from cuelens.io import atomic_write_text, check_outputs, dumps_json, write_json

SCHEMA_VERSION = "1.0"


def build_results(dataset: Dataset, config, audit, summary: dict, examples: dict,
                  hygiene: dict | None = None) -> dict:
    """results.json content in schema order."""
    mcq = {"mcq_baselines": audit.mcq_baselines} if audit.mcq_baselines is not None else {}
    return {"schema_version": SCHEMA_VERSION,
            "tool": {"name": "cuelens", "version": __version__},
            "config": asdict(config),
            "dataset": summary,
            **({"hygiene": hygiene} if hygiene is not None else {}),
            "cues": audit.cues,
            "cue_stats": audit.cue_stats,
            "leakage": audit.leakage,
            **mcq,
            "easy_hard": audit.easy_hard,
            "examples": examples}


def cues_csv(cues: list[dict]) -> str:
    names = list(METRICS)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["token", "label", "count", "label_count", *names])
    for cue in cues:
        writer.writerow([cue["token"], cue["label"], cue["count"], cue["label_count"],
                         *[cue["metrics"][n] for n in names]])
    return buffer.getvalue()


def scan_output_paths(out_dir: Path) -> dict[str, Path]:
    """The files a scan writes into its output directory (besides the report)."""
    return {"results": out_dir / "results.json", "cues": out_dir / "cues.csv",
            "easy": out_dir / "easy.jsonl", "hard": out_dir / "hard.jsonl",
            "run": out_dir / "run.json"}


def write_scan_outputs(out_dir: Path, dataset: Dataset, results: dict,
                       item_easy: np.ndarray | None, run_info: dict) -> dict[str, Path]:
    """Write results.json, cues.csv, easy.jsonl, hard.jsonl and run.json into ``out_dir``
    (``item_easy`` None: no word-cue statistics, so results.json and run.json only)."""
    split = dataset.test
    files = scan_output_paths(out_dir)
    if item_easy is None:
        files = {key: files[key] for key in ("results", "run")}
    check_outputs(files.values(), dataset.input_paths)
    contents = {"results": dumps_json(results)}
    if item_easy is not None:
        contents.update({
            "cues": cues_csv(results["cues"]),
            "easy": "".join(raw + "\n" for raw, e in zip(split.raw, item_easy) if e),
            "hard": "".join(raw + "\n" for raw, e in zip(split.raw, item_easy) if not e)})
    for key, text in contents.items():
        atomic_write_text(files[key], text)
    write_json(files["run"], run_info)
    return files


def run_info(started: float, argv: list[str] | None = None, **extra) -> dict:
    """Non-deterministic run metadata for run.json."""
    return {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
            "seconds": round(time.time() - started, 3),
            "argv": list(sys.argv if argv is None else argv),
            "python": platform.python_version(), "platform": platform.platform(),
            "cuelens": __version__, **extra}
