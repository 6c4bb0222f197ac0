"""The scan → probe hand-off (issue 24): the probe reads the easy/hard split from whatever the scan
wrote — the per-item table (items.parquet / items.jsonl), easy/hard.jsonl or easy/hard.ids.txt —
and gets the same split and the same probe results from each; a directory with none is one
clear error."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import cuelens
from cuelens.audit.bias_items import parquet_available
from cuelens.cli import app
from cuelens.data.synthetic import make_nli
from cuelens.errors import UserError
from cuelens.probes.scan_source import load_scan_dir

runner = CliRunner()
VARIANTS = {"table-parquet": ["items.parquet"], "table-jsonl": ["items.jsonl"],
            "records": ["easy.jsonl", "hard.jsonl"], "ids": ["easy.ids.txt", "hard.ids.txt"]}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def scanned(tmp_path_factory):
    """A scan saved with records and with ids, and one directory per way of keeping the split
    (results.json plus only those files); with tests/conftest.py's small SGD budget: the tests
    compare the ways of handing its split over, never SGD's accuracies."""
    root = tmp_path_factory.mktemp("handoff")
    rows = make_nli(300, seed=11)
    data = write_jsonl(root / "data.jsonl", rows)
    result = cuelens.scan(str(data), features="none", folds=3, iterations=1, seed=2)
    result.save(root / "full", item_files="records")
    result.save(root / "with-ids", item_files="ids", report=False)
    for name, files in VARIANTS.items():
        target = root / name
        target.mkdir()
        for file in ["results.json", *files]:
            source = root / ("with-ids" if name == "ids" else "full") / file
            shutil.copy(source, target / file)
    return root, data, rows, result


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_scan_output_gives_the_scans_split(scanned, variant):
    root, _, _, result = scanned
    if variant == "table-parquet" and not parquet_available():
        pytest.skip("items.parquet needs pyarrow")
    results, item_easy = load_scan_dir(root / variant, result.dataset)
    np.testing.assert_array_equal(item_easy, result.item_easy)
    assert 0 < item_easy.sum() < len(item_easy)
    assert results == json.loads((root / "full" / "results.json").read_text())


def test_the_table_is_matched_by_id_when_the_data_is_reordered(scanned, tmp_path):
    root, _, rows, result = scanned
    shuffled = rows[:]
    random.Random(0).shuffle(shuffled)
    dataset = cuelens.load_dataset(str(write_jsonl(tmp_path / "shuffled.jsonl", shuffled)))
    _, item_easy = load_scan_dir(root / "table-jsonl", dataset)
    expected = dict(zip(result.dataset.test.ids, result.item_easy.tolist()))
    assert item_easy.tolist() == [expected[i] for i in dataset.test.ids]


@pytest.mark.parametrize("variant", ["table-jsonl", "records", "ids"])
def test_other_data_is_refused(scanned, tmp_path, variant):
    root, _, rows, _ = scanned
    dataset = cuelens.load_dataset(str(write_jsonl(tmp_path / "fewer.jsonl", rows[1:])))
    with pytest.raises(UserError, match="the scan was made from different data"):
        load_scan_dir(root / variant, dataset)


def test_a_directory_without_flags_is_one_clear_line(scanned, tmp_path):
    root, data, rows, _ = scanned
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(root / "full" / "results.json", bare / "results.json")
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": r["id"], "prediction": r["label"]}
                                               for r in rows])
    result = runner.invoke(app, ["probe", str(data), "-p", str(preds), "--scan", str(bare),
                                 "--out", str(tmp_path / "out")], env={"COLUMNS": "300"})
    assert result.exit_code != 0 and "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "no per-item easy/hard flags" in lines[0], result.output
    assert str(bare) in lines[0]


