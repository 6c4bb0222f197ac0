"""`audit scan --stats streaming` and `cuelens.scan(stats="streaming")` end to end: outputs,
determinism, sections shared with the exact scan, the exact scan's results where the data are
small enough for its grouped folds (hashed folds above GROUPED_FOLD_INSTANCES), and clear
errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import cuelens
from cuelens.audit import chunk_scan
from cuelens.audit.streamed_hygiene import data_hygiene
from cuelens.cli import app
from cuelens.data.synthetic import make_mcq, make_nli
from cuelens.engine.streaming import load_streaming
from cuelens.reports.schema import validate_results
from tests.conftest import write_jsonl
from tests.scan_helpers import without_the_mode


def _scan(*args):
    return CliRunner().invoke(app, ["scan", *map(str, args), "--iterations", "2",
                                    "--folds", "3"])


@pytest.fixture()
def nli_file(tmp_path):
    path = tmp_path / "nli.jsonl"
    records = make_nli(600, seed=5, vocab_size=300)
    records[10]["premise"] = records[3]["premise"]  # a sibling: one fold key
    records[11] = dict(records[4], id="copy")  # an exact duplicate item
    write_jsonl(path, records)
    return path


@pytest.fixture()
def hashed(monkeypatch):
    """Hashed folds for the 600-item file (the threshold just below it)."""
    monkeypatch.setattr(chunk_scan, "GROUPED_FOLD_INSTANCES", 599)


OUTPUTS = ["items.jsonl", "easy.jsonl", "hard.jsonl", "cues.csv"]


def test_small_streamed_scan_is_the_exact_scan(tmp_path, nli_file):
    """Up to GROUPED_FOLD_INSTANCES instances (600 items here) a streamed scan deals the exact
    scan's grouped, stratified folds from its chunks: results.json is the exact scan's but for
    what names the mode, and the per-item table, easy/hard files and cue table are the same
    bytes."""
    exact = _scan(nli_file, "--features", "none", "--out", tmp_path / "exact")
    streamed = _scan(nli_file, "--stats", "streaming", "--out", tmp_path / "streamed")
    assert exact.exit_code == 0 and streamed.exit_code == 0, streamed.output
    results, expected = (json.loads((tmp_path / out / "results.json").read_text())
                         for out in ("streamed", "exact"))
    assert results["config"]["statistics"] == "streaming"
    assert results["notes"] == [chunk_scan.GROUPED_STREAMING_NOTE] and "notes" not in expected
    assert json.dumps(without_the_mode(results)) == json.dumps(expected)
    for name in OUTPUTS:
        assert (tmp_path / "streamed" / name).read_bytes() == \
            (tmp_path / "exact" / name).read_bytes()


def test_streamed_train_and_dev_files_are_named_as_the_exact_scan_names_them(tmp_path):
    """A directory of train.jsonl and dev.jsonl (dev used as the test split): the streamed
    scan's dataset section names the splits train and test as the exact scan's does (it keyed
    them by file, so the conclusion looked for a test or all split and failed), and the whole
    results.json is the exact scan's but for the mode."""
    data = tmp_path / "data"
    data.mkdir()
    records = make_nli(400, seed=9, vocab_size=200)
    write_jsonl(data / "train.jsonl", records[:250])
    write_jsonl(data / "dev.jsonl", [dict(r, id=f"d{r['id']}") for r in records[250:]])
    exact = _scan(data, "--features", "none", "--out", tmp_path / "exact")
    streamed = _scan(data, "--stats", "streaming", "--out", tmp_path / "streamed")
    assert exact.exit_code == 0 and streamed.exit_code == 0, streamed.output
    results, expected = (json.loads((tmp_path / out / "results.json").read_text())
                         for out in ("streamed", "exact"))
    assert list(results["dataset"]["splits"]) == ["train", "test"]
    assert results["dataset"]["split_roles"] == {"test": "dev.jsonl", "why": "no test file"}
    assert json.dumps(without_the_mode(results)) == json.dumps(expected)


