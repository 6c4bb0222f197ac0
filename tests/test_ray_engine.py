"""The Ray engine gives the local engine's results (issue 16): scan on sharded Parquet and
JSONL, and probe with a tiny random-initialised model, on one 2-CPU local cluster."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cuelens.audit.engines import load_for_scan
from cuelens.audit.pipeline import scan_dataset
from cuelens.audit.scan import ScanConfig
from cuelens.data.synthetic import make_mcq, make_nli
from cuelens.engine.options import EngineOptions
from cuelens.jsonio import dumps_json

pytest.importorskip("ray", reason="Ray is not installed: pip install 'cuelens[ray]'")
pytestmark = pytest.mark.timeout(600)


def write_shards(directory: Path, records: list[dict], n_shards: int, fmt: str) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir(parents=True)
    size = -(-len(records) // n_shards)
    for s in range(n_shards):
        part = records[s * size:(s + 1) * size]
        path = directory / f"part-{s}.{fmt}"
        if fmt == "parquet":
            pq.write_table(pa.table({k: [r[k] for r in part] for k in part[0]}), path)
        else:
            path.write_text("".join(json.dumps(r) + "\n" for r in part), encoding="utf-8")
    return directory


def results_json(engine: str, data: str, config: ScanConfig, **options) -> str:
    loaded = load_for_scan(engine, data, options=EngineOptions(
        ngrams=config.ngrams, include_premise=config.include_premise, **options))
    dataset = loaded.dataset
    return dumps_json(scan_dataset(dataset, config, tokens=loaded.tokens).results)


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_scan_equals_local_engine(cluster, tmp_path, fmt):
    """3 shards of 600 NLI items with planted cues: byte-identical results.json, and the
    Ray engine really encoded the texts on workers (tokens handed over)."""
    shards = write_shards(tmp_path / "nli", make_nli(600, seed=3), 3, fmt)
    config = ScanConfig(iterations=2, max_fit_items=200)
    local = results_json("local", str(shards), config)
    remote = results_json("ray", str(shards), config)
    assert remote == local
    assert json.loads(local)["dataset"]["splits"]["all"]["items"] == 600
    loaded = load_for_scan("ray", str(shards))
    assert loaded.tokens is not None and len(loaded.tokens) == 600


def test_scan_mcq_train_test_bigrams(cluster, tmp_path):
    """MCQ with train/test shard directories, bigrams and premises: identical results."""
    rows = make_mcq(300, seed=5, n_choices=3)
    data = tmp_path / "mcq"
    write_shards(data / "train", rows[:200], 2, "jsonl")
    write_shards(data / "test", rows[200:], 2, "jsonl")
    config = ScanConfig(iterations=1, ngrams=2, include_premise=True)
    assert results_json("ray", str(data), config) == results_json("local", str(data), config)


def test_bad_record_names_first_failing_shard(cluster, tmp_path):
    from cuelens.errors import UserError

    shards = write_shards(tmp_path / "bad", make_nli(60, seed=1), 3, "jsonl")
    with open(shards / "part-1.jsonl", "a", encoding="utf-8") as handle:
        handle.write('{"premise": "p", "hypothesis": "h"}\n')
    for engine in ("local", "ray"):
        with pytest.raises(UserError, match=r"part-1\.jsonl, line 21: missing label"):
            load_for_scan(engine, str(shards))


def test_skipped_lines_counted_as_the_local_engine(cluster, tmp_path):
    """--skip-bad: a leading shard of bad lines only and bad lines further on are counted
    as the local engine counts them (same reasons, same order), and the items are encoded."""
    shards = write_shards(tmp_path / "skip", make_nli(300, seed=4), 3, "jsonl")
    (shards / "part-0.jsonl").write_text('not json\n{"x": 1\n', encoding="utf-8")
    with open(shards / "part-2.jsonl", "a", encoding="utf-8") as handle:
        handle.write('garbage\n{"premise": "p", "hypothesis": "h"}\n')
    loaded = {engine: load_for_scan(engine, str(shards), skip_bad=True)
              for engine in ("local", "ray")}
    skipped = [list(loaded[e].dataset.test.skipped.items()) for e in ("local", "ray")]
    assert skipped[0] == skipped[1] == [("bad record", 1), ("malformed line", 3)]
    assert len(loaded["ray"].dataset.test) == 200 and len(loaded["ray"].tokens) == 200


def test_probe_equals_local_path(cluster, tmp_path):
    """A tiny random-initialised BERT: the actor pool's probabilities equal the local ones."""
    from cuelens.models.ray_scoring import predict_proba_ray
    from cuelens.models.classifier import load_classifier
    from tests.tiny_models import tiny_bert_dir

    rows = make_nli(90, seed=2)
    dataset = load_for_scan("local", str(write_shards(tmp_path / "p", rows, 1, "jsonl"))).dataset
    body = tiny_bert_dir(tmp_path / "tiny", [r["premise"] + " " + r["hypothesis"] for r in rows])
    fresh = load_classifier(str(body), "nli", label_names=dataset.label_names, device="cpu")
    model = tmp_path / "classifier"  # saved with its head, so every load has the same weights
    fresh.model.save_pretrained(model)
    fresh.tokenizer.save_pretrained(model)
    clf = load_classifier(str(model), "nli", device="cpu")
    local = clf.predict_proba(dataset.test, batch_size=16)
    remote = predict_proba_ray(clf, dataset.test, batch_size=16, concurrency=2)
    assert remote.shape == (90, local.shape[1])
    np.testing.assert_array_equal(remote, local)