@pytest.mark.slow
def test_probe_via_the_table_equals_the_probe_via_item_files(scanned, tmp_path):
    """`audit probe --scan` on a directory with the per-item table only (what a scan with
    --item-files none writes) and on one with the ids only: results.json byte-identical to the
    probe on easy/hard.jsonl."""
    root, data, rows, _ = scanned
    wrong = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    preds = write_jsonl(tmp_path / "p.jsonl", [
        {"id": r["id"], "prediction": r["label"] if i % 4 else wrong[r["label"]]}
        for i, r in enumerate(rows)])
    outputs = {}
    for variant in ("records", "table-jsonl", "ids"):
        out = tmp_path / variant
        result = runner.invoke(app, ["probe", str(data), "-p", str(preds), "--scan",
                                     str(root / variant), "--out", str(out),
                                     "--bootstrap", "200"])
        assert result.exit_code == 0, result.output
        outputs[variant] = (out / "results.json").read_bytes()
    assert "easy_hard" in json.loads(outputs["records"])["probe"]
    assert outputs["table-jsonl"] == outputs["records"] == outputs["ids"]


@pytest.mark.slow
def test_a_streaming_scan_hands_over_its_ids(tmp_path):
    """`audit scan --stats streaming --item-files ids` (what scans of more than a million items
    write by default): without its items table the probe takes the split from the id lists."""
    rows = make_nli(300, seed=12)
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    scan = runner.invoke(app, ["scan", str(data), "--stats", "streaming", "--item-files", "ids",
                               "--folds", "3", "--iterations", "1", "--features", "none",
                               "--out", str(tmp_path / "scan")])
    assert scan.exit_code == 0, scan.output
    for name in ("items.jsonl", "items.parquet"):  # streaming scans write the table too
        if name == "items.jsonl" or parquet_available():
            (tmp_path / "scan" / name).unlink()
    dataset = cuelens.load_dataset(str(data))
    _, item_easy = load_scan_dir(tmp_path / "scan", dataset)
    easy_ids = (tmp_path / "scan" / "easy.ids.txt").read_text().split()
    assert sorted(np.asarray(dataset.test.ids)[item_easy].tolist()) == sorted(easy_ids)
    wrong = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    right = {r["id"]: bool(i % 4) for i, r in enumerate(rows)}
    preds = write_jsonl(tmp_path / "p.jsonl", [
        {"id": r["id"], "prediction": r["label"] if right[r["id"]] else wrong[r["label"]]}
        for r in rows])
    probed = cuelens.probe(dataset, predictions=preds, scan=tmp_path / "scan", bootstrap=100)
    expected = np.mean([right[i] for i in easy_ids])  # by hand, from the scan's own id list
    assert probed.results["probe"]["easy_hard"]["easy_accuracy"] == pytest.approx(expected,
                                                                                  abs=1e-6)


def test_a_scan_of_another_training_split_is_refused(tmp_path):
    """`audit probe --train T2 --test t --scan S` where S scanned --train T1 --test t: the test
    items matched, so the scan's cues (counted on T1) were taken as those of T2, silently."""
    rows = make_nli(240, seed=5)
    train, test = rows[:180], rows[180:]
    train_path = write_jsonl(tmp_path / "train.jsonl", train)
    test_path = write_jsonl(tmp_path / "test.jsonl", test)
    result = cuelens.scan(train=str(train_path), test=str(test_path), features="none",
                          folds=3, iterations=1)
    result.save(tmp_path / "scan", item_files="records", report=False)
    fewer = cuelens.load_dataset(train=str(write_jsonl(tmp_path / "fewer.jsonl", train[:150])),
                                 test=str(test_path))
    with pytest.raises(UserError, match="the scan's train split has 180 items, the data given "
                                        "150: the scan was made from different data"):
        load_scan_dir(tmp_path / "scan", fewer)
    results, _ = load_scan_dir(tmp_path / "scan", cuelens.load_dataset(
        train=str(train_path), test=str(test_path)))
    assert results["dataset"]["splits"]["train"]["items"] == 180
