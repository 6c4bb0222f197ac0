"""How often `audit compare` calls a change in the significant cues or the data hygiene where
there is none (docs/methods.md §18; docs/BENCHMARKS.md §2.9).

Null pairs from real SNLI text and labels, two conditions, ``--reps`` seeds each:

- ``nested``: SNLI dev against a random half of it (what a random filter gives);
- ``disjoint``: SNLI dev + test pooled, shuffled and cut into two halves.

Each pair is scanned with ``--features none`` (cross-validated, default settings) and compared;
printed per condition: how often the ``significant cues`` dimension is not ``same`` (the per-cue
change test), how often the counts of significant cues differ (what the dimension compared
before), how often the ``data hygiene`` dimension is not ``same`` (the per-count rate test) and
how often some hygiene count differs or grew (what it compared before: worse when any grew),
and the overall statuses.
Example:

    python benchmarks/compare_calibration.py --reps 20
"""

from __future__ import annotations

import argparse
import collections
import json
import random
from pathlib import Path

import cuelens
from cuelens.audit.compare import compare_scans

SNLI = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "snli"


def _records(name: str) -> list[dict]:
    with open(SNLI / f"{name}.jsonl", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _scan(records: list[dict]) -> dict:
    return cuelens.scan(records, features="none").results


def _pairs(condition: str, seeds: range):
    dev = _records("dev")
    if condition == "nested":
        full = _scan(dev)
        for seed in seeds:
            yield full, _scan(random.Random(seed).sample(dev, len(dev) // 2))
    else:
        pooled = dev + _records("test")
        for seed in seeds:
            shuffled = random.Random(seed).sample(pooled, len(pooled))
            half = len(shuffled) // 2
            yield _scan(shuffled[:half]), _scan(shuffled[half:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--conditions", default="nested,disjoint")
    parser.add_argument("--first-seed", type=int, default=0,
                        help="seeds first-seed … first-seed + reps − 1 (a run in parts)")
    args = parser.parse_args()
    for condition in args.conditions.split(","):
        cue_status, counts_differ, overall = collections.Counter(), 0, collections.Counter()
        hygiene_status, hygiene_differ, hygiene_grew = collections.Counter(), 0, 0
        for before, after in _pairs(condition, range(args.first_seed,
                                                     args.first_seed + args.reps)):
            result = compare_scans(before, after)
            dimension = next(d for d in result["dimensions"] if d["name"] == "significant cues")
            cue_status[dimension["status"]] += 1
            counts_differ += result["before"]["n_significant_cues"] != \
                result["after"]["n_significant_cues"]
            hygiene = next(d for d in result["dimensions"] if d["name"] == "data hygiene")
            hygiene_status[hygiene["status"]] += 1
            old, new = result["before"]["hygiene"], result["after"]["hygiene"]
            hygiene_differ += old != new
            hygiene_grew += any(new[key] > old[key] for key in old)
            overall[result["status"]] += 1
        changed = args.reps - cue_status["same"]
        print(f"{condition}: significant cues not 'same' {changed}/{args.reps} "
              f"({dict(cue_status)}); counts of significant cues differ "
              f"{counts_differ}/{args.reps}; data hygiene not 'same' "
              f"{args.reps - hygiene_status['same']}/{args.reps} ({dict(hygiene_status)}); "
              f"hygiene counts differ {hygiene_differ}/{args.reps} (one grew in "
              f"{hygiene_grew}); overall {dict(overall)}",
              flush=True)


if __name__ == "__main__":
    main()
