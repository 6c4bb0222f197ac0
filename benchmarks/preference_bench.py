"""Time and peak memory of ``audit scan`` on generated preference pairs (docs/BENCHMARKS.md).

Runs the CLI's library path (:func:`cuelens.scan` then ``save``) on a file of
benchmarks/preference_data.py, printing each progress stage's first and last call with the
elapsed seconds, then the total and the peak RSS of this process (``resource.getrusage``).

    python benchmarks/preference_data.py /tmp/pairs1m.jsonl --pairs 1000000
    python benchmarks/preference_bench.py /tmp/pairs1m.jsonl --out /tmp/pairs1m-out
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import cuelens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    started = time.time()
    seen: dict[str, float] = {}

    def progress(stage: str, fraction: float) -> None:
        if stage not in seen or fraction >= 1.0:
            seen[stage] = fraction
            sys.stdout.write(f"{time.time() - started:8.1f} s  {stage} {fraction:.2f}\n")
            sys.stdout.flush()

    result = cuelens.scan(args.data, progress=progress)
    result.save(args.out)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
    print(f"total {time.time() - started:.1f} s, peak RSS {peak:.2f} GB")


if __name__ == "__main__":
    main()
