"""The full train → save → reload → probe path on tiny random-initialised BERT models (CPU,
seconds), for NLI and MCQ, and the CLI's user errors (docs/methods.md §6)."""

from __future__ import annotations

import html
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from cuelens.cli import app
from tests.conftest import write_jsonl
from tests.tiny_models import mcq_planted, nli_planted, tiny_bert_dir

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def _setup(tmp_path, rows):
    train, test = rows
    data = tmp_path / "data"
    write_jsonl(data / "train.jsonl", train)
    write_jsonl(data / "test.jsonl", test)
    texts = [" ".join([r["premise"], r.get("hypothesis", ""), *r.get("choices", [])])
             for r in train + test]
    return data, tiny_bert_dir(tmp_path / "base", texts), train, test


def _read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def nli_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("nli")
    data, base, train, test = _setup(tmp_path, nli_planted())
    result = invoke("train", data, "--model", base, "--out", tmp_path / "model", "--epochs", 2,
                    "--lr", "1e-3", "--batch-size", 8, "--device", "cpu")
    assert result.exit_code == 0, result.output
    result = invoke("probe", data, "--model", tmp_path / "model", "--out", tmp_path / "probe",
                    "--device", "cpu", "--bootstrap", 200, "--rank-by", "lmi",
                    "--min-support", 1)  # tiny data: no cue is significant
    assert result.exit_code == 0, result.output
    return tmp_path, data, train, test


def test_trained_nli_model_reloads_outside_the_tool(nli_run):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tmp_path, _, train, test = nli_run
    model_dir = tmp_path / "model"
    assert (model_dir / "model.safetensors").is_file()
    assert not list(model_dir.glob("*.bin"))
    model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    assert model.config.id2label == {0: "contradiction", 1: "entailment", 2: "neutral"}
    assert model.config.label2id["neutral"] == 2
    # plain transformers predictions equal the tool's (predictions.jsonl of the probe)
    enc = tokenizer([r["premise"] for r in test], [r["hypothesis"] for r in test],
                    padding=True, return_tensors="pt")
    with torch.inference_mode():
        logits = model(**enc).logits
    expected = [model.config.id2label[int(i)] for i in logits.argmax(-1)]
    rows = _read_jsonl(tmp_path / "probe" / "predictions.jsonl")
    assert [r["id"] for r in rows] == [r["id"] for r in test]
    assert [r["prediction"] for r in rows] == expected
    probs = np.asarray([r["probs"] for r in rows])
    np.testing.assert_allclose(probs, torch.softmax(logits, -1).numpy(), atol=1e-4)


def test_training_dynamics_and_data_map(nli_run):
    tmp_path, _, train, _ = nli_run
    model_dir = tmp_path / "model"
    epochs = [_read_jsonl(model_dir / "training_dynamics" / f"dynamics_epoch_{e}.jsonl")
              for e in range(2)]
    assert [r["guid"] for r in epochs[0]] == [r["id"] for r in train]
    gold = {"contradiction": 0, "entailment": 1, "neutral": 2}
    assert [r["gold"] for r in epochs[1]] == [gold[r["label"]] for r in train]
    # recompute the Cartography coordinates from the per-epoch logits by hand
    logits = np.asarray([[r[f"logits_epoch_{e}"] for r in rows] for e, rows in enumerate(epochs)])
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    gold_idx = np.asarray([r["gold"] for r in epochs[0]])
    p_gold = probs[:, np.arange(len(train)), gold_idx]
    points = _read_jsonl(model_dir / "data_map.jsonl")
    assert [p["guid"] for p in points] == [r["id"] for r in train]
    np.testing.assert_allclose([p["confidence"] for p in points], p_gold.mean(0), atol=1e-5)
    np.testing.assert_allclose([p["variability"] for p in points], p_gold.std(0), atol=1e-5)
    correct = (logits.argmax(-1) == gold_idx).mean(0)
    np.testing.assert_allclose([p["correctness"] for p in points], correct, atol=1e-6)


def test_training_is_deterministic_given_the_seed(nli_run):
    tmp_path, data, _, _ = nli_run
    result = invoke("train", data, "--model", tmp_path / "base", "--out", tmp_path / "again",
                    "--epochs", 2, "--lr", "1e-3", "--batch-size", 8, "--device", "cpu")
    assert result.exit_code == 0, result.output
    for name in ("model.safetensors", "data_map.jsonl"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "model" / name).read_bytes()
    # and the output directory is never overwritten
    result = runner.invoke(app, ["train", str(data), "--model", str(tmp_path / "base"),
                                 "--out", str(tmp_path / "again")])
    assert result.exit_code == 2 and "not an empty directory" in result.output


