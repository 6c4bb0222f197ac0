"""--subset-field on MCQ data: per-subset baselines with Holm, no-context baselines."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import cuelens
from cuelens.cli import app
from cuelens.jsonio import write_jsonl
from cuelens.reports.schema import validate_results


def subject_records(n: int, seed: int = 0) -> list[dict]:
    """Passage + question + 4 choices per item. Subject ``length``: the gold choice is the
    longest; ``memory``: the question (without its passage) repeats with a fixed gold answer
    text; ``clean``: nothing planted (choices of one length, unique questions)."""
    rng = np.random.default_rng(seed)
    records = []
    for subject in ("clean", "length", "memory"):
        for i in range(n):
            gold = int(rng.integers(0, 4))
            words = [f"w{int(x)}" for x in rng.integers(0, 500, 4)]
            if subject == "length":
                choices = [w + ("x" * 10 if j == gold else "") for j, w in enumerate(words)]
            elif subject == "memory":
                choices = list(words)
                choices[gold] = "paris"
            else:
                choices = words
            question = "what is the capital city" if subject == "memory" else \
                f"question {subject} {i} on {words[0]}"
            records.append({"id": f"{subject}{i}", "premise": f"passage {subject} {i} " +
                            " ".join(f"p{int(x)}" for x in rng.integers(0, 500, 6)),
                            "question": question, "choices": choices, "label": gold,
                            "subject": subject})
    return records


@pytest.mark.slow
def test_mcq_subset_table_flags_only_the_planted_cells(tmp_path):
    path = tmp_path / "mcq.jsonl"
    write_jsonl(path, subject_records(120))
    result = cuelens.scan(path, features="none", folds=3, iterations=1, subset_field="subject")
    validate_results(result.results)
    table = result.results["subsets"]
    assert table["measure"] == "accuracy" and [r["subset"] for r in table["rows"]] == \
        ["clean", "length", "memory"]
    hits = {(r["subset"], name) for r in table["rows"] for name, c in r["cells"].items()
            if c["significant"] and c["effect"] > 0}
    assert ("length", "longest choice") in hits
    assert ("memory", "no context: question only") in hits
    assert not any(s == "clean" for s, _ in hits)
    length = next(r for r in table["rows"] if r["subset"] == "length")["cells"]
    assert length["longest choice"]["value"] == 1.0 and length["longest choice"]["effect"] == 0.75
    rows = {r["name"] for r in result.results["mcq_baselines"]["rows"]}
    assert {"no context: overlap", "no context: question only"} <= rows


@pytest.mark.slow
def test_subset_field_on_the_command_line(tmp_path):
    path = tmp_path / "mcq.jsonl"
    write_jsonl(path, subject_records(60, seed=1))
    out = tmp_path / "out"
    run = CliRunner().invoke(app, ["scan", str(path), "--out", str(out), "--features", "none",
                                   "--folds", "3", "--iterations", "1", "--subset-field",
                                   "subject"])
    assert run.exit_code == 0, run.output
    assert "subsets by subject" in run.output
    assert "Subsets by subject" in (out / "report.html").read_text()
    run = CliRunner().invoke(app, ["scan", str(path), "--out", str(tmp_path / "o2"),
                                   "--features", "none", "--subset-field", "nope"])
    assert run.exit_code == 2 and "nope" in run.output


@pytest.mark.parametrize("limit", [1, 5, 7, 12, 100])
def test_sampled_subset_scans_keep_whole_groups_within_the_limit(limit):
    from cuelens.audit.subsets import sample_groups

    rng = np.random.default_rng(3)
    groups = [f"g{int(g)}" if g < 8 else None for g in rng.integers(0, 10, 30)]
    kept = sample_groups(groups, limit, seed=1)
    assert kept.tolist() == sorted(set(kept.tolist()))
    assert np.array_equal(kept, sample_groups(groups, limit, seed=1))  # seeded
    if limit >= len(groups):
        assert len(kept) == len(groups)
        return
    sizes = {g: groups.count(g) for g in set(groups) if g is not None}
    largest = max(sizes.values())
    assert 0 < len(kept) <= max(limit, largest)  # at least one group, even one over the limit
    named = {groups[i] for i in kept if groups[i] is not None}
    for g in named:  # every sampled group is whole
        assert sum(groups[i] == g for i in kept) == sizes[g]
    assert len(kept) <= limit or len(named) + sum(groups[i] is None for i in kept) == 1


@pytest.mark.slow  # a whole MCQ scan with three subset scans: ~15 s on the loaded box
def test_subset_next_steps_reach_results_json_computed_once(tmp_path, monkeypatch):
    """The next steps are derived once, after the subsets table is in (issue 54): the subset
    steps are in results.json, equal to the steps of the whole file."""
    import cuelens.audit.advice as advice

    calls: list[int] = []
    derive = advice.next_steps
    monkeypatch.setattr(advice, "next_steps", lambda results: calls.append(1) or derive(results))
    path = tmp_path / "mcq.jsonl"
    write_jsonl(path, subject_records(25, seed=1))
    results = cuelens.scan(path, features="none", folds=3, iterations=1,
                           subset_field="subject").results
    assert len(calls) == 1
    subset_steps = [s["action"] for s in results["next_steps"] if s["section"] == "subsets"]
    assert "remove what the rule “no context: question only” exploits — first in subject " \
        "memory" in subset_steps  # the planted memorised answer
    assert results["next_steps"] == derive({k: v for k, v in results.items()
                                            if k != "next_steps"})


def test_a_subset_field_the_records_lack_fails_before_the_scan(tmp_path, monkeypatch):
    """A mistyped --subset-field is one error line before the word audit runs (it came after
    the whole scan)."""
    from cuelens.audit import pipeline

    def scanned(*args, **kwargs):
        raise AssertionError("the scan ran before the subset field was read")

    monkeypatch.setattr(pipeline, "_scan_segmented", scanned)
    path = tmp_path / "mcq.jsonl"
    write_jsonl(path, subject_records(20, seed=2))
    run = CliRunner().invoke(app, ["scan", str(path), "--out", str(tmp_path / "out"),
                                   "--features", "none", "--subset-field", "subjcet"])
    assert run.exit_code == 2, run.output
    assert "line 1" in run.output and "no subset in field 'subjcet'" in run.output
    assert not (tmp_path / "out" / "results.json").exists()


def test_nli_subset_table_in_the_terminal_shows_each_subsets_leakage(tmp_path):
    """An NLI table (the leakage column alone) prints each subset's D and verdict as the report
    does (it printed '0 of 0 cells significant' and nothing else)."""
    from cuelens.data.synthetic import make_nli

    records = [{**record, "genre": "fiction" if i % 2 else "news"}
               for i, record in enumerate(make_nli(160, seed=4))]
    path = tmp_path / "nli.jsonl"
    write_jsonl(path, records)
    out = tmp_path / "out"
    run = CliRunner().invoke(app, ["scan", str(path), "--out", str(out), "--features", "none",
                                   "--folds", "3", "--iterations", "1", "--subset-field",
                                   "genre"])
    assert run.exit_code == 0, run.output
    printed = " ".join(run.output.split())  # the terminal's line breaks
    assert "subsets by genre: 2 subsets word-cue D" in printed and "0 of 0" not in printed
    rows = json.loads((out / "results.json").read_text())["subsets"]["rows"]
    for row in rows:
        d = row["leakage"]
        assert f"{row['subset']} {100 * d['effect']:+.1f} [{100 * d['ci'][0]:+.1f}, " \
               f"{100 * d['ci'][1]:+.1f}] {d['verdict']}" in printed


@pytest.mark.parametrize("blank", ["", " "])
def test_an_empty_subset_field_is_one_error_in_the_cli_and_the_api(tmp_path, blank):
    """--subset-field "" was ignored (the scan ran without subsets); subset_field="" failed on
    line 1 with "no subset in field ''"."""
    path = tmp_path / "mcq.jsonl"
    write_jsonl(path, subject_records(5, seed=2))
    run = CliRunner().invoke(app, ["scan", str(path), "--out", str(tmp_path / "out"),
                                   "--features", "none", "--subset-field", blank])
    assert run.exit_code == 2, run.output
    assert "subset_field (--subset-field) is empty" in " ".join(run.output.split())
    with pytest.raises(cuelens.UserError, match=r"subset_field \(--subset-field\) is empty"):
        cuelens.scan(path, subset_field=blank, features="none")
