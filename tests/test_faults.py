"""Operational faults (issue 29): a disk that fills during an exact or a streaming scan gives one
line naming the path and the space needed/left, with no partial output; a streaming scan killed
with SIGKILL leaves its chunk directory, which the next run removes.

The full disk is a real 256 kB tmpfs when the test may mount one (root), and otherwise — and in
any case, so that both paths stay tested — a shim whose writes fail with ``ENOSPC`` once a byte
budget is spent.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_hostile_inputs import invoke, snapshot

LABELS = ["entailment", "neutral", "contradiction"]


def _data(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({
        "premise": f"A man walks dog number {i} in the park today.",
        "hypothesis": "Nobody walks." if i % 3 == 2 else f"A person is outside {i} with animals.",
        "label": LABELS[i % 3]}) + "\n" for i in range(n)))
    return path


@pytest.fixture
def small_disk(tmp_path, request):
    """A directory on a full-able file system: ``(path, kind)``."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if request.param == "tmpfs":
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)],
                              capture_output=True)
        if done.returncode != 0:
            pytest.skip("mounting a tmpfs is not permitted here (the shim case still runs)")
        yield disk
        subprocess.run(["umount", str(disk)], check=True)
    else:
        yield disk


class _LimitedFile:
    """A file whose writes fail with ENOSPC once the shared budget is spent (the shim)."""

    def __init__(self, handle, budget: list[int]) -> None:
        self._handle, self._budget = handle, budget

    def write(self, data) -> int:
        self._budget[0] -= len(data)
        if self._budget[0] < 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return self._handle.write(data)

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._handle.close()


def _install_shim(monkeypatch, disk: Path, budget: int) -> None:
    """Writes under ``disk`` by the output and chunk writers get ``budget`` bytes in all."""
    import builtins

    import cuelens.atomic
    import cuelens.engine.chunks

    left = [budget]

    def limited_open(file, mode="r", *args, **kwargs):
        handle = builtins.open(file, mode, *args, **kwargs)
        if "b" in mode and ("w" in mode or "x" in mode) and \
                Path(file).resolve().is_relative_to(disk.resolve()):
            return _LimitedFile(handle, left)
        return handle

    for module in (cuelens.atomic, cuelens.engine.chunks):
        monkeypatch.setattr(module, "open", limited_open, raising=False)


@pytest.mark.parametrize("small_disk", ["tmpfs", "shim"], indirect=True)
@pytest.mark.parametrize("stats, target", [("exact", "out"), ("streaming", "out"),
                                           ("streaming", "work")])
def test_a_full_disk_is_one_line_and_leaves_nothing(tmp_path, small_disk, stats, target,
                                                    monkeypatch):
    """The outputs (``--out``) or the chunk files (``--work-dir``; spilled, whatever their
    size) fill the small disk."""
    import cuelens.engine.chunks

    monkeypatch.setattr(cuelens.engine.chunks, "MEMORY_BUDGET", 0)
    root = tmp_path / "root"
    root.mkdir()
    _data(root / "d.jsonl", 4000)  # ~0.5 MB: chunk files and easy/hard records exceed 256 kB
    if small_disk.stat().st_dev == tmp_path.stat().st_dev:  # the shim, not a mount
        _install_shim(monkeypatch, small_disk, 256_000)
    out = small_disk / "out" if target == "out" else root / "out"
    work = small_disk if target == "work" else tmp_path / "work"
    before = snapshot(root)
    code, output = invoke(root, ["scan", "d.jsonl", "--out", out, "--features", "none",
                                 "--folds", "2", "--iterations", "1", "--stats", stats,
                                 "--work-dir", work])
    assert code == 2, output
    assert "Traceback" not in output
    lines = output.strip().splitlines()
    assert len(lines) == 1 and "no space left on the device" in lines[0], output
    assert str(out if target == "out" else work) in lines[0] and " left)" in lines[0]
    assert "needed" in lines[0]
    assert snapshot(root) == before
    assert list(small_disk.iterdir()) == []  # no partial output, no temporaries, no chunks