def test_streaming_scan_writes_the_scan_outputs(tmp_path, nli_file, hashed):
    result = _scan(nli_file, "--stats", "streaming", "--out", tmp_path / "a")
    assert result.exit_code == 0, result.output
    out = tmp_path / "a"
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["statistics"] == "streaming"
    assert "seeded hash" in results["notes"][0]
    assert results["leakage"]["best"]["D"] > 0.05  # the planted cues
    assert results["leakage"]["groups"]["grouped_items"] >= 4  # sibling and copy share keys
    assert "features" not in results  # none by default with streaming
    lines = nli_file.read_text().splitlines()
    easy = (out / "easy.jsonl").read_text().splitlines()
    hard = (out / "hard.jsonl").read_text().splitlines()
    assert sorted(easy + hard) == sorted(lines)  # the input records, byte for byte
    assert results["easy_hard"]["easy"] == len(easy)
    assert "Note: statistics streamed" in (out / "report.html").read_text()
    # the counts do not depend on folds: the cue list is the exact scan's
    exact = _scan(nli_file, "--features", "none", "--out", tmp_path / "exact")
    assert exact.exit_code == 0, exact.output
    exact_results = json.loads((tmp_path / "exact" / "results.json").read_text())
    assert results["cues"] == exact_results["cues"]
    assert results["dataset"] == exact_results["dataset"]
    assert results["hygiene"] == data_hygiene(load_streaming(str(nli_file))).to_json()
    # same inputs and seed: the same bytes
    again = _scan(nli_file, "--stats", "streaming", "--out", tmp_path / "b")
    assert again.exit_code == 0, again.output
    assert (out / "results.json").read_bytes() == (tmp_path / "b" / "results.json").read_bytes()


@pytest.mark.parametrize("folds", ["grouped", "hashed"])
def test_chunks_within_the_memory_budget_are_held_with_the_spilled_outputs(
        tmp_path, nli_file, monkeypatch, folds):
    """Chunks that fit MEMORY_BUDGET stay in memory (no chunk or token file is written) and
    the scan writes the bytes of the one that spills them (budget 0), in three chunks each,
    with the grouped folds and with hashed ones."""
    from functools import partial
    from pathlib import Path

    from cuelens.audit.chunk_scan import scan_files
    from cuelens.audit.config import ScanConfig
    from cuelens.engine import chunks

    if folds == "hashed":
        monkeypatch.setattr(chunk_scan, "GROUPED_FOLD_INSTANCES", 599)
    monkeypatch.setattr(chunk_scan, "load_chunked",
                        partial(chunk_scan.load_chunked, chunk_items=250))
    config = ScanConfig(folds=3, iterations=2)
    held = scan_files(str(nli_file), config=config, work_dir=tmp_path / "work")
    assert held.dataset.store.directory is None
    assert [type(chunk.split).__name__ for chunk in held.dataset.splits["all"]] == \
        ["CompactSplit"] * 3
    assert not any(isinstance(f, Path) for f in held.dataset.splits["all"].files)
    monkeypatch.setattr(chunks, "MEMORY_BUDGET", 0)
    spilled = scan_files(str(nli_file), config=config, work_dir=tmp_path / "work")
    assert spilled.dataset.store.directory is not None
    held.write(tmp_path / "held")
    spilled.write(tmp_path / "spilled")
    for name in ["results.json", *OUTPUTS, "items.parquet"]:
        assert (tmp_path / "held" / name).read_bytes() == \
            (tmp_path / "spilled" / name).read_bytes(), name


def test_streaming_ids_files_and_work_dir(tmp_path, nli_file):
    work = tmp_path / "work"
    work.mkdir()
    result = _scan(nli_file, "--stats", "streaming", "--item-files", "ids", "--work-dir", work,
                   "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    ids = ((tmp_path / "o" / "easy.ids.txt").read_text().splitlines()
           + (tmp_path / "o" / "hard.ids.txt").read_text().splitlines())
    assert sorted(ids) == sorted(json.loads(line)["id"] for line in
                                 nli_file.read_text().splitlines())
    assert list(work.iterdir()) == []  # the chunks are removed at the end


@pytest.mark.parametrize("extra, message", [
    (["--stats", "sideways"], "stats (--stats): unknown statistics 'sideways'"),
    (["--stats", "streaming", "--engine", "memory"], "local"),
    (["--stats", "streaming", "--max-fit-items", "0"], "training cap"),
])
def test_streaming_option_errors(tmp_path, nli_file, extra, message):
    result = _scan(nli_file, *extra, "--out", tmp_path / "x")
    assert result.exit_code != 0
    assert message in result.output and "Traceback" not in result.output


def test_streaming_scan_scores_icq_features_with_hashed_folds(tmp_path, nli_file, hashed):
    """--features with --stats streaming: cueness counted chunk by chunk over the hashed folds;
    the planted cue word leads and its label distribution is the planted one."""
    result = _scan(nli_file, "--stats", "streaming", "--features", "word", "--out",
                   tmp_path / "o", "--cache-dir", tmp_path / "cache")
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["features_config"] == {"features": ["word"], "min_support": 10,
                                          "cv_folds_used": True}
    top = results["features"][0]
    assert (top["feature"], top["value"]) == ("WORD", "nobody")
    assert max(top["test_dist"], key=top["test_dist"].get) == "contradiction"
    assert "top feature cues by cueness: WORD=nobody" in result.output


