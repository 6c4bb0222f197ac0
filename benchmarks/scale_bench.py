"""Scale benchmark of the scan engines (issue 16): generated NLI in Parquet shards.

For each size (default 1M, 10M, 50M items) the data is generated once
(:mod:`benchmarks.scale_data`: ``make_nli`` shards of ``--shard-items``, 30,000-type vocabulary,
planted cues) under ``--data-dir``, then ``audit scan DIR --features none --item-files ids`` runs
in a fresh process per engine; wall time, CPU time and the peak RSS of the process tree
(``getrusage(RUSAGE_CHILDREN)``, i.e. the largest single process) are appended as one JSON line
to ``--results``, with the load average before and after. Ray runs on a local cluster started
by the scan itself (``--engine ray``; all local CPUs).

    python benchmarks/scale_bench.py --sizes 1000000 --engines local ray --results scale.jsonl
    nohup python benchmarks/scale_bench.py --sizes 10000000 50000000 --engines local &
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_data import generate  # noqa: E402


def ensure_data(root: Path, items: int, shard_items: int) -> Path:
    directory = root / f"nli-{items}"
    done = directory / ".complete"
    if not done.exists():
        generate(directory, items, shard_items, "parquet")
        done.write_text("ok\n")
    return directory


def run_scan(data: Path, engine: str, out: Path) -> dict:
    """One scan in a child process: wall s, CPU s and peak RSS (MB) of the child."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    command = [sys.executable, "-m", "cuelens.cli", "scan", str(data), "--engine", engine,
               "--features", "none", "--item-files", "ids", "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"scan failed ({engine}, {data}):\n{done.stdout[-2000:]}\n"
                         f"{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "peak_rss_mb": round(after.ru_maxrss / 1024), "load_before": round(load, 2),
            "load_after": round(os.getloadavg()[0], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000,
                                                                 50_000_000])
    parser.add_argument("--engines", nargs="+", default=["local", "ray"])
    parser.add_argument("--shard-items", type=int, default=250_000)
    parser.add_argument("--data-dir", type=Path, default=Path("scale-data"))
    parser.add_argument("--results", type=Path, default=Path("scale_bench.jsonl"))
    args = parser.parse_args()
    for items in args.sizes:
        data = ensure_data(args.data_dir, items, args.shard_items)
        shards = len(list(data.glob("*.parquet")))
        for engine in args.engines:
            row = {"items": items, "shards": shards, "engine": engine,
                   **run_scan(data, engine, args.data_dir / f"out-{items}-{engine}"),
                   "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            row["us_per_item"] = round(row["wall_s"] / items * 1e6, 2)
            print(json.dumps(row), flush=True)
            with open(args.results, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
