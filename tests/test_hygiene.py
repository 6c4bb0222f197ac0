"""Data hygiene (cuelens.audit.hygiene): planted duplicates, overlap, mirrors and label noise
are found exactly; odd labels and --alpha 0 work end to end."""

from __future__ import annotations

import json
import math

import numpy as np
from typer.testing import CliRunner

from cuelens.audit.hygiene import data_hygiene
from cuelens.cli import app
from cuelens.io import format_number, json_number, read_number
from cuelens.data.dataset import MCQ_LABELS, Dataset, Split
from scan_helpers import nli_dataset
from tests.conftest import write_jsonl


def unique_hypotheses(n: int, tag: str) -> list[str]:
    """``n`` unrelated 25-word texts (random words from a large vocabulary)."""
    rng = np.random.default_rng(len(tag))
    return [" ".join([tag] + [f"v{j}" for j in rng.integers(0, 5000, 24)]) for _ in range(n)]


def test_planted_train_test_duplicates_are_found_exactly():
    train_h = unique_hypotheses(60, "train")
    test_h = unique_hypotheses(40, "test")
    copied = [3, 11, 17, 29]  # test items that copy a train item (case and punctuation changed)
    for k, i in enumerate(copied):
        test_h[i] = train_h[10 * k].upper() + "!!"
    near = 33  # the last of 25 words changed: bigram Jaccard 25/27 (with the premise) ≥ 0.8
    test_h[near] = train_h[55].rsplit(" ", 1)[0] + " changed"
    labels = lambda n: [["a", "b", "c"][i % 3] for i in range(n)]  # noqa: E731
    section = data_hygiene(nli_dataset((train_h, labels(60)), (test_h, labels(40))))
    (row,) = section["overlap"]
    assert (row["fit"], row["eval"], row["exact"], row["near"]) == ("train", "test", 4, 1)
    found = {ex["line"] - 1 for ex in section["examples"]["overlap"] if ex["kind"] == "exact"}
    assert found == set(copied)
    (near_row,) = [ex for ex in section["examples"]["overlap"] if ex["kind"] == "near"]
    assert (near_row["line"], near_row["other"]["line"]) == (near + 1, 56)
    assert any("shares 4 exact and 1 near-duplicate" in w for w in section["warnings"])
    assert section["splits"]["test"]["duplicate_items"] == 0


def test_planted_mirrors_duplicates_and_label_noise_are_counted_exactly():
    split = Split(name="all", path="all.jsonl", task="mcq")
    items = []
    for j in range(30):  # 30 mirrored pairs: other premise, same choices, the other one right
        a, b = f"first option {j} is good", f"second option {j} is bad"
        items += [(f"context {j} leads here", [a, b], 0), (f"context {j} turned", [b, a], 0)]
    items += [("same item", ["dup one here", "dup two here"], 0)] * 2  # one item 3 times ...
    items += [("Same item!", ["dup one here", "dup two here"], 1)]  # ... once labelled otherwise
    for i, (premise, choices, label) in enumerate(items):
        split.append({"id": str(i), "premise": premise, "choices": choices, "label": label},
                     raw="{}", line=i + 1)
    dataset = Dataset(name="toy", format="jsonl", task="mcq", train=None, test=split,
                      label_names=list(MCQ_LABELS))
    section = data_hygiene(dataset)
    counts = section["splits"]["all"]
    assert counts["mirrored_pairs"] == 30 + 2  # the planted pairs + (copy 3 vs copies 1, 2)
    assert counts["duplicate_items"] == 2 and counts["duplicate_groups"] == 1
    assert counts["label_conflict_groups"] == 1 and counts["label_conflict_items"] == 3
    assert section["overlap"] == []
    pair = section["examples"]["mirrored"][0]
    assert (pair["line"], pair["other"]["line"]) == (1, 2)


def test_json_number_encoding_round_trips():
    assert [json_number(x) for x in (1.23456789, math.inf, -math.inf, math.nan)] == \
        [1.234568, "inf", "-inf", None]
    assert read_number("inf") == math.inf and math.isnan(read_number(None))
    assert [format_number(v) for v in ("inf", "-inf", None, 0.5)] == ["∞", "−∞", "n/a", "0.500"]


def _nli_rows(n: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    names = ["contradiction", "entailment", "neutral"]
    rows = []
    for i in range(n):
        label = names[i % 3]
        words = " ".join(f"w{j}" for j in rng.integers(0, 60, 5))
        cue = {"contradiction": "nobody ", "entailment": "outdoors "}.get(label, "")
        rows.append({"id": str(i), "premise": f"premise {i} is here", "hypothesis": cue + words,
                     "label": label})
    return rows


def _scan(path, out, *extra):
    return CliRunner().invoke(app, ["scan", str(path), "--out", str(out), "--iterations", "1",
                                    "--features", "none", *extra])


def test_rare_label_is_kept_and_scan_succeeds(tmp_path):
    rows = _nli_rows(150)
    rows[7]["label"] = "entailmnt"  # a typo: a label that occurs once
    write_jsonl(tmp_path / "all.jsonl", rows)
    result = _scan(tmp_path / "all.jsonl", tmp_path / "out")
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert "entailmnt" in results["dataset"]["label_names"]
    assert results["dataset"]["splits"]["all"]["label_counts"]["entailmnt"] == 1


def test_single_class_test_split_works(tmp_path):
    rows = _nli_rows(120)
    write_jsonl(tmp_path / "d" / "train.jsonl", rows[:90])
    write_jsonl(tmp_path / "d" / "test.jsonl", [r for r in rows[90:] if r["label"] == "neutral"])
    result = _scan(tmp_path / "d", tmp_path / "out")
    assert result.exit_code == 0, result.output


def test_too_tiny_file_is_one_clear_error(tmp_path):
    write_jsonl(tmp_path / "all.jsonl", _nli_rows(3))
    result = _scan(tmp_path / "all.jsonl", tmp_path / "out")
    assert result.exit_code == 2
    assert "cannot make 5 folds: the 3 items form only 3 group(s)" in result.output
    assert "Traceback" not in result.output


def test_alpha_zero_works_end_to_end_with_infinities_encoded(tmp_path):
    write_jsonl(tmp_path / "all.jsonl", _nli_rows(150))
    result = _scan(tmp_path / "all.jsonl", tmp_path / "out", "--alpha", "0")
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    values = [v for cue in results["cues"] for v in cue["metrics"].values()]
    assert "-inf" in values  # PMI of a word never seen with a label: log 0
    nobody = next(c for c in results["cues"]
                  if c["token"] == "nobody" and c["label"] == "contradiction")
    assert nobody["metrics"]["rd"] == "inf"  # #(w, other labels) = 0: division by zero
    html = (tmp_path / "out" / "report.html").read_text()
    assert "\\u221e" in html or "∞" in html  # the table renders "inf" as ∞
