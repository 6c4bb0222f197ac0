"""Shared fixtures: small dataset files written into a temporary directory, a Ray cluster per
test module; one-thread BLAS/OpenMP pools in each pytest-xdist worker (README.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    # each xdist worker is one of the machine's busy cores: BLAS/OpenMP/torch pools of one thread
    # (set before numpy or torch is imported) rather than every worker oversubscribing them all
    for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, "1")


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(autouse=True, scope="session")
def _private_parse_cache(tmp_path_factory):
    """Keep the tests' caches (spaCy parses, ONNX exports) out of the user's ~/.cache (one cache
    per test run)."""
    names = ("CUELENS_CACHE_DIR", "CUELENS_ONNX_CACHE")
    saved = {name: os.environ.get(name) for name in names}
    for name in names:
        os.environ[name] = str(tmp_path_factory.mktemp(name.lower()))
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="module")
def cluster():
    """A local 2-CPU Ray cluster for one test module, stopped after it; skips without Ray. One
    cluster shared by the session was tried: test_probe_ray's actors then waited for CPUs."""
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'cuelens[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def nli_rows() -> list[dict]:
    return [{"id": f"n{i}", "premise": f"A man walks the dog number {i}.",
             "hypothesis": ("Nobody walks." if i % 3 == 0 else f"A person is outside {i}."),
             "label": ["contradiction", "entailment", "neutral"][i % 3]} for i in range(30)]


@pytest.fixture
def mcq_rows() -> list[dict]:
    return [{"id": f"q{i}", "premise": f"The glass fell {i}.",
             "choices": [f"It broke {i}.", f"It sang {i}."], "label": i % 2} for i in range(20)]


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA
