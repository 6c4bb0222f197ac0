"""Give freed memory back to the operating system promptly: glibc's mmap/trim thresholds, and one
arena for the scanning commands (why, and what it saves: docs/large-datasets.md)."""

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