def test_probe_results_sections(nli_run):
    tmp_path, _, train, test = nli_run
    results = json.loads((tmp_path / "probe" / "results.json").read_text())
    probe = results["probe"]
    assert list(probe) == ["model", "accuracy", "sanity", "cue_selection", "accuracy_test",
                           "distribution_test", "easy_hard", "data_map"]
    assert probe["data_map"]["epochs"] == probe["sanity"]["data_map_epochs"] == 2
    assert probe["cue_selection"]["rank_by"] == "lmi"
    assert probe["model"]["source"] == "model"
    rows = _read_jsonl(tmp_path / "probe" / "predictions.jsonl")
    gold = {r["id"]: r["label"] for r in test}
    assert probe["accuracy"] == round(np.mean([gold[r["id"]] == r["prediction"] for r in rows]), 6)
    assert "nobody" in {c["cue"] for c in probe["accuracy_test"]["cues"]}
    assert len(probe["data_map"]["points"]) == len(train)
    assert results["cues"] and "easy_hard" in results  # the scan sections come along
    from cuelens.reports.schema import validate_results

    validate_results(results)


def test_a_data_map_of_other_data_says_so(nli_run):
    """Probing a dataset other than the model's training data keeps the model's data map with a
    note saying whose it is (the map of the model's training items was shown without one);
    probing the training data itself has no such note."""
    tmp_path, data, train, test = nli_run
    same = json.loads((tmp_path / "probe" / "results.json").read_text())["probe"]
    assert not any("data map is of" in n for n in same["sanity"]["notes"])
    other = tmp_path / "other"
    write_jsonl(other / "test.jsonl", test)
    result = invoke("probe", other, "--model", tmp_path / "model", "--out", tmp_path / "other-probe",
                    "--device", "cpu", "--bootstrap", 50, "--rank-by", "lmi", "--min-support", 1)
    assert result.exit_code == 0, result.output
    note = (f"the data map is of the {len(train)} items {tmp_path / 'model'} was trained on, not "
            "of this dataset's training split (it has none)")
    assert note in " ".join(result.output.split())
    probe = json.loads((tmp_path / "other-probe" / "results.json").read_text())["probe"]
    assert any(n.startswith(note) for n in probe["sanity"]["notes"])
    assert note in html.unescape((tmp_path / "other-probe" / "report.html").read_text())


@pytest.mark.slow
def test_probe_reuses_a_scan_directory(nli_run):
    tmp_path, data, _, _ = nli_run
    assert invoke("scan", data, "--out", tmp_path / "scan", "--seed", 4).exit_code == 0
    preds = tmp_path / "probe" / "predictions.jsonl"
    result = invoke("probe", data, "--predictions", preds, "--scan", tmp_path / "scan",
                    "--out", tmp_path / "probe2", "--bootstrap", 200)
    assert result.exit_code == 0, result.output
    scan = json.loads((tmp_path / "scan" / "results.json").read_text())
    probe_run = json.loads((tmp_path / "probe2" / "results.json").read_text())
    assert probe_run["easy_hard"] == scan["easy_hard"]  # reused, not recomputed (seed 4)
    first = json.loads((tmp_path / "probe" / "results.json").read_text())["probe"]
    assert probe_run["probe"]["accuracy"] == first["accuracy"]
    assert probe_run["probe"]["model"]["source"] == "predictions"
    assert "data_map" not in probe_run["probe"]
    again = invoke("probe", data, "--predictions", preds, "--scan", tmp_path / "scan",
                   "--out", tmp_path / "probe3", "--bootstrap", 200)
    assert again.exit_code == 0, again.output
    assert ((tmp_path / "probe3" / "results.json").read_bytes()
            == (tmp_path / "probe2" / "results.json").read_bytes())  # deterministic


