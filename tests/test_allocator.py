"""Pinned glibc thresholds (cuelens.commands.allocator): freed arrays leave the process."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from cuelens.commands.allocator import release_memory_promptly

# A 32 MB temporary (raises glibc's dynamic mmap threshold to 32 MB), then 20 MB arrays
# interleaved with small live objects, then the arrays freed: the resident size left behind, MB.
FRAGMENT = """
import sys
import numpy as np
from cuelens.commands.allocator import release_memory_promptly
if sys.argv[1] == "pinned":
    assert release_memory_promptly()
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 1e6
big = np.ones(4_000_000); del big
base = rss()
arrays, live = [], []
for _ in range(10):
    arrays.append(np.ones(2_500_000))
    live.append(bytearray(2000))
del arrays
print(round(rss() - base))
"""


def resident_after_free(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", FRAGMENT, mode], capture_output=True,
                          text=True, timeout=120, check=True)
    return int(done.stdout)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="needs glibc's mallopt")
def test_pinned_thresholds_return_freed_arrays_to_the_system():
    assert resident_after_free("dynamic") > 150  # ~200 MB stranded between live objects
    assert resident_after_free("pinned") < 20


def test_the_users_environment_wins(monkeypatch):
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    assert release_memory_promptly() is False
