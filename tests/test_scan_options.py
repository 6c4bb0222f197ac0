"""`audit scan` options out of range: one line naming the option, exit 2, before any data is
read and nothing written (CLI and Python API)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from cuelens.cli import app
from cuelens.errors import UserError
from tests.test_hostile_inputs import jsonl, nli_rows

OPTION_CASES = [
    # (CLI option, value, API keyword, API value, message)
    ("--seed", "-1", "seed", -1, "seed (--seed) must be between 0 and 4294967295, not -1"),
    ("--seed", "4294967296", "seed", 2**32, "seed (--seed) must be between 0 and 4294967295"),
    ("--alpha", "nan", "alpha", float("nan"), "alpha (--alpha) must be a finite number, not nan"),
    ("--alpha", "inf", "alpha", float("inf"), "alpha (--alpha) must be a finite number, not inf"),
    ("--flag-threshold", "nan", "flag_threshold", float("nan"),
     "flag_threshold (--flag-threshold) must be between 0 and 1, a fraction (between 0 and 100 "
     "points with --flag-threshold), not nan"),
    ("--flag-threshold", "-5", "flag_threshold", -0.05,
     "flag_threshold (--flag-threshold) must be between 0 and 1, a fraction (between 0 and 100 "
     "points with --flag-threshold), not -0.05 (-5 points)"),
    ("--flag-threshold", "inf", "flag_threshold", float("inf"),
     "flag_threshold (--flag-threshold) must be between 0 and 1, a fraction (between 0 and 100 "
     "points with --flag-threshold), not inf"),
    # the API's margin=5 (a fraction) read "not 500": the value it quoted was not the one given
    ("--margin", "500", "margin", 5, "margin (--margin) must be above 0 and below 1, a fraction "
     "(above 0 and below 100 points with --margin), not 5 (500 points)"),
    ("--margin", "0", "margin", 0, "margin (--margin) must be above 0 and below 1, a fraction "
     "(above 0 and below 100 points with --margin), not 0 (0 points)"),
    ("--folds", "0", "folds", 0, "folds (--folds) must be at least 1, not 0"),
    ("--max-fit-items", "-3", "max_fit_items", -3,
     "max_fit_items (--max-fit-items) must be at least 0 (0 = no cap), not -3"),
    # it named neither --z-prior nor z_prior=: "unknown z prior 'flat'"
    ("--z-prior", "flat", "z_prior", "flat",
     "z_prior (--z-prior): unknown z prior 'flat'; choose from empirical, uniform"),
]


@pytest.mark.parametrize("option, value, keyword, api_value, message", OPTION_CASES)
def test_scan_refuses_an_option_out_of_range(tmp_path, option, value, keyword, api_value,
                                             message):
    import cuelens

    data = tmp_path / "d.jsonl"
    data.write_text(jsonl(nli_rows()))
    result = CliRunner().invoke(app, ["scan", str(data), "--out", str(tmp_path / "out"),
                                      "--features", "none", option, value])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        cuelens.scan(str(data), features="none", **{keyword: api_value})


def test_fail_above_nan_is_refused_before_reading_data(tmp_path):
    result = CliRunner().invoke(app, ["scan", str(tmp_path / "missing.jsonl"),
                                      "--fail-above", "nan"])
    assert result.exit_code == 2, result.output
    assert "--fail-above must be a number of points, not nan" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("seed", ["-1", "4294967296"])
def test_demo_refuses_a_seed_out_of_range_before_writing(tmp_path, seed):
    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--out", str(out), "--size", "50", "--seed", seed])
    assert result.exit_code == 2, result.output
    assert "seed (--seed) must be between 0 and 4294967295" in result.output
    assert "Traceback" not in result.output and not out.exists()


@pytest.mark.parametrize("top", ["0", "-1"])
def test_top_below_one_is_refused_before_reading_data(tmp_path, top):
    result = CliRunner().invoke(app, ["scan", str(tmp_path / "missing.jsonl"), "--top", top])
    assert result.exit_code == 2, result.output
    assert f"top (--top) must be at least 1, got {top}" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("stats", ["exact", "streaming"])
def test_unknown_plotly_mode_is_refused_before_reading_data(tmp_path, stats):
    """as in audit probe: it came after the whole scan, when the report was written."""
    result = CliRunner().invoke(app, ["scan", str(tmp_path / "missing.jsonl"), "--plotly", "foo",
                                      "--stats", stats])
    assert result.exit_code == 2, result.output
    assert "plotly (--plotly): unknown mode 'foo'" in result.output and "Traceback" not in result.output


def test_hf_segmenter_that_cannot_load_is_refused_before_reading_data(tmp_path):
    """--segmenter hf:PATH loads its tokenizer first: it failed once the whole input was read."""
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(app, ["scan", str(tmp_path / "missing.jsonl"), "--segmenter",
                                      f"hf:{tmp_path / 'empty'}"])
    assert result.exit_code == 2, result.output
    assert "not a Hugging Face tokenizer directory" in " ".join(result.output.split())
    assert "Traceback" not in result.output


@pytest.mark.parametrize("stats", ["exact", "streaming"])
def test_api_hf_segmenter_that_cannot_load_is_one_line_naming_it_before_reading_data(tmp_path,
                                                                                      stats):
    """cuelens.scan(segmenter="hf:…") failed only once the whole input was read (here: the
    missing data file's error instead), its message naming neither segmenter= nor --segmenter,
    and a missing directory was looked up on the hub (transformers imported, ~17 s offline)."""
    import cuelens

    missing = tmp_path / "nope"
    with pytest.raises(UserError) as caught:
        cuelens.scan(str(tmp_path / "missing.jsonl"), segmenter=f"hf:{missing}", stats=stats)
    assert str(caught.value) == (f"segmenter (--segmenter) hf:{missing}: no tokenizer directory "
                                 f"at {missing} (hf:PATH takes a Hugging Face tokenizer "
                                 "directory or a hub id)")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match=r"^segmenter \(--segmenter\) hf:\S+empty: not a Hugging "
                                        "Face tokenizer directory"):
        cuelens.scan(str(tmp_path / "missing.jsonl"), segmenter=f"hf:{tmp_path / 'empty'}",
                     stats=stats)


def test_folds_whose_counts_cannot_be_held_are_one_error(tmp_path):
    # the count table grows with outer × inner folds: 10⁹ folds need far more than any memory
    rows = nli_rows()
    (tmp_path / "train.jsonl").write_text(jsonl(rows))
    (tmp_path / "test.jsonl").write_text(jsonl(rows))
    result = CliRunner().invoke(app, ["scan", str(tmp_path), "--out", str(tmp_path / "out"),
                                      "--features", "none", "--folds", str(10**9)])
    assert result.exit_code == 2, result.output
    assert "of memory; lower folds (--folds)" in " ".join(result.output.split())
    assert "Traceback" not in result.output


@pytest.mark.parametrize("address", ["bogus", "host:port:x"])
def test_ray_address_that_cannot_be_reached_is_one_line(tmp_path, address):
    """A malformed --address was Ray's traceback (ValueError; "auto" with no running cluster,
    a ConnectionError, too: not tested, another process may run a cluster)."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        pytest.skip("a Ray cluster is already connected in this process")
    data = tmp_path / "d.jsonl"
    data.write_text(jsonl(nli_rows()))
    result = CliRunner().invoke(app, ["scan", str(data), "--out", str(tmp_path / "out"),
                                      "--features", "none", "--engine", "ray",
                                      "--address", address])
    assert result.exit_code == 2, result.output
    assert f"cannot connect to the Ray cluster at --address {address}: " in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


