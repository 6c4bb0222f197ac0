"""Give freed memory back to the operating system promptly (glibc; docs/large-datasets.md).

glibc serves allocations above its *mmap threshold* with their own memory mappings, returned to
the system when freed, and smaller ones from the heap, where freed blocks between live ones stay
resident. The threshold is dynamic: freeing a mapped block raises it to that block's size (up
to 32 MiB), so after the first big temporary, every numpy array below that size lives on the
heap. A scan allocates and frees such arrays per fold, and at 2 million items its resident size
rose ~340 MB above its live data this way. Pinning the threshold (and the trim threshold) at
16 MiB keeps the large arrays mapped and unmapped on free; lower values save a little more
memory but pay for it in page faults (measured with the 2,000,000-line scan, session 4; `git log -p docs/BENCHMARKS.md` has the runs).

glibc also gives threads that allocate at the same time heaps (*arenas*) of their own, and
memory freed in one arena serves only the threads that use it. A scan's model fits run on
worker threads that each build feature matrices below the threshold, so every worker arena
kept its own high-water mark; one shared arena cuts a million-item streaming scan's peak by
~100 MB for ~2% more CPU time (measured in session 22, likewise in the history of docs/BENCHMARKS.md). Commands whose threads
allocate many small objects at once (a fast tokenizer's) would queue on its lock: there, one
arena made batch tokenising twice as slow, so only the scanning commands share one.
Only the command line does this: these are process-wide settings, not the library's to change.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Callable

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -3, -8  # mallopt parameters, <malloc.h>
THRESHOLD = 16 * 1024 * 1024
ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")


def _mallopt() -> Callable[[int, int], int] | None:
    """glibc's ``mallopt``, or None where the C library has none."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return None


def release_memory_promptly() -> bool:
    """Pin glibc's mmap and trim thresholds at :data:`THRESHOLD`; False where there is no glibc
    ``mallopt`` or the user set either threshold in the environment (theirs wins)."""
    mallopt = _mallopt()
    if mallopt is None or any(name in os.environ for name in ENVIRONMENT):
        return False
    return all(mallopt(parameter, THRESHOLD) == 1
               for parameter in (M_MMAP_THRESHOLD, M_TRIM_THRESHOLD))


def share_one_arena() -> bool:
    """Let every thread started from now on allocate from one glibc arena (a scanning
    command's first step, before its worker threads exist); False where there is no glibc
    ``mallopt`` or the user set ``MALLOC_ARENA_MAX`` (theirs wins)."""
    mallopt = _mallopt()
    if mallopt is None or "MALLOC_ARENA_MAX" in os.environ:
        return False
    return mallopt(M_ARENA_MAX, 1) == 1