def test_mcq_train_and_probe(tmp_path):
    from transformers import AutoModelForMultipleChoice

    data, base, train, test = _setup(tmp_path, mcq_planted())
    result = invoke("train", data, "--model", base, "--out", tmp_path / "model", "--epochs", 1,
                    "--batch-size", 8, "--device", "cpu")
    assert result.exit_code == 0, result.output
    model = AutoModelForMultipleChoice.from_pretrained(tmp_path / "model")
    assert type(model).__name__ == "BertForMultipleChoice"
    result = invoke("probe", data, "--model", tmp_path / "model", "--out", tmp_path / "probe",
                    "--device", "cpu", "--bootstrap", 200, "--rank-by", "lmi",
                    "--min-support", 1,  # tiny data: no cue is significant
                    "--int8", "--short-circuit", "--sc-ops", "co", "--aw-thresholds", "fixed")
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "backend torch-int8" in output and "int8 vs float32 on a seeded sample of" in output
    assert "AW thresholds (fixed): t1 = 0.1400, t2 = 0.1300; null rate" in output
    probe = json.loads((tmp_path / "probe" / "results.json").read_text())["probe"]
    assert probe["short_circuit"]["aw_thresholds"]["mode"] == "fixed"
    rows = _read_jsonl(tmp_path / "probe" / "predictions.jsonl")
    assert all(r["prediction"] in (0, 1) and len(r["probs"]) == 2 for r in rows)
    gold = {r["id"]: r["label"] for r in test}
    assert probe["accuracy"] == round(np.mean([gold[r["id"]] == r["prediction"] for r in rows]), 6)
    assert len(probe["data_map"]["points"]) == len(train)
    from cuelens.reports.schema import validate_results

    validate_results(json.loads((tmp_path / "probe" / "results.json").read_text()))
    never = [c for c in probe["distribution_test"]["cues"] if c["cue"] == "never"]
    assert never and never[0]["train_dist"] == {"cue choice": 0.75, "other choice": 0.25}


@pytest.mark.parametrize("args, message", [
    (["--model", "no-such-model-xyz"], "cannot load model 'no-such-model-xyz'"),
    (["--model", "x", "--predictions", "p.jsonl"], "exactly one of --model, --predictions and --llm"),
    (["--predictions", "missing.jsonl"], "predictions file not found"),
    (["--llm", "x", "--prompt", "no-such-prompt"], "unknown prompt 'no-such-prompt'"),
    (["--llm", "x", "--prompt", "mcq-letter"], "prompt 'mcq-letter' is for MCQ items"),
    (["--predictions", "p.jsonl", "--scan", "nowhere"], "no results.json"),
    (["--model", "x", "--int8", "--backend", "onnx"], "--int8 is --backend torch-int8"),
    (["--predictions", "p.jsonl", "--short-circuit", "--aw-thresholds", "loose"],
     "unknown AW thresholds 'loose'"),
    # NaN flagged no question (AW 0%), a negative threshold every one (AW 100%), silently
    (["--model", "x", "--short-circuit", "--aw-thresholds", "fixed", "--t1", "nan"],
     "--t1 is an attention weight: give a number from 0 to 1, not nan"),
    (["--model", "x", "--short-circuit", "--t2", "-3"],
     "--t2 is an attention weight: give a number from 0 to 1, not -3.0"),
    # it was accepted and silently ignored: the LLM probe never runs it
    (["--llm", "x", "--short-circuit"], "--short-circuit asks a --model new questions"),
    # -3 was an IndexError traceback after loading the model; 0 silently meant the default
    (["--model", "x", "--batch-size", "-3"],
     "batch_size (--batch-size) must be at least 1, got -3"),
    (["--model", "x", "--batch-size", "0"], "batch_size (--batch-size) must be at least 1, got 0"),
    (["--model", "x", "--max-length", "0"], "max_length (--max-length) must be at least 1, got 0"),
    # it came after the scan and the model's predictions, when the report was written
    (["--model", "x", "--plotly", "offline"], "plotly (--plotly): unknown mode 'offline'"),
])
def test_probe_user_errors(tmp_path, monkeypatch, args, message):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    train, test = nli_planted()
    write_jsonl(tmp_path / "data" / "train.jsonl", train)
    write_jsonl(tmp_path / "data" / "test.jsonl", test)
    write_jsonl(tmp_path / "p.jsonl", [{"id": r["id"], "prediction": "neutral"} for r in test])
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["probe", "data", *args, "--out", "o"])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output



def test_a_local_directory_that_is_not_a_model_is_not_called_offline(tmp_path):
    """A local directory without weights is not a network problem: the error named the
    directory's missing file, then asked whether the user was offline."""
    train, test = nli_planted()
    write_jsonl(tmp_path / "data" / "train.jsonl", train)
    write_jsonl(tmp_path / "data" / "test.jsonl", test)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text('{"model_type": "bert"}')
    result = runner.invoke(app, ["probe", str(tmp_path / "data"), "--model", str(tmp_path / "m"),
                                 "--out", str(tmp_path / "o")])
    message = " ".join(result.output.split())
    assert result.exit_code == 2 and "(local directory" in message, result.output
    assert "Offline?" not in message and ".." not in message


