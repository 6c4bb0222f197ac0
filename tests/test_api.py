"""The Python API (issue 11): doctests, CLI ≡ API byte for byte, in-memory sources, result views,
escaped Jupyter summary, light ``import cuelens``."""

from __future__ import annotations

import doctest
import html
import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import cuelens
from cuelens.cli import app
from cuelens.data.synthetic import make_mcq, make_nli
from cuelens.errors import UserError
from tests.conftest import write_jsonl

FAST = {"folds": 3, "iterations": 1}


@pytest.mark.slow
def test_api_docstring_examples_run():
    import cuelens.api

    failures, tried = doctest.testmod(cuelens.api, optionflags=doctest.ELLIPSIS)
    assert tried >= 20 and failures == 0


def test_the_statistics_return_data_and_the_result_adds_views_and_report(tmp_path):
    """docs/ARCHITECTURE.md "Layers": ``scan_dataset`` returns a plain ``Scan`` (no views, no
    report); ``ScanResult.of`` shares its fields and ``save`` adds report.html to its files."""
    from cuelens.audit.config import ScanConfig
    from cuelens.audit.pipeline import Scan, scan_dataset
    from cuelens.audit.results import ScanSections
    from cuelens.results import ScanResult

    scan = scan_dataset(cuelens.load_dataset(make_nli(120, seed=0)), ScanConfig(**FAST))
    assert type(scan) is Scan and not hasattr(scan, "cues") and not hasattr(scan, "save")
    plain = scan.write(tmp_path / "plain")
    assert "report" not in plain and not (tmp_path / "plain" / "report.html").exists()
    result = ScanResult.of(scan)
    assert isinstance(result, Scan) and result.sections is scan.sections
    assert ScanSections.from_json(scan.results) == scan.sections  # a loaded file: the same
    with pytest.raises(UserError, match="scan the data again"):  # an older version's leakage
        ScanSections.from_json({**scan.results, "leakage": {"majority": 0.5, "table": []}})
    assert result.dataset is scan.dataset and result.item_easy is scan.item_easy
    saved = result.save(tmp_path / "viewed")
    assert "<!DOCTYPE html>" in saved["report"].read_text(encoding="utf-8")
    assert sorted(saved) == sorted([*plain, "report"])
    assert saved["results"].read_bytes() == plain["results"].read_bytes()
    assert len(result.easy) + len(result.hard) == 120


