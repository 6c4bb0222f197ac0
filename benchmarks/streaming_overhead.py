"""What `--stats streaming` costs apart from its folds (issue 26; docs/large-datasets.md).

The word audit (cues, leakage table with its interval, easy/hard: the part of a scan whose
model fits depend on the folds) of one file, three ways, interleaved, CPU seconds of each:

- **exact**: the in-memory token store with the exact scan's grouped folds (`audit scan`);
- **streamed, exact folds**: the same passes over chunks spilled to disk (memory-mapped), with
  the exact scan's own folds and sampling order, so it fits the same models on the same samples
  and its results are identical (asserted): the difference from *exact* is the cost of streaming;
- **streamed, hashed folds**: what `--stats streaming` runs. Its folds differ, so its models (and
  the headline whose re-seeded refits make up the easy/hard runs) differ, and with them the
  solvers' iteration counts: the difference from *streamed, exact folds* is the cost of the data.

Loading, tokenising, hygiene and writing are not timed (`benchmarks/compare_peers.py` times whole
scans). The process shares one malloc arena, as `audit scan` does.

Usage: python benchmarks/streaming_overhead.py FILE [--repeats 3] [--work-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from cuelens.audit.config import ScanConfig
from cuelens.audit.scan import word_audit
from cuelens.audit.folds import HashedFolds
from cuelens.audit.chunked_data import held_data, load_chunked
from cuelens.commands.allocator import share_one_arena
from cuelens.data.schema import FieldMap
from cuelens.engine.streaming import load_streaming


def _cpu(run) -> tuple[float, object]:
    start = time.process_time()
    result = run()
    return time.process_time() - start, result


def _same(a, b) -> bool:
    """The results the folds decide: cues, leakage table and interval, easy/hard split."""
    def fields(audit):
        leakage = {k: v for k, v in audit.leakage.to_json().items() if k != "groups"}
        return audit.cues, audit.cue_stats, leakage, audit.easy_hard, audit.item_easy.tolist()
    return fields(a) == fields(b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--work-dir", default=None)
    args = parser.parse_args()
    share_one_arena()
    config = ScanConfig()
    held, grouped = held_data(load_streaming(args.file), config)
    memory = held.store
    with tempfile.TemporaryDirectory(dir=args.work_dir) as work:
        chunked = load_chunked(args.file, None, None, FieldMap(), False, config, Path(work))
        spilled, labels = chunked.store, chunked.label_names
        runs = {
            "exact": lambda: word_audit(memory, labels, config, replace(grouped, _cache={}), {}),
            "streamed, exact folds": lambda: word_audit(spilled, labels, config,
                                                        replace(grouped, _cache={}), {}),
            "streamed, hashed folds": lambda: word_audit(
                spilled, labels, config,
                HashedFolds(max(2, config.folds), config.folds, config.seed), {}),
        }
        seconds: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.repeats):
            audits = {}
            for name, run in runs.items():
                cpu, audits[name] = _cpu(run)
                seconds[name].append(round(cpu, 2))
            assert _same(audits["exact"], audits["streamed, exact folds"]), \
                "streamed with the exact folds must reproduce the exact word audit"
    median = {name: statistics.median(values) for name, values in seconds.items()}
    print(json.dumps({"file": args.file, "cpu_seconds": seconds, "median": median,
                      "streaming_cost": round(median["streamed, exact folds"]
                                              / median["exact"], 3),
                      "hashed_folds_cost": round(median["streamed, hashed folds"]
                                                 / median["streamed, exact folds"], 3)},
                     indent=1))


if __name__ == "__main__":
    main()