@pytest.mark.parametrize("lr", ["-1", "nan", "inf"])
def test_train_refuses_a_learning_rate_that_is_not_a_finite_number(tmp_path, lr):
    """Tracebacks: torch refused -1 and nan (ValueError); inf trained, then failed writing
    its run facts (NaN in JSON)."""
    train, test = nli_planted()
    write_jsonl(tmp_path / "data" / "train.jsonl", train)
    write_jsonl(tmp_path / "data" / "test.jsonl", test)
    result = runner.invoke(app, ["train", str(tmp_path / "data"), "--model", "x", f"--lr={lr}",
                                 "--out", str(tmp_path / "m")])
    assert result.exit_code == 2 and "--lr must be a finite number" in result.output
    assert not (tmp_path / "m").exists()

@pytest.mark.parametrize("seed", ["-1", str(2**32)])
def test_train_refuses_a_seed_out_of_range_before_loading_the_model(tmp_path, seed):
    """--seed -1 was a numpy ValueError traceback ('expected non-negative integer') once the
    model had loaded; audit probe and the other seeded commands take 0 .. 2**32 - 1."""
    train, test = nli_planted()
    write_jsonl(tmp_path / "data" / "train.jsonl", train)
    write_jsonl(tmp_path / "data" / "test.jsonl", test)
    result = runner.invoke(app, ["train", str(tmp_path / "data"), "--model", "no-such-model",
                                 "--seed", seed, "--out", str(tmp_path / "m")])
    assert result.exit_code == 2, result.output
    assert f"seed (--seed) must be between 0 and 4294967295, not {seed}" in result.output
    assert not (tmp_path / "m").exists()


def test_train_needs_a_training_split(tmp_path):
    write_jsonl(tmp_path / "one.jsonl", nli_planted()[1])
    result = runner.invoke(app, ["train", str(tmp_path / "one.jsonl"), "--out",
                                 str(tmp_path / "m")])
    assert result.exit_code == 2 and "needs a training split" in result.output


@pytest.mark.parametrize("task", ["nli", "mcq"])
def test_roberta_predictions_equal_plain_transformers(tmp_path, task):
    """No token type ids (RoBERTa): length-sorted, dynamically padded batches give the same
    probabilities as one plainly padded forward pass."""
    import torch
    import transformers

    from cuelens.data import load_dataset
    from cuelens.models.classifier import HEADS, load_classifier

    data, _, _, test = _setup(tmp_path, nli_planted() if task == "nli" else mcq_planted())
    texts = [" ".join([r["premise"], r.get("hypothesis", ""), *r.get("choices", [])])
             for r in test]
    base = tiny_bert_dir(tmp_path / "roberta", texts, arch="roberta")
    dataset = load_dataset(str(data))
    clf = load_classifier(str(base), task, label_names=dataset.label_names, device="cpu")
    probs = clf.predict_proba(dataset.test, batch_size=7)
    model = getattr(transformers, HEADS[task]).from_pretrained(
        base, **({"num_labels": 3} if task == "nli" else {}))
    model.load_state_dict(clf.model.state_dict())
    tokenizer = transformers.AutoTokenizer.from_pretrained(base)
    if task == "nli":
        enc = tokenizer([r["premise"] for r in test], [r["hypothesis"] for r in test],
                        padding=True, return_tensors="pt")
    else:
        enc = tokenizer([r["premise"] for r in test for _ in r["choices"]],
                        [c for r in test for c in r["choices"]], padding=True, return_tensors="pt")
        enc = {k: v.view(len(test), 2, -1) for k, v in enc.items()}
    assert "token_type_ids" not in enc
    with torch.inference_mode():
        expected = torch.softmax(model.eval()(**enc).logits, -1).numpy()
    np.testing.assert_allclose(probs, expected, atol=1e-5)


@pytest.mark.parametrize("input_dir", ["model", "bias"])
def test_train_never_replaces_its_base_model_or_bias_file(tmp_path, input_dir):
    """--out naming the --model directory (or the one holding --bias) with --overwrite was
    accepted: the input was read, then deleted with its directory and replaced by the new model."""
    data, base, train, _ = _setup(tmp_path, nli_planted())
    bias = write_jsonl(tmp_path / "bias" / "bias.jsonl",
                       [{"id": r["id"], "probs": [0.2, 0.3, 0.5]} for r in train])
    out = base if input_dir == "model" else bias.parent
    before = sorted(p.name for p in out.iterdir())
    result = invoke("train", data, "--model", base, "--out", out, "--overwrite", "--epochs", 1,
                    "--device", "cpu", "--debias", "poe", "--bias", bias)
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert "the output directory holds the input" in message and "choose another --out" in message
    assert sorted(p.name for p in out.iterdir()) == before


