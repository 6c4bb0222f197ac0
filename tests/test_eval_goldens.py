"""The probe on logs written by the real tools (docs/examples/goldens/, made by
scripts/eval_log_goldens.py with lm-eval 0.4.13 and Inspect 0.3.285; versions.json beside them):
item by item, cuelens' predictions must be the answers each log records, and damaged or hostile
variants of those files must give one clear line."""

from __future__ import annotations

import json
import shutil
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cuelens.cli import app
from cuelens.data.loading import load_dataset
from cuelens.errors import UserError
from cuelens.probes.sources import read_predictions

GOLDENS = Path(__file__).resolve().parent.parent / "docs" / "examples" / "goldens"
DATA = GOLDENS / "planted.jsonl"
LM_EVAL = GOLDENS / "lm-eval" / "samples_cuelens_planted.jsonl"
LM_EVAL_LIMIT = GOLDENS / "lm-eval-limit20" / "samples_cuelens_planted.jsonl"
INSPECT_EVAL = GOLDENS / "inspect-planted.eval"
INSPECT_JSON = GOLDENS / "inspect-planted.json"
runner = CliRunner()


@pytest.fixture(scope="module")
def dataset():
    return load_dataset(str(DATA))


def lm_eval_answers(path: Path, norm: bool = False) -> list[tuple[int, int, float]]:
    """(doc_id, arg-max choice, the log's own acc) per line, read with json alone."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        lls = np.array([float(r[0]) for r in row["filtered_resps"]])
        if norm:
            conts = [v["arg_1"].lstrip() for _, v in sorted(row["arguments"].items())]
            lls = lls / np.array([len(c) for c in conts])
        out.append((row["doc_id"], int(np.argmax(lls)), row["acc_norm" if norm else "acc"]))
    return out


def inspect_samples(path: Path) -> list[dict]:
    """Epoch-1 samples, read with zipfile + zstandard (or json) alone."""
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))["samples"]
    import zstandard

    samples = []
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if info.filename.startswith("samples/") and info.filename.endswith("_epoch_1.json"):
                assert info.compress_type == 93  # what Inspect writes: Zstandard
                raw = archive.fp
                raw.seek(info.header_offset + 26)
                skip = int.from_bytes(raw.read(2), "little") + int.from_bytes(raw.read(2),
                                                                             "little")
                raw.seek(skip, 1)
                data = zstandard.ZstdDecompressor().stream_reader(
                    raw.read(info.compress_size)).read()
                samples.append(json.loads(data))
    return samples


def test_versions_are_recorded():
    versions = json.loads((GOLDENS / "versions.json").read_text())
    assert versions["lm_eval"] == "0.4.13" and versions["inspect_ai"] == "0.3.285"


@pytest.mark.parametrize("path,norm", [(LM_EVAL, False), (LM_EVAL, True),
                                       (LM_EVAL_LIMIT, False)])
def test_lm_eval_logs_agree_item_by_item(dataset, path, norm):
    preds = read_predictions(path, dataset, norm="chars" if norm else "none")
    answers = lm_eval_answers(path, norm)
    gold = dataset.test.item_labels(dataset.label_names)
    assert len(answers) == (20 if path == LM_EVAL_LIMIT else len(dataset.test))
    for doc_id, choice, acc in answers:
        assert preds.pred[doc_id] == choice
        assert float(preds.pred[doc_id] == gold[doc_id]) == acc  # lm-eval's own verdict
    log = preds.log
    assert log["logged_correct"] == {"metric": "acc_norm" if norm else "acc",
                                     "agree": len(answers), "of": len(answers)}
    check = log["results_check"]
    assert check["reported"] == pytest.approx(check["recomputed"], abs=1e-6)
    if path == LM_EVAL_LIMIT:
        assert log["left_out"] == 20 and preds.covered.sum() == 20
        assert any("covers 20 of 40" in n for n in preds.notes)
    else:
        assert preds.covered is None and preds.notes == []


@pytest.mark.parametrize("path", [INSPECT_EVAL, INSPECT_JSON])
def test_inspect_logs_agree_item_by_item(dataset, path):
    preds = read_predictions(path, dataset)
    assert preds.log["matched_by"] == "sample id" and preds.notes == []
    samples = inspect_samples(path)
    assert len(samples) == len(dataset.test)
    position = {item_id: i for i, item_id in enumerate(dataset.test.ids)}
    for sample in samples:
        i = position[str(sample["id"])]  # ids as a natural task writes them (ints)
        answer = sample["scores"]["choice"]["answer"]
        assert preds.pred[i] == "ABC".index(answer)
        gold = dataset.test.item_labels(dataset.label_names)[i]
        assert (sample["scores"]["choice"]["value"] == "C") == (preds.pred[i] == gold)
    assert preds.log["logged_correct"]["agree"] == len(samples)


def test_string_sorted_ids_would_misalign(dataset):
    """The failure this guards against: ids 95..134 sorted as strings ("100" < "95")."""
    ids = [str(s["id"]) for s in inspect_samples(INSPECT_JSON)]
    assert sorted(ids) != ids and sorted(ids, key=int) == ids


@pytest.mark.parametrize("path,extra,rows", [
    (LM_EVAL, [], 40), (LM_EVAL, ["--norm"], 40), (LM_EVAL_LIMIT, [], 20),
    (INSPECT_EVAL, [], 40), (INSPECT_JSON, [], 40)])
def test_cli_probe_on_golden_logs(tmp_path, path, extra, rows):
    out = tmp_path / "out"
    result = runner.invoke(app, ["probe", str(DATA), "-p", str(path), "--out", str(out),
                                 "--bootstrap", "50", *extra])
    assert result.exit_code == 0, result.output
    written = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(written) == rows
    dataset = load_dataset(str(DATA))
    if path.suffix == ".jsonl":  # the log's own answers, read without cuelens
        logged = {dataset.test.ids[doc_id]: choice
                  for doc_id, choice, _ in lm_eval_answers(path, norm=bool(extra))}
    else:
        logged = {str(s["id"]): "ABC".index(s["scores"]["choice"]["answer"])
                  for s in inspect_samples(path)}
    assert {row["id"]: row["prediction"] for row in written} == logged
    results = json.loads((out / "results.json").read_text())
    assert results["probe"]["model"]["log"]["format"] in ("lm-eval", "inspect")
    if rows == 20:
        assert "left out" in result.output
        refused = runner.invoke(app, ["probe", str(DATA), "-p", str(path), "--out",
                                      str(tmp_path / "o2"), "--require-all-items"])
        assert refused.exit_code == 2 and "20 test items are not in the log" in refused.output


# ------------------------------------------------------------------ variants of the goldens
def edited_json(tmp_path: Path, edit) -> Path:
    log = json.loads(INSPECT_JSON.read_text(encoding="utf-8"))
    edit(log["samples"])
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    return path


def test_letters_outside_the_choices_are_counted(dataset, tmp_path):
    def edit(samples):
        samples[0]["scores"]["choice"]["answer"] = "Z"
        samples[1]["scores"]["choice"]["answer"] = "D"  # 3 choices: A-C

    preds = read_predictions(edited_json(tmp_path, edit), dataset)
    assert preds.pred[0] == -1 and preds.pred[1] == -1
    assert preds.log["answers_outside_choices"] == 2
    assert any("2 Inspect answers name a letter outside" in n for n in preds.notes)


def test_duplicate_ids_refused_by_id_and_warned_by_order(dataset, tmp_path):
    def dup(samples):
        samples[1]["id"] = samples[0]["id"]

    with pytest.raises(UserError, match="second entry"):
        read_predictions(edited_json(tmp_path, dup), dataset)

    def renamed(samples):
        for j, s in enumerate(samples):
            s["id"] = f"s{j // 2 * 2:03d}"  # pairs share an id, none is a test id

    preds = read_predictions(edited_json(tmp_path, renamed), dataset)
    assert any("occur more than once" in n for n in preds.notes)
    assert any("matched to test items by the order" in n for n in preds.notes)


def test_order_matching_is_checked_against_choice_texts(dataset, tmp_path):
    def shifted(samples):
        for j, s in enumerate(samples):
            s["id"] = f"x{(j + 1) % len(samples):03d}"  # sorted order ≠ dataset order

    with pytest.raises(UserError, match="40 of 40 logged entries have choices that differ"):
        read_predictions(edited_json(tmp_path, shifted), dataset)


def test_shuffled_choices_are_mapped_through_their_texts(dataset, tmp_path):
    def shuffle(samples):
        s = samples[0]
        answer = "ABC".index(s["scores"]["choice"]["answer"])
        s["choices"] = s["choices"][::-1]
        s["scores"]["choice"]["answer"] = "ABC"[2 - answer]
        s["target"] = "ABC"[2 - "ABC".index(s["target"])]

    base = read_predictions(INSPECT_JSON, dataset)
    preds = read_predictions(edited_json(tmp_path, shuffle), dataset)
    assert preds.pred.tolist() == base.pred.tolist() and preds.notes == []


def test_results_file_disagreement_is_reported(dataset, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(LM_EVAL.parent, copy)
    results = json.loads((copy / "results_cuelens_planted.json").read_text())
    results["results"]["cuelens_planted"]["acc,none"] = 0.9
    (copy / "results_cuelens_planted.json").write_text(json.dumps(results))
    preds = read_predictions(copy / LM_EVAL.name, dataset)
    assert any("reports acc,none = 0.9000" in n for n in preds.notes)


def test_missing_zstandard_names_the_extra(dataset, monkeypatch):
    monkeypatch.setitem(sys.modules, "zstandard", None)
    if hasattr(zipfile, "ZIP_ZSTANDARD"):
        pytest.skip("Python ≥ 3.14 reads Zstandard members itself")
    with pytest.raises(UserError, match=r"cuelens\[logs\]"):
        read_predictions(INSPECT_EVAL, dataset)


def test_damaged_zstandard_member_is_one_line(dataset, tmp_path):
    path = tmp_path / "damaged.eval"
    data = bytearray(INSPECT_EVAL.read_bytes())
    with zipfile.ZipFile(INSPECT_EVAL) as archive:
        info = next(i for i in archive.infolist() if i.filename.startswith("samples/"))
    local = info.header_offset
    start = local + 30 + int.from_bytes(data[local + 26:local + 28], "little") + \
        int.from_bytes(data[local + 28:local + 30], "little") + 8  # inside the frame
    data[start:start + 40] = bytes(40)
    path.write_bytes(bytes(data))
    with pytest.raises(UserError, match=f"{info.filename} is damaged"):
        read_predictions(path, dataset)
