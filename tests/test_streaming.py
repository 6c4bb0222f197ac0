"""The streaming local engine equals the in-memory path (issue 16; memory bullet of issue 13):
byte-identical results.json on NLI and MCQ, shards in any supported format, a chunked encoder
equal to one pass, the restricted BoW matrices equal to slicing the full one, and streamed
easy/hard item files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from cuelens.audit.counts import Encoder, encode
from cuelens.audit.leakage import BOW_MIN_COUNT
from cuelens.audit.engines import load_for_scan
from cuelens.audit.scan_outputs import item_files_mode, write_scan_outputs
from cuelens.audit.pipeline import scan_dataset
from cuelens.audit.scan import ScanConfig
from cuelens.data.synthetic import make_mcq, make_nli
from cuelens.errors import UserError
from cuelens.jsonio import dumps_json
from scan_helpers import bigram_columns, held, store_words


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def results_json(engine: str, data: str, config: ScanConfig) -> str:
    dataset = load_for_scan(engine, data).dataset
    return dumps_json(scan_dataset(dataset, config).results)


@pytest.mark.parametrize("task", ["nli", "mcq"])
def test_local_engine_equals_memory_engine(tmp_path, task):
    """Train/test directory and a single cross-validated file, capped fits (the restricted BoW
    path), bigrams + premises: the same bytes."""
    rows = make_nli(500, seed=1) if task == "nli" else make_mcq(300, seed=1, n_choices=3)
    write_jsonl(tmp_path / "d" / "train.jsonl", rows[:-100])
    write_jsonl(tmp_path / "d" / "test.jsonl", rows[-100:])
    for data, config in ((tmp_path / "d", ScanConfig(iterations=2, max_fit_items=150)),
                         (tmp_path / "d" / "train.jsonl",  # 3 folds: portions above the cap
                          ScanConfig(folds=3, iterations=1, ngrams=2, include_premise=True,
                                     max_fit_items=200))):
        assert results_json("local", str(data), config) == \
            results_json("memory", str(data), config)


def test_a_parquet_file_reads_alike_in_every_engine_and_the_api(tmp_path):
    """--engine memory and cuelens.load_dataset read Parquet too (they said "unknown file
    format"): the same results as the local engine's."""
    import cuelens
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = make_nli(200, seed=5)
    (tmp_path / "d").mkdir()
    for name, part in (("train", rows[:150]), ("test", rows[150:])):
        pq.write_table(pa.table({k: [r[k] for r in part] for k in part[0]}),
                       tmp_path / "d" / f"{name}.parquet")
    config = ScanConfig(iterations=1)
    assert results_json("memory", str(tmp_path / "d"), config) == \
        results_json("local", str(tmp_path / "d"), config)
    dataset = cuelens.load_dataset(str(tmp_path / "d" / "train.parquet"))
    assert dataset.train is None and dataset.test.hypotheses == [r["hypothesis"]
                                                                 for r in rows[:150]]


def test_shard_formats_are_one_dataset(tmp_path):
    """JSONL, gzip, CSV and Parquet shards of the same rows (a directory, or a glob) give the
    same results as one file of them, up to the dataset name and file."""
    pytest.importorskip("pyarrow", reason="Parquet needs pyarrow: pip install 'cuelens[ray]'")
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = make_nli(300, seed=4)
    config = ScanConfig(folds=3, iterations=1)
    single = json.loads(results_json("memory", str(write_jsonl(tmp_path / "all.jsonl", rows)),
                                     config))
    parts = [rows[:120], rows[120:200], rows[200:]]
    (tmp_path / "mixed").mkdir()
    write_jsonl(tmp_path / "jsonl" / "a.jsonl", parts[0])
    with gzip.open(tmp_path / "jsonl" / "b.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in parts[1])
    write_jsonl(tmp_path / "jsonl" / "c.jsonl", parts[2])
    (tmp_path / "parquet").mkdir()
    for name, part in zip("abc", parts):
        pq.write_table(pa.table({k: [r[k] for r in part] for k in part[0]}),
                       tmp_path / "parquet" / f"{name}.parquet")
    for source in (tmp_path / "jsonl", tmp_path / "parquet", f"{tmp_path}/parquet/*.parquet"):
        sharded = json.loads(results_json("local", str(source), config))
        for key in ("cues", "cue_stats", "leakage", "easy_hard", "examples"):
            assert sharded[key] == single[key], (source, key)
        assert sharded["dataset"]["splits"]["all"]["label_counts"] == \
            single["dataset"]["splits"]["all"]["label_counts"]


def test_an_existing_path_with_glob_characters_is_read_as_itself(tmp_path):
    """``data[v2].jsonl`` and a directory ``snli[old]/`` that exist are files, not patterns
    (a pattern matching nothing was refused); a glob still reads its shards."""
    rows = make_nli(200, seed=5)
    config = ScanConfig(folds=2, iterations=1)
    plain = json.loads(results_json("memory", str(write_jsonl(tmp_path / "d.jsonl", rows)),
                                    config))
    file = write_jsonl(tmp_path / "data[v2].jsonl", rows)
    write_jsonl(tmp_path / "snli[old]" / "train.jsonl", rows[:150])
    write_jsonl(tmp_path / "snli[old]" / "test.jsonl", rows[150:])
    for engine in ("local", "memory"):
        bracketed = json.loads(results_json(engine, str(file), config))
        assert bracketed["leakage"] == plain["leakage"] and bracketed["cues"] == plain["cues"]
        split = load_for_scan(engine, str(tmp_path / "snli[old]")).dataset
        assert (len(split.train), len(split.test)) == (150, 50)
    globbed = load_for_scan("local", f"{tmp_path}/d*.jsonl").dataset  # both files
    assert sum(len(split) for split in globbed.splits.values()) == 400


def test_encoder_chunks_and_merged_shards_equal_one_pass(monkeypatch):
    texts = [r["hypothesis"] for r in make_nli(200, seed=7)]
    whole = encode(texts, ngrams=2)
    monkeypatch.setattr("cuelens.audit.counts.ENCODE_CHUNK", 7)
    chunked = encode(texts, ngrams=2)
    merged = Encoder(2).add_encoded(encode(texts[:90], 2)).add_encoded(
        encode(texts[90:], 2)).result()
    for other in (chunked, merged):
        assert other.vocab == whole.vocab
        np.testing.assert_array_equal(other.indptr, whole.indptr)
        np.testing.assert_array_equal(other.indices, whole.indices)


@pytest.mark.parametrize("ngrams, repeats, chunk", [(1, False, 7), (1, True, 1000),
                                                   (2, False, 3), (2, True, 7)])
def test_encode_numbers_features_by_first_appearance(monkeypatch, ngrams, repeats, chunk):
    """Ids by brute force: a dict filled token by token over the texts in order (distinct per
    text unless ``repeats``), whatever the chunking; texts repeat words within and across."""
    from cuelens.audit.tokenize import word_tokens

    rng = np.random.default_rng(ngrams + 2 * repeats)
    words = ["a", "b", "don't", "C", "é", "b_c", "x1"]
    texts = [" ".join(rng.choice(words, rng.integers(0, 6))) for _ in range(60)]
    vocab: dict[str, int] = {}
    expected = []
    for text in texts:
        tokens = word_tokens(text)
        features = tokens + [" ".join(tokens[i:i + 2]) for i in range(len(tokens) - 1)] \
            if ngrams == 2 else tokens
        if not repeats:
            features = list(dict.fromkeys(features))
        expected.append([vocab.setdefault(f, len(vocab)) for f in features])
    monkeypatch.setattr("cuelens.audit.counts.ENCODE_CHUNK", chunk)
    got = encode(texts, ngrams=ngrams, repeats=repeats)
    assert got.vocab == list(vocab)
    assert [got.indices[a:b].tolist() for a, b in zip(got.indptr, got.indptr[1:])] == expected


def test_restricted_bow_equals_slicing_the_full_matrix(tmp_path):
    dataset = load_for_scan("local", str(write_jsonl(tmp_path / "a.jsonl",
                                                     make_nli(400, seed=2)))).dataset
    words, texts = store_words(held(dataset)[0]), dataset.test.hypotheses
    rows = np.arange(400)
    sample = np.sort(np.random.default_rng(0).choice(300, 120, replace=False))
    eval_rows = rows[300:]
    columns = bigram_columns(words, sample, np.ones(len(sample)), BOW_MIN_COUNT,
                             np.union1d(sample, eval_rows), len(rows))
    X, X_eval = columns.matrix(words, sample), columns.matrix(words, eval_rows)
    rows = np.union1d(sample, eval_rows)  # the full matrix of the rows the fit uses
    full = encode([texts[i] for i in rows], ngrams=2).matrix()
    fitted, evaluated = full[np.searchsorted(rows, sample)], full[np.searchsorted(rows, eval_rows)]
    support = np.flatnonzero(np.asarray(fitted.sum(axis=0)).ravel() >= BOW_MIN_COUNT)
    assert X.shape[1] == len(support) > 0 and (X != fitted[:, support]).nnz == 0
    assert (X_eval != evaluated[:, support]).nnz == 0


def test_item_files_records_ids_none(tmp_path):
    """Records stream back byte for byte from the shards (CRLF and non-ASCII kept)."""
    rows = make_nli(60, seed=3)
    lines = [json.dumps(r, ensure_ascii=False) for r in rows]
    lines[5] = lines[5].replace('"label"', '"note": "café", "label"') + "\r"
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dataset = load_for_scan("local", str(path)).dataset
    easy = np.arange(60) % 3 == 0
    results = {"cues": []}
    items = dataset.item_lines(easy)
    files = write_scan_outputs(tmp_path / "r", results, {}, dataset.input_paths, items, 60,
                               "records", metric_names=[])
    assert files["easy"].read_bytes() == "".join(
        lines[i] + "\n" for i in range(60) if easy[i]).encode("utf-8")
    assert files["hard"].read_bytes() == "".join(
        lines[i] + "\n" for i in range(60) if not easy[i]).encode("utf-8")
    files = write_scan_outputs(tmp_path / "i", results, {}, dataset.input_paths, items, 60,
                               "ids", metric_names=[])
    assert files["easy"].name == "easy.ids.txt"
    assert files["easy"].read_text().split() == [rows[i]["id"] for i in range(60) if easy[i]]
    files = write_scan_outputs(tmp_path / "n", results, {}, dataset.input_paths, items, 60,
                               "none", metric_names=[])
    assert "easy" not in files and not (tmp_path / "n" / "easy.jsonl").exists()
    assert item_files_mode("auto", 1_000_000) == "records"
    assert item_files_mode("auto", 1_000_001) == "ids"
    with pytest.raises(UserError, match="--item-files"):
        item_files_mode("all", 5)


def test_item_files_of_chunks_read_the_source_once(tmp_path, monkeypatch):
    """Chunks read from a file stream their records back in one pass over it (not one from the
    start per chunk), byte for byte, more lines than a write block."""
    from cuelens.audit.chunked_data import load_chunked
    from cuelens.audit.tokenize import BATCH
    from cuelens.data import compact
    from cuelens.data.schema import FieldMap

    lines = [json.dumps(r, ensure_ascii=False) for r in make_nli(BATCH + 40, seed=5)]
    lines[7] = lines[7].replace('"label"', '"note": "naïve", "label"') + "\r"
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "w").mkdir()
    data = load_chunked(str(path), None, None, FieldMap(), False, ScanConfig(), tmp_path / "w",
                        chunk_items=BATCH // 3)
    assert len(data.splits["all"].files) == 4
    read, opened = [], compact.open_lines
    monkeypatch.setattr(compact, "open_lines", lambda p: (read.append(line) or (line, text)
                                                          for line, text in opened(p)))
    easy = np.arange(len(lines)) % 3 == 1
    files = write_scan_outputs(tmp_path / "r", {"cues": []}, {}, data.input_paths,
                               data.item_lines(easy), len(lines), "records", metric_names=[])
    assert files["easy"].read_bytes() == "".join(
        line + "\n" for line, e in zip(lines, easy) if e).encode("utf-8")
    assert files["hard"].read_bytes() == "".join(
        line + "\n" for line, e in zip(lines, easy) if not e).encode("utf-8")
    assert len(read) == len(lines)


def test_bad_record_in_a_shard_names_it(tmp_path):
    rows = make_nli(40, seed=5)
    write_jsonl(tmp_path / "s" / "a.jsonl", rows[:20])
    bad = write_jsonl(tmp_path / "s" / "b.jsonl", rows[20:])
    with open(bad, "a", encoding="utf-8") as handle:
        handle.write('{"premise": "p", "hypothesis": "h"}\nnot json\n')
    with pytest.raises(UserError, match=r"b\.jsonl, line 21: missing label"):
        load_for_scan("local", str(tmp_path / "s"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no train/dev/test files"):
        load_for_scan("local", str(tmp_path / "empty"))
