"""Memory of the grouped folds a streamed scan deals up to ``GROUPED_FOLD_INSTANCES`` (issue 55;
docs/large-datasets.md, "Statistics that stream", item 2).

For N NLI items whose premises and hypotheses are all distinct (as in the generated file of
``benchmarks/scale_data.py``: two 64-bit links an item), the union-find grouping and the folds
built from it (``GroupedFolds.over``), then the outer folds of the 8 fold seeds of a scan and the
sampling priorities. Prints the peak bytes traced while grouping (tracemalloc: numpy's arrays) and
the bytes of the arrays the folds hold afterwards, both per item.

Usage: python benchmarks/grouped_folds_memory.py 100000 1000000 5000000
"""

from __future__ import annotations

import sys
import time
import tracemalloc

import numpy as np

from cuelens.audit.folds import GroupedFolds
from cuelens.audit.groups import UNITS, break_giant, iteration_seed


def held_bytes(value) -> int:
    """Bytes of the numpy arrays reachable through dataclasses, dicts, lists and tuples."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, dict):
        return sum(map(held_bytes, value.values()))
    if isinstance(value, (list, tuple)):
        return sum(map(held_bytes, value))
    fields = getattr(value, "__dataclass_fields__", {})
    return sum(held_bytes(getattr(value, name)) for name in fields)


def measure(n: int) -> str:
    rng = np.random.default_rng(0)
    items, labels = np.arange(n), rng.integers(0, 3, n)
    links = {kind: (items, rng.integers(0, 2**63, n).astype(np.uint64)) for kind in "pt"}
    tracemalloc.start()
    started = time.process_time()
    folds = GroupedFolds.over([break_giant(n, links, UNITS["nli"])], [labels], ["all"], 5, 0)
    grouping = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    for iteration in range(8):
        folds.outer(items[:1], items[:1], iteration_seed(0, iteration))
    folds.priority(items[:1], 0)
    held = held_bytes(folds)
    return (f"{n:,} items: grouping peak {grouping / 1e6:.0f} MB ({grouping / n:.0f} B/item), "
            f"folds held {held / 1e6:.1f} MB ({held / n:.1f} B/item), "
            f"{time.process_time() - started:.2f} CPU-s")


if __name__ == "__main__":
    for size in sys.argv[1:] or ["100000", "1000000"]:
        print(measure(int(size)))