def test_a_decoder_whose_tokenizer_has_no_padding_token_trains_and_probes(tmp_path):
    """A GPT-2 style model without a padding token pads with its end-of-text token (it was a
    transformers ValueError traceback, 'Cannot handle batch sizes > 1 if no padding token is
    defined', in the first training batch)."""
    from tests.lm_random_init import byte_level_bpe, gpt2

    data, _, train, test = _setup(tmp_path, nli_planted())
    tokenizer = byte_level_bpe([r["premise"] + " " + r["hypothesis"] for r in train + test], 300)
    tokenizer.pad_token = None
    gpt2(tokenizer).save_pretrained(tmp_path / "gpt2")
    tokenizer.save_pretrained(tmp_path / "gpt2")
    result = invoke("train", data, "--model", tmp_path / "gpt2", "--out", tmp_path / "model",
                    "--epochs", 1, "--batch-size", 8, "--device", "cpu")
    assert result.exit_code == 0, result.output
    config = json.loads((tmp_path / "model" / "config.json").read_text())
    assert config["pad_token_id"] == tokenizer.eos_token_id
    result = invoke("probe", data, "--model", tmp_path / "model", "--out", tmp_path / "probe",
                    "--device", "cpu", "--bootstrap", 50, "--batch-size", 8)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("command", ["train", "probe"])
def test_a_max_length_beyond_the_model_is_one_error(tmp_path, command):
    """--max-length above the tokenizer's model_max_length was a RuntimeError traceback from the
    position embeddings on the first long item (e.g. --max-length 1024 with MiniLM's 512)."""
    data, base, _, _ = _setup(tmp_path, nli_planted())
    config = json.loads((base / "tokenizer_config.json").read_text())
    (base / "tokenizer_config.json").write_text(json.dumps({**config, "model_max_length": 64}))
    extra = ["--allow-untrained"] if command == "probe" else []
    result = invoke(command, data, "--model", base, "--out", tmp_path / "out", "--max-length",
                    100, "--device", "cpu", *extra)
    assert result.exit_code == 2, result.output
    assert "max_length (--max-length) of 100 is more than model" in " ".join(result.output.split())
    assert "(64 tokens); give at most 64" in " ".join(result.output.split())


@pytest.mark.parametrize("arch, limit", [("bert", 80), ("roberta", 79)])
def test_a_model_whose_tokenizer_gives_no_limit_reads_up_to_its_position_embeddings(
        tmp_path, arch, limit):
    """A tokenizer without model_max_length (HF's huge 'unset' value) gave no limit: the default
    --max-length 128 on a model of 80 positions was a RuntimeError traceback from the position
    embeddings on the first long item. Now the default is lowered to the model's limit (RoBERTa's
    positions start after its padding index) and a longer --max-length is one error line."""
    train, test = nli_planted()
    test[0] = {**test[0], "premise": " ".join([test[0]["premise"]] * 20)}  # > 128 tokens
    data, _, _, _ = _setup(tmp_path, (train, test))
    texts = [" ".join([r["premise"], r["hypothesis"]]) for r in train + test]
    base = tiny_bert_dir(tmp_path / arch, texts, arch=arch)  # 80 position embeddings
    result = invoke("train", data, "--model", base, "--out", tmp_path / "model", "--epochs", 1,
                    "--device", "cpu")
    assert result.exit_code == 0, result.output
    saved = json.loads((tmp_path / "model" / "config.json").read_text())
    assert saved["cuelens"]["max_length"] == limit
    result = invoke("probe", data, "--model", tmp_path / "model", "--out", tmp_path / "probe",
                    "--device", "cpu", "--bootstrap", 50)
    assert result.exit_code == 0, result.output
    for command, model in (("train", base), ("probe", tmp_path / "model")):
        result = invoke(command, data, "--model", model, "--out", tmp_path / "o", "--device",
                        "cpu", "--max-length", limit + 1)
        assert result.exit_code == 2, result.output
        assert (f"max_length (--max-length) of {limit + 1} is more than model '{model}' reads "
                f"({limit} tokens)"
                in " ".join(result.output.split()))
