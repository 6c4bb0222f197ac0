"""One local 2-CPU Ray cluster per test process, shared by every test that runs on Ray.

Starting a cluster costs ~10–30 s on the loaded 2-core CI machine, so the Ray modules and the
conformance suite's Ray mode share one (the ``cluster`` fixture of tests/conftest.py), which is
stopped at the end of the session (under pytest-xdist: one per worker that runs Ray tests).
"""

from __future__ import annotations

import sys

import pytest

def start():
    """The ``ray`` module with a local cluster running (started here unless one already is);
    skips the test when Ray is not installed."""
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'cuelens[ray]'")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, configure_logging=False,
                 log_to_driver=False)
    return ray


def stop() -> None:
    """Stop the cluster if this process started one (no-op without Ray)."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()
