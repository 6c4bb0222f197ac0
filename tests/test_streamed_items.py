"""The per-item bias table of ``--stats streaming`` scans (docs/results-schema.md ``items``):
given the exact scan's folds it is the exact scan's table (probabilities, strongest cue, easy and
hygiene flags), planted cues get high bias probability with hashed folds, it is keyed by the
input ids, and ``audit scan --stats streaming --out D`` writes it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import cuelens
from cuelens.audit.bias_items import parquet_available
from cuelens.audit.config import ScanConfig
from cuelens.audit.pipeline import scan_dataset
from cuelens.audit.chunked_data import load_chunked
from cuelens.audit.chunk_scan import scan_streaming
from cuelens.cli import app
from cuelens.data.schema import FieldMap
from cuelens.data.synthetic import make_nli
from cuelens.engine.streaming import load_streaming
from tests.conftest import write_jsonl
from tests.scan_helpers import CONTRA_CUE, ENTAIL_CUE, exact_mode, planted_nli


def _probabilities(items: pd.DataFrame) -> np.ndarray:
    names = [c for c in items.columns if c.startswith("p_bias_") and c != "p_bias_gold"]
    return items[names].to_numpy(np.float64)


def _same_table(exact: pd.DataFrame, streamed: pd.DataFrame) -> None:
    assert list(streamed.columns) == list(exact.columns)
    assert len(streamed) == len(exact)
    assert np.allclose(_probabilities(streamed), _probabilities(exact), atol=1e-9)
    for name in exact.columns:
        if not name.startswith("p_bias_"):
            pd.testing.assert_series_equal(streamed[name], exact[name], check_dtype=False)


def test_cross_validated_streaming_table_equals_the_exact_one(tmp_path):
    records = make_nli(600, seed=3, vocab_size=200)
    records[7] = dict(records[2], id="copy", label="neutral")  # a copy: duplicate, conflict?
    source = tmp_path / "nli.jsonl"
    write_jsonl(source, records)
    config = ScanConfig(max_fit_items=100, iterations=1, min_count=3, folds=3)  # capped samples
    dataset = load_streaming(str(source))
    exact = scan_dataset(dataset, config).items
    data = load_chunked(str(source), None, None, FieldMap(), False, config, tmp_path,
                        chunk_items=130)
    streamed = scan_streaming(data, config, mode=exact_mode(dataset, config)).items
    _same_table(exact, streamed)
    assert streamed["duplicate"].sum() >= 2 and streamed["overlap"].isna().all()
    assert streamed["easy"].notna().all()


def test_train_test_streaming_table_equals_the_exact_one(tmp_path):
    train_rows = make_nli(500, seed=1, vocab_size=200)
    test_rows = make_nli(250, seed=2, vocab_size=200)
    test_rows[5] = dict(train_rows[8], id="leaked")  # overlap and shared premise
    train, test = tmp_path / "train.jsonl", tmp_path / "test.jsonl"
    write_jsonl(train, train_rows)
    write_jsonl(test, test_rows)
    config = ScanConfig(max_fit_items=120, iterations=1, min_count=3, ngrams=2, folds=3)
    dataset = load_streaming(None, train=str(train), test=str(test))
    exact = scan_dataset(dataset, config).items
    data = load_chunked(None, str(train), str(test), FieldMap(), False, config, tmp_path,
                        chunk_items=128)
    streamed = scan_streaming(data, config, mode=exact_mode(dataset, config)).items
    _same_table(exact, streamed)
    tested = streamed[streamed["split"] == "test"].set_index("id")
    assert tested.loc["leaked", "overlap"] and tested.loc["leaked", "shared_premise"]
    assert streamed.loc[streamed["split"] == "train", "easy"].isna().all()
    assert streamed.loc[streamed["split"] == "train", "overlap"].isna().all()


def _planted_records(n: int, seed: int) -> list[dict]:
    hypotheses, labels = planted_nli(n, seed)
    return [{"id": f"q{i}", "premise": f"premise number {i}", "hypothesis": h, "label": label}
            for i, (h, label) in enumerate(zip(hypotheses, labels))]


@pytest.mark.parametrize("split", ["all", "train/test"])
def test_planted_cue_items_lean_to_the_planted_label(tmp_path, split):
    """Hashed folds (the real streaming scan): an item holding a planted cue gets a high
    out-of-fold bias probability of the cue's label, and that cue as its strongest."""
    records = _planted_records(900, seed=4)
    if split == "all":
        source = tmp_path / "planted.jsonl"
        write_jsonl(source, records)
        result = cuelens.scan(source, stats="streaming", folds=3, iterations=1)
    else:
        write_jsonl(tmp_path / "train.jsonl", records[:600])
        write_jsonl(tmp_path / "test.jsonl", records[600:])
        result = cuelens.scan(train=tmp_path / "train.jsonl", test=tmp_path / "test.jsonl",
                              stats="streaming", folds=3, iterations=1)
    items = result.items
    for role in items["split"].unique():  # fitting items too, out of fold
        part = items[items["split"] == role]
        for cue, label in ((CONTRA_CUE, "contradiction"), (ENTAIL_CUE, "entailment")):
            holds = part["id"].isin([r["id"] for r in records
                                     if r["hypothesis"].startswith(cue + " ")])
            assert holds.sum() > 25
            assert part.loc[holds, f"p_bias_{label}"].mean() > 0.8
            assert part.loc[~holds, f"p_bias_{label}"].mean() < 0.4
            assert (part.loc[holds, "bias_prediction"] == label).mean() > 0.95
            assert (part.loc[holds, "cue"] == cue).all()
    assert np.allclose(_probabilities(items).sum(axis=1), 1.0, atol=1e-5)
    tested = items[items["split"] == items["split"].iloc[-1]]
    assert tested["bias_correct"].mean() == pytest.approx(
        result.results["leakage"]["best"]["accuracy"], abs=1e-6)
    assert int(tested["easy"].sum()) == result.results["easy_hard"]["easy"]