@pytest.mark.slow
def test_scan_api_writes_the_same_bytes_as_the_cli(tmp_path):
    records = make_mcq(300, seed=3, vocab_size=200)
    data = tmp_path / "data"
    write_jsonl(data / "train.jsonl", records[:200])
    write_jsonl(data / "test.jsonl", records[200:])
    cli = CliRunner().invoke(app, ["scan", str(data), "--out", str(tmp_path / "cli"),
                                   "--features", "word", "--iterations", "1", "--seed", "4"])
    assert cli.exit_code == 0, cli.output
    result = cuelens.scan(data, features="word", iterations=1, seed=4)
    files = result.save(tmp_path / "api")
    for name in ("results.json", "cues.csv", "easy.jsonl", "hard.jsonl", "report.html"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    assert files["results"] == tmp_path / "api" / "results.json"
    assert result.to_dict() == json.loads((tmp_path / "cli" / "results.json").read_text())


@pytest.mark.slow
def test_notebook_dataframe_scan_reads_cues():
    """What a notebook user does: a DataFrame in, the cue table out (planted cues on top)."""
    df = pd.DataFrame(make_nli(300, seed=0)).rename(
        columns={"premise": "sentence1", "hypothesis": "sentence2", "label": "gold_label"})
    result = cuelens.scan(df, features="none", **FAST)
    cues = result.cues
    assert isinstance(cues, pd.DataFrame) and {"token", "label", "z", "cp"} <= set(cues.columns)
    top = cues.sort_values("z", ascending=False).head(3)
    assert set(zip(top["token"], top["label"])) == {
        ("nobody", "contradiction"), ("outdoors", "entailment"), ("possibly", "neutral")}
    assert len(result.easy) + len(result.hard) == 300  # a cross-validated DataFrame
    assert set(result.easy["id"]).isdisjoint(result.hard["id"])
    assert result.easy.columns.tolist() == ["id", "premise", "hypothesis", "label"]
    best = result.results["leakage"]["best"]
    assert result.D == best["D"]
    row = result.leakage.query("metric == @best['metric'] and aggregator == @best['aggregator']")
    assert row["D"].iloc[0] == best["D"]


def test_in_memory_sources_equal_the_files(tmp_path):
    records = make_nli(60, seed=2)
    write_jsonl(tmp_path / "train.jsonl", records[:40])
    write_jsonl(tmp_path / "test.jsonl", records[40:])
    from_files = cuelens.load_dataset(tmp_path)
    forms = [{"train": records[:40], "test": records[40:]},
             {"train": pd.DataFrame(records[:40]), "validation": pd.DataFrame(records[40:])}]
    for source in forms:
        ds = cuelens.load_dataset(source)
        assert ds.label_names == from_files.label_names and not ds.cross_validated
        assert ds.test.ids == from_files.test.ids
        assert ds.test.hypotheses == from_files.test.hypotheses
        assert ds.train.labels == from_files.train.labels
    ds = cuelens.load_dataset(train=records[:40], test=records[40:])
    assert ds.test.labels == from_files.test.labels


def test_hugging_face_dataset_objects():
    datasets = pytest.importorskip("datasets")
    features = datasets.Features({"premise": datasets.Value("string"),
                                  "hypothesis": datasets.Value("string"),
                                  "label": datasets.ClassLabel(names=["yes", "no"])})
    rows = {"premise": ["a", "b", "c"], "hypothesis": ["x y", "z", "w"], "label": [0, 1, -1]}
    train = datasets.Dataset.from_dict(rows, features=features)
    ds = cuelens.load_dataset(datasets.DatasetDict({"train": train, "test": train}))
    assert ds.format == "huggingface" and ds.test.labels == ["yes", "no"]  # -1 = missing
    single = cuelens.load_dataset(train)
    assert single.cross_validated and single.test.hypotheses == ["x y", "z"]


def test_a_dataset_dict_with_two_splits_of_one_role_is_one_error():
    """dev and validation: the second was dropped, silently (as a dict of DataFrames and a
    directory with two files of one split say); a split's name is read in any case."""
    datasets = pytest.importorskip("datasets")
    rows = datasets.Dataset.from_list([{"premise": f"p{i}", "hypothesis": f"h {i % 3}",
                                        "label": "ab"[i % 2]} for i in range(12)])
    both = datasets.DatasetDict({"train": rows, "dev": rows.select(range(4)),
                                 "validation": rows.select(range(4, 10))})
    with pytest.raises(UserError, match="^data: split names 'dev' and 'validation' both name "
                                        "the dev split: give one of them$"):
        cuelens.load_dataset(both)
    with pytest.raises(UserError, match="'dev' and 'validation' both name the dev split"):
        cuelens.scan(both, features="none")
    unlabelled = rows.select(range(4)).map(lambda row: {"label": None})
    kept = cuelens.load_dataset(datasets.DatasetDict({"train": rows, "dev": unlabelled,
                                                      "validation": rows.select(range(4, 10))}))
    assert len(kept.test) == 6  # a split without labels is dropped first, as before
    capital = datasets.DatasetDict({"train": rows, "Validation": rows.select(range(4, 10))})
    assert not cuelens.load_dataset(capital).cross_validated  # was: Validation ignored


def test_hf_takes_the_path_of_a_saved_dataset(tmp_path):
    """hf=Path(…) of a local directory, as hf="…" (it was AttributeError: 'PosixPath' object
    has no attribute 'partition')."""
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_list(make_nli(30, seed=0)).save_to_disk(str(tmp_path / "saved"))
    loaded = cuelens.load_dataset(hf=tmp_path / "saved")
    assert loaded.test.ids == cuelens.load_dataset(hf=str(tmp_path / "saved")).test.ids
    assert len(loaded.test) == 30


def test_an_empty_or_blank_name_is_refused_for_every_source(tmp_path):
    """name="" named in-memory data 'data' but a file's dataset '' (results.json and the report
    title); both are now one error naming name=."""
    path = write_jsonl(tmp_path / "data.jsonl", make_nli(30, seed=0))
    for source in (make_nli(30, seed=0), str(path)):
        for name in ("", " \t"):
            with pytest.raises(UserError, match=r"^name= is (empty|blank): give the dataset a "
                                                r"name, or leave it out for the default"):
                cuelens.load_dataset(source, name=name)
        assert cuelens.load_dataset(source, name="mine").name == "mine"


def test_dataframe_missing_labels_and_bad_sources():
    df = pd.DataFrame({"premise": ["p", "q", "r"], "hypothesis": ["a", "b", "c"],
                       "label": ["yes", None, "no"]})
    ds = cuelens.load_dataset(df)
    assert ds.test.labels == ["yes", "no"] and ds.test.skipped == {"missing label": 1}
    mcq = pd.DataFrame({"premise": ["p", "q", "r"], "choices": [["a", "b"]] * 3,
                        "label": [1, None, 0]})  # pandas: a float column 1.0, NaN, 0.0
    ds = cuelens.load_dataset(mcq)
    assert ds.test.labels == [1, 0] and ds.test.skipped == {"missing label": 1}
    arrays = pd.DataFrame({"premise": ["p", "q"], "label": [1, "B"],  # pd.read_parquet's lists
                           "choices": [np.array(["a", "b"]), np.array(["c", "d"])],
                           "options": [None, {"label": np.array(["A", "B"]),
                                              "text": np.array(["e", "f"])}]})
    ds = cuelens.load_dataset(arrays.drop(columns="options").iloc[:1])
    assert ds.test.choices == [["a", "b"]]  # was: field 'choices' must be a list of choices
    ds = cuelens.load_dataset(arrays.drop(columns="choices").iloc[1:], choices_field="options")
    assert ds.test.choices == [["e", "f"]] and ds.test.labels == [1]
    indexed = cuelens.load_dataset(df.assign(id=["a", "b", "c"]).set_index("id"))
    assert indexed.test.ids == ["a", "c"]  # the index's ids (were all:1, all:3: dropped)
    with pytest.raises(UserError, match="cannot read data from a int"):
        cuelens.load_dataset(42)
    with pytest.raises(UserError, match="unknown split name 'holdout'"):
        cuelens.load_dataset({"holdout": df})
    with pytest.raises(UserError, match="the dict of splits is empty"):
        cuelens.load_dataset({})  # was an IndexError
    for given in ({}, {"source": df, "hf": "snli"}, {"source": "d.jsonl", "train": "t.jsonl",
                                                     "test": "v.jsonl"}):
        with pytest.raises(UserError, match=r"^give exactly one of: the data \(a path or "
                                            r"in-memory records\), train= and test=, or hf=$"):
            cuelens.load_dataset(**given)  # the CLI's 'DATA, --train/--test, or --hf'
    with pytest.raises(UserError, match="^train= and test= must be given together$"):
        cuelens.scan(train="t.jsonl")
    # scan, probe, stress and augment_dataset take no hf= (they said 'or hf='; a streamed scan
    # said 'DATA (a file, directory or glob) or --train/--test'), stress and augment no train=
    pair = r"^give exactly one of: the data \(a path, in-memory records or a Dataset\) or " \
        r"train= and test=$"
    for call in (lambda: cuelens.scan(), lambda: cuelens.scan(stats="streaming"),
                 lambda: cuelens.scan("d.jsonl", train="t.jsonl", test="v.jsonl"),
                 lambda: cuelens.probe(predictions="p.jsonl")):
        with pytest.raises(UserError, match=pair):
            call()
    for call in (lambda: cuelens.stress(None), lambda: cuelens.augment_dataset(None)):
        with pytest.raises(UserError, match=r"^give the data \(a path, in-memory records or a "
                                            r"Dataset\)$"):
            call()
    with pytest.raises(UserError, match="'dev' and 'validation' both name the dev split"):
        cuelens.load_dataset({"dev": df, "validation": df})  # the second was dropped, silently
    for paths in ({"source": {"train": "t.jsonl", "test": "v.jsonl"}},
                  {"train": "t.jsonl", "test": df}):  # was "cannot read data from a str: give a path"
        with pytest.raises(UserError, match=r"data/train: a path \('t.jsonl'\) among in-memory"):
            cuelens.load_dataset(**paths)
    with pytest.raises(UserError, match="unknown scan option"):
        cuelens.scan(df, metrik="cp")


@pytest.mark.slow
def test_repr_html_escapes_dataset_text():
    records = make_nli(120, seed=5)
    for r in records:
        if r["label"] == "neutral":
            r["hypothesis"] += " <script>alert(1)</script>"
    result = cuelens.scan(cuelens.load_dataset(records, name="<b>x</b>"), features="none",
                          **FAST)
    page = result._repr_html_()
    assert "<script>" not in page and "<b>x</b>" not in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "D = " in page
    assert any("script" in t for t in result.cues["token"])  # the payload is a listed cue


def test_probe_views_and_warning_values(tmp_path):
    records = make_mcq(200, seed=1, vocab_size=200)
    scanned = cuelens.scan(records, features="none", **FAST)
    rng = np.random.default_rng(0)
    path = write_jsonl(tmp_path / "predictions.jsonl", [{"id": r["id"], "prediction": int(rng.integers(2))}
                                              for r in records])
    result = cuelens.probe(scanned.dataset, predictions=path, scan=scanned, short_circuit=True,
                           bootstrap=50)
    gold = np.array([r["label"] for r in records])
    pred = np.array([json.loads(line)["prediction"] for line in path.read_text().splitlines()])
    assert result.accuracy == pytest.approx((gold == pred).mean(), abs=1e-6)
    # random predictions: the short-circuit skip, and the sanity warning that the model is at chance
    assert result.warnings[0] == ("short-circuit tests need a model (they ask the model new "
                                  "questions); skipped")
    assert len(result.warnings) == 2 and "covers chance (50.0%)" in result.warnings[1]
    effects = result.cue_effects
    assert {"cue", "delta", "ci_low", "ci_high"} <= set(effects.columns)
    # each column is rounded to 6 decimals on its own, so their difference may be off by 1e-6
    np.testing.assert_allclose(effects["acc_with"] - effects["acc_without"], effects["delta"],
                               atol=2e-6, rtol=0)
    for shown in (scanned, scanned.sections, scanned.sections.leakage, result, result.sections,
                  result.section):  # one screen each (issue 54), never the rows
        assert repr(shown).count("\n") < 25 and len(repr(shown)) < 2000, type(shown)
    lines = repr(result.sections).splitlines()
    assert lines[0] == "ProbeSections(" and lines[-1] == ")"
    assert f"  cues=[{len(scanned.sections.cues)} items]," in lines
    assert "  probe=ProbeSection(…)," in lines and "  tool={'name', 'version'}," in lines
    files = result.save(tmp_path / "out")
    assert json.loads(files["results"].read_text()) == result.to_dict()
    with pytest.raises(UserError, match="same as an input"):
        result.save(tmp_path)  # would overwrite the predictions file it read


def test_probe_refuses_a_scan_result_of_other_data(tmp_path):
    """scan= of other items (or source= a path): one error, never numpy's IndexError (or
    another scan's flags)."""
    records = make_nli(120, seed=0)
    path = write_jsonl(tmp_path / "predictions.jsonl",
                       [{"id": r["id"], "prediction": r["label"]} for r in records])
    other = cuelens.scan(make_nli(90, seed=1), features="none", **FAST)
    with pytest.raises(UserError, match="evaluated 90 items that are not the 120 test items"):
        cuelens.probe(records, predictions=path, scan=other)
    with pytest.raises(UserError, match="scan= takes a ScanResult .* not a int"):
        cuelens.probe(records, predictions=path, scan=3)
    with pytest.raises(UserError, match="source= takes a prediction source .* not a str; a "
                                         "predictions file or evaluation log is predictions="):
        cuelens.probe(records, source=str(path))  # was AttributeError: no attribute 'predict'


def test_wrong_typed_options_are_one_error(tmp_path):
    """A text where a number goes: one UserError naming the option, never a TypeError from a
    comparison inside (probe's top and seed, stress's and augment_dataset's seed and ratio)."""
    records, mcq = make_nli(60, seed=0), make_mcq(20, seed=0)
    path = write_jsonl(tmp_path / "predictions.jsonl",
                       [{"id": r["id"], "prediction": r["label"]} for r in records])
    for call, message in [
            (lambda: cuelens.probe(records, predictions=path, top="5"),
             r"top \(--top\) must be a whole number, not '5'"),
            (lambda: cuelens.probe(records, predictions=path, seed="1"),
             r"seed \(--seed\) must be a whole number, not '1'"),
            (lambda: cuelens.stress(mcq, seed=1.5), r"seed \(--seed\) must be a whole number"),
            (lambda: cuelens.augment_dataset(mcq, seed="x"), "must be a whole number, not 'x'"),
            (lambda: cuelens.augment_dataset(mcq, ratio="1"),
             r"ratio \(--ratio\) must be a number, not '1'"),
            (lambda: cuelens.augment_dataset(mcq, ratio=-1),
             r"ratio \(--ratio\) must be a finite number of at least 0, not -1")]:
        with pytest.raises(UserError, match=message):
            call()


@pytest.mark.parametrize("function, arguments, message", [
    # a TypeError from inside: 'int' object is not callable
    ("scan", {"progress": 3}, "progress= must be a function of (stage, fraction), not 3"),
    ("probe", {"progress": 3}, "progress= must be a function of (stage, fraction), not 3"),
    # a TypeError once the first stage ended: <lambda>() takes 1 positional argument but 2 …
    ("scan", {"progress": lambda fraction: None},
     "progress= must be a function of (stage, fraction), not one of (fraction)"),
    ("probe", {"progress": lambda: None},
     "progress= must be a function of (stage, fraction), not one of ()"),
    # taken silently: a text is true (bad records skipped), a number a dataset's name
    ("load_dataset", {"skip_bad": "no"}, "skip_bad (--skip-bad) must be True or False, not 'no'"),
    ("scan", {"skip_bad": 0}, "skip_bad (--skip-bad) must be True or False, not 0"),
    ("probe", {"short_circuit": "no"},
     "short_circuit (--short-circuit) must be True or False, not 'no'"),
    ("load_dataset", {"name": 3}, "name= must be a text, not 3"),
    ("scan", {"cache_dir": 3}, "cache_dir (--cache-dir) must be a text or a pathlib.Path, not 3"),
    # AttributeError: 'int' object has no attribute 'partition'
    ("load_dataset", {"source": None, "hf": 3},
     "hf (--hf) must be a text or a pathlib.Path, not 3"),
    # 'missing premise field (3)' on every record
    ("load_dataset", {"premise_field": 3}, "premise_field (--premise-field) must be a text, not 3"),
    ("scan", {"label_field": ["label"]},
     "label_field (--label-field) must be a text, not ['label']"),
    # TypeError: expected str, bytes or os.PathLike object, not int
    ("probe", {"predictions": 3}, "predictions (--predictions) must be a text or a pathlib.Path"),
    ("probe", {"model": 3}, "model (--model) must be a text or a pathlib.Path, not 3"),
    # checked after loading the model, as audit probe does before (max_length=-1: OverflowError)
    ("probe", {"model": "no-such-model", "batch_size": 0},
     "batch_size (--batch-size) must be at least 1, not 0"),
    ("probe", {"model": "no-such-model", "max_length": -1},
     "max_length (--max-length) must be at least 1, not -1")])
def test_arguments_of_another_type_are_one_error_naming_them(function, arguments, message):
    records = make_nli(30, seed=0)
    arguments = {"source" if function == "load_dataset" else "data": records, **arguments}
    with pytest.raises(UserError, match=f"^{re.escape(message)}"):
        getattr(cuelens, function)(**arguments)


def test_result_methods_check_their_arguments(tmp_path):
    """save(report="no") wrote the report (a text is true); to_html(3) and save(3) were
    TypeErrors from pathlib."""
    result = cuelens.scan(make_nli(60, seed=0), features="none", folds=3, iterations=1)
    for call, message in [
            (lambda: result.save(tmp_path / "a", report="no"),
             "report= must be True or False, not 'no'"),
            (lambda: result.save(3), "out_dir= must be a text or a pathlib.Path, not 3"),
            (lambda: result.to_html(3), "path= must be a text or a pathlib.Path, not 3")]:
        with pytest.raises(UserError, match=f"^{re.escape(message)}$"):
            call()
    assert not (tmp_path / "a").exists()
    assert "report" not in result.save(tmp_path / "b", report=False)


def test_report_options_of_another_type_are_one_error_naming_the_argument(tmp_path):
    """to_html(path, "cdn") and save(out, report_options=3) were AttributeError tracebacks from
    inside the report, "'str' object has no attribute 'plotly'"."""
    from cuelens.reports.options import ReportOptions

    result = cuelens.scan(make_nli(60, seed=0), features="none", folds=3, iterations=1)
    takes = "a cuelens.reports.options.ReportOptions (ReportOptions(plotly='cdn'))"
    for call, message in [
            (lambda: result.to_html(tmp_path / "r.html", "cdn"),
             f"options= must be {takes}, not 'cdn'"),
            (lambda: result.save(tmp_path / "a", report_options=3),
             f"report_options= must be {takes}, not 3")]:
        with pytest.raises(UserError, match=f"^{re.escape(message)}$"):
            call()
    assert not (tmp_path / "a").exists() and not (tmp_path / "r.html").exists()
    assert result.to_html(tmp_path / "r.html", ReportOptions(plotly="cdn")).is_file()


def test_report_options_name_their_field_and_its_option(tmp_path):
    """ReportOptions(plotly="offline") read "unknown --plotly mode 'offline'" and rank_by="x"
    "unknown --rank-by metric 'x'", naming only the CLI options: each names the field too."""
    from cuelens.reports.options import ReportOptions

    with pytest.raises(UserError, match=r"^plotly \(--plotly\): unknown mode 'offline'; "
                                        r"choose from inline, cdn, directory$"):
        ReportOptions(plotly="offline")
    with pytest.raises(UserError, match=r"^rank_by \(--rank-by\): unknown metric 'x'; choose "):
        ReportOptions(rank_by="x")
    result = CliRunner().invoke(app, ["scan", str(tmp_path / "d.jsonl"), "--plotly", "offline"])
    assert result.exit_code == 2 and "plotly (--plotly): unknown mode 'offline'" in result.output


def test_a_parse_cache_that_cannot_be_written_is_one_error_before_the_scan(tmp_path):
    """As audit scan --cache-dir: a file as cache_dir was NotADirectoryError once every text was
    parsed; a scan without ICQ features never touches the cache."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    calls = []
    with pytest.raises(UserError, match=r"file: cannot write here: .*file is not a directory$"):
        cuelens.scan(make_nli(60, seed=0), features="tense", cache_dir=blocker, folds=3,
                     iterations=1, progress=lambda stage, fraction: calls.append(stage))
    assert calls == []  # before any work
    cuelens.scan(make_nli(60, seed=0), features="none", cache_dir=blocker, folds=3, iterations=1)


def test_ops_and_features_take_a_list_of_names():
    """ops= as a list, as features= takes one (it failed: 'list' object has no attribute
    'split'); a value of another type is one error naming the argument."""
    mcq = make_mcq(20, seed=0)
    assert cuelens.stress(mcq, ops=["co", "mt"], seed=0).counts == \
        cuelens.stress(mcq, ops="co,mt", seed=0).counts
    assert cuelens.augment_dataset(mcq, ops=["crossover"], seed=0).counts == \
        cuelens.augment_dataset(mcq, ops="crossover", seed=0).counts
    with pytest.raises(UserError, match="features= takes a comma-separated text or a list"):
        cuelens.scan(mcq, features=3)
    with pytest.raises(UserError, match="ops= takes a comma-separated text or a list"):
        cuelens.stress(mcq, ops={"co": 1})


def test_integer_ids_with_a_missing_one_read_as_integers(tmp_path):
    """pandas makes integer ids with a missing one floats: they read "1.0", "2.0" (so a
    predictions file naming 1 and 2 matched nothing); now "1", "2", the missing one all:1, and a
    predictions file's 1.0 is item 1 too."""
    from cuelens.probes.predictions import read_predictions_file

    df = pd.DataFrame({"premise": ["a b", "c d", "e f"], "hypothesis": ["x", "y", "z"],
                       "label": ["entailment", "contradiction", "entailment"]})
    ds = cuelens.load_dataset(df.assign(id=[np.nan, 1.0, 2.0]))
    assert ds.test.ids == ["all:1", "1", "2"]
    assert cuelens.load_dataset(df.assign(id=[1.0, 2.0, 3.5])).test.ids == ["1", "2", "3.5"]
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": 7.0, **r} for r in df.to_dict("records")[:1]])
    assert cuelens.load_dataset(path).test.ids == ["7"]
    predictions = write_jsonl(tmp_path / "p.jsonl", [
        {"id": i, "prediction": label} for i, label in
        (("all:1", "entailment"), (1.0, "contradiction"), (2, "entailment"))])
    read = read_predictions_file(predictions, ds)
    assert read.pred.tolist() == [ds.label_names.index(label) for label in ds.test.labels]


def test_api_errors_name_the_api_argument_not_only_the_cli_option():
    """hf="/nonexist" read '--hf /nonexist: …', ops="" '--ops names no operator', ops="bogus"
    'unknown operator 'bogus' (--ops)', and augment_dataset(ops="") 'unknown augmentation op(s)
    (none)': each now names the argument as ``ops (--ops)`` / ``hf (--hf)``."""
    mcq = make_mcq(20, seed=0)
    with pytest.raises(UserError, match=r"^hf \(--hf\): no such directory '/nonexist' "):
        cuelens.load_dataset(hf="/nonexist")
    with pytest.raises(UserError, match=r"^ops \(--ops\) names no operator$"):
        cuelens.stress(mcq, ops=" , ")
    with pytest.raises(UserError, match=r"^ops \(--ops\): unknown operator 'bogus'; choose "):
        cuelens.stress(mcq, ops="co,bogus")
    with pytest.raises(UserError, match=r"^ops \(--ops\) names no augmentation op; choose from "
                                        r"crossover, mutation, mutation2$"):
        cuelens.augment_dataset(mcq, ops="")
    with pytest.raises(UserError, match=r"^ops \(--ops\): unknown augmentation op\(s\) bogus; "):
        cuelens.augment_dataset(mcq, ops="crossover,bogus")


def test_data_errors_name_the_api_argument(tmp_path):
    """group_field=, subset_field= and a directory of two train files said only --group-field,
    --subset-field and --train/--test to an API user."""
    rows = [{"premise": "p", "hypothesis": "h", "label": "entailment", "topic": ""}] * 2
    with pytest.raises(UserError, match=r"no group id in field 'topic' "
                                        r"\(group_field \(--group-field\)\)"):
        cuelens.load_dataset(rows, group_field="topic")
    from cuelens.data.schema import RecordError, subset_text

    with pytest.raises(RecordError, match=r"\(subset_field \(--subset-field\)\)$"):
        subset_text("", "topic")
    for name in ("train.jsonl", "train.csv"):
        write_jsonl(tmp_path / name, make_nli(10, seed=0))
    write_jsonl(tmp_path / "test.jsonl", make_nli(10, seed=1))
    with pytest.raises(UserError, match=r"name the files with train= and test= \(--train/--test\)"):
        cuelens.load_dataset(tmp_path)


def test_an_empty_features_value_is_one_error_in_the_api_and_the_cli(tmp_path):
    """features="" scanned no features in the API while --features "" scanned the default set:
    both are now one error naming the option ("none" asks for no features)."""
    data = write_jsonl(tmp_path / "d.jsonl", make_nli(40, seed=0))
    for empty in ("", " , "):
        with pytest.raises(UserError, match=r"features \(--features\) names no feature"):
            cuelens.scan(data, features=empty)
        cli = CliRunner().invoke(app, ["scan", str(data), "--out", str(tmp_path / "o"),
                                       "--features", empty])
        assert cli.exit_code == 2 and "names no feature" in cli.output
        assert "Traceback" not in cli.output and not (tmp_path / "o").exists()


@pytest.mark.parametrize("api, cli, message", [
    ({"metric": "bogus"}, ["--metric", "bogus"],
     "metric (--metric): unknown metric 'bogus'; choose from freq, cp,"),
    ({"segmenter": "bogus"}, ["--segmenter", "bogus"],
     "segmenter (--segmenter): unknown segmenter 'bogus'; choose from unicode, chars,"),
    ({"z_prior": "bogus"}, ["--z-prior", "bogus"],
     "z_prior (--z-prior): unknown z prior 'bogus'; choose from empirical, uniform"),
    ({"features": "word,bogus"}, ["--features", "word,bogus"],
     "features (--features): unknown feature(s) bogus; choose from word, negation,")])
def test_an_unknown_name_names_the_api_argument_and_the_cli_option(tmp_path, api, cli, message):
    """An unknown metric or segmenter named only the CLI option, '(--metric)', in the API too; an
    unknown z prior or feature named neither: each is now one error naming both, listing the
    known names."""
    path = write_jsonl(tmp_path / "d.jsonl", make_nli(30, seed=0))
    with pytest.raises(UserError, match=f"^{re.escape(message)}"):
        cuelens.scan(path, **api)
    result = CliRunner().invoke(app, ["scan", str(path), "--out", str(tmp_path / "o"), *cli])
    assert result.exit_code == 2 and f"error: {message}" in " ".join(result.output.split())
    assert "Traceback" not in result.output and not (tmp_path / "o").exists()


@pytest.mark.parametrize("api, cli, message", [
    ({"folds": 1}, ["--folds", "1"], "cross-validating a single file needs folds (--folds) of 2 "
     "or more (or give train= and test= (--train/--test))"),
    ({"folds": 100}, ["--folds", "100"], "form only 30 groups of items sharing a premise or text "
     "(lower folds (--folds))"),
    ({"folds": 10**9}, ["--folds", str(10**9)], "of memory; lower folds (--folds), 5 by default")])
def test_fold_errors_name_the_api_argument_and_the_cli_option(tmp_path, api, cli, message):
    """Too few or too many folds read '--folds 2 or more (or give --train and --test)' and
    'lower --folds' in the API too: each names folds (--folds), and train= and test=."""
    path = write_jsonl(tmp_path / "d.jsonl", make_nli(30, seed=0))
    with pytest.raises(UserError, match=re.escape(message)):
        cuelens.scan(path, features="none", iterations=1, **api)
    result = CliRunner().invoke(app, ["scan", str(path), "--out", str(tmp_path / "o"),
                                      "--features", "none", "--iterations", "1", *cli])
    assert result.exit_code == 2 and message in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_an_unknown_scan_option_lists_the_scan_arguments_too():
    """cuelens.scan(data, feature="word") listed the ScanConfig fields and field overrides as
    the known options, not features, stats, cache_dir, …: the typo's fix was not among them."""
    with pytest.raises(UserError, match=r"^unknown scan option\(s\): feature; known: ") as error:
        cuelens.scan(make_nli(30, seed=0), feature="word")
    known = error.value.message.split("; known: ")[1].split(", ")
    assert {"features", "stats", "cache_dir", "progress", "work_dir", "subset_field", "skip_bad",
            "train", "test", "folds", "metric", "premise_field"} <= set(known)
    assert known == sorted(known)


def test_streaming_errors_name_the_api_argument_and_the_cli_option(tmp_path):
    """stats="streaming" with max_fit_items=0, or on preference pairs, read '--stats streaming
    needs a training cap: --max-fit-items must be at least 1' and '(no --stats streaming or
    --engine ray; …)' in the API too: each names stats (--stats) and max_fit_items."""
    nli = write_jsonl(tmp_path / "d.jsonl", make_nli(30, seed=0))
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [
        {"prompt": f"q{i}", "chosen": f"yes {i}", "rejected": f"no {i}"} for i in range(20)])
    for path, api, cli, message in [
            (nli, {"max_fit_items": 0}, ["--max-fit-items", "0"],
             "streaming statistics (stats (--stats) streaming) need a training cap: "
             "max_fit_items (--max-fit-items) must be at least 1, not 0"),
            (pairs, {}, [], "preference pairs are scanned with exact statistics, not "
                            "stats (--stats) streaming (docs/preference.md)")]:
        with pytest.raises(UserError, match=f"^{re.escape(message)}$"):
            cuelens.scan(path, stats="streaming", work_dir=tmp_path / "work", **api)
        result = CliRunner().invoke(app, ["scan", str(path), "--out", str(tmp_path / "o"),
                                          "--stats", "streaming", *cli])
        assert result.exit_code == 2 and f"error: {message}" in " ".join(result.output.split())
        assert "Traceback" not in result.output and not (tmp_path / "o").exists()