@pytest.mark.parametrize("keyword, value, message", [
    ("folds", "3", "folds (--folds) must be a whole number, not '3'"),
    ("folds", 2.5, "folds (--folds) must be a whole number, not 2.5"),
    ("min_count", True, "min_count (--min-count) must be a whole number, not True"),
    ("margin", "0.05", "margin (--margin) must be a number, not '0.05'"),
    ("metric", 3, "metric (--metric) must be a text, not 3")])
def test_api_options_of_another_type_are_one_error(tmp_path, keyword, value, message):
    # they were TypeErrors from inside the scan ('<' not supported between 'str' and 'int')
    import cuelens

    data = tmp_path / "d.jsonl"
    data.write_text(jsonl(nli_rows()))
    with pytest.raises(UserError, match=re.escape(message)):
        cuelens.scan(str(data), features="none", **{keyword: value})


def test_numpy_numbers_are_numbers():
    import numpy as np

    from cuelens.audit.config import ScanConfig

    ScanConfig(seed=np.int64(3), folds=np.int32(4), margin=np.float32(0.05)).validate()


def test_ray_address_where_nothing_listens_is_one_line_at_once(tmp_path):
    """A host:port where nothing accepts a connection was retried by Ray for about ten minutes
    (its GCS client's 20 tries of 30 s each) before any message."""
    import socket
    import time
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        pytest.skip("a Ray cluster is already connected in this process")
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    data = tmp_path / "d.jsonl"
    data.write_text(jsonl(nli_rows()))
    started = time.monotonic()
    result = CliRunner().invoke(app, ["scan", str(data), "--out", str(tmp_path / "out"),
                                      "--features", "none", "--engine", "ray",
                                      "--address", f"127.0.0.1:{port}"])
    assert time.monotonic() - started < 30
    assert result.exit_code == 2, result.output
    assert f"--address 127.0.0.1:{port}: nothing accepts a connection" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["scan", "probe"])