def test_table_is_keyed_by_the_input_ids_and_joins(tmp_path):
    train_rows = _planted_records(700, seed=5)
    test_rows = [dict(r, id=f"t{i}") for i, r in enumerate(_planted_records(300, seed=6))]
    test_rows[0]["id"] = train_rows[0]["id"]  # ids may repeat across splits: join on split too
    write_jsonl(tmp_path / "train.jsonl", train_rows)
    write_jsonl(tmp_path / "test.jsonl", test_rows)
    result = cuelens.scan(train=tmp_path / "train.jsonl", test=tmp_path / "test.jsonl",
                          stats="streaming", folds=3, iterations=1)
    items = result.items
    assert len(items) == 1000 and not items[["id", "split"]].duplicated().any()
    assert items["id"].tolist() == [r["id"] for r in train_rows + test_rows]  # file order
    mine = pd.concat([pd.DataFrame(train_rows).assign(split="train"),
                      pd.DataFrame(test_rows).assign(split="test")])
    joined = mine.merge(items, on=["id", "split"], how="left", validate="one_to_one",
                        suffixes=("", "_scan"))
    assert len(joined) == 1000 and joined["p_bias_gold"].notna().all()
    assert (joined["label"] == joined["label_scan"]).all()


def test_cli_streaming_scan_writes_the_items_table(tmp_path):
    source = tmp_path / "planted.jsonl"
    records = _planted_records(600, seed=7)
    write_jsonl(source, records)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["scan", str(source), "--stats", "streaming", "--out",
                                      str(out), "--folds", "3", "--iterations", "1"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert [line["id"] for line in lines] == [r["id"] for r in records]
    assert {"p_bias_contradiction", "p_bias_gold", "cue", "easy", "duplicate"} <= set(lines[0])
    if parquet_available():
        table = pd.read_parquet(out / "items.parquet")
        assert table["id"].tolist() == [r["id"] for r in records]
        assert table["p_bias_gold"].tolist() == [line["p_bias_gold"] for line in lines]
        assert table["overlap"].isna().all()  # a cross-validated file: no fitting split


@pytest.mark.parametrize("stats", ["exact", "streaming"])
def test_a_table_above_the_jsonl_limit_is_parquet_only(tmp_path, monkeypatch, stats):
    """Above ``JSONL_MAX_ROWS`` rows the table is items.parquet alone (16 GB of JSONL at 50M
    items); without pyarrow it stays items.jsonl, whatever its size."""
    from cuelens.audit import bias_items

    source = tmp_path / "planted.jsonl"
    records = _planted_records(600, seed=7)
    write_jsonl(source, records)
    monkeypatch.setattr(bias_items, "JSONL_MAX_ROWS", 599)
    written = {}
    for pyarrow in ([True, False] if parquet_available() else [False]):
        monkeypatch.setattr(bias_items, "parquet_available", lambda: pyarrow)
        out = tmp_path / f"out-{pyarrow}"
        result = CliRunner().invoke(app, ["scan", str(source), "--stats", stats, "--out",
                                          str(out), "--folds", "3", "--iterations", "1"])
        assert result.exit_code == 0, result.output
        written[pyarrow] = {p.name for p in out.glob("items.*")}
    assert written[False] == {"items.jsonl"}
    if parquet_available():
        assert written[True] == {"items.parquet"}
        table = pd.read_parquet(tmp_path / "out-True" / "items.parquet")
        assert table["id"].tolist() == [r["id"] for r in records]
