"""MCQ artifact baselines (issue 14) on the real MCQ datasets: numbers and time.

For each dataset directory (fitting split → evaluated split as `audit scan` chooses them),
prints every baseline row of :func:`cuelens.audit.mcq_baselines.mcq_baselines` (accuracy, D
with its 95% interval, p-value against chance, Bonferroni significance) and the gold-position
test per split, plus the median wall time of ``--repeats`` runs and the load average.
The choices-only BoW row needs the leakage table: it comes from `audit scan` (docs/BENCHMARKS.md).

    python benchmarks/mcq_baselines_bench.py --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from cuelens.audit.mcq_baselines import mcq_baselines
from cuelens.data.loading import load_dataset

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
DATASETS = ("copa", "arct", "roc_story_cloze", "commonsenseqa")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for name in DATASETS:
        dataset = load_dataset(str(args.data / name))
        times = []
        for _ in range(args.repeats):
            begun = time.perf_counter()
            section = mcq_baselines(dataset)
            times.append(time.perf_counter() - begun)
        roles = ", ".join(f"{r} {len(s)}" for r, s in dataset.splits.items())
        print(f"## {name} ({roles}; fitted on {section['fitted_on']}) "
              f"median {statistics.median(times):.2f} s, load {os.getloadavg()[0]:.1f}")
        for row in section["rows"]:
            extra = f" coverage {row['coverage']:.3f}" if "coverage" in row else ""
            print(f"  {row['name']:<24} acc {100 * row['accuracy']:5.1f}  "
                  f"D {100 * row['D']:+5.1f} [{100 * row['D_ci'][0]:+5.1f}, "
                  f"{100 * row['D_ci'][1]:+5.1f}]  p {row['p_value']:.3g}"
                  f"{'  *' if row['significant'] else ''}{extra}")
        for role, counts in section["gold_position"].items():
            shares = "/".join(f"{100 * s:.1f}" for s in counts["shares"])
            print(f"  gold positions {role:<5} {shares}  chi2 {counts['chi2']:.2f} "
                  f"df {counts['df']} p {counts['p_value']:.3g}"
                  f"{'  *' if counts['significant'] else ''}")


if __name__ == "__main__":
    main()
