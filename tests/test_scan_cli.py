"""`audit scan` end to end: outputs, --fail-above, and output paths that would overwrite inputs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cuelens.cli import app
from cuelens.data.synthetic import make_mcq
from tests.conftest import write_jsonl


def _mcq_dir(tmp_path):
    records = make_mcq(500, seed=1, vocab_size=300)
    write_jsonl(tmp_path / "data" / "train.jsonl", records[:400])
    write_jsonl(tmp_path / "data" / "test.jsonl", records[400:])
    return tmp_path / "data"


def _scan(*args):
    return CliRunner().invoke(app, ["scan", *map(str, args), "--iterations", "1",
                                    "--features", "word"])


@pytest.mark.slow
def test_scan_writes_outputs_and_gates_on_d(tmp_path):
    data = _mcq_dir(tmp_path)
    result = _scan(data, "--out", tmp_path / "out", "--fail-above", "99")
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    best = results["leakage"]["best"]["D"] * 100
    assert best > 5  # the planted 'definitely' cue leaks
    easy = (tmp_path / "out" / "easy.jsonl").read_text().splitlines()
    hard = (tmp_path / "out" / "hard.jsonl").read_text().splitlines()
    original = (data / "test.jsonl").read_text().splitlines()
    assert sorted(easy + hard) == sorted(original)  # original records, byte for byte
    gated = _scan(data, "--out", tmp_path / "out2", "--fail-above", f"{best - 1:.3f}")
    assert gated.exit_code == 1 and "FAIL" in gated.output


def test_scan_refuses_to_overwrite_an_input(tmp_path):
    data = _mcq_dir(tmp_path)
    (data / "test.jsonl").rename(data / "easy.jsonl")
    result = _scan("--train", data / "train.jsonl", "--test", data / "easy.jsonl", "--out", data)
    assert result.exit_code == 2 and "same as an input" in result.output
    assert len((data / "easy.jsonl").read_text().splitlines()) == 100


def test_unknown_metric_is_a_clear_error(tmp_path):
    result = _scan(_mcq_dir(tmp_path), "--metric", "nope", "--out", tmp_path / "o")
    assert result.exit_code == 2 and "unknown metric 'nope'" in result.output
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("stats", ["exact", "streaming"])
def test_inferred_split_role_is_said_and_named_in_advice(tmp_path, stats):
    """dev + test files: the terminal and results.json say that dev.jsonl is used as train, and
    the hygiene step names that file, not a train split that does not exist — in both memory
    modes alike (the streamed scan keys its splits as the exact scan does)."""
    records = make_mcq(120, seed=1, vocab_size=300)
    write_jsonl(tmp_path / "data" / "dev.jsonl", records[:80] + records[:3])  # 3 exact copies
    write_jsonl(tmp_path / "data" / "test.jsonl", records[80:])
    result = CliRunner().invoke(app, ["scan", str(tmp_path / "data"), "--out",
                                      str(tmp_path / "out"), "--iterations", "1", "--features",
                                      "none", "--stats", stats])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "note: dev.jsonl used as train: no train file" in output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["dataset"]["split_roles"] == {"train": "dev.jsonl", "why": "no train file"}
    drop = [s["action"] for s in results["next_steps"] if s["action"].startswith("drop")]
    assert drop == ["drop the 3 redundant exact copies in dev.jsonl (used as train)"]
    assert "train split" not in output


def test_scan_progress_fills_one_bar_in_stage_order():
    from cuelens.commands.scan import staged_progress

    calls = ([("tokenise", 0.0), ("tokenise", 1.0)] + [("leakage", f / 4) for f in range(5)]
             + [("easy_hard", f / 2) for f in range(3)]
             + [("hygiene", 1.0), ("features: parse dev", 0.0), ("features: parse dev", 0.5),
                ("features: parse test", 0.5), ("features: parse test", 1.0),
                ("features: score", 1.0)])
    seen = []
    update = staged_progress(lambda stage, done: seen.append((stage, done)), True)
    for stage, fraction in calls:
        update(stage, fraction)
    assert [s for s, _ in seen] == [s for s, _ in calls]  # the bar names every stage and split
    done = [d for _, d in seen]
    assert done == sorted(done) and done[-1] == pytest.approx(1.0)
    assert dict(seen)["hygiene"] == pytest.approx(0.4)  # the word stages fill 40% …
    assert seen[-3][1] == pytest.approx(0.7)  # … and the parse of both splits the rest
    seen.clear()
    update = staged_progress(lambda stage, done: seen.append((stage, done)), False)
    for stage, fraction in calls[:11] + [("bias items", 1.0)]:
        update(stage, fraction)
    assert seen[1] == ("tokenise", pytest.approx(0.05))  # not the whole bar (it ran back to 0)
    assert seen[-2] == ("hygiene", pytest.approx(1.0))  # --features none: the word stages fill it
    assert seen[-1] == ("bias items", pytest.approx(1.0))  # a stage without a span: no jump


def test_fail_above_without_a_headline_d_is_an_error_not_a_pass(tmp_path):
    """Questions with different numbers of choices get no word-cue leakage table: --fail-above
    read its D as 0 and passed (exit 0) however strong the planted artifact."""
    rows = [{"id": f"q{i}", "premise": f"Question {i}?", "label": 0,
             "choices": [f"the right and much longer answer {i}"]
             + [f"wrong {i} {j}" for j in range(1 + i % 3)]} for i in range(60)]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    result = _scan(data, "--out", tmp_path / "out", "--fail-above", "10")
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "--fail-above gates on the headline D of the word-cue leakage table" in said
    assert "its conclusion is 'leakage'" in said
    assert (tmp_path / "out" / "results.json").exists()


def test_terminal_summary_shows_control_characters_of_labels_as_escapes(tmp_path):
    """A label holding an escape sequence reached the terminal raw in the cue table and the next
    steps: it restyled the terminal. The labels' normal form now drops it (09493d4), and the
    rewrite's warning shows the original with an escape, as the repr and audit score's table
    do."""
    from cuelens.data.synthetic import make_nli

    rows = make_nli(120, seed=4)
    for row in rows:
        if row["label"] == "neutral":
            row["label"] = "neu\x1b[41mtral"
    write_jsonl(tmp_path / "d.jsonl", rows)
    result = CliRunner().invoke(app, ["scan", str(tmp_path / "d.jsonl"), "--out",
                                      str(tmp_path / "out"), "--features", "none", "--folds",
                                      "2", "--iterations", "1"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "neu\\x1b[41mtral" in result.output
