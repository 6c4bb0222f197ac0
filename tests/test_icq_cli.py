"""`audit scan --features/--cache-dir` writes the ICQ sections of results.json (issue 3)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cuelens.cli import app
from cuelens.audit.parse_cache import ParseCache


def write(path, hyps_by_label):
    rows = [{"id": f"{label}{i}", "premise": "The man is in the kitchen.", "hypothesis": h,
             "label": label} for label, hyps in hyps_by_label.items() for i, h in enumerate(hyps)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.mark.slow
def test_scan_features_option(tmp_path):
    ParseCache.clear_memory()
    plan = {"contradiction": ["The man is not here."] * 16 + ["The man sleeps here."] * 4,
            "entailment": ["The man is not here."] * 2 + ["The man sleeps here."] * 18,
            "neutral": ["The man is not here."] * 2 + ["The man sleeps here."] * 18}
    train, test = write(tmp_path / "train.jsonl", plan), write(tmp_path / "test.jsonl", plan)
    cache = tmp_path / "cache"
    result = CliRunner().invoke(app, ["scan", "--train", train, "--test", test, "--out",
                                      str(tmp_path / "out"), "--cache-dir", str(cache),
                                      "--iterations", "1", "--min-count", "1"])
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert list(results)[-4:] == ["features", "features_config", "lengths", "next_steps"]
    assert results["features_config"] == {  # the default set
        "features": ["word", "negation", "tense", "sentiment"], "min_support": 10,
        "cv_folds_used": False}
    top = results["features"][0]  # NEGATION=present ties WORD=not, and sorts first
    assert (top["feature"], top["train_support"], top["train_dist"]["contradiction"]) == \
        ("NEGATION", 20, 0.8)
    assert [p.parent.name for p in cache.rglob("*.npz")] == ["tense-v1-tok2vec+tagger+parser"]

    none = CliRunner().invoke(app, ["scan", "--train", train, "--test", test, "--out",
                                    str(tmp_path / "none"), "--features", "none",
                                    "--iterations", "1"])
    assert none.exit_code == 0, none.output
    assert "features" not in json.loads((tmp_path / "none" / "results.json").read_text())

    bad = CliRunner().invoke(app, ["scan", "--train", train, "--test", test, "--out",
                                   str(tmp_path / "bad"), "--features", "negaton"])
    assert bad.exit_code == 2 and "unknown feature(s) negaton" in bad.output
