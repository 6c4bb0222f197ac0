"""Hostile inputs, round three (issue 56; docs/robustness.md): the newest commands and the
eval-log edges — ``audit filter``'s output directory and options, ``audit judge`` logs,
preference records, subset values, an API frame without word cues, and evaluation logs as the
real tools write them (the goldens of docs/examples/goldens/, edited). Each case gives one line
naming the file (and line) with a non-zero exit and nothing written, or the correct result.
The HTTP server cases are tests/test_hostile_servers.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cuelens.errors import UserError
from tests.test_hostile_inputs import assert_refused, invoke, jsonl, nli_rows, snapshot

GOLDENS = Path(__file__).resolve().parent.parent / "docs" / "examples" / "goldens"
DATA = GOLDENS / "planted.jsonl"
LM_EVAL = GOLDENS / "lm-eval" / "samples_cuelens_planted.jsonl"
INSPECT_JSON = GOLDENS / "inspect-planted.json"


# ------------------------------------------------------------------ audit filter: options
@pytest.mark.parametrize("option, value, message", [
    ("--threshold", "1.5", "--threshold must be a predictability share in (0, 1]"),
    ("--threshold", "nan", "--threshold must be a predictability share in (0, 1]"),
    ("--threshold", "0", "--threshold must be a predictability share in (0, 1]"),
    ("--ensemble", "0", "--ensemble must be at least 1; got 0"),
    ("--train-size", "0", "--train-size must be at least 1; got 0"),
    ("--cutoff", "0", "--cutoff must be at least 1; got 0"),
    ("--target", "-1", "--target must be at least 0; got -1"),
])
def test_filter_refuses_an_option_out_of_range_before_any_work(tmp_path, option, value, message):
    (tmp_path / "d.jsonl").write_text(jsonl(nli_rows(30)))
    begun = time.monotonic()
    assert_refused(tmp_path, ["filter", "d.jsonl", "--method", "aflite", option, value,
                              "--out", "o"], "", message)
    assert time.monotonic() - begun < 10  # refused before the scan


def test_filter_refuses_an_output_directory_holding_other_files(tmp_path):
    (tmp_path / "d.jsonl").write_text(jsonl(nli_rows(30)))
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "notes.txt").write_text("mine")
    assert_refused(tmp_path, ["filter", "d.jsonl", "--out", "o"], "o",
                   "holds notes.txt, which this command did not write")


def test_filter_refuses_an_output_directory_holding_its_input(tmp_path):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "train.jsonl").write_text(jsonl(nli_rows(30)))
    assert_refused(tmp_path, ["filter", "o/train.jsonl", "--out", "o"], "o",
                   "the output directory holds the input")


# ------------------------------------------------------------------ audit filter: publication
def _previous_output(out: Path) -> dict:
    """A previous train/test run's output, with a stale test.jsonl a single-file run lacks."""
    out.mkdir()
    for name in ("train.jsonl", "test.jsonl", "filter.json", "compare.html"):
        (out / name).write_text(f"previous {name}\n")
    (out / "scan-before").mkdir()
    (out / "scan-before" / "results.json").write_text("{}")
    return snapshot(out)


@pytest.mark.slow
def test_filter_never_reads_its_output_and_replaces_it_whole(tmp_path):
    """A stale test.jsonl in --out is neither scanned ("after" is the cross-validated subset of
    the single input file) nor kept: the directory is the new run's outputs only."""
    (tmp_path / "d.jsonl").write_text(jsonl(nli_rows(30)))
    _previous_output(tmp_path / "o")
    code, output = invoke(tmp_path, ["filter", "d.jsonl", "--out", "o", "--min-count", "2"])
    assert code == 0, output
    out = tmp_path / "o"
    assert sorted(p.name for p in out.iterdir()) == \
        ["compare.html", "filter.json", "scan-after", "scan-before", "train.jsonl"]
    after = json.loads((out / "scan-after" / "results.json").read_text())["dataset"]
    kept = len((out / "train.jsonl").read_text().splitlines())
    assert after["cross_validated"] and list(after["splits"]) == ["all"]
    assert after["splits"]["all"]["items"] == kept
    assert not [p for p in tmp_path.iterdir() if ".cuelens-" in p.name]  # no staging left


