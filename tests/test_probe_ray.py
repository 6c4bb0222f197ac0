"""`audit probe --engine ray` ≡ `--engine local` (issue 24): the whole probe — predictions.jsonl
and results.json — byte-identical, with a tiny random-initialised BERT on a local 2-CPU Ray
cluster that the module starts and stops (tests/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import cuelens
from cuelens.cli import app
from cuelens.data.synthetic import make_nli

pytest.importorskip("ray", reason="Ray is not installed: pip install 'cuelens[ray]'")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]


def test_probe_with_ray_equals_the_local_engine(cluster, tmp_path, monkeypatch):
    from cuelens.models import ray_scoring
    from cuelens.models.classifier import load_classifier
    from tests.tiny_models import tiny_bert_dir

    scored_on_ray = []  # the Ray run really scores on the actor pool

    def spy(*args, **kwargs):
        scored_on_ray.append(kwargs["concurrency"])
        return real(*args, **kwargs)

    real = ray_scoring.predict_proba_ray
    monkeypatch.setattr(ray_scoring, "predict_proba_ray", spy)

    rows = make_nli(120, seed=4)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    dataset = cuelens.load_dataset(str(data))
    body = tiny_bert_dir(tmp_path / "tiny", [r["premise"] + " " + r["hypothesis"] for r in rows])
    fresh = load_classifier(str(body), "nli", label_names=dataset.label_names, device="cpu")
    model = tmp_path / "classifier"  # saved with its head: every load has the same weights
    fresh.model.save_pretrained(model)
    fresh.tokenizer.save_pretrained(model)
    cuelens.scan(dataset, features="none", folds=3, iterations=1).save(tmp_path / "scan",
                                                                       report=False)
    outputs: dict[str, Path] = {}
    for engine in ("local", "ray"):
        outputs[engine] = tmp_path / engine
        result = CliRunner().invoke(app, [
            "probe", str(data), "--model", str(model), "--scan", str(tmp_path / "scan"),
            "--engine", engine, "--actors", "2", "--backend", "torch", "--device", "cpu",
            "--batch-size", "16", "--bootstrap", "200", "--rank-by", "lmi",
            "--min-support", "1", "--out", str(outputs[engine])])
        assert result.exit_code == 0, result.output
    assert scored_on_ray == [2]
    for name in ("predictions.jsonl", "results.json"):
        assert (outputs["ray"] / name).read_bytes() == (outputs["local"] / name).read_bytes()
    probe = json.loads((outputs["ray"] / "results.json").read_text())["probe"]
    assert probe["model"]["source"] == "model" and probe["accuracy_test"]["cues"]
    assert len((outputs["ray"] / "predictions.jsonl").read_text().splitlines()) == len(rows)
