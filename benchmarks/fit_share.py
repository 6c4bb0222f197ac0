"""How much of a whole `audit scan` is model fitting (issue 26; docs/large-datasets.md).

Each run is a fresh process, timed by the kernel as in `benchmarks/compare_peers.py`
(``measure``), that runs `audit scan FILE --features none [ARGS]` with scikit-learn's
`LogisticRegression.fit` and `SGDClassifier.fit` wrapped to add up the thread CPU time spent in
them (the fits run on two threads). It prints the process's CPU seconds (user + system), the
fits' share by solver and count, and the rest: what the scan would cost if every fit were free.
The medians of ``--runs`` are printed last, as JSON.

Usage: python benchmarks/fit_share.py FILE [--runs 3] [--out DIR] [-- SCAN ARGS...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_peers  # noqa: E402  (benchmarks/ is no package)


def _worker(scan_args: list[str]) -> None:
    """Run the scan in this process, fits timed; print their JSON line last on stdout."""
    import atexit

    from sklearn.linear_model import LogisticRegression, SGDClassifier

    seconds: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    lock = threading.Lock()

    def timed(cls, name: str) -> None:
        fit = cls.fit

        def wrapper(self, *args, **kwargs):
            begun = time.thread_time()
            try:
                return fit(self, *args, **kwargs)
            finally:
                key = f"{name} {getattr(self, 'solver', 'sgd')}"
                with lock:
                    seconds[key] += time.thread_time() - begun
                    calls[key] += 1

        cls.fit = wrapper

    timed(LogisticRegression, "LogisticRegression")
    timed(SGDClassifier, "SGDClassifier")

    def report() -> None:
        print(json.dumps({"fits": round(sum(seconds.values()), 2),
                          "by_solver": {key: [round(value, 2), calls[key]]
                                        for key, value in sorted(seconds.items())}}))

    atexit.register(report)
    from cuelens.cli import main

    sys.argv = ["audit", "scan", *scan_args]
    main()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", help="scan output directory (default: a temporary one)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("scan_args", nargs="*", help="more `audit scan` options, after --")
    args = parser.parse_args()
    if args.worker:
        _worker([args.file, *args.scan_args])
        return
    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or os.path.join(scratch, "scan")
        for run in range(args.runs):
            try:
                measured = compare_peers.measure(
                    [sys.executable, "-P", __file__, "--worker", args.file, "--",
                     "--features", "none", "--out", out, *args.scan_args])
            except RuntimeError as failed:
                sys.exit(str(failed))
            total = measured["cpu_s"]
            runs.append({"total": round(total, 2), "fits": measured["fits"],
                         "rest": round(total - measured["fits"], 2),
                         "by_solver": measured["by_solver"]})
            print(f"run {run + 1}/{args.runs}: {json.dumps(runs[-1])}", flush=True)
    print(json.dumps({key: statistics.median(run[key] for run in runs)
                      for key in ("total", "fits", "rest")}))


if __name__ == "__main__":
    main()
