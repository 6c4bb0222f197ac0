"""Statistics that stream with their passes on Ray workers (issue 24, docs/large-datasets.md "Ray
runs the passes"): results.json and the per-item bias table are byte-identical to the local
passes, on one 2-CPU local cluster, for cross-validated and train/test data in several shards and
chunks, with a capped training sample (the candidates merge) and two easy/hard iterations (the
item sink)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuelens.audit.config import ScanConfig
from cuelens.audit.streamed_scan import load_chunked, scan_streaming
from cuelens.data.schema import FieldMap
from cuelens.data.synthetic import make_nli
from cuelens.io import dumps_json

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'cuelens[ray]'")
pytestmark = pytest.mark.timeout(600)

CONFIG = ScanConfig(folds=3, iterations=2, max_fit_items=150, seed=5)


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def write_shards(directory: Path, records: list[dict], n_shards: int) -> str:
    directory.mkdir(parents=True)
    size = -(-len(records) // n_shards)
    for s in range(n_shards):
        part = records[s * size:(s + 1) * size]
        (directory / f"part-{s}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in part), encoding="utf-8")
    return str(directory)


def scan_outputs(work: Path, sources: tuple[str | None, ...], passes=None) -> tuple[str, bytes]:
    """results.json and items.jsonl of a streaming scan of ``sources`` (data, train, test) in
    chunks of 130 items, its passes on ``passes`` (None: local)."""
    work.mkdir()
    data = load_chunked(*sources, FieldMap(), False, CONFIG, work, chunk_items=130)
    if passes is not None:
        data.store.passes = passes
    result = scan_streaming(data, CONFIG)
    return dumps_json(result.results), result.bias.files["items"].read_bytes()


@pytest.mark.parametrize("layout", ["cross-validated", "train/test"])
def test_ray_passes_equal_the_local_passes(cluster, tmp_path, layout):
    from cuelens.audit.ray_passes import RayPasses

    records = make_nli(900, seed=7)
    if layout == "cross-validated":
        sources = (write_shards(tmp_path / "data", records, 3), None, None)
    else:
        sources = (None, write_shards(tmp_path / "train", records[:600], 2),
                   write_shards(tmp_path / "test", records[600:], 2))
    ran = []  # the Ray run really counts and tallies on workers

    class Spied(RayPasses):
        def _map(self, part, store, fitting, args):
            ran.append(part.__name__)
            return super()._map(part, store, fitting, args)

    local = scan_outputs(tmp_path / "local", sources)
    remote = scan_outputs(tmp_path / "ray", sources, Spied(in_flight=3))
    assert {"_count_part", "_tally_part"} <= set(ran)
    assert remote[0] == local[0]
    assert remote[1] == local[1]
    results = json.loads(local[0])
    assert results["config"]["statistics"] == "streaming"
    assert results["leakage"]["best"]["D"] > 0.05  # planted cues are found