@pytest.mark.slow
@pytest.mark.parametrize("failure", [KeyboardInterrupt, OSError])
def test_a_failed_filter_run_keeps_the_previous_output(tmp_path, monkeypatch, failure):
    """Ctrl-C or an error after the subset is written (in staging) and before the rescans end:
    the previous output directory is untouched, and no staging directory is left."""
    import cuelens.mitigate.subset as subset

    def stop(*args, **kwargs):
        raise failure("stopped")

    monkeypatch.setattr(subset, "load_subset", stop)
    (tmp_path / "d.jsonl").write_text(jsonl(nli_rows(30)))
    before = _previous_output(tmp_path / "o")
    with pytest.raises(failure):
        from typer.testing import CliRunner

        from cuelens.cli import app

        cwd = os.getcwd()
        os.chdir(tmp_path)
        try:
            result = CliRunner().invoke(app, ["filter", "d.jsonl", "--out", "o",
                                              "--min-count", "2"], catch_exceptions=False)
        finally:
            os.chdir(cwd)
        assert result.exit_code != 0
        raise failure("exited")  # CliRunner turned the error into an exit
    assert snapshot(tmp_path / "o") == before
    assert not [p for p in tmp_path.iterdir() if ".cuelens-" in p.name]


_SLOW_BUILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from cuelens.atomic import replace_directory

    def build(staging):
        (staging / "train.jsonl").write_text("new")
        Path(sys.argv[2]).write_text("building")
        time.sleep(60)

    replace_directory(sys.argv[1], build)