def test_probe_errors_name_the_api_argument_and_the_cli_option(tmp_path):
    """id_field= or norm= with a predictions file read '--id-field and --norm apply to
    evaluation logs', a too long max_length '--max-length 1000 is more than model …' and an
    unknown device named no argument: each names the argument and the option."""
    from tests.tiny_models import tiny_bert_dir

    records = make_nli(30, seed=0)
    data = write_jsonl(tmp_path / "d.jsonl", records)
    path = write_jsonl(tmp_path / "predictions.jsonl",
                       [{"id": r["id"], "prediction": r["label"]} for r in records])
    message = "id_field (--id-field) and norm (--norm) apply to evaluation logs"
    for api, cli in (({"id_field": "id"}, ["--id-field", "id"]),
                     ({"norm": "chars"}, ["--norm"])):
        with pytest.raises(UserError, match=re.escape(message)):
            cuelens.probe(records, predictions=path, **api)
        result = CliRunner().invoke(app, ["probe", str(data), "-p", str(path), "--out",
                                          str(tmp_path / "o"), *cli])
        assert result.exit_code == 2 and message in " ".join(result.output.split())
    model = tiny_bert_dir(tmp_path / "model", [r["hypothesis"] for r in records])
    for api, message in (({"max_length": 1000}, "max_length (--max-length) of 1000 is more "
                                                "than model"),
                         ({"device": "tpu"}, "device (--device): unknown device 'tpu'")):
        with pytest.raises(UserError, match=f"^{re.escape(message)}"):
            cuelens.probe(records, model=model, allow_untrained=True, **api)


