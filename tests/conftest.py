"""Shared fixtures: small dataset files written into a temporary directory, a Ray cluster per
test module, a small SGD budget in every test unless it asks for the default one; one-thread
BLAS/OpenMP pools in each pytest-xdist worker (README.md)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
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


DEFAULT_SGD_SAMPLES: list[int] = []  # the library's SGD budget, saved by _small_sgd_budget


@pytest.fixture(autouse=True, scope="session")
def _small_sgd_budget() -> Iterator[None]:
    """SGD fits of about 3·10⁴ samples instead of 3·10⁵ (``sgd_epochs``, docs/methods.md §3) in
    every test: the default budget is most of a small scan's time, and SGD's accuracies are not
    what most tests check (two scans compared, a report rendered, a section's words). A test of
    the budget itself or of SGD's default accuracies asks for :func:`default_sgd_budget`."""
    from cuelens.audit import aggregators

    DEFAULT_SGD_SAMPLES.append(aggregators.SGD_SAMPLES)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(aggregators, "SGD_SAMPLES", 30_000)
        yield


@pytest.fixture
def default_sgd_budget(monkeypatch) -> None:
    """The library's own SGD budget for one test (see :func:`_small_sgd_budget`)."""
    monkeypatch.setattr("cuelens.audit.aggregators.SGD_SAMPLES", DEFAULT_SGD_SAMPLES[0])


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


@pytest.fixture
def parse_texts(shared_data) -> list[str]:
    """Distinct real texts to compare parses on: 300 COPA dev choices, 300 SNLI dev hypotheses."""
    from itertools import islice

    from cuelens.data.readers import jsonl_objects

    texts = []
    for _, record in islice(jsonl_objects(shared_data / "copa" / "dev.jsonl"), 150):
        texts += record["choices"]
    for _, record in islice(jsonl_objects(shared_data / "snli" / "dev.jsonl"), 300):
        texts.append(record["hypothesis"])
    return list(dict.fromkeys(texts))
