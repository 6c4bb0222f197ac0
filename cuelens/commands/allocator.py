"""Give freed memory back to the operating system promptly (glibc; docs/large-datasets.md).

glibc serves allocations above its *mmap threshold* with their own memory mappings, returned to
the system when freed, and smaller ones from the heap, where freed blocks between live ones stay
resident. The threshold is dynamic: freeing a mapped block raises it to that block's size (up
to 32 MiB), so after the first big temporary, every numpy array below that size lives on the
heap. A scan allocates and frees such arrays per fold, and at 2 million items its resident size
rose ~340 MB above its live data this way. Pinning the threshold (and the trim threshold) at
16 MiB keeps the large arrays mapped and unmapped on free; lower values save a little more
memory but pay for it in page faults (docs/BENCHMARKS.md, "glibc thresholds").
Only the command line does this: it is a process-wide setting, not the library's to change.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt parameters, <malloc.h>
THRESHOLD = 16 * 1024 * 1024
ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")


def release_memory_promptly() -> bool:
    """Pin glibc's mmap and trim thresholds at :data:`THRESHOLD`; False where there is no glibc
    ``mallopt`` or the user set either threshold in the environment (theirs wins)."""
    if any(name in os.environ for name in ENVIRONMENT):
        return False
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    return all(mallopt(parameter, THRESHOLD) == 1
               for parameter in (M_MMAP_THRESHOLD, M_TRIM_THRESHOLD))