def test_numpy_numbers_are_read_as_python_numbers(tmp_path):
    """folds=np.int64(3) and other numpy numbers passed the argument check and scanned, but
    save() then failed, 'Object of type int64 is not JSON serializable' (and seed=np.uint8(2)
    was an OverflowError traceback from the folds' seed % 2**32): they are now read as the
    Python numbers they hold, the saved results.json that of the plain numbers."""
    records = make_nli(40, seed=0)
    path = write_jsonl(tmp_path / "predictions.jsonl",
                       [{"id": r["id"], "prediction": r["label"]} for r in records])
    plain = {"folds": 3, "iterations": 1, "seed": 2, "min_count": 2, "margin": 0.5,
             "include_premise": True}
    typed = {"folds": np.int64(3), "iterations": np.int32(1), "seed": np.uint8(2),
             "min_count": np.int64(2), "margin": np.float64(0.5), "include_premise": np.bool_(1)}
    for name, options in (("plain", plain), ("numpy", typed)):
        cuelens.scan(records, features="none", **options).save(tmp_path / name, report=False)
        cuelens.probe(records, predictions=path, top=np.int64(3) if name == "numpy" else 3,
                      bootstrap=np.int64(50) if name == "numpy" else 50).save(
            tmp_path / f"probe-{name}", report=False)
    for kind in ("", "probe-"):
        assert (tmp_path / f"{kind}numpy" / "results.json").read_bytes() == \
            (tmp_path / f"{kind}plain" / "results.json").read_bytes()