""")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_a_killed_replacement_keeps_the_previous_directory(tmp_path, sig):
    """``replace_directory`` (how ``audit filter`` publishes) killed while building: the old
    directory is whole; the next run removes the dead run's staging directory."""
    from cuelens.atomic import replace_directory

    before = _previous_output(tmp_path / "o")
    marker = tmp_path / "marker"
    child = subprocess.Popen([sys.executable, "-c", _SLOW_BUILD, str(tmp_path / "o"),
                              str(marker)], cwd=Path(__file__).resolve().parent.parent)
    deadline = time.monotonic() + 40
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists()
    child.send_signal(sig)
    child.wait(timeout=20)
    assert snapshot(tmp_path / "o") == before
    replace_directory(tmp_path / "o", lambda staging: (staging / "x").write_text("next"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["marker", "o"]
    assert (tmp_path / "o" / "x").read_text() == "next"


def test_the_subset_is_read_back_by_file_never_by_listing(tmp_path):
    """Stale split files beside the written subset are not part of the rescanned dataset."""
    from cuelens.mitigate.subset import load_subset

    (tmp_path / "train.jsonl").write_text(jsonl(nli_rows(30)))
    (tmp_path / "test.jsonl").write_text(jsonl(nli_rows(12)))  # stale
    dataset = load_subset({"train": tmp_path / "train.jsonl"}, "d (z-filtered)")
    assert dataset.train is None and len(dataset.test) == 30 and dataset.name == "d (z-filtered)"


# ------------------------------------------------------------------ audit judge
FASTCHAT = {"question_id": 81, "model_1": "one", "model_2": "two", "g1_winner": "model_1",
            "g2_winner": "model_2", "turn": 1}


def _fastchat_rows(n: int = 6) -> list[dict]:
    return [{**FASTCHAT, "question_id": 80 + i} for i in range(n)]


def _two_records(n: int = 6) -> list[dict]:
    return [{"pair_id": f"p{i}", "swapped": flipped, "winner": "A"}
            for i in range(n) for flipped in (False, True)]


def _without(row: dict, key: str) -> dict:
    return {k: v for k, v in row.items() if k != key}


JUDGE_CASES = {
    "fastchat without question_id": (
        _fastchat_rows() + [_without(FASTCHAT, "question_id")], "line 7",
        "a FastChat judgment needs question_id"),
    "fastchat without g2_winner": (
        _fastchat_rows() + [_without(FASTCHAT, "g2_winner")], "line 7",
        "a FastChat judgment needs g2_winner"),
    "fastchat pair judged twice": (
        _fastchat_rows() + [{**FASTCHAT, "question_id": 82}], "line 7",
        "pair '82|one|two|1' is judged twice (first on line 3)"),
    "two records judged twice in one order": (
        _two_records() + [{"pair_id": "p2", "swapped": True, "winner": "B"}], "line 13",
        "pair 'p2' is judged twice in the swapped order (first on line 6)"),
    "swapped as an unknown string": (
        _two_records()[:4] + [{"pair_id": "p9", "swapped": "maybe", "winner": "A"}], "line 5",
        "'swapped' must be true or false, got \"maybe\""),
    "swapped as a number": (
        _two_records()[:4] + [{"pair_id": "p9", "swapped": 2, "winner": "A"}], "line 5",
        "'swapped' must be true or false, got 2"),
    # a log of mixed shapes: the other shape's row was read as a broken row of the first's
    # ("needs a pair id ... and a verdict" of a row with a question_id)
    "fastchat row in a two-record log": (
        _two_records() + [FASTCHAT], "line 13",
        "a FastChat judgment (g1_winner/g2_winner) in a log whose line 1 is a record of one "
        "order (swapped/order and a verdict); write one shape per log"),
    "two-record row in a fastchat log": (
        _fastchat_rows() + _two_records(1), "line 7",
        "a record of one order (swapped/order and a verdict) in a log whose line 1 is a "
        "FastChat judgment"),
    "two records without a verdict": (
        _two_records()[:4] + [{"pair_id": "p9", "swapped": True}], "line 5",
        "a judge record needs a verdict (winner/verdict/choice/judgment)"),
    "subset value a list": (
        [{**r, "category": ["x"]} for r in _fastchat_rows()], "line 1",
        "subset field 'category' holds a list"),
}


@pytest.mark.parametrize("case", sorted(JUDGE_CASES))
def test_judge_refuses_a_misread_log_naming_the_row(tmp_path, case):
    rows, where, message = JUDGE_CASES[case]
    (tmp_path / "log.jsonl").write_text(jsonl(rows))
    args = ["judge", "log.jsonl", "--out", "o"]
    assert_refused(tmp_path, args + (["--subset-field", "category"] if "subset" in case else []),
                   f"log.jsonl, {where}", message)


def test_judge_reads_swapped_written_as_text(tmp_path):
    """``"swapped": "false"`` is false (it was read as true: every pair in one order)."""
    from cuelens.audit.judge import judge_section

    rows = [{"pair_id": f"p{i}", "swapped": text, "winner": "A"}
            for i in range(5) for text in ("false", "TRUE")]
    (tmp_path / "log.jsonl").write_text(jsonl(rows))
    section = judge_section(tmp_path / "log.jsonl")
    assert section["n_pairs"] == 5 and section["skipped"] == 0
    assert section["flips"]["count"] == 5  # position A both times: a flip


def test_judge_report_is_titled_by_its_log(tmp_path):
    (tmp_path / "gpt-4_pair.jsonl").write_text(jsonl(_fastchat_rows()))
    code, output = invoke(tmp_path, ["judge", "gpt-4_pair.jsonl", "--out", "o"])
    assert code == 0, output
    html = (tmp_path / "o" / "report.html").read_text()
    assert "<title>cuelens report: gpt-4_pair.jsonl</title>" in html


# ------------------------------------------------------------------ preference pairs, subsets
ARENA = {"prompt": "Say hi.", "response_a": "Hi there.", "response_b": "Hello.",
         "winner_model_a": 1, "winner_model_b": 0, "winner_tie": 0}
PAIR = {"prompt": "Say hi.", "chosen": "Hi there, friend.", "rejected": "Hello."}

PREFERENCE_CASES = {
    "winner flag as a word": ([ARENA] * 3 + [{**ARENA, "winner_model_a": "yes"}], [],
                              "line 4", "field 'winner_model_a' must be 0 or 1, got \"yes\""),
    "winner flag as 2": ([ARENA] * 3 + [{**ARENA, "winner_model_b": 2}], [],
                         "line 4", "field 'winner_model_b' must be 0 or 1, got 2"),
    "chosen as a number": ([PAIR] * 3 + [{**PAIR, "chosen": 42}], [], "line 4",
                           "field 'chosen' must be a response text or a message list, got 42"),
    "rejected as a boolean": ([PAIR] * 3 + [{**PAIR, "rejected": True}], [], "line 4",
                              "field 'rejected' must be a response text or a message list"),
    "subset as a list": ([{**PAIR, "subset": ["x"]}] * 3, [], "line 1",
                         "subset field 'subset' holds a list"),
    "subset field as an object": ([{**PAIR, "domain": {"a": 1}}] * 3,
                                  ["--subset-field", "domain"], "line 1",
                                  "subset field 'domain' holds an object"),
}


@pytest.mark.parametrize("case", sorted(PREFERENCE_CASES))
def test_scan_refuses_a_misread_preference_record(tmp_path, case):
    rows, extra, where, message = PREFERENCE_CASES[case]
    (tmp_path / "prefs.jsonl").write_text(jsonl(rows))
    assert_refused(tmp_path, ["scan", "prefs.jsonl", "--out", "o", *extra],
                   f"prefs.jsonl, {where}", message)


@pytest.mark.parametrize("value, message", [(["bio"], "holds a list"),
                                            ({"a": 1}, "holds an object")])
def test_nli_subset_values_that_are_not_names_are_refused(tmp_path, value, message):
    rows = [{**row, "domain": value if i == 4 else "bio"} for i, row in enumerate(nli_rows(30))]
    (tmp_path / "d.jsonl").write_text(jsonl(rows))
    assert_refused(tmp_path, ["scan", "d.jsonl", "--subset-field", "domain", "--out", "o"],
                   "d.jsonl, line 5", f"subset field 'domain' {message}")


# ------------------------------------------------------------------ API: no word cue at all
def test_api_scan_of_numbers_as_hypotheses_matches_the_file(tmp_path):
    """Integer hypotheses (every one distinct: no word occurs twice) are read as text, as the
    file reader does, and the partial-input baseline is the label shares: D = 0, chance — the
    scikit-learn "0 feature(s)" traceback before."""
    import pandas as pd

    import cuelens

    labels = ["entailment", "neutral", "contradiction"]
    frame = pd.DataFrame({"premise": [f"a man {i}" for i in range(60)],
                          "hypothesis": list(range(60)), "label": labels * 20})
    from_frame = cuelens.scan(frame, features="none")
    path = tmp_path / "d.jsonl"
    path.write_text(frame.to_json(orient="records", lines=True))
    from_file = cuelens.scan(str(path), features="none")
    for result in (from_frame, from_file):
        leakage = result.results["leakage"]
        assert leakage["best"]["D"] == 0.0 and leakage["verdict"] == "chance"
        assert leakage["baselines"][0]["accuracy"] == pytest.approx(1 / 3, abs=1e-6)


# ------------------------------------------------------------------ evaluation logs
@pytest.fixture(scope="module")
def planted():
    from cuelens.data.loading import load_dataset

    return load_dataset(str(DATA))


def _edited_lm_eval(tmp_path: Path, edit, every: int) -> Path:
    lines = LM_EVAL.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    for row in rows[::every]:
        for argument in row["arguments"].values():
            argument["arg_1"] = edit(argument["arg_1"])
    path = tmp_path / "run" / LM_EVAL.name
    path.parent.mkdir()
    path.write_text(jsonl(rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("edit, every", [(str.upper, 4), (str.upper, 1),
                                         (lambda t: t.replace(" ", "  ") + " ", 3)])
def test_lm_eval_choices_written_differently_still_match(planted, tmp_path, edit, every):
    """A task that changes its choices' case or spacing (``map('lower')`` on ARCT): some items
    changed were refused as "not of this dataset"; now matched, counted and noted."""
    from cuelens.probes.sources import read_predictions

    base = read_predictions(LM_EVAL, planted)
    preds = read_predictions(_edited_lm_eval(tmp_path, edit, every), planted)
    changed = len(range(0, 40, every))
    assert preds.pred.tolist() == base.pred.tolist()
    assert preds.log["choices_written_differently"] == changed
    assert any(f"{changed} of 40 logged entries write their choices differently" in n
               for n in preds.notes)


def test_choice_texts_match_across_unicode_forms():
    from cuelens.probes.evallogs import choice_key

    assert choice_key("Caf\u00e9  au lait") == choice_key(" CAFE\u0301 au\tlait ")
    assert choice_key("cafe") != choice_key("café")


def test_lm_eval_choices_that_really_differ_are_still_refused(planted, tmp_path):
    from cuelens.probes.sources import read_predictions

    with pytest.raises(UserError, match="10 of 40 logged entries have choices that differ"):
        read_predictions(_edited_lm_eval(tmp_path, lambda t: t + " extra", 4), planted)


def _unanswered_log(tmp_path: Path, n: int) -> Path:
    log = json.loads(INSPECT_JSON.read_text(encoding="utf-8"))
    for sample in log["samples"][:n]:
        sample["scores"]["choice"]["answer"] = ""  # Inspect: an answer outside the choices
    path = tmp_path / f"unanswered-{n}.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    return path


@pytest.mark.parametrize("n", [40, 10])
def test_inspect_samples_without_an_answer_are_counted(tmp_path, n):
    """40 of 40 unanswered read as "accuracy 0.0%", interpretable, with a confident verdict;
    now counted in results.json and the terminal, and no verdict past half."""
    out = tmp_path / "out"
    code, output = invoke(tmp_path, ["probe", str(DATA), "-p", str(_unanswered_log(tmp_path, n)),
                                     "--out", str(out), "--bootstrap", "50"])
    assert code == 0, output
    flat = " ".join(output.split())
    assert f"{n} of 40 Inspect samples have no answer" in flat
    probe = json.loads((out / "results.json").read_text())["probe"]
    assert probe["model"]["log"]["unanswered"] == n and probe["sanity"]["unanswered"] == n
    if n == 40:
        assert not probe["sanity"]["interpretable"]
        assert "Not interpretable: the model gave no answer for most items" in flat
    else:
        assert "no answer for most items" not in flat


def test_lm_eval_results_file_names_the_samples_file(tmp_path):
    code, output = invoke(tmp_path, ["probe", str(DATA), "-p",
                                     str(LM_EVAL.parent / "results_cuelens_planted.json"),
                                     "--out", "o"])
    assert code == 2 and "Traceback" not in output and len(output.strip().splitlines()) == 1
    assert "this is lm-eval's results file (aggregate scores, no items); pass the samples " \
        "file beside it: samples_cuelens_planted.jsonl" in output


def test_lm_eval_output_directory_picks_its_one_samples_file(planted):
    from cuelens.probes.sources import read_predictions

    preds = read_predictions(LM_EVAL.parent, planted)
    assert preds.pred.tolist() == read_predictions(LM_EVAL, planted).pred.tolist()
    assert preds.notes[0].startswith("read samples_cuelens_planted.jsonl, the only samples file")


def test_lm_eval_output_directory_with_several_matching_files_lists_them(tmp_path):
    assert_refused(tmp_path, ["probe", str(DATA), "-p", str(GOLDENS), "--out", "o"],
                   str(GOLDENS), "2 of its 2 lm-eval samples files match this dataset "
                   "(lm-eval/samples_cuelens_planted.jsonl, "
                   "lm-eval-limit20/samples_cuelens_planted.jsonl); pass one of them")


def test_a_directory_without_samples_files_is_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    assert_refused(tmp_path, ["probe", str(DATA), "-p", "empty", "--out", "o"], "empty",
                   "a directory without lm-eval samples_*.jsonl files")