def test_address_without_the_ray_engine_is_refused(tmp_path, command):
    """--address with --engine local was silently ignored: the work ran in this process."""
    data = tmp_path / "d.jsonl"
    data.write_text(jsonl(nli_rows()))
    extra = ["--features", "none"] if command == "scan" else ["-p", str(tmp_path / "p.jsonl")]
    result = CliRunner().invoke(app, [command, str(data), "--out", str(tmp_path / "out"),
                                      "--address", "auto", *extra])
    assert result.exit_code == 2, result.output
    assert "--address applies to --engine ray, not --engine local" in result.output
    assert not (tmp_path / "out").exists()


def test_metric_help_says_what_the_option_does(tmp_path):
    """`audit scan --help` called --metric the "headline cue metric", but the headline is the
    best of every metric × aggregator (the demo data: cos/lr under the default cp): --metric
    orders the cue table and wins the headline's ties."""
    import json

    import cuelens
    from cuelens.data.synthetic import make_nli

    shown = " ".join(CliRunner().invoke(app, ["scan", "--help"], env={"COLUMNS": "300"})
                     .output.replace("│", " ").split())
    assert "Headline cue metric" not in shown
    assert "orders each label's cues" in shown and "best of every metric × aggregator" in shown
    result = cuelens.scan(make_nli(300, seed=0), features="none", folds=3, iterations=1,
                          metric="pmi")
    results = json.loads(json.dumps(result.results))
    pmi = [c["metrics"]["pmi"] for c in results["cues"] if c["label"] == "neutral"]
    assert pmi == sorted(pmi, reverse=True)  # the cue table in --metric order


@pytest.mark.parametrize("command", ["scan", "probe"])
def test_help_names_the_ray_extra(command):
    """--engine's help read 'a Ray cluster (cuelens; with …' and 'actor pool, cuelens)': rich
    took the extra's '[ray]' for markup and dropped it."""
    shown = " ".join(CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "300"})
                     .output.replace("│", " ").split())
    assert "cuelens[ray]" in shown and "cuelens;" not in shown and "cuelens)" not in shown


def test_stats_help_says_which_folds_streaming_deals():
    """--stats' help said streaming deals hashed folds over on-disk chunks: up to a million
    instances it deals the exact scan's grouped folds (docs/large-datasets.md), held in memory
    while small."""
    shown = " ".join(CliRunner().invoke(app, ["scan", "--help"], env={"COLUMNS": "300"})
                     .output.replace("│", " ").split())
    assert "on-disk chunks with hashed folds" not in shown
    assert "the exact scan's grouped folds up to a million instances" in shown


def test_the_pyarrow_note_names_the_extra_to_install(tmp_path, monkeypatch):
    """Without pyarrow the note read "pip install 'cuelens'": rich took '[ray]' for markup."""
    from cuelens.audit import bias_items

    monkeypatch.setattr(bias_items, "parquet_available", lambda: False)
    data = tmp_path / "d.jsonl"
    data.write_text(jsonl(nli_rows()))
    result = CliRunner().invoke(app, ["scan", str(data), "--out", str(tmp_path / "out"),
                                      "--features", "none", "--folds", "2", "--iterations", "1"])
    assert result.exit_code == 0, result.output
    assert "pip install 'cuelens[ray]'" in " ".join(result.output.split())
