"""Scale benchmark of the scan engines (issue 16): generated NLI in Parquet shards.

For each size (default 1M, 10M, 50M items) the data is generated once
(:mod:`benchmarks.scale_data`: ``make_nli`` shards of ``--shard-items``, 30,000-type vocabulary,
planted cues) under ``--data-dir``, then ``audit scan DIR --features none --item-files ids`` runs
in a fresh process per engine; wall time, CPU time (of the scan process and of its whole process
tree, Ray's raylet, GCS and workers included, sampled from /proc every 0.5 s), the peak RSS of
the scan (driver) process (and its heap: resident less shared memory, i.e. without the Ray
object store's pages it has read) and of the whole tree, and a digest of
results.json are appended as one JSON line to ``--results``, with the load average before and
after. Ray runs on a local cluster started by the scan itself (``--engine ray``; all local CPUs:
with ``--stats streaming`` the statistics' passes run on its workers).

    python benchmarks/scale_bench.py --sizes 1000000 --engines local ray --results scale.jsonl
    nohup python benchmarks/scale_bench.py --sizes 10000000 50000000 --engines local &
    python benchmarks/scale_bench.py --sizes 1000000 10000000 50000000 --engines local \
        --stats streaming     # statistics that stream (docs/large-datasets.md)
    python benchmarks/scale_bench.py --sizes 1000000 --engines local ray --stats streaming \
        --repeat 3            # Ray runs the passes (issue 24)
"""

from __future__ import annotations

import argparse
import hashlib
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


def tree_sample(root: int) -> dict[int, tuple[float, float, bool]]:
    """Process ``root`` and all its descendants (Ray's raylet, GCS and workers included), read
    from /proc: pid → (resident memory in MB, CPU seconds of the process itself, user + sys,
    whether it is a Ray worker: named ``ray::…``)."""
    parent, usage = {}, {}
    page, tick = os.sysconf("SC_PAGE_SIZE"), os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                name, rest = handle.read().split(b"(", 1)[1].rsplit(b")", 1)
                fields = rest.split()
            with open(f"/proc/{entry}/statm", "rb") as handle:
                rss = int(handle.read().split()[1]) * page / 2**20
        except (OSError, IndexError, ValueError):
            continue
        parent[int(entry)] = int(fields[1])
        usage[int(entry)] = (rss, (int(fields[11]) + int(fields[12])) / tick,
                             name.startswith(b"ray::"))
    tree, frontier = {root}, [root]
    while frontier:
        frontier = [pid for pid, ppid in parent.items() if ppid in frontier and pid not in tree]
        tree.update(frontier)
    return {pid: usage[pid] for pid in tree if pid in usage}


def peak_rss_mb(pid: int) -> float:
    """The high-water mark of ``pid``'s resident memory (VmHWM), MB; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def heap_mb(pid: int) -> float:
    """``pid``'s resident memory less its shared pages (statm resident − shared), MB: Ray's
    "heap" of a process, without the object store's shared memory that it has read (which the
    OS counts in every process that maps it); 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            fields = handle.read().split()
    except OSError:
        return 0.0
    return (int(fields[1]) - int(fields[2])) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_scan(data: Path, engine: str, stats: str, out: Path) -> dict:
    """One scan in a child process: wall s; CPU s of the child and its waited descendants
    (``getrusage``), of the scan (driver) process alone, of Ray's workers and of the whole
    process tree (each process's own CPU, sampled from /proc every 0.5 s: Ray's workers are not
    waited children; the last 0.5 s of each process is missed); peak RSS of the scan
    (driver) process (VmHWM), its peak heap (:func:`heap_mb`, sampled) and the peak of the
    whole tree (summed, sampled); the results.json digest."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    command = [sys.executable, "-m", "cuelens.cli", "scan", str(data), "--engine", engine,
               "--stats", stats, "--features", "none", "--item-files", "ids", "--out", str(out)]
    with open(out.with_suffix(".log"), "w", encoding="utf-8") as log:
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                 env={**os.environ, "OMP_NUM_THREADS": "1"})
        tree_peak, driver_peak, driver_heap, cpu_of, workers = 0.0, 0.0, 0.0, {}, set()
        while child.poll() is None:
            sample = tree_sample(child.pid)
            tree_peak = max(tree_peak, sum(rss for rss, _, _ in sample.values()))
            cpu_of.update({pid: cpu for pid, (_, cpu, _) in sample.items()})
            workers.update(pid for pid, (_, _, worker) in sample.items() if worker)
            driver_peak = max(driver_peak, peak_rss_mb(child.pid))
            driver_heap = max(driver_heap, heap_mb(child.pid))
            time.sleep(0.5)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if child.returncode != 0:
        raise SystemExit(f"scan failed ({engine}, {data}): see {out.with_suffix('.log')}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    digest = hashlib.sha256((out / "results.json").read_bytes()).hexdigest()[:16]
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "driver_cpu_s": round(cpu_of.get(child.pid, 0.0), 1),
            "worker_cpu_s": round(sum(cpu_of[pid] for pid in workers), 1),
            "tree_cpu_s": round(sum(cpu_of.values()), 1),
            "driver_peak_rss_mb": round(driver_peak), "driver_peak_heap_mb": round(driver_heap),
            "tree_peak_rss_mb": round(tree_peak), "results_sha256": digest,
            "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2)}


def commit() -> str:
    """The checked-out commit (and ``+dirty`` when the tree has changes), for the record."""
    root = Path(__file__).resolve().parent.parent
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                           capture_output=True, text=True).stdout.strip()
    return head + ("+dirty" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000,
                                                                 50_000_000])
    parser.add_argument("--engines", nargs="+", default=["local", "ray"])
    parser.add_argument("--stats", nargs="+", default=["exact"], choices=["exact", "streaming"],
                        help="statistics to run (streaming: local or ray engine)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each scan, interleaved")
    parser.add_argument("--shard-items", type=int, default=250_000)
    parser.add_argument("--data-dir", type=Path, default=Path("scale-data"))
    parser.add_argument("--results", type=Path, default=Path("scale_bench.jsonl"))
    args = parser.parse_args()
    for items in args.sizes:
        data = ensure_data(args.data_dir, items, args.shard_items)
        shards = len(list(data.glob("*.parquet")))
        runs = [(engine, stats) for _ in range(args.repeat) for stats in args.stats
                for engine in args.engines if stats == "exact" or engine != "memory"]
        for engine, stats in runs:
            row = {"items": items, "shards": shards, "engine": engine, "stats": stats,
                   **run_scan(data, engine, stats,
                              args.data_dir / f"out-{items}-{engine}-{stats}"),
                   "commit": commit(),
                   "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            row["us_per_item"] = round(row["wall_s"] / items * 1e6, 2)
            row["cpu_us_per_item"] = round(row["tree_cpu_s"] / items * 1e6, 2)
            print(json.dumps(row), flush=True)
            with open(args.results, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
