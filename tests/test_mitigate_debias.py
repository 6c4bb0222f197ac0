"""Product-of-experts training on a planted cue lowers the model's reliance on it (the probe's
ΔAcc) versus plain training with the same steps and seed (tiny BERT, CPU, seconds), and the
`audit train --debias` / `audit filter` / `audit card` commands end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import cuelens
from cuelens.cli import app
from tests.conftest import write_jsonl
from tests.tiny_models import tiny_bert_dir

pytest.importorskip("torch")
runner = CliRunner()
FILLERS = ["in the park", "at home", "on the bus", "by the lake", "near the shop"]


def _item(i: int, cue: bool, label: str, signal: str) -> dict:
    text = f"{'nobody ' if cue else 'someone '}{signal} {FILLERS[i % 5]}"
    return {"id": f"{'c' if cue else 'p'}{i}", "premise": "people are outside",
            "hypothesis": text, "label": label}


def planted_cue() -> tuple[list[dict], list[dict]]:
    """Train: "nobody" in 100 items, 95 of them contradiction; the genuine signal word ("no" →
    contradiction, "yes" → entailment) is right in 80% of the items, so the cue is the stronger
    predictor. Test: "nobody" in 100 items with balanced labels, 100 items without; the signal
    is always right."""
    rng = np.random.default_rng(0)
    train = []
    for i in range(200):
        cue = i < 100
        label = ("contradiction" if i % 20 else "entailment") if cue else \
            ("contradiction", "entailment")[i % 2]
        right = rng.random() < 0.8
        signal = {"contradiction": "no", "entailment": "yes"}[label]
        train.append(_item(i, cue, label, signal if right else {"no": "yes", "yes": "no"}[signal]))
    test = [_item(1000 + i, i < 100, ("contradiction", "entailment")[i % 2],
                  ("no", "yes")[i % 2]) for i in range(200)]
    return train, test


def _train_and_probe(tmp_path, debias: str) -> float:
    from cuelens.models.classifier import load_classifier
    from cuelens.mitigate.losses import training_loss
    from cuelens.models.finetune import TrainConfig, finetune

    train, test = planted_cue()
    base = tmp_path / "base"
    if not base.exists():
        tiny_bert_dir(base, [r["premise"] + " " + r["hypothesis"] for r in train + test])
    dataset = cuelens.load_dataset(train=train, test=test)
    # a calibrated hand bias model: P(label | "nobody") = (0.95, 0.05), else uniform
    bias = np.array([[0.95, 0.05] if "nobody" in r["hypothesis"] else [0.5, 0.5]
                     for r in train])
    clf = load_classifier(str(base), "nli", label_names=dataset.label_names, device="cpu",
                          max_length=16)
    finetune(clf, dataset.train, dataset.train.item_labels(dataset.label_names),
             TrainConfig(epochs=8, lr=2e-3, batch_size=16, seed=0, debias=debias),
             training_loss(debias, clf.model.config.hidden_size, dataset.train),
             bias=bias if debias != "none" else None)
    predicted = clf.predict_proba(dataset.test).argmax(axis=1)
    path = tmp_path / f"{debias}.jsonl"
    write_jsonl(path, [{"id": i, "prediction": dataset.label_names[p]}
                       for i, p in zip(dataset.test.ids, predicted)])
    scanned = cuelens.scan(dataset, features="none", folds=3, iterations=1)
    effects = cuelens.probe(dataset, predictions=path, scan=scanned, bootstrap=100,
                            rank_by="z").cue_effects
    return float(effects.set_index("cue").loc["nobody", "delta"])


@pytest.mark.slow
def test_poe_lowers_reliance_on_a_planted_cue(tmp_path):
    plain = _train_and_probe(tmp_path, "none")
    poe = _train_and_probe(tmp_path, "poe")
    assert plain < -0.2  # plain training follows "nobody" → contradiction
    assert abs(poe) < abs(plain) - 0.1


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.slow
def test_commands_filter_card_and_train_debias(tmp_path):
    train, test = planted_cue()
    data = tmp_path / "data"
    write_jsonl(data / "train.jsonl", train)
    write_jsonl(data / "test.jsonl", test)
    result = invoke("filter", data, "--out", tmp_path / "filtered", "--min-count", 3)
    assert result.exit_code == 0, result.output
    out = tmp_path / "filtered"
    assert (out / "compare.html").is_file() and (out / "scan-after" / "items.jsonl").is_file()
    report = json.loads((out / "filter.json").read_text())
    kept = (out / "train.jsonl").read_text().splitlines()
    assert len(kept) == sum(c["after"] for c in report["per_label"].values())
    assert (out / "test.jsonl").read_text().splitlines() == \
        (data / "test.jsonl").read_text().splitlines()
    after = json.loads((out / "scan-after" / "results.json").read_text())
    assert not any(c["significant"] for c in after["cues"])
    assert "D = " in result.output and "after" in result.output

    result = invoke("card", out / "scan-before")
    assert result.exit_code == 0, result.output
    card = (out / "scan-before" / "card.md").read_text()
    assert card.startswith("## Bias, Risks and Limitations") and "| nobody |" in card
    rai = json.loads((out / "scan-before" / "croissant-rai.json").read_text())
    assert "nobody" in " ".join(rai["rai:dataBiases"]) and rai["rai:dataLimitations"]

    base = tiny_bert_dir(tmp_path / "base", [r["premise"] + " " + r["hypothesis"]
                                             for r in train + test])
    result = invoke("train", data, "--model", base, "--out", tmp_path / "model", "--epochs", 1,
                    "--device", "cpu", "--debias", "poe", "--bias", out / "scan-before")
    assert result.exit_code == 0, result.output
    result = invoke("train", data, "--model", base, "--out", tmp_path / "m2", "--debias", "x")
    assert result.exit_code != 0 and "unknown --debias" in result.output


def test_bias_record_hand_computed():
    from cuelens.mitigate.bias_source import bias_record

    probs = np.array([[0.9, 0.1], [0.4, 0.6], [0.7, 0.3]])
    record = bias_record({"source": "scan", "seed": 3}, probs, np.array([0, 0, 1]))
    # gold probabilities 0.9, 0.4, 0.3 → mean 0.5333; arg-max right on items 0 only
    assert record == {"source": "scan", "seed": 3, "items": 3, "gold_probability": 0.5333,
                      "accuracy": 0.3333}


@pytest.mark.parametrize("debias,loss", [
    ("focal", {"name": "focal", "eps": 1e-6, "gamma": 2.0}), ("none", {"name": "none"})])
def test_train_prints_and_records_the_loss_and_its_bias_source(tmp_path, debias, loss):
    """`audit train --debias` says which loss ran, with its settings and its bias source, and
    records them in config.json (``cuelens.training``) and run.json."""
    train, test = planted_cue()
    data = tmp_path / "data"
    write_jsonl(data / "train.jsonl", train[::4])
    write_jsonl(data / "test.jsonl", test[::4])
    base = tiny_bert_dir(tmp_path / "base", [r["premise"] + " " + r["hypothesis"]
                                             for r in train + test])
    result = invoke("train", data, "--model", base, "--out", tmp_path / "model", "--epochs", 1,
                    "--device", "cpu", "--debias", debias)
    assert result.exit_code == 0, result.output
    config = json.loads((tmp_path / "model" / "config.json").read_text())["cuelens"]["training"]
    assert config["loss"] == loss
    assert config["config"]["debias"] == debias and config["config"]["epochs"] == 1
    run = json.loads((tmp_path / "model" / "run.json").read_text())
    assert run["training"] == config
    output = " ".join(result.output.split())
    if debias == "none":
        assert config["bias"] is None and "loss: none (cross-entropy)" in output
        return
    bias = config["bias"]
    assert (bias["source"], bias["seed"], bias["items"]) == ("scan", 0, 50)
    assert 0.5 < bias["gold_probability"] < 1  # the planted cue: the bias model does well
    assert "loss: focal (debiased focal loss; eps 1e-06, gamma 2)" in output
    assert "out-of-fold word-cue scan of the training split (seed 0)" in output


def test_bias_of_training_items_sharing_an_id(tmp_path):
    """`audit filter --balance` writes copies of items (their ids repeat): the scanned bias
    (a traceback: 264 rows for 190 items) and a scan's table given as --bias ("duplicate id")
    give one row per training item, in order."""
    from cuelens.mitigate.bias_source import read_bias, scanned_bias

    train, test = planted_cue()
    train = train + train[:30] + train[150:160]  # copies, as --balance writes them
    write_jsonl(tmp_path / "d" / "train.jsonl", train)
    write_jsonl(tmp_path / "d" / "test.jsonl", test)
    dataset = cuelens.load_dataset(str(tmp_path / "d"))
    probs = scanned_bias(dataset)
    assert probs.shape == (240, 2)
    assert np.allclose(probs[200:230], probs[:30]) and np.allclose(probs[230:], probs[150:160])
    cuelens.scan(str(tmp_path / "d"), features="none").save(tmp_path / "scan")
    assert np.allclose(read_bias(tmp_path / "scan", dataset, dataset.train), probs)
    # a folder named items.parquet is not the table (it was read, and failed, as the table)
    (tmp_path / "scan" / "items.parquet").unlink(missing_ok=True)
    (tmp_path / "scan" / "items.parquet").mkdir()
    assert np.allclose(read_bias(tmp_path / "scan", dataset, dataset.train), probs)


def test_bias_probabilities_whose_sum_overflows_keep_their_proportions():
    # [1e308, 1e308, 2e307] summed to inf: normalised by the sum, every row was 0
    from cuelens.data.synthetic import make_nli
    from cuelens.probes.predictions import parse_probs

    dataset = cuelens.load_dataset(make_nli(30))
    probs = parse_probs([1e308, 1e308, 2e307], dataset, 3)
    np.testing.assert_allclose(probs / probs.sum(), [5 / 11, 5 / 11, 1 / 11])
    assert parse_probs([0.2, 0.5, 0.3], dataset, 3).tolist() == [0.2, 0.5, 0.3]