def test_an_unknown_item_files_mode_names_the_argument_and_the_option(tmp_path):
    """result.save(out, item_files="bogus") read "unknown --item-files 'bogus'"; both now
    name item_files (--item-files) and its modes, and the API writes nothing."""
    path = write_jsonl(tmp_path / "d.jsonl", make_nli(30, seed=0))
    message = "item_files (--item-files): unknown mode 'bogus'; choose from auto, records, ids, " \
        "none"
    with pytest.raises(UserError, match=f"^{re.escape(message)}$"):
        cuelens.scan(path, features="none", **FAST).save(tmp_path / "api", item_files="bogus")
    assert not (tmp_path / "api").exists()
    result = CliRunner().invoke(app, ["scan", str(path), "--out", str(tmp_path / "o"),
                                      "--item-files", "bogus"])
    assert result.exit_code == 2 and f"error: {message}" in " ".join(result.output.split())


def test_import_cuelens_is_light():
    code = ("import sys, cuelens; heavy = [m for m in ('numpy', 'pandas', 'torch', 'sklearn')"
            " if m in sys.modules]; print(heavy); assert 'scan' in dir(cuelens)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_task_is_a_string_enum():
    from cuelens.data.dataset import Task

    ds = cuelens.load_dataset(make_mcq(5, seed=0))
    assert ds.task is Task.MCQ and ds.task == "mcq" and ds.test.task is Task.MCQ
    assert json.dumps({"task": ds.task}) == '{"task": "mcq"}' and f"{Task.NLI}" == "nli"


def test_scan_takes_the_cli_field_overrides(tmp_path):
    """cuelens.scan(df, premise_field=...) loads like `audit scan --premise-field`: the same
    results.json, byte for byte; and the same overrides on a DataFrame give the same scan."""
    rows = [{"context": r["premise"], "claim": r["hypothesis"], "gold": r["label"]}
            for r in make_nli(150, seed=3)]
    path = write_jsonl(tmp_path / "renamed.jsonl", rows)
    overrides = {"premise_field": "context", "hypothesis_field": "claim", "label_field": "gold"}
    result = CliRunner().invoke(app, [
        "scan", str(path), "--out", str(tmp_path / "cli"), "--features", "none", "--folds", "3",
        "--iterations", "1", "--premise-field", "context", "--hypothesis-field", "claim",
        "--label-field", "gold"])
    assert result.exit_code == 0, result.output
    cuelens.scan(path, features="none", **FAST, **overrides).save(tmp_path / "api", report=False)
    assert (tmp_path / "api" / "results.json").read_bytes() == \
        (tmp_path / "cli" / "results.json").read_bytes()
    frame = cuelens.scan(pd.DataFrame(rows), features="none", **FAST, **overrides)
    assert frame.results["cues"] == json.loads(
        (tmp_path / "cli" / "results.json").read_text())["cues"]
    with pytest.raises(UserError, match="unknown scan option.*premise_feld"):
        cuelens.scan(pd.DataFrame(rows), premise_feld="context")
    with pytest.raises(UserError, match="give them to cuelens.load_dataset"):
        cuelens.scan(cuelens.load_dataset(pd.DataFrame(rows), **overrides), premise_field="x")


@pytest.mark.parametrize("cli, api", [
    (["--stats", "sideways"], {"stats": "sideways"}),
    (["--stats", "streaming", "--subset-field", "s"], {"stats": "streaming", "subset_field": "s"}),
])
def test_scan_mode_errors_are_the_cli_errors(tmp_path, cli, api):
    """One dispatch: a combination that cannot run is the same one-line error in both."""
    path = write_jsonl(tmp_path / "d.jsonl", make_nli(30, seed=0))
    with pytest.raises(UserError) as error:
        cuelens.scan(str(path), **api)
    result = CliRunner().invoke(app, ["scan", str(path), "--out", str(tmp_path / "o"), *cli])
    assert result.exit_code == 2
    assert f"error: {error.value.message}" in " ".join(result.output.split())


def test_every_public_object_has_a_one_screen_repr(shared_data):
    """repr of a loaded dataset, its splits, stress sets and augmented data: bounded and telling
    (sizes, roles, labels), never the columns; the dataset's HTML escapes its strings."""
    copa = cuelens.load_dataset(shared_data / "copa")
    assert repr(copa) == ("<Dataset copa: train 500 MCQ items (dev.jsonl); test 500 MCQ items "
                          "(test.jsonl); labels right, wrong; dev.jsonl used as train: no train "
                          "file>")
    assert repr(copa.test) == "<Split test 500 MCQ items (test.jsonl)>"
    assert len(repr(cuelens.load_dataset(shared_data / "snli"))) < 300
    hostile = cuelens.load_dataset([{"premise": "p", "hypothesis": "h", "label": f"<b>{i}</b>"}
                                    for i in range(30)], name="<script>x</script>")
    assert "… and 22 more" in repr(hostile) and len(repr(hostile)) < 400
    page = hostile._repr_html_()
    assert "<script>" not in page and "<b>0" not in page
    assert "&lt;script&gt;x" in page and "&lt;b&gt;0&lt;/b&gt;" in page
    assert repr(cuelens.stress(make_mcq(20, seed=0), ops="co", seed=0)).startswith(
        "<StressSet 20 questions: co 20 generated, 0 skipped")
    augmented = cuelens.augment_dataset(make_mcq(30, seed=0), ops="crossover", ratio=0.5, seed=0)
    assert repr(augmented) == "<Augmented 45 records: 30 original + crossover 15>"
    many = cuelens.augment_dataset(make_mcq(30, seed=0), ops="crossover", ratio=100, seed=0)
    made = many.counts["crossover"]  # asked for 3,000: the repr did not say fewer were made
    assert repr(many) == (f"<Augmented {30 + made:,} records: 30 original + crossover {made:,} "
                          f"({made:,} of the 3,000 asked for: .shortfall)>")


def test_reprs_escape_line_breaks_and_keep_a_cut_text_quoted():
    """A name or label with a newline or an escape sequence made repr(dataset) and repr(result)
    span lines (and restyle the terminal); a long name cut in DatasetSummary's repr lost its
    closing quote. Now one line with escapes, a cut text quoted at both ends."""
    from cuelens.audit.results import DatasetSummary

    rows = [{"premise": "p q", "hypothesis": "h", "label": "entail\nment"},
            {"premise": "r s", "hypothesis": "g", "label": "contra\u2028diction"}] * 10
    ds = cuelens.load_dataset(rows, name="my\ndata\x1b[31m")
    assert repr(ds) == ("<Dataset my\\ndata\\x1b[31m: all 20 NLI items (all); labels "
                        "contra\\u2028diction, entailment>")  # a label's controls are removed
    result = cuelens.scan(cuelens.load_dataset(make_nli(60, seed=0), name="a\nb"),
                          features="none", **FAST)
    assert "\n" not in repr(result) and repr(result).startswith("<ScanResult a\\nb: ")
    summary = DatasetSummary(name="n" * 100 + "\nx", task="nli", label_names=["a"], splits={})
    name_line = repr(summary).splitlines()[1]
    assert name_line.startswith("  name='nnn") and name_line.endswith("n\\nx',")
    assert "…" in name_line and len(name_line) < 70


def test_reprs_escape_bidirectional_controls():
    """A U+202E (right-to-left override) or another bidirectional control in a dataset's name
    reached the terminal in repr(dataset) and repr(result), showing the rest of the line
    reversed; now an escape, as a newline is."""
    rows = [{"premise": "p q", "hypothesis": "h", "label": "yes"},
            {"premise": "r s", "hypothesis": "g", "label": "no"}] * 10
    ds = cuelens.load_dataset(rows, name="safe\u202etxt.exe\u2066\u200f")
    assert repr(ds) == ("<Dataset safe\\u202etxt.exe\\u2066\\u200f: all 20 NLI items (all); "
                        "labels no, yes>")
    result = cuelens.scan(cuelens.load_dataset(make_nli(60, seed=0), name="a\u202eb"),
                          features="none", **FAST)
    assert repr(result).startswith("<ScanResult a\\u202eb: ")


def test_repr_html_headline_is_the_repr_uncut():
    result = cuelens.scan(make_mcq(120, seed=2), features="none", **FAST)
    head = repr(result)[len("<ScanResult "):-1]
    assert len(head) > 60  # as on the real COPA: "copa: inconclusive, D +5.5 points (chance), …"
    assert f"<b>{html.escape(head)}</b>" in result._repr_html_()


def test_feature_parse_progress_runs_once_from_0_to_1_over_the_splits(tmp_path, monkeypatch):
    """docs/api.md: ``features: parse <split>`` is one fraction over all splits, weighted by
    their items. Each split's parse ran from 0 to 1 again, so the bar of `audit scan` (which
    never runs back) sat full while the test split (or, streamed, every chunk but the first)
    was still being parsed."""
    monkeypatch.setenv("CUELENS_CACHE_DIR", str(tmp_path / "cache"))  # nothing parsed yet
    rows = make_nli(200, seed=0)
    seen: list[tuple[str, float]] = []
    cuelens.scan(train=rows[:150], test=rows[150:], features="tense", folds=3, iterations=1,
                 progress=lambda stage, fraction: seen.append((stage, fraction)))
    parse = [(stage, fraction) for stage, fraction in seen if stage.startswith("features: parse")]
    fractions = [fraction for _, fraction in parse]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    assert max(f for stage, f in parse if stage.endswith("train")) == pytest.approx(0.75)
