"""Outputs never replace a file that a command reads, nor the files of the run whose results it
reads (docs/robustness.md, "Outputs")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cuelens.cli import app
from tests.conftest import write_jsonl


@pytest.fixture
def scan_dir(tmp_path, nli_rows):
    """A scan's output directory (results.json, run.json, cues.csv, easy/hard.jsonl, …)."""
    data = write_jsonl(tmp_path / "data.jsonl", nli_rows * 2)
    out = tmp_path / "scan"
    done = CliRunner().invoke(app, ["scan", str(data), "--out", str(out), "--folds", "2",
                                    "--iterations", "1"])
    assert done.exit_code == 0, done.output
    return out


@pytest.mark.parametrize("name", ["cues.csv", "easy.jsonl", "run.json"])
@pytest.mark.parametrize("command", ["report", "compare"])
def test_a_report_never_replaces_a_file_of_the_scan_it_reads(scan_dir, command, name):
    """`audit report scan/results.json -o scan/cues.csv` and `audit compare a b -o
    a/easy.jsonl` wrote their HTML over the scan's own files (only results.json was kept)."""
    before = {p.name: p.read_bytes() for p in scan_dir.iterdir()}
    args = [command, str(scan_dir / "results.json")]
    args += [str(scan_dir)] if command == "compare" else []
    done = CliRunner().invoke(app, [*args, "-o", str(scan_dir / name)])
    assert done.exit_code == 2, done.output
    said = " ".join(done.output.split())
    assert said.startswith("error: ") and name in said and "same as an input file" in said
    assert {p.name: p.read_bytes() for p in scan_dir.iterdir()} == before
    done = CliRunner().invoke(app, [*args, "-o", str(scan_dir / "page.html")])
    assert done.exit_code == 0, done.output  # a new file beside them is fine


def test_a_report_never_replaces_an_llm_probes_predictions(scan_dir):
    """An LLM probe writes predictions-TEMPLATE.jsonl beside its results.json: `audit report
    DIR/results.json -o DIR/predictions-nli-yes-no.jsonl` wrote the page over them."""
    answers = scan_dir / "predictions-nli-yes-no.jsonl"
    answers.write_text('{"id": "n0", "prediction": "entailment"}\n')
    done = CliRunner().invoke(app, ["report", str(scan_dir / "results.json"), "-o",
                                    str(answers)])
    assert done.exit_code == 2 and "same as an input file" in done.output, done.output
    assert answers.read_text() == '{"id": "n0", "prediction": "entailment"}\n'


def test_a_scan_of_a_split_file_in_the_parent_directory_writes_under_audit_results(
        tmp_path, nli_rows, monkeypatch):
    """`audit scan ../train.jsonl` named the dataset '..', so its default output directory
    audit-results/.. was the working directory, where the results files landed."""
    write_jsonl(tmp_path / "snli" / "train.jsonl", nli_rows * 2)
    (tmp_path / "snli" / "work").mkdir()
    monkeypatch.chdir(tmp_path / "snli" / "work")
    done = CliRunner().invoke(app, ["scan", "../train.jsonl", "--features", "none", "--folds",
                                    "2", "--iterations", "1"])
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in Path().iterdir()) == ["audit-results"]
    assert (Path("audit-results") / "snli" / "results.json").is_file()


def test_a_saved_hugging_face_dataset_is_named_after_its_folder(tmp_path, nli_rows,
                                                                monkeypatch):
    """`audit scan --hf /abs/saved` was named '/abs/saved', so its default output directory
    audit-results//abs/saved was the saved dataset itself, where the results files landed
    (`--hf ../saved`: audit-results/../saved)."""
    datasets = pytest.importorskip("datasets")
    rows = datasets.Dataset.from_list(nli_rows * 2)
    datasets.DatasetDict({"train": rows, "test": rows}).save_to_disk(str(tmp_path / "saved"))
    before = sorted(p.name for p in (tmp_path / "saved").iterdir())
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    for spec in (str(tmp_path / "saved"), "../saved"):
        done = CliRunner().invoke(app, ["scan", "--hf", spec, "--features", "none", "--folds",
                                        "2", "--iterations", "1"])
        assert done.exit_code == 0, done.output
        assert sorted(p.name for p in (tmp_path / "saved").iterdir()) == before
        assert sorted(p.name for p in Path().iterdir()) == ["audit-results"]
        results = Path("audit-results") / "saved" / "results.json"
        assert json.loads(results.read_text())["dataset"]["name"] == "saved"
