"""Time and peak memory of ``data_hygiene`` alone on a loaded dataset (docs/BENCHMARKS.md,
"Hygiene at scale").

    python benchmarks/scale_data.py /tmp/hyg/p500k --items 500000 --shard-items 250000 \
        --format parquet
    OMP_NUM_THREADS=1 python benchmarks/hygiene_bench.py /tmp/hyg/p500k

Loads the data with the streaming engine, then runs ``data_hygiene`` once and prints as one JSON
line its wall time, the process's peak RSS after loading and after the call, and the per-split
counts. With ``--tracemalloc`` the call runs under ``tracemalloc`` (slower) and the peak of Python
allocations during the call is printed too. With ``--near-index`` only the near-duplicate index of
each split is timed instead: ``NearIndex`` build and ``near_pairs`` on its sampled items.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
import tracemalloc

from cuelens.audit.streamed_hygiene import data_hygiene
from cuelens.audit.hygiene_keys import ItemKeys, near_parts
from cuelens.audit.near_duplicates import NearIndex, near_items
from cuelens.engine.streaming import load_streaming


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("data")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument("--near-index", action="store_true")
    args = parser.parse_args()
    dataset = load_streaming(args.data)
    if args.near_index:
        print(json.dumps(time_near_index(dataset.splits, args.seed)))
        return
    loaded_rss = max_rss_mb()
    if args.tracemalloc:
        tracemalloc.start()
    start = time.perf_counter()
    section = data_hygiene(dataset, args.seed)
    seconds = time.perf_counter() - start
    out = {"seconds": round(seconds, 1), "loaded_rss_mb": loaded_rss, "max_rss_mb": max_rss_mb(),
           "splits": section["splits"], "near_sample": section.get("near_sample")}
    if args.tracemalloc:
        out["traced_peak_mb"] = round(tracemalloc.get_traced_memory()[1] / 2**20)
    print(json.dumps(out))


def time_near_index(splits: dict, seed: int) -> dict:
    """Per split: seconds to build its ``NearIndex`` and to list its near pairs, and the peak RSS
    after both."""
    out = {}
    for role, split in splits.items():
        items = near_items(len(split), seed)
        texts = near_parts(split, items)
        start = time.perf_counter()
        index = NearIndex(texts, seed)
        built = time.perf_counter()
        pairs = list(index.near_pairs(ItemKeys.of(split).inputs[items]))
        out[role] = {"items": len(items), "build_s": round(built - start, 2),
                     "near_pairs_s": round(time.perf_counter() - built, 2),
                     "near_pairs": len(pairs), "max_rss_mb": max_rss_mb()}
    return out


def max_rss_mb() -> int:
    """The process's peak resident set size so far (MiB; Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


if __name__ == "__main__":
    main()
