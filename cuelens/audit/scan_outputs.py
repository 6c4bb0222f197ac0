"""The files a scan writes (docs/results-schema.md): their paths in the output directory, the
easy/hard item files' mode, the writers of results.json, cues.csv and the item files, and run.json.

``results.json`` is deterministic (same inputs and seed → identical bytes); run metadata
(timestamp, durations, command line, versions, input paths) goes to ``run.json``. Every file is
streamed into a temporary renamed at the end (:func:`cuelens.atomic.atomic_open`, together inside
:func:`cuelens.atomic.output_set`), so a failed run leaves no partial results.
"""

from __future__ import annotations

import csv
import platform
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from cuelens.atomic import atomic_open, atomic_open_text, write_block
from cuelens.audit.results import CueRow
from cuelens.audit.tokenize import batches
from cuelens.errors import UserError, option_name
from cuelens.jsonio import write_json
from cuelens.outputs import check_outputs
from cuelens.version import __version__


def write_cues_csv(path: Path, cues: list[CueRow], metric_names: Sequence[str]) -> None:
    """cues.csv: one row per cue (its ``metric_names`` columns in that order), streamed into the
    atomic file."""
    names = list(metric_names)
    with atomic_open_text(path) as text:
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(["token", "label", "count", "label_count", *names])
        writer.writerows([cue.token, cue.label, cue.count, cue.label_count,
                          *[cue.metrics[n] for n in names]] for cue in cues)


ITEM_FILES = ("auto", "records", "ids", "none")
RECORDS_MAX_ITEMS = 1_000_000  # above this, ``auto`` writes id lists instead of records


def item_files_mode(mode: str, n_items: int) -> str:
    """``records``/``ids``/``none`` for a requested ``--item-files`` mode."""
    if mode not in ITEM_FILES:
        raise UserError(f"{option_name('item_files')}: unknown mode {mode!r}; choose from "
                        f"{', '.join(ITEM_FILES)}")
    if mode == "auto":
        return "records" if n_items <= RECORDS_MAX_ITEMS else "ids"
    return mode


def scan_output_paths(out_dir: Path, item_files: str = "records") -> dict[str, Path]:
    """The files a scan writes into its output directory (besides the report); ``item_files``
    is a resolved :func:`item_files_mode`."""
    files = {"results": out_dir / "results.json", "cues": out_dir / "cues.csv",
             "run": out_dir / "run.json"}
    if item_files != "none":
        suffix = ".jsonl" if item_files == "records" else ".ids.txt"
        files.update(easy=out_dir / f"easy{suffix}", hard=out_dir / f"hard{suffix}")
    return files


def write_item_files(paths: tuple[Path, Path], lines: Iterable[tuple[str, bool]]) -> None:
    """Stream each ``(line, easy)`` to the easy or the hard file (both atomic), a block of
    :data:`~cuelens.audit.tokenize.BATCH` lines at a time."""
    with atomic_open(paths[0]) as easy, atomic_open(paths[1]) as hard:
        for block in batches(lines):
            for path, handle, wanted in ((paths[0], easy, True), (paths[1], hard, False)):
                texts = [line for line, is_easy in block if is_easy == wanted]
                if texts:
                    write_block(handle, path,
                                ("\n".join(texts) + "\n").encode("utf-8", "surrogatepass"))


ItemLines = Callable[[str], Iterable[tuple[str, bool]]]  # mode → (record or id, easy) per item


def write_scan_outputs(out_dir: Path, results: dict, run_info: dict, inputs: list[str],
                       items: ItemLines | None, n_items: int, item_files: str = "auto", *,
                       metric_names: Sequence[str],
                       cues: list[CueRow] | None = None) -> dict[str, Path]:
    """Write results.json, cues.csv, the easy/hard item files and run.json into ``out_dir``,
    none of them one of the ``inputs`` (``items`` None: no word-cue statistics, so results.json
    and run.json only). ``item_files``: :func:`item_files_mode` of the ``n_items`` evaluated
    items (docs/large-datasets.md, "Easy/hard item files"); ``items(mode)`` streams the lines.
    ``metric_names``: the cues.csv metric columns (:data:`cuelens.audit.metrics.METRICS`);
    ``cues``: the typed rows of ``results["cues"]`` when the caller holds them (default: read)."""
    mode = item_files_mode(item_files, n_items) if items is not None else "none"
    files = scan_output_paths(out_dir, mode)
    if items is None:
        files = {key: files[key] for key in ("results", "run")}
    check_outputs(files.values(), inputs)
    write_json(files["results"], results)
    if items is not None:
        write_cues_csv(files["cues"], CueRow.rows_in(results) if cues is None else cues,
                       metric_names)
        if mode != "none":
            write_item_files((files["easy"], files["hard"]), items(mode))
    write_json(files["run"], run_info)
    return files


def run_info(started: float, **extra) -> dict:
    """Non-deterministic run metadata for run.json."""
    return {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
            "seconds": round(time.time() - started, 3),
            "argv": list(sys.argv),
            "python": platform.python_version(), "platform": platform.platform(),
            "cuelens": __version__, **extra}