@pytest.fixture(scope="module")
def mcq_scans(tmp_path_factory):
    """Streamed scans of generated MCQ data (3 choices, the planted cue "definitely"), hashed
    folds: a cross-validated file through ``audit scan`` (which renders the report) and a
    train/test pair whose test split holds an exact copy of a training question through the
    API; each as (results, items table, data arguments)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chunk_scan, "GROUPED_FOLD_INSTANCES", 0)
        return _mcq_scans(tmp_path_factory.mktemp("mcq"))


def _mcq_scans(tmp):
    records = make_mcq(300, seed=1, n_choices=3, vocab_size=300)
    for name, part in (("all", records), ("train", records[:200]),
                       ("test", records[200:] + [dict(records[7], id="copy")])):
        write_jsonl(tmp / f"{name}.jsonl", part)
    result = CliRunner().invoke(app, ["scan", str(tmp / "all.jsonl"), "--stats", "streaming",
                                      "--folds", "2", "--iterations", "1", "--out",
                                      str(tmp / "out")])
    assert result.exit_code == 0, result.output
    assert "Answer-order and length artifacts" in (tmp / "out" / "report.html").read_text()
    scans = {"all": (json.loads((tmp / "out" / "results.json").read_text()),
                     pd.read_json(tmp / "out" / "items.jsonl", lines=True, dtype=False),
                     {"data": tmp / "all.jsonl"})}
    data = {"train": tmp / "train.jsonl", "test": tmp / "test.jsonl"}
    api = cuelens.scan(**data, stats="streaming", features="none", folds=2, iterations=1)
    assert api.easy.columns.tolist() == ["id", "premise", "choices", "label"]
    assert len(api.easy) + len(api.hard) == 101
    scans["test"] = (api.results, api.items, data)
    return scans


@pytest.mark.parametrize("split", ["all", "test"])
def test_streaming_scans_multiple_choice(mcq_scans, split):
    """MCQ with hashed folds: the planted cue leads, leakage is significant, the MCQ sections
    (baselines, examples of choices, one table row per question) are there."""
    results, items, _ = mcq_scans[split]
    validate_results(results)
    assert results["config"]["statistics"] == "streaming"
    assert results["dataset"]["n_choices"] == 3 and results["easy_hard"]["split"] == split
    top = results["cue_finding"]["top"][0]
    assert (top["token"], top["label"]) == ("definitely", "right")
    assert results["leakage"]["verdict"] == "significant"
    assert {row["name"] for row in results["mcq_baselines"]["rows"]} >= {
        "answer position", "longest choice", "choice-only BoW LR"}
    examples = results["examples"]
    assert all(row["label"] in ("right", "wrong") for row in examples["items"])
    assert all(examples["items"][i]["label"] == "right" for i in examples["easy"])
    assert examples["by_cue"]["definitely"] and all(
        "definitely" in examples["items"][i]["text"].lower()
        for i in examples["by_cue"]["definitely"])
    assert len(items) == (300 if split == "all" else 301) and items["id"].is_unique
    assert {"p_bias_0", "p_bias_1", "p_bias_2"} <= set(items.columns)
    assert set(items["label"]) <= {0, 1, 2}
    if split == "test":  # the copied training question, found by hygiene
        assert results["hygiene"]["overlap"][0]["exact"] == 1
        assert items.set_index("id").loc["copy", "overlap"]


def test_streamed_and_exact_mcq_scans_have_the_same_sections(mcq_scans):
    """With hashed folds the sections that no fold touches are the exact scan's; with the
    grouped folds of small data every section is, and so is the per-item table."""
    streamed, _, data = mcq_scans["test"]
    exact = cuelens.scan(**data, features="none", folds=2, iterations=1)
    assert set(streamed) - {"notes"} == set(exact.results)
    assert streamed["dataset"] == exact.results["dataset"]
    assert streamed["hygiene"] == exact.results["hygiene"]
    assert streamed["mcq_baselines"] == exact.results["mcq_baselines"]  # fitted on train alone
    grouped = cuelens.scan(**data, stats="streaming", features="none", folds=2, iterations=1)
    assert json.dumps(without_the_mode(grouped.results)) == json.dumps(exact.results)
    pd.testing.assert_frame_equal(grouped.items, exact.items)


def test_api_streaming_scan(tmp_path, nli_file):
    result = cuelens.scan(nli_file, stats="streaming", folds=3, iterations=1, seed=2)
    assert result.results["config"]["statistics"] == "streaming"
    assert len(result.easy) + len(result.hard) == 600
    assert len(result.easy) == result.results["easy_hard"]["easy"]
    assert result.D == result.results["leakage"]["best"]["D"]
    assert set(result.leakage.columns) >= {"metric", "aggregator", "accuracy", "D"}
    files = result.save(tmp_path / "api", report=False)
    assert json.loads(files["results"].read_text()) == result.results
    with pytest.raises(cuelens.UserError, match="pass paths"):
        cuelens.scan(make_nli(50, seed=1), stats="streaming")
    featured = cuelens.scan(nli_file, stats="streaming", features="word", folds=3, iterations=1,
                            seed=2, cache_dir=tmp_path / "cache")
    assert featured.results["features_config"]["cv_folds_used"] is True
    assert ("WORD", "nobody") in {(r["feature"], r["value"])
                                  for r in featured.results["features"][:3]}


def test_streamed_result_is_a_scan_result_a_probe_takes(tmp_path, nli_file):
    """One result type whatever the memory mode: a streamed scan carries the per-item easy
    mask, so ``cuelens.probe(scan=...)`` splits the probe by it."""
    result = cuelens.scan(nli_file, stats="streaming", folds=3, iterations=1, seed=2)
    assert isinstance(result, cuelens.ScanResult)
    assert result.item_easy.dtype == bool and len(result.item_easy) == 600
    assert int(result.item_easy.sum()) == result.results["easy_hard"]["easy"]
    assert result.easy["id"].tolist() == [r["id"] for r, easy in
                                          zip(_records(nli_file), result.item_easy) if easy]
    predictions = tmp_path / "predictions.jsonl"
    write_jsonl(predictions, [{"id": r["id"], "prediction": r["label"]}
                              for r in _records(nli_file)])
    probed = cuelens.probe(nli_file, predictions=predictions, scan=result)
    assert probed.accuracy == 1.0
    assert probed.results["leakage"] == result.results["leakage"]  # the streamed scan's


def _records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_large_exact_scan_suggests_streaming(tmp_path, nli_file, monkeypatch):
    from cuelens.commands import scan as scan_command

    monkeypatch.setattr(scan_command, "STREAMING_HINT_ITEMS", 599)
    result = _scan(nli_file, "--features", "none", "--out", tmp_path / "x")
    assert result.exit_code == 0 and "--stats streaming" in result.output
    monkeypatch.setattr(scan_command, "STREAMING_HINT_ITEMS", 600)
    result = _scan(nli_file, "--features", "none", "--out", tmp_path / "y")
    assert result.exit_code == 0 and "--stats streaming" not in result.output


def test_too_few_groups_is_the_same_error_in_both_modes(tmp_path, monkeypatch):
    """Three premises cannot fill five folds: grouped (exact, and streaming of small data) and
    hashed (streaming above the threshold) folds refuse with one message."""
    records = make_nli(60, seed=1)
    for i, record in enumerate(records):
        record["premise"] = f"the same premise number {i % 3}"
    path = tmp_path / "few.jsonl"
    write_jsonl(path, records)
    messages = []
    for stats, threshold in (("exact", 60), ("streaming", 60), ("streaming", 59)):
        monkeypatch.setattr(chunk_scan, "GROUPED_FOLD_INSTANCES", threshold)
        with pytest.raises(cuelens.UserError) as error:
            cuelens.scan(path, stats=stats, features="none", folds=5)
        messages.append(str(error.value))
    assert messages[0] == messages[1] == messages[2]
    assert "cannot make 5 folds" in messages[0] and "3 groups" in messages[0]


def test_streamed_mcq_items_with_different_numbers_of_choices_name_their_counts(tmp_path):
    """Items of 2 to 4 choices: the error said the items have '1, 2, 3, 4' choices (the
    store's placeholder k = 1, opened on the first chunk, was listed as an item count)."""
    rows = [{"id": f"q{i}", "premise": f"Question {i}?", "label": 0,
             "choices": [f"answer {i} {j}" for j in range(2 + i % 3)]} for i in range(60)]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    result = _scan(data, "--stats", "streaming", "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "this dataset's items have 2, 3, 4 choices" in " ".join(result.output.split())
