"""Evaluation logs (lm-evaluation-harness samples, Inspect logs) as probe predictions.

Synthetic logs in the real tools' formats: the "model" follows a planted cue (it picks the
choice containing ``surely``, and choice A when no choice has it), so ΔAcc is known. The logs the
real tools wrote (docs/examples/goldens/, scripts/eval_log_goldens.py) are checked item by item
in tests/test_eval_goldens.py; damaged and hostile logs are here too.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from scipy.special import softmax

from cuelens.data.loading import load_dataset
from cuelens.errors import UserError
from cuelens.probes.accuracy import delta_accuracy
from cuelens.probes.cues import word_cues
from cuelens.probes.evallogs import detect_format, read_eval_log
from cuelens.probes.sources import read_predictions

CUE = "surely"


def planted_items(n: int = 40) -> list[dict]:
    """Items 0..19 have the cue in one choice: in the gold one for 15 of them. Items 20..39 have
    no cue; their gold is A for 10 of them. Gold position alternates otherwise."""
    rows = []
    for i in range(n):
        gold = i % 2
        choices = [f"option {i} left", f"option {i} right"]
        if i < 20:
            carrier = gold if i < 15 else 1 - gold
            choices[carrier] = f"{CUE} {choices[carrier]}"
        rows.append({"id": f"q{i}", "premise": f"question {i}", "choices": choices,
                     "label": gold})
    return rows


def model_pick(choices: list[str]) -> int:
    return next((j for j, c in enumerate(choices) if CUE in c.split()), 0)


# acc with the cue: 15/20; without: gold at A (the model's default) for 10/20
EXPECTED_DELTA = 15 / 20 - 10 / 20


def lm_eval_lines(rows: list[dict], nested: bool = False) -> list[dict]:
    lines = []
    for i, row in enumerate(rows):
        pick = model_pick(row["choices"])
        lls = [-2.0 - j * 0.5 - 3.0 * (j != pick) for j in range(len(row["choices"]))]
        arguments = {f"gen_args_{j}": {"arg_0": f"Question: {row['premise']}\nAnswer:",
                                       "arg_1": f" {c}"} for j, c in enumerate(row["choices"])}
        responses = [[str(ll), str(j == pick)] for j, ll in enumerate(lls)]  # as lm-eval
        lines.append({"doc_id": i, "doc": {"key": row["id"], "query": row["premise"],
                                           "choices": row["choices"], "gold": row["label"]},
                      "target": str(row["label"]), "arguments": arguments,
                      "resps": [[r] for r in responses],
                      "filtered_resps": None if nested else responses,
                      "filter": "none", "metrics": ["acc", "acc_norm"],
                      "acc": float(pick == row["label"]),
                      "acc_norm": float(pick == row["label"])})
        if nested:
            del lines[-1]["filtered_resps"]
    return lines


def inspect_samples(rows: list[dict]) -> list[dict]:
    samples = []
    for i, row in enumerate(rows):
        pick = model_pick(row["choices"])
        letter, gold = "AB"[pick], "AB"[row["label"]]
        samples.append({"id": i + 1, "epoch": 1, "input": row["premise"],
                        "choices": row["choices"], "target": gold,
                        "metadata": {"key": row["id"]},
                        "output": {"completion": f"ANSWER: {letter}"},
                        "scores": {"choice": {"value": "C" if letter == gold else "I",
                                              "answer": letter}}})
    return samples


def inspect_log(rows: list[dict]) -> dict:
    return {"version": 2, "status": "success",
            "eval": {"task": "planted_cue", "model": "example/model", "dataset": {
                "name": "planted", "samples": len(rows)}},
            "samples": inspect_samples(rows)}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_eval_archive(path: Path, rows: list[dict]) -> Path:
    log = inspect_log(rows)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({k: v for k, v in log.items()
                                                    if k != "samples"}))
        for sample in reversed(log["samples"]):  # member order must not matter
            archive.writestr(f"samples/{sample['id']}_epoch_1.json", json.dumps(sample))
            archive.writestr(f"samples/{sample['id']}_epoch_2.json",
                             json.dumps({**sample, "epoch": 2, "scores": {}}))
    return path


@pytest.fixture
def planted(tmp_path):
    rows = planted_items()
    dataset = load_dataset(str(write_jsonl(tmp_path / "planted.jsonl", rows)))
    return rows, dataset


def cue_delta(dataset, preds) -> dict:
    cue = word_cues(dataset, [CUE])[0]
    correct = (preds.pred == dataset.test.item_labels(dataset.label_names)).astype(float)
    return delta_accuracy(correct, cue.test_mask, n_boot=200)


@pytest.mark.parametrize("nested", [False, True])
def test_lm_eval_samples_give_the_planted_delta(planted, tmp_path, nested):
    rows, dataset = planted
    path = write_jsonl(tmp_path / "samples_planted_2026.jsonl", lm_eval_lines(rows, nested))
    assert detect_format(path) == "lm-eval"
    preds = read_predictions(path, dataset)
    assert preds.pred.tolist() == [model_pick(r["choices"]) for r in rows]
    row = cue_delta(dataset, preds)
    assert row["n_with"] == 20 and row["acc_with"] == 0.75 and row["acc_without"] == 0.5
    assert row["delta"] == pytest.approx(EXPECTED_DELTA)
    # probabilities: softmax of the log-likelihoods
    first = lm_eval_lines(rows)[0]
    lls = np.array([float(r[0]) for r in first["filtered_resps"]])
    assert preds.probs[0] == pytest.approx(np.exp(lls) / np.exp(lls).sum())


def test_lm_eval_matched_by_id_field_in_any_order(planted, tmp_path):
    rows, dataset = planted
    lines = lm_eval_lines(rows)[::-1]
    for j, line in enumerate(lines):
        line["doc_id"] = j  # positions no longer say which item
    path = write_jsonl(tmp_path / "samples.jsonl", lines)
    preds = read_predictions(path, dataset, id_field="key")
    assert cue_delta(dataset, preds)["delta"] == pytest.approx(EXPECTED_DELTA)
    with pytest.raises(UserError, match="no field 'nope'"):
        read_predictions(path, dataset, id_field="nope")


def test_norm_divides_by_continuation_length(tmp_path):
    rows = [{"id": "a", "premise": "p", "choices": ["aa", "bbbb"], "label": 1}]
    dataset = load_dataset(str(write_jsonl(tmp_path / "one.jsonl", rows)))
    line = {"doc_id": 0, "doc": {}, "target": 1,
            "arguments": [["ctx", " aa"], ["ctx", " bbbb"]],
            "filtered_resps": [[-3.0, False], [-4.0, False]]}
    path = write_jsonl(tmp_path / "samples.jsonl", [line])
    assert read_eval_log(path, dataset).pred.tolist() == [0]  # raw: -3 > -4
    normed = read_eval_log(path, dataset, norm="chars")  # -1.5 < -1.0
    assert normed.pred.tolist() == [1]
    assert normed.probs[0] == pytest.approx(softmax(np.array([-1.5, -1.0])))
    line["arguments"] = [["ctx", " é"], ["ctx", " bbb"]]  # "é": 1 character, 2 bytes
    line["filtered_resps"] = [[-1.2, False], [-3.3, False]]
    path = write_jsonl(tmp_path / "samples.jsonl", [line])
    assert read_eval_log(path, dataset, norm="chars").pred.tolist() == [1]  # -1.2 < -1.1
    assert read_eval_log(path, dataset, norm="bytes").pred.tolist() == [0]  # -0.6 > -1.1


@pytest.mark.parametrize("kind", ["json", "eval"])
def test_inspect_log_gives_the_planted_delta(planted, tmp_path, kind):
    rows, dataset = planted
    if kind == "json":
        path = tmp_path / "log.json"
        path.write_text(json.dumps(inspect_log(rows)), encoding="utf-8")
    else:
        path = write_eval_archive(tmp_path / "log.eval", rows)
    assert detect_format(path) == "inspect"
    preds = read_predictions(path, dataset)
    assert preds.probs is None
    row = cue_delta(dataset, preds)
    assert row["acc_with"] == 0.75 and row["delta"] == pytest.approx(EXPECTED_DELTA)
    by_key = read_predictions(path, dataset, id_field="key")
    assert by_key.pred.tolist() == preds.pred.tolist()
    with pytest.raises(UserError, match="log-likelihoods"):
        read_predictions(path, dataset, norm="chars")


def test_inspect_unanswered_sample_is_wrong(planted, tmp_path):
    rows, dataset = planted
    log = inspect_log(rows)
    log["samples"][0]["scores"]["choice"]["answer"] = ""
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    preds = read_predictions(path, dataset)
    assert preds.pred[0] == -1
    assert preds.rows(dataset)[0]["prediction"] is None


@pytest.mark.parametrize("field, value, message", [
    ("scores", ["A"], r"'scores' must be an object .* got list"),
    # an epoch of "1" was taken for a later epoch: the sample was left out ("covers 39 of 40")
    *[("epoch", epoch, "'epoch' must be a whole number from 1") for epoch in ("1", 0, 1.5, True)]])
def test_an_inspect_sample_field_of_another_kind_is_one_line(planted, tmp_path, field, value,
                                                              message):
    rows, dataset = planted
    log = inspect_log(rows)
    log["samples"][3][field] = value
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    with pytest.raises(UserError, match=r"samples\[3\]: " + message):
        read_predictions(path, dataset)


def test_inspect_log_without_samples_is_named_as_such(planted, tmp_path):
    rows, dataset = planted
    header = {k: v for k, v in inspect_log(rows).items() if k != "samples"}
    path = tmp_path / "log.json"
    path.write_text(json.dumps(header), encoding="utf-8")
    with pytest.raises(UserError, match="this Inspect log holds no samples"):
        read_predictions(path, dataset)


def test_log_errors_name_the_problem(planted, tmp_path):
    rows, dataset = planted
    lines = lm_eval_lines(rows)
    short = write_jsonl(tmp_path / "s.jsonl", lines[:-1])
    with pytest.raises(UserError, match="1 test item is not in the log"):
        read_predictions(short, dataset, require_all=True)
    subset = read_predictions(short, dataset)  # default: the logged items, with a note
    assert subset.covered.tolist() == [True] * (len(rows) - 1) + [False]
    assert "covers 39 of 40 test items" in subset.notes[0]
    part, preds = subset.logged_subset(dataset)
    assert part.test.ids == dataset.test.ids[:-1] and len(preds.pred) == len(rows) - 1
    lines[3]["filtered_resps"] = lines[3]["filtered_resps"][:1]
    with pytest.raises(UserError, match="1 choice logged"):
        read_predictions(write_jsonl(tmp_path / "s.jsonl", lines), dataset)
    lines = lm_eval_lines(rows) + [lm_eval_lines(rows)[0]]
    with pytest.raises(UserError, match="second entry"):
        read_predictions(write_jsonl(tmp_path / "s.jsonl", lines), dataset)
    plain = write_jsonl(tmp_path / "p.jsonl", [{"id": r["id"], "prediction": 0} for r in rows])
    with pytest.raises(UserError, match="apply to evaluation logs"):
        read_predictions(plain, dataset, norm="chars")


# ------------------------------------------------------------------ damaged and hostile logs
def test_corrupt_deflate_member_is_one_line(planted, tmp_path):
    rows, dataset = planted
    path = write_eval_archive(tmp_path / "log.eval", rows)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("samples/1_epoch_1.json")
    local = info.header_offset
    start = local + 30 + int.from_bytes(data[local + 26:local + 28], "little") + \
        int.from_bytes(data[local + 28:local + 30], "little")
    data[start:start + info.compress_size] = b"\xff" * info.compress_size
    path.write_bytes(bytes(data))
    with pytest.raises(UserError, match="samples/1_epoch_1.json is damaged"):
        read_predictions(path, dataset)


def test_archive_bomb_is_refused_before_inflating(planted, tmp_path):
    """A 400 MB member that deflates to well under 1 MB: refused from its declared size."""
    import tracemalloc

    rows, dataset = planted
    path = write_eval_archive(tmp_path / "bomb.eval", rows)
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("samples/999_epoch_1.json", "w", force_zip64=True) as member:
            block = b" " * (1 << 20)
            for _ in range(400):
                member.write(block)
    assert path.stat().st_size < 2 << 20
    tracemalloc.start()
    with pytest.raises(UserError, match="larger than the 256 MiB cap"):
        read_predictions(path, dataset)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50 << 20


def test_member_inflating_past_its_declared_size_is_stopped(planted, tmp_path, monkeypatch):
    """A header that understates the size: zipfile stops at the declared size (then the CRC
    fails) and the cap stops any stream that would not; either way one line."""
    from cuelens.probes import logfiles

    rows, dataset = planted
    path = write_eval_archive(tmp_path / "log.eval", rows)
    monkeypatch.setenv(logfiles.CAP_ENV, "0.001")  # ~1 KB: every sample member is larger
    real = zipfile.ZipFile.infolist

    def understated(self):
        infos = real(self)
        for info in infos:
            info.file_size = 10
        return infos

    monkeypatch.setattr(zipfile.ZipFile, "infolist", understated)
    with pytest.raises(UserError, match="is damaged .Bad CRC|inflating past its declared 10"):
        read_predictions(path, dataset)


def test_overlong_jsonl_line_is_refused_with_its_number(planted, tmp_path, monkeypatch):
    rows, dataset = planted
    lines = lm_eval_lines(rows)
    lines[2]["doc"]["padding"] = "x" * 5000
    path = write_jsonl(tmp_path / "samples.jsonl", lines)
    monkeypatch.setenv("CUELENS_MAX_LOG_MB", "0.004")  # ~4 KB
    with pytest.raises(UserError, match=r"line 3: the line is larger than") as err:
        read_predictions(path, dataset)
    assert "CUELENS_MAX_LOG_MB" in str(err.value)
    monkeypatch.setenv("CUELENS_MAX_LOG_MB", "1")
    assert len(read_predictions(path, dataset).pred) == len(rows)


def test_subset_log_with_rotation_logs_is_refused(planted, tmp_path):
    from cuelens.probes.pipeline import probe_dataset
    from cuelens.probes.position import PositionBiasOptions

    rows, dataset = planted
    preds = read_predictions(write_jsonl(tmp_path / "s.jsonl", lm_eval_lines(rows)[:30]),
                             dataset)
    picks = PositionBiasOptions(picks=[np.zeros(len(rows), dtype=int)] * 2)
    with pytest.raises(UserError, match="needs a main log of every test item"):
        probe_dataset(dataset, preds, {}, position_bias=picks)
