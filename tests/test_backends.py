"""Inference backends (cuelens/models/backends.py): ONNX Runtime reproduces torch within 1e-4 on
tiny BERT/RoBERTa classifiers (NLI and multiple choice, padded batches of several shapes), the
export is cached by weights, ``auto`` checks exactness on its first batch and falls back, and
int8 reports its agreement with float32."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from cuelens.data import load_dataset
from cuelens.errors import UserError
from cuelens.models import backends
from cuelens.models.backends import VerifiedRunner, make_runner, weights_key
from cuelens.models.classifier import backend_agreement, load_classifier
from tests.conftest import write_jsonl
from tests.tiny_models import mcq_planted, nli_planted, tiny_bert_dir


def _classifier(tmp_path, task: str, arch: str = "bert"):
    train, test = nli_planted() if task == "nli" else mcq_planted()
    write_jsonl(tmp_path / "data" / "test.jsonl", test)
    texts = [" ".join([r["premise"], r.get("hypothesis", ""), *r.get("choices", [])])
             for r in train + test]
    base = tiny_bert_dir(tmp_path / "model", texts, arch=arch)
    dataset = load_dataset(str(tmp_path / "data" / "test.jsonl"))
    clf = load_classifier(str(base), task, label_names=dataset.label_names if task == "nli"
                          else None, device="cpu")
    return clf, dataset.test


@pytest.mark.parametrize("task, arch", [("nli", "bert"), ("mcq", "bert"), ("nli", "roberta")])
def test_onnx_matches_torch(tmp_path, task, arch):
    clf, split = _classifier(tmp_path, task, arch)
    expected = clf.predict_proba(split, batch_size=5)  # torch (the default)
    clf.use_backend("onnx")
    for size in (5, 64):  # batches of several lengths and sizes, all padded dynamically
        got = clf.predict_proba(split, batch_size=size)
        assert np.abs(got - expected).max() <= 1e-5
    assert clf.backend_in_use == "onnx"


def test_onnx_export_is_cached_by_weights(tmp_path, monkeypatch):
    import torch

    clf, split = _classifier(tmp_path, "nli")
    first = backends.export_onnx(clf, tmp_path / "cache")
    assert first.parent.name == weights_key(clf.model)

    def no_export(*args, **kwargs):
        raise AssertionError("exported again")

    monkeypatch.setattr(torch.onnx, "export", no_export)
    assert backends.export_onnx(clf, tmp_path / "cache") == first  # same weights: reused
    with torch.no_grad():
        clf.model.classifier.bias.add_(1.0)
    assert weights_key(clf.model) != first.parent.name  # new weights, new key
    with pytest.raises(AssertionError, match="exported again"):
        backends.export_onnx(clf, tmp_path / "cache")
    assert [p.name for p in (tmp_path / "cache").rglob("*") if p.is_file()] == ["model.onnx"]


def test_auto_uses_onnx_when_exact_and_torch_otherwise(tmp_path):
    clf, split = _classifier(tmp_path, "mcq")
    expected = clf.predict_proba(split)
    clf.use_backend("auto")
    assert clf.backend_in_use == "auto"  # decided on the first batch
    assert np.abs(clf.predict_proba(split, batch_size=4) - expected).max() <= 1e-5
    assert clf.backend_in_use == "onnx"

    calls = {"torch": 0, "fake": 0}
    reference = make_runner(clf, "torch")

    def torch_counted(batch):
        calls["torch"] += 1
        return reference(batch)

    def off_by_a_bit(batch):
        calls["fake"] += 1
        return reference(batch) + np.array([0.0, 0.01], dtype=np.float32)  # ~2.5e-3 in prob

    clf._runner = VerifiedRunner(off_by_a_bit, torch_counted, "fake")
    got = clf.predict_proba(split, batch_size=4)
    assert clf.backend_in_use == "torch" and clf._runner.max_difference > 1e-4
    assert np.abs(got - expected).max() <= 1e-6  # the fallback's answers, from the first batch on
    assert calls["fake"] == 1 and calls["torch"] == -(-len(split) // 4)


def test_int8_agreement_and_backend_errors(tmp_path, monkeypatch):
    clf, split = _classifier(tmp_path, "nli")
    clf.use_backend("torch-int8")
    agree = backend_agreement(clf, split, sample=20, seed=3)
    assert agree["n"] == 20 and 0.0 <= agree["argmax_agreement"] <= 1.0
    assert 0.0 < agree["max_abs_difference"] < 0.2  # quantised: close, not identical
    clf.use_backend("torch")
    exact = backend_agreement(clf, split, sample=1000)
    assert exact == {"n": len(split), "argmax_agreement": 1.0, "max_abs_difference": 0.0}
    with pytest.raises(UserError, match="unknown backend 'tpu'"):
        clf.use_backend("tpu")

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if the extra were missing
    with pytest.raises(UserError, match=r"cuelens\[onnx\]"):
        clf.use_backend("onnx")
    clf.use_backend("auto")  # no extra: auto quietly uses torch
    clf.predict_proba(split)
    assert clf.backend_in_use == "torch"