KILLED = """
import sys
import cuelens.engine.chunks
from cuelens.cli import main
cuelens.engine.chunks.MEMORY_BUDGET = 0  # chunks spilled, whatever their size
sys.argv = ["audit", "scan", sys.argv[1], "--out", sys.argv[2], "--features", "none",
            "--stats", "streaming", "--work-dir", sys.argv[3], "--folds", "2",
            "--iterations", "1"]
main()
"""


def _streaming_scan_writing_chunks(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """A streaming scan of 20,000 items in a subprocess, once it writes into its chunk
    directory: the process and that directory."""
    data = _data(tmp_path / "d.jsonl", 20_000)
    work = tmp_path / "work"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    process = subprocess.Popen([sys.executable, "-c", KILLED, str(data), str(tmp_path / "o1"),
                                str(work)], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    owned = []
    while time.time() < deadline and process.poll() is None:
        owned = list(work.glob("cuelens-chunks-*/owner.lock")) if work.is_dir() else []
        if owned and any(p.name != "owner.lock" for p in owned[0].parent.iterdir()):
            break  # the run is writing into its chunk directory
        time.sleep(0.01)
    assert process.poll() is None, "the scan ended before it could be stopped"
    return process, owned[0].parent


@pytest.mark.timeout(300)
def test_a_killed_streaming_scan_is_cleaned_by_the_next_run(tmp_path):
    process, stale = _streaming_scan_writing_chunks(tmp_path)
    work = stale.parent
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert stale.is_dir() and open(stale / "owner.lock").read().strip() == str(process.pid)
    small = _data(tmp_path / "small.jsonl", 60)
    code, output = invoke(tmp_path, ["scan", small, "--out", "o2", "--features", "none",
                                     "--stats", "streaming", "--work-dir", work, "--folds", "2",
                                     "--iterations", "1"])
    assert code == 0, output
    assert not stale.exists() and list(work.iterdir()) == []
    assert not (tmp_path / "o1").exists()  # the killed run wrote no output


@pytest.mark.timeout(300)
def test_a_terminated_streaming_scan_removes_its_chunk_directory(tmp_path):
    """SIGTERM unwinds like Ctrl-C (issue 57): exit 130, no chunk directory, no output."""
    process, chunks = _streaming_scan_writing_chunks(tmp_path)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=240) == 130
    assert not chunks.exists() and list(chunks.parent.iterdir()) == []
    assert not (tmp_path / "o1").exists()


def test_a_live_owners_chunk_directory_is_kept(tmp_path):
    """Another process's lock (here: another open file description of this process) keeps
    its directory; once released, the directory is stale."""
    import fcntl

    from cuelens.engine.chunks import ChunkDirectory, remove_stale_chunk_directories

    live = ChunkDirectory(tmp_path)
    assert remove_stale_chunk_directories(tmp_path) == []
    assert Path(live.name).is_dir()
    dead = tmp_path / "cuelens-chunks-dead"
    dead.mkdir()
    (dead / "owner.lock").write_text("999999999\n")
    (dead / "train-000000.npz").write_bytes(b"x")
    held = os.open(dead / "owner.lock", os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)
    assert remove_stale_chunk_directories(tmp_path) == []  # locked: alive
    os.close(held)
    assert remove_stale_chunk_directories(tmp_path) == [dead]
    assert Path(live.name).is_dir()
    live.cleanup()
    assert list(tmp_path.iterdir()) == []


def test_the_work_directory_is_created_or_refused_up_front(tmp_path):
    _data(tmp_path / "d.jsonl", 60)
    (tmp_path / "afile").write_text("x")
    code, output = invoke(tmp_path, ["scan", "d.jsonl", "--out", "o", "--features", "none",
                                     "--stats", "streaming", "--work-dir", "afile/sub"])
    assert code == 2 and len(output.strip().splitlines()) == 1, output
    assert "afile/sub" in output and "work directory" in output and not (tmp_path / "o").exists()
    code, output = invoke(tmp_path, ["scan", "d.jsonl", "--out", "o", "--features", "none",
                                     "--stats", "streaming", "--work-dir", "new/work",
                                     "--folds", "2", "--iterations", "1"])
    assert code == 0, output
    new = tmp_path / "new" / "work"
    assert new.is_dir() and list(new.iterdir()) == []
