"""Report size, render time and page-load time in headless Chromium (docs/BENCHMARKS.md).

Usage: .venv/bin/python benchmarks/report_bench.py RESULTS.json [...] [--runs 5]
Renders each results file RUNS times (a new file each time, so Chromium has no code cache for
it), opens each from file:// and prints the median seconds from navigation start to: first
contentful paint, page script ready, first figure drawn, every figure drawn.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))

import chromium  # noqa: E402

from cuelens.reports import load_results, render_report  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    out_dir = Path(tempfile.mkdtemp(prefix="report-bench-"))
    with chromium.start() as browser:
        for path in args.results:
            results = load_results(path)
            renders, pages = [], []
            for run in range(args.runs):  # a new file per run: no code cache from earlier opens
                begun = time.perf_counter()
                pages.append(render_report(results, out_dir / f"{path.parent.name}-{run}.html"))
                renders.append(time.perf_counter() - begun)
            loads = [browser.open(page, timeout=120) for page in pages]
            page = pages[0]
            assert all(not load.console and not load.requests for load in loads)
            med = {k: statistics.median(getattr(x, k) for x in loads)
                   for k in ("paint", "interactive", "first_figure", "seconds")}
            print(f"{path}: {page.stat().st_size / 2**20:.2f} MiB, render "
                  f"{statistics.median(renders):.2f} s; in Chromium: first paint {med['paint']:.2f} s, "
                  f"ready {med['interactive']:.2f} s, "
                  f"first figure {med['first_figure']:.2f} s, all figures {med['seconds']:.2f} s "
                  f"(median of {args.runs})")


if __name__ == "__main__":
    main()
