"""Time and peak memory of ``audit scan`` on generated preference pairs (docs/BENCHMARKS.md).

Runs the CLI's library path (:func:`cuelens.scan` then ``save``) on a file of
benchmarks/preference_data.py, printing each progress stage's first and last call with the
elapsed seconds, then the total and the peak RSS of this process (``resource.getrusage``).
``--shortcuts-only``: only the preference-specific part — read the pairs, lay out the responses
(:func:`~cuelens.data.preference.as_dataset`), the ``preference`` section and the per-subset
shortcut cells — without the word-cue scan of the responses.

    python benchmarks/preference_data.py /tmp/pairs1m.jsonl --pairs 1000000
    python benchmarks/preference_bench.py /tmp/pairs1m.jsonl --out /tmp/pairs1m-out
    python benchmarks/preference_bench.py /tmp/pairs1m.jsonl --out /tmp/x --shortcuts-only
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

import cuelens
from cuelens.audit.preference import preference_section, shortcut_rows, shortcut_scores
from cuelens.audit.subsets import preference_cells
from cuelens.data.preference import as_dataset, load_preferences


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--shortcuts-only", action="store_true")
    args = parser.parse_args()
    started = time.time()
    seen: dict[str, float] = {}

    def progress(stage: str, fraction: float) -> None:
        if stage not in seen or fraction >= 1.0:
            seen[stage] = fraction
            sys.stdout.write(f"{time.time() - started:8.1f} s  {stage} {fraction:.2f}\n")
            sys.stdout.flush()

    if args.shortcuts_only:
        shortcuts_only(args.data, progress)
    else:
        result = cuelens.scan(args.data, progress=progress)
        result.save(args.out)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
    print(f"total {time.time() - started:.1f} s, peak RSS {peak:.2f} GB")


def shortcuts_only(data: Path, progress) -> None:
    """The preference-specific stages of a scan, each reported through ``progress``."""
    preferences = load_preferences(data)
    progress("read", 1.0)
    dataset = as_dataset(preferences)
    progress(f"responses laid out ({len(dataset.test):,})", 1.0)
    scores = {role: shortcut_scores(split) for role, split in preferences.splits.items()}
    progress("shortcut scores", 1.0)
    preference_section(preferences.splits, preferences.splits["all"].shape, scores)
    progress("preference section (rows, pair checks)", 1.0)
    subsets = np.asarray(preferences.splits["all"].subsets, dtype=object)
    for name in sorted(set(subsets)):
        preference_cells(shortcut_rows(scores["all"], np.flatnonzero(subsets == name)))
    progress("subset cells", 1.0)


if __name__ == "__main__":
    main()
