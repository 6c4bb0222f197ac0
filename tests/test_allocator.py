"""Pinned glibc thresholds and one arena (cuelens.commands.allocator): freed arrays leave the
process, and memory one thread freed serves the next."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from cuelens.commands.allocator import release_memory_promptly, share_one_arena

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


def resident_left(script: str, mode: str, environment: dict | None = None) -> int:
    """The MB that ``script`` run in a fresh interpreter (argument ``mode``, ``environment``
    added to this one's, less any ``MALLOC_ARENA_MAX``) prints as left resident."""
    env = {name: value for name, value in os.environ.items() if name != "MALLOC_ARENA_MAX"}
    done = subprocess.run([sys.executable, "-c", script, mode], capture_output=True, text=True,
                          timeout=120, check=True, env={**env, **(environment or {})})
    return int(done.stdout)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="needs glibc's mallopt")
def test_pinned_thresholds_return_freed_arrays_to_the_system():
    assert resident_left(FRAGMENT, "dynamic") > 150  # ~200 MB stranded between live objects
    assert resident_left(FRAGMENT, "pinned") < 20


# Two worker threads take turns: one allocates and frees 4 × 12 MB arrays (below the pinned
# threshold: heap memory) while the other waits, three turns each. The resident size left, MB.
TURNS = """
import sys
import threading
import numpy as np
from cuelens.commands.allocator import release_memory_promptly, share_one_arena
assert release_memory_promptly()
assert share_one_arena() == (sys.argv[1] == "shared")
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 1e6
base, live, turns = rss(), [], threading.Barrier(2)
def work(turn):
    for step in range(6):
        turns.wait()
        if step % 2 == turn:
            arrays = [np.ones(1_500_000) for _ in range(4)]
            live.append(bytearray(3000))
            del arrays
threads = [threading.Thread(target=work, args=(turn,)) for turn in (0, 1)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(round(rss() - base))
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="needs glibc's mallopt")
def test_threads_share_one_arena_unless_the_user_sets_arenas():
    one_set = 4 * 12
    # one arena: the waiting thread's arrays reuse what the other freed
    assert resident_left(TURNS, "shared") < 1.5 * one_set
    # glibc's default, or the user's own arena count: one set left in each thread's arena
    assert resident_left(TURNS, "default", {"MALLOC_ARENA_MAX": "8"}) > 1.5 * one_set


def test_the_users_environment_wins(monkeypatch):
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert release_memory_promptly() is False
    assert share_one_arena() is False


def test_only_the_scanning_commands_share_one_arena(monkeypatch):
    import cuelens.cli as cli
    import cuelens.commands.allocator as allocator

    shared = []
    monkeypatch.setattr(allocator, "release_memory_promptly", lambda: True)
    monkeypatch.setattr(allocator, "share_one_arena", lambda: shared.append(True))
    monkeypatch.setattr(cli, "app", lambda: None)
    for argv, expected in ((["audit", "scan", "data.jsonl"], 1), (["audit", "probe", "d"], 0),
                           (["audit", "lm", "score"], 0), (["audit"], 0)):
        shared.clear()
        monkeypatch.setattr(sys, "argv", argv)
        cli.main()
        assert len(shared) == expected, argv
