"""A model without a fine-tuned head (transformers' loading info names its head weights as
missing) stops `audit probe`/`cuelens.probe` with a pointer to `audit train`, unless
--allow-untrained / allow_untrained=True, and then the results and the terminal say so."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import cuelens
from cuelens.cli import app
from cuelens.errors import UserError
from cuelens.models.classifier import load_classifier
from tests.conftest import write_jsonl
from tests.tiny_models import mcq_planted, nli_planted, tiny_bert_dir

PLANTED = {"nli": nli_planted, "mcq": mcq_planted}


def _texts(rows):
    return [" ".join([r["premise"], r.get("hypothesis", ""), *r.get("choices", [])])
            for r in rows]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A base encoder saved without a head, and the same encoder saved with an (NLI) head."""
    tmp_path = tmp_path_factory.mktemp("heads")
    train, test = nli_planted()
    mcq_train, mcq_test = mcq_planted()
    base = tiny_bert_dir(tmp_path / "base", _texts(train + test + mcq_train + mcq_test))
    fresh = load_classifier(str(base), "nli", label_names=["contradiction", "entailment",
                                                           "neutral"], device="cpu")
    headed = tmp_path / "headed"
    fresh.model.save_pretrained(headed)
    fresh.tokenizer.save_pretrained(headed)
    return base, headed


@pytest.mark.parametrize("task", ["nli", "mcq"])
def test_a_base_encoder_has_an_untrained_head(models, task):
    base, _ = models
    clf = load_classifier(str(base), task, device="cpu")
    assert clf.untrained == ("classifier.bias", "classifier.weight")
    with pytest.raises(UserError, match="audit train") as error:
        clf.require_trained()
    assert "--allow-untrained" in str(error.value) and "\n" not in str(error.value)
    clf.require_trained(allow_untrained=True)  # allowed: no error
    assert "random" in clf.untrained_note()


def test_a_saved_head_is_trained(models):
    _, headed = models
    clf = load_classifier(str(headed), "nli", device="cpu")
    assert clf.untrained == () and clf.untrained_note() is None
    clf.require_trained()


def _probe(tmp_path, task, model, *extra):
    if not (tmp_path / task).exists():
        train, test = PLANTED[task]()
        write_jsonl(tmp_path / task / "train.jsonl", train)
        write_jsonl(tmp_path / task / "test.jsonl", test)
    out = tmp_path / f"{task}-{len(extra)}"
    result = CliRunner().invoke(app, [
        "probe", str(tmp_path / task), "--model", str(model), "--device", "cpu", "--bootstrap",
        "50", "--rank-by", "lmi", "--min-support", "1", "--backend", "torch", "--out", str(out),
        *extra])
    return result, out


def test_probe_cli_stops_on_an_untrained_head_and_runs_when_allowed(models, tmp_path):
    base, headed = models
    refused, out = _probe(tmp_path, "mcq", base)
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert "audit train" in refused.output and not out.exists()
    allowed, out = _probe(tmp_path, "mcq", base, "--allow-untrained")
    assert allowed.exit_code == 0, allowed.output
    assert "warning: model" in allowed.output
    assert "no fine-tuned multiple-choice head" in " ".join(allowed.output.split())
    results = json.loads((out / "results.json").read_text())
    assert results["probe"]["model"]["untrained_head"] == ["classifier.bias", "classifier.weight"]
    assert results["next_steps"][0]["action"].startswith("fine-tune ")  # before its cue tests
    assert "audit train" in results["next_steps"][0]["action"]
    assert "no fine-tuned head" in (out / "report.html").read_text()
    trained, out = _probe(tmp_path, "nli", headed)
    assert trained.exit_code == 0, trained.output
    assert "untrained_head" not in json.loads((out / "results.json").read_text())["probe"]["model"]


def test_probe_api_takes_allow_untrained(models):
    base, _ = models
    train, test = mcq_planted()
    dataset = cuelens.load_dataset(train=train, test=test)
    options = dict(device="cpu", bootstrap=50, rank_by="lmi", min_support=1)
    with pytest.raises(UserError, match="audit train"):
        cuelens.probe(dataset, model=str(base), **options)
    result = cuelens.probe(dataset, model=str(base), allow_untrained=True, **options)
    assert result.results["probe"]["model"]["untrained_head"] == ["classifier.bias",
                                                                  "classifier.weight"]


def test_a_head_for_another_task_is_untrained_and_training_replaces_it(models, tmp_path):
    """An NLI model probed on multiple-choice data (or back) was a transformers RuntimeError
    traceback ('You set `ignore_mismatched_sizes` to `False`'), and so was `audit train` on MCQ
    data from it: its head, shaped for another task, is now an untrained one, which the probe
    refuses with a pointer to `audit train` and training replaces."""
    _, headed = models  # an NLI head: classifier.weight 3 × 32; multiple choice wants 1 × 32
    clf = load_classifier(str(headed), "mcq", device="cpu")
    assert clf.untrained == clf.reshaped == ("classifier.bias", "classifier.weight")
    refused, out = _probe(tmp_path, "mcq", headed)
    message = " ".join(refused.output.split())
    assert refused.exit_code == 2 and "Traceback" not in refused.output, refused.output
    assert ("no fine-tuned multiple-choice head (classifier.bias, classifier.weight shaped for "
            "another task in its checkpoint): fine-tune it first with `audit train") in message
    result = CliRunner().invoke(app, ["train", str(tmp_path / "mcq"), "--model", str(headed),
                                      "--epochs", "1", "--device", "cpu",
                                      "--out", str(tmp_path / "mcq-model")])
    assert result.exit_code == 0, result.output
    assert load_classifier(str(tmp_path / "mcq-model"), "mcq", device="cpu").untrained == ()
