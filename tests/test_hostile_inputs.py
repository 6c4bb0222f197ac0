"""Hostile inputs (issues 13 and 29), table-driven: every dataset case runs through the exact
CLI, ``--stats streaming`` and the Python API (exact and streaming) and exits 2 with one line
naming the file (and the line where one applies), no traceback, no output written, no chunk
directory left and every input unchanged. Label variants that stay valid data are warnings in
the terminal, results.json and the report (``LABEL_CASES``)."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cuelens.cli import app
from cuelens.errors import UserError

GOOD = {"premise": "A man sleeps.", "hypothesis": "A man rests.", "label": "entailment"}
MCQ = {"premise": "The cup fell.", "choices": ["It broke.", "It sang."], "label": 0}


def nli_rows(n: int = 24) -> list[dict]:
    labels = ["entailment", "neutral", "contradiction"]
    return [{"id": f"n{i}", "premise": f"A man walks dog {i}.",
             "hypothesis": ("Nobody walks." if i % 3 == 2 else f"A person is outside {i}."),
             "label": labels[i % 3]} for i in range(n)]


def jsonl(rows) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every path under ``root`` with its bytes (files) or link target / 'dir'."""
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            out[key] = "-> " + os.readlink(path)
        elif path.is_file():
            out[key] = path.read_bytes()
        elif path.is_dir():
            out[key] = "dir"
        else:
            out[key] = "special"
    return out


def invoke(root: Path, args: list) -> tuple[int, str]:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(app, [str(a) for a in args])
    finally:
        os.chdir(cwd)
    return result.exit_code, without_progress_lines(result.output)


def without_progress_lines(output: str) -> str:
    """The output less the plain progress lines a slow run prints when stderr is no terminal
    (``scanning d: leakage · 42% · 0:00:15 elapsed · …``)."""
    return "".join(line for line in output.splitlines(keepends=True)
                   if not re.search(r" · \d+:\d\d:\d\d elapsed( · |$)", line.rstrip()))


def assert_refused(root: Path, args: list, where: str, message: str) -> None:
    """Exit 2, one line naming ``where`` (file[, line N]) and ``message``, nothing written or
    changed under ``root``."""
    before = snapshot(root)
    code, output = invoke(root, args)
    assert code == 2, output
    assert "Traceback" not in output
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert where in lines[0] and message in lines[0], lines[0]
    assert snapshot(root) == before


# ---------------------------------------------------------------- dataset files (audit scan)
def _write(path: Path, content: str | bytes) -> Path:
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def _gzip_corrupt_body() -> bytes:
    data = bytearray(gzip.compress(jsonl(nli_rows()).encode()))
    data[20:30] = b"\xff" * 10
    return bytes(data)


def _unbalanced_csv() -> str:
    rows = ["premise,hypothesis,label"]
    rows += [f"A man walks {i}.,A person moves {i}.,entailment" for i in range(3)]
    rows += ['"A quote that never closes,A person.,neutral']
    rows += [f"A dog {i}.,An animal {i}.,entailment" for i in range(12)]
    rows += ['A cat.,"An animal.",neutral']
    return "\n".join(rows) + "\n"


DATASET_CASES = {
    # name: (file name, content, "file, line N", message)
    "10-million-character text": (
        "d.jsonl", jsonl([GOOD, {**GOOD, "premise": "a " * 5_000_000}]), "d.jsonl, line 2",
        "10,000,000 characters"),
    "CSV field over the csv limit": (
        "d.csv", "premise,hypothesis,label\np,h,entailment\n" + "x" * 140_000 + ",h,neutral\n",
        "d.csv, line 3", "longer than 131,072 characters"),
    "gzip with a corrupt body": ("d.jsonl.gz", _gzip_corrupt_body(), "d.jsonl.gz",
                                 "corrupt or truncated gzip"),
    "truncated gzip": ("d.jsonl.gz", gzip.compress(jsonl(nli_rows()).encode())[:-30],
                       "d.jsonl.gz", "corrupt or truncated gzip"),
    "JSON nested 100,000 deep": ("d.jsonl", jsonl([GOOD, "[" * 100_000 + "]" * 100_000]),
                                 "d.jsonl, line 2", "nested deeper"),
    "JSON object nested 100,000 deep": (
        "d.jsonl", jsonl([GOOD, '{"a":' * 100_000 + "1" + "}" * 100_000]), "d.jsonl, line 2",
        "nested deeper"),
    "5,000-digit integer": ("d.jsonl", jsonl([GOOD, '{"premise": "p", "hypothesis": "h", '
                                                    '"label": ' + "7" * 5000 + "}"]),
                            "d.jsonl, line 2", "5000 digits"),
    "NaN literal": ("d.jsonl", jsonl([GOOD, '{"premise": "p", "hypothesis": NaN, "label": "x"}']),
                    "d.jsonl, line 2", "NaN is not valid JSON"),
    "MCQ choices as an object": ("m.jsonl", jsonl([MCQ, {**MCQ, "choices": {"text": "hi"}}]),
                                 "m.jsonl, line 2", "'choices' must hold lists"),
    "MCQ choices mixing objects and texts": (
        "m.jsonl", jsonl([MCQ, {**MCQ, "choices": [{"text": "a", "label": "A"}, "b"]}]),
        "m.jsonl, line 2", "mixes choice objects and plain texts"),
    "premise as an object": ("d.jsonl", jsonl([GOOD, {**GOOD, "premise": {"text": "x"}}]),
                             "d.jsonl, line 2", "'premise' must be a text, got an object"),
    "label as a list": ("d.jsonl", jsonl([GOOD, {**GOOD, "label": ["entailment"]}]),
                        "d.jsonl, line 2", "'label' must be a text, got a list"),
    "unbalanced CSV quote": ("d.csv", _unbalanced_csv(), "d.csv, line 5", "unbalanced quote"),
    "quote open at end of file": ("d.csv", "premise,hypothesis,label\np,\"h,neutral\n",
                                  "d.csv, line 2", "never closed"),
    "Latin-1 dataset": ("d.jsonl", jsonl([GOOD]).encode() + '{"premise": "café"}\n'.encode(
        "latin-1"), "d.jsonl, line 2", "not valid UTF-8"),
}


def _rows_with(extra: str, n: int = 24) -> str:
    return jsonl(nli_rows(n)) + extra + "\n"


DATASET_CASES.update({
    "lone surrogate in a label": (
        "d.jsonl", _rows_with('{"premise": "p", "hypothesis": "h", "label": "neu\\ud800"}'),
        "d.jsonl, line 25", "field 'label' holds a lone surrogate (\\ud800)"),
    "lone surrogate in a hypothesis": (
        "d.jsonl", _rows_with('{"premise": "p", "hypothesis": "a \\udfff b", "label": "neutral"}'),
        "d.jsonl, line 25", "field 'hypothesis' holds a lone surrogate"),
    "lone surrogate in an id": (
        "d.jsonl", _rows_with('{"id": "x\\ud801", "premise": "p", "hypothesis": "h", '
                              '"label": "neutral"}'),
        "d.jsonl, line 25", "field 'id' holds a lone surrogate (\\ud801)"),
    "label of invisible characters only": (
        "d.jsonl", _rows_with(json.dumps({**GOOD, "label": "\u200d\u200b"})), "d.jsonl, line 25",
        "invisible characters only"),
    "every item under one label": (
        "d.jsonl", jsonl([{**r, "label": "entailment"} for r in nli_rows()]), "d.jsonl",
        "all 24 items have the label 'entailment'"),
    "one item": ("d.jsonl", jsonl([GOOD]), "d.jsonl", "only 1 usable item"),
    "one MCQ item": ("m.jsonl", jsonl([MCQ]), "m.jsonl", "only 1 usable item"),
    "no item": ("d.jsonl", "\n\n", "d.jsonl", "no usable items"),
    "a CSV header only": ("d.csv", "premise,hypothesis,label\n", "d.csv", "no usable items"),
    # each row kept the last 'label' column's value, silently (blank names, a spreadsheet's
    # trailing empty columns, may repeat)
    "a CSV header naming one column twice": (
        "d.csv", "premise,hypothesis,label,,,label\n" + "".join(
            f"p {i},h {i},{'xy'[i % 2]},,,{'yx'[i % 2]}\n" for i in range(24)),
        "d.csv, line 1", "malformed CSV header: the column 'label' occurs twice (columns 3 and "
        "6); rename one"),
})

MODES = ("exact", "streaming", "api", "api-streaming")


def assert_refused_in(mode: str, root: Path, work: Path, name: str, where: str,
                      message: str) -> None:
    """:func:`assert_refused` through ``mode`` (CLI or Python API, exact or streaming
    statistics); a streaming run leaves no chunk directory in ``work``."""
    if mode in ("exact", "streaming"):
        args = ["scan", name, "--out", "out", "--features", "none"]
        if mode == "streaming":
            args += ["--stats", "streaming", "--work-dir", work]
        assert_refused(root, args, where, message)
    else:
        import cuelens

        before = snapshot(root)
        with pytest.raises(UserError) as info:
            cuelens.scan(str(root / name), features="none", folds=2, iterations=1,
                         stats=mode.removeprefix("api-").replace("api", "exact"),
                         work_dir=work)
        assert where in str(info.value) and message in str(info.value), str(info.value)
        assert "\n" not in str(info.value)
        assert snapshot(root) == before
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(DATASET_CASES))
def test_scan_refuses_hostile_dataset(tmp_path, case, mode):
    name, content, where, message = DATASET_CASES[case]
    (tmp_path / "root").mkdir()
    (tmp_path / "work").mkdir()
    _write(tmp_path / "root" / name, content)
    assert_refused_in(mode, tmp_path / "root", tmp_path / "work", name, where, message)


# ---------------------------------------------------------------- label variants: warnings
def _labelled(labels: list, n: int = 30) -> list[dict]:
    """``n`` rows cycling over ``labels`` with a planted cue word per label."""
    return [{"id": f"r{i}", "premise": f"A man walks dog {i}.",
             "hypothesis": f"cue{i % len(labels)} person {i}.", "label": labels[i % len(labels)]}
            for i in range(n)]


LABEL_CASES = {
    # name: (rows or raw JSONL text, warning text, expected label_names)
    "zero-width joiner": (_labelled(["entailment", "neutral", "entail\u200dment"]),
                          "'entail\\u200dment' → 'entailment' (10)", ["entailment", "neutral"]),
    "NFD and NFC spellings": (_labelled(["caf\u00e9", "the", "cafe\u0301"]),
                              "→ 'caf\u00e9' (10)", ["caf\u00e9", "the"]),
    "surrounding spaces": (_labelled(["yes", " no ", "no"]), "' no ' → 'no' (10)", ["no", "yes"]),
    "integral numbers written as floats": (_labelled([0, 1.0, 2]), "'1.0' → '1' (10)",
                                           ["0", "1", "2"]),
    "1.5 among 0/1/2": (_labelled([0, 1, 2]) + [{"premise": "p q", "hypothesis": "h r",
                                                  "label": 1.5}],
                        "labels of mixed kinds (integer: '0', '1', '2'; number: '1.5')",
                        ["0", "1", "2", "1.5"]),
    "a repeated label key": (jsonl(_labelled(["a", "b"])) + '{"premise": "p q", "hypothesis": '
                             '"h r", "label": "a", "label": "b"}\n',
                             "line 31: 1 record repeats the key 'label'", ["a", "b"]),
    "a label that occurs once": (_labelled(["a", "b"]) + [{"premise": "p q",
                                                           "hypothesis": "h r", "label": "c"}],
                                 "rare label 'c' with fewer than 10 items", ["a", "b", "c"]),
}


def _write_rows(path: Path, rows) -> None:
    _write(path, rows if isinstance(rows, str) else jsonl(rows))


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("mode", ["exact", "streaming", "api"])
@pytest.mark.parametrize("case", sorted(LABEL_CASES))
def test_label_variants_are_warned_not_silent_classes(tmp_path, case, mode):
    import html

    import cuelens

    rows, warning, names = LABEL_CASES[case]
    _write_rows(tmp_path / "d.jsonl", rows)
    out = tmp_path / "out"
    if mode == "api":
        result = cuelens.scan(str(tmp_path / "d.jsonl"), features="none", folds=2,
                              iterations=1, min_count=1)
        results = result.results
    else:
        code, output = invoke(tmp_path, ["scan", "d.jsonl", "--out", "out", "--features",
                                         "none", "--folds", "2", "--iterations", "1",
                                         "--min-count", "1", "--stats", mode,
                                         "--work-dir", tmp_path])
        assert code == 0, output
        assert "warning:" in output and warning in _flat(output), output
        results = json.loads((out / "results.json").read_text())
        assert warning in _flat(html.unescape((out / "report.html").read_text()))
    assert sorted(results["dataset"]["label_names"]) == sorted(names)
    assert any(warning in w for w in results["dataset"]["labels"]["warnings"])


def test_rare_label_cues_are_not_significant_unless_asked(tmp_path):
    """A 3-item label whose every hypothesis holds "zork": its cue is excluded by default (and
    stays out of the next steps), significant with --min-label-items 0."""
    import cuelens

    rows = _labelled(["a", "b"], 60) + [{"premise": f"p {i}", "hypothesis": f"zork {i}",
                                         "label": "rare"} for i in range(3)]
    _write_rows(tmp_path / "d.jsonl", rows)
    for stats in ("exact", "streaming"):
        default = cuelens.scan(str(tmp_path / "d.jsonl"), features="none", folds=2,
                               iterations=1, min_count=3, stats=stats, work_dir=tmp_path)
        kept = cuelens.scan(str(tmp_path / "d.jsonl"), features="none", folds=2,
                            iterations=1, min_count=3, min_label_items=0, stats=stats,
                            work_dir=tmp_path)
        zork = [c for c in default.results["cues"] if c["token"] == "zork"
                and c["label"] == "rare"][0]
        assert not zork["significant"] and "fewer than --min-label-items 10" in zork["excluded"]
        assert "zork" not in json.dumps(default.results["next_steps"])
        assert default.results["dataset"]["labels"]["rare"] == ["rare"]
        zork = [c for c in kept.results["cues"] if c["token"] == "zork"
                and c["label"] == "rare"][0]
        assert zork["significant"] and "excluded" not in zork
        assert kept.results["dataset"]["labels"]["rare"] == []


def test_parquet_shards_with_int_and_text_labels_warn(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    (tmp_path / "shards").mkdir()
    rows = _labelled(["entailment", "neutral", "contradiction"], 30)
    pd.DataFrame(rows[:15]).to_parquet(tmp_path / "shards" / "part-0.parquet")
    pd.DataFrame([{**r, "label": i % 3} for i, r in enumerate(rows[15:])]).to_parquet(
        tmp_path / "shards" / "part-1.parquet")
    code, output = invoke(tmp_path, ["scan", "shards", "--out", "out", "--features", "none",
                                     "--stats", "streaming", "--folds", "2", "--iterations",
                                     "1", "--work-dir", tmp_path])
    assert code == 0, output
    assert "labels of mixed kinds (integer: '0', '1', '2'; text:" in _flat(output)


@pytest.mark.parametrize("mode", ["exact", "streaming", "api"])
def test_csv_with_quoted_newlines_is_accepted(tmp_path, mode):
    import cuelens

    rows = "".join(f'"A man {i}\nwalks, slowly.",A person {i}.,{["yes", "no"][i % 2]}\n'
                   for i in range(30))
    _write(tmp_path / "d.csv", "premise,hypothesis,label\n" + rows)
    if mode == "api":
        result = cuelens.scan(str(tmp_path / "d.csv"), features="none", folds=2, iterations=1)
        assert result.results["dataset"]["splits"]["all"]["items"] == 30
        return
    code, output = invoke(tmp_path, ["scan", "d.csv", "--out", "out", "--features", "none",
                                     "--folds", "2", "--iterations", "1", "--stats", mode,
                                     "--work-dir", tmp_path])
    assert code == 0, output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["dataset"]["splits"]["all"]["items"] == 30


@pytest.mark.timeout(30)
def test_fifo_is_refused_not_read(tmp_path):
    os.mkfifo(tmp_path / "f.jsonl")
    assert_refused(tmp_path, ["scan", "f.jsonl", "--out", "out"], "f.jsonl",
                   "not a regular file")


# ---------------------------------------------------------------- shared fixtures of a good run
@pytest.fixture(scope="module")
def scanned(tmp_path_factory) -> Path:
    """A directory with data.jsonl and a scan of it in scan/ (word cues only: fast)."""
    root = tmp_path_factory.mktemp("scanned")
    _write(root / "data.jsonl", jsonl(nli_rows()))
    code, output = invoke(root, ["scan", "data.jsonl", "--out", "scan", "--features", "none",
                                 "--min-count", "1", "--folds", "2", "--iterations", "1"])
    assert code == 0, output
    return root


@pytest.fixture
def workdir(tmp_path, scanned) -> Path:
    for path in scanned.rglob("*"):
        target = tmp_path / path.relative_to(scanned)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    return tmp_path


def _predictions(**changes) -> str:
    rows = [{"id": r["id"], "prediction": "entailment", "probs": [0.2, 0.5, 0.3]}
            for r in nli_rows()]
    for index, change in changes.items():
        rows[int(index.removeprefix("row"))] = {**rows[int(index.removeprefix("row"))], **change}
    return jsonl(rows)


PREDICTION_CASES = {
    "Latin-1 predictions": (_predictions().encode() + '{"id": "é"}\n'.encode("latin-1"),
                            "p.jsonl, line 25", "not valid UTF-8"),
    "NaN probability": (_predictions().replace("[0.2, 0.5, 0.3]", "[NaN, 0.5, 0.3]", 1),
                        "p.jsonl, line 1", "NaN is not valid JSON"),
    "negative probability": (_predictions(row3={"probs": [-0.2, 0.9, 0.3]}), "p.jsonl, line 4",
                             "non-negative"),
    "all-zero probabilities": (_predictions(row5={"probs": [0, 0, 0]}), "p.jsonl, line 6",
                               "not all zero"),
    "infinite probability": (_predictions().replace("[0.2, 0.5, 0.3]", "[1e999, 0.5, 0.3]", 1),
                             "p.jsonl, line 1", "finite"),
    "deeply nested id": (_predictions().replace('"id": "n0"', '"id": ' + "[" * 50_000
                                                + "]" * 50_000, 1),
                         "p.jsonl, line 1", "nested deeper"),
    "5,000-digit id": (_predictions().replace('"id": "n0"', '"id": ' + "9" * 5000, 1),
                       "p.jsonl, line 1", "5000 digits"),
}


@pytest.mark.parametrize("case", sorted(PREDICTION_CASES))
def test_probe_refuses_hostile_predictions(workdir, case):
    content, where, message = PREDICTION_CASES[case]
    _write(workdir / "p.jsonl", content)
    assert_refused(workdir, ["probe", "data.jsonl", "--predictions", "p.jsonl", "--scan", "scan",
                             "--out", "probe"], where, message)


@pytest.mark.parametrize("name, preferred", [("easy.jsonl", ["items.parquet", "items.jsonl"]),
                                             ("items.jsonl", ["items.parquet"])])
def test_probe_refuses_latin1_item_file(workdir, name, preferred):
    """The file the probe takes the easy/hard split from (the files it prefers removed)."""
    for other in preferred:
        (workdir / "scan" / other).unlink(missing_ok=True)
    easy = workdir / "scan" / name
    easy.write_bytes(easy.read_bytes() + '{"premise": "café"}\n'.encode("latin-1"))
    _write(workdir / "p.jsonl", _predictions())
    n = easy.read_bytes().count(b"\n")
    assert_refused(workdir, ["probe", "data.jsonl", "-p", "p.jsonl", "--scan", "scan", "--out",
                             "probe"], f"{name}, line {n}", "not valid UTF-8")


@pytest.mark.parametrize("cues, message", [
    ([{"token": 3}], "$.cues[0]"),
    ("not a list", "$.cues"),
])
def test_probe_refuses_malformed_scan_results(workdir, cues, message):
    path = workdir / "scan" / "results.json"
    results = json.loads(path.read_text())
    path.write_text(json.dumps({**results, "cues": cues}))
    _write(workdir / "p.jsonl", _predictions())
    assert_refused(workdir, ["probe", "data.jsonl", "-p", "p.jsonl", "--scan", "scan", "--out",
                             "probe"], "results.json", message)


@pytest.mark.parametrize("content, where, message", [
    ("[" * 100_000 + "]" * 100_000, "r.json", "nested deeper"),
    ('{"schema_version": ' + "1" * 5000 + "}", "r.json", "5000 digits"),
    ('{"a": NaN}', "r.json", "NaN is not valid JSON"),
    ("[1, 2]", "r.json", "expected a JSON object"),
])
def test_report_refuses_hostile_results(tmp_path, content, where, message):
    _write(tmp_path / "r.json", content)
    assert_refused(tmp_path, ["report", "r.json", "-o", "r.html"], where, message)


# ---------------------------------------------------------------- sentence / score files
@pytest.fixture(scope="module")
def trigram(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lm")
    _write(root / "corpus.txt", "the cat sat .\nthe dog sat .\na cat ran .\n" * 5)
    code, output = invoke(root, ["lm", "train", "--corpus", "corpus.txt", "--out", "tri",
                                 "--min-count", "1"])
    assert code == 0, output
    return root


@pytest.fixture
def lmdir(tmp_path, trigram) -> Path:
    for path in sorted(trigram.rglob("*")):
        target = tmp_path / path.relative_to(trigram)
        target.mkdir(exist_ok=True) if path.is_dir() else target.write_bytes(path.read_bytes())
    return tmp_path


@pytest.mark.parametrize("name, content, where, message", [
    ("s.txt", b"the cat sat .\n" + "caf\xe9 .\n".encode("latin-1"), "s.txt, line 2",
     "not valid UTF-8"),
    ("s.jsonl", b'{"sentence": "the cat"}\n{"sentence": \n', "s.jsonl, line 2", "malformed JSON"),
    ("s.jsonl", b'{"sentence": "the cat"}\n[1]\n', "s.jsonl, line 2", "expected a JSON object"),
    ("s.txt.gz", gzip.compress(b"the cat sat .\n" * 50, mtime=0)[:-12], "s.txt.gz",
     "corrupt or truncated gzip"),
])
def test_score_refuses_hostile_sentences(lmdir, name, content, where, message):
    _write(lmdir / name, content)
    assert_refused(lmdir, ["score", name, "--model", "ngram:tri", "--out", "o.jsonl"], where,
                   message)


def test_contrast_natural_refuses_latin1_scores(tmp_path):
    _write(tmp_path / "sc.jsonl", b'{"text": "a", "m1": -1, "m2": -2}\n'
           + '{"text": "caf\xe9", "m1": -1, "m2": -2}\n'.encode("latin-1"))
    assert_refused(tmp_path, ["contrast", "natural", "--scores", "sc.jsonl", "--out", "p.jsonl"],
                   "sc.jsonl, line 2", "not valid UTF-8")


# ---------------------------------------------------------------- contrast judge
JUDGE_HEADER = "subject,sentence1,sentence2,rating,sentence1_m_prob,sentence2_m_prob\n"


def test_judge_refuses_corrupt_csv_gz(tmp_path):
    data = gzip.compress((JUDGE_HEADER + "s1,a b,c d,5,-3,-2\n" * 200).encode())
    _write(tmp_path / "t.csv.gz", data[:-40])
    assert_refused(tmp_path, ["contrast", "judge", "--trials", "t.csv.gz", "--out", "j.json"],
                   "t.csv.gz", "corrupt or truncated gzip")


def test_judge_with_one_subject_finishes(tmp_path):
    rows = "".join(f"s1,a{i} b,c{i} d,{1 + i % 6},-3,{-2 - i % 3}\n" for i in range(12))
    _write(tmp_path / "t.csv", JUDGE_HEADER + rows)
    code, output = invoke(tmp_path, ["contrast", "judge", "--trials", "t.csv", "--out", "j.json",
                                     "--html", "j.html"])
    assert code == 0, output
    result = json.loads((tmp_path / "j.json").read_text())  # strict JSON: no NaN
    assert result["n_subjects"] == 1 and result["models"]["m"]["n"] == 12
    assert "n/a" in output and (tmp_path / "j.html").exists()


# ---------------------------------------------------------------- outputs: never over inputs
def test_score_output_inside_the_model_is_refused(lmdir):
    _write(lmdir / "s.txt", "the cat sat .\n")
    assert_refused(lmdir, ["score", "s.txt", "--model", "ngram:tri", "--out", "tri/vocab.json"],
                   "tri/vocab.json", "inside the input directory")


def test_probe_predictions_cannot_be_an_output(workdir):
    (workdir / "out").mkdir()
    _write(workdir / "out" / "report.html", _predictions())
    assert_refused(workdir, ["probe", "data.jsonl", "-p", "out/report.html", "--scan", "scan",
                             "--out", "out"], "report.html", "same as an input")


def test_scan_report_cannot_be_another_output(workdir):
    assert_refused(workdir, ["scan", "data.jsonl", "--out", "o", "--report", "o/results.json",
                             "--features", "none"], "results.json", "two outputs")


def test_contrast_summary_and_html_must_differ(tmp_path):
    _write(tmp_path / "sc.jsonl", jsonl([{"text": f"s{i}", "m1": -i, "m2": i} for i in range(6)]))
    assert_refused(tmp_path, ["contrast", "natural", "--scores", "sc.jsonl", "--out", "p.jsonl",
                              "--summary", "x.json", "--html", "x.json"], "x.json",
                   "two outputs")


def test_symlinked_output_to_input_is_refused(workdir):
    (workdir / "o").mkdir()
    (workdir / "o" / "easy.jsonl").symlink_to(workdir / "data.jsonl")
    assert_refused(workdir, ["scan", "data.jsonl", "--out", "o", "--features", "none"],
                   "easy.jsonl", "same as an input")


def test_hard_linked_output_to_input_is_refused(workdir):
    (workdir / "o").mkdir()
    os.link(workdir / "data.jsonl", workdir / "o" / "cues.csv")
    assert_refused(workdir, ["scan", "data.jsonl", "--out", "o", "--features", "none"],
                   "cues.csv", "same as an input")


def test_lm_train_never_replaces_a_model_without_overwrite(lmdir):
    assert_refused(lmdir, ["lm", "train", "--corpus", "corpus.txt", "--out", "tri"], "tri",
                   "--overwrite")
    before = (lmdir / "tri" / "vocab.json").read_bytes()
    _write(lmdir / "small.txt", "one two .\n" * 3)
    code, output = invoke(lmdir, ["lm", "train", "--corpus", "small.txt", "--out", "tri",
                                  "--overwrite", "--min-count", "1"])
    assert code == 0, output
    assert (lmdir / "tri" / "vocab.json").read_bytes() != before
    assert sorted(p.name for p in lmdir.iterdir()) == ["corpus.txt", "small.txt", "tri"]


def test_lm_train_output_may_not_hold_its_corpus(lmdir):
    (lmdir / "m").mkdir()
    _write(lmdir / "m" / "c.txt", "a b .\n")
    assert_refused(lmdir, ["lm", "train", "--corpus", "m/c.txt", "--out", "m", "--overwrite"],
                   "m", "holds the input")


@pytest.mark.parametrize("option", ["--out", "--cache-dir"])
def test_unwritable_directories_fail_before_computation(workdir, option, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("computation started")

    monkeypatch.setattr("cuelens.audit.scan.run_word_audit", refuse)
    _write(workdir / "blocker", "a file, not a directory")
    args = ["scan", "data.jsonl", "--out", "o", "--features", "negation"]
    args[args.index(option) if option in args else len(args):] = []
    args += [option, "blocker/sub"]
    if option == "--cache-dir":
        args += ["--out", "o"]
    assert_refused(workdir, args, "blocker/sub", "not a directory")


# ---------------------------------------------------------------- output sets
def test_a_failed_write_phase_leaves_no_partial_set(workdir, monkeypatch):
    import cuelens.reports.render as render

    def boom(results, options=None):
        raise RuntimeError("killed while rendering")

    monkeypatch.setattr(render, "render_html", boom)
    before = snapshot(workdir)
    with pytest.raises(RuntimeError):
        CliRunner().invoke(app, ["scan", str(workdir / "data.jsonl"), "--out",
                                 str(workdir / "scan"), "--features", "none", "--min-count", "1",
                                 "--folds", "2", "--iterations", "1"], catch_exceptions=False)
    assert snapshot(workdir) == before  # the old set intact, no new results.json, no .tmp


def test_stale_temporaries_of_dead_runs_are_cleaned(workdir):
    stale = workdir / "scan" / ".results.json.cuelens-999999999-0a1b2c3d.tmp"
    stale.write_text("{half a")
    code, output = invoke(workdir, ["scan", "data.jsonl", "--out", "scan", "--features", "none",
                                    "--min-count", "1", "--folds", "2", "--iterations", "1"])
    assert code == 0, output
    assert not stale.exists()
    assert not [p for p in (workdir / "scan").iterdir() if p.name.endswith(".tmp")]


# ---------------------------------------------------------------- issue 29: other surfaces
@pytest.mark.parametrize("order", ["x", 1, None, True])
def test_ngram_config_with_a_bad_order_is_one_line(lmdir, order):
    config = json.loads((lmdir / "tri" / "config.json").read_text())
    _write(lmdir / "tri" / "config.json", json.dumps({**config, "order": order}))
    _write(lmdir / "s.txt", "the cat sat .\n")
    assert_refused(lmdir, ["score", "s.txt", "--model", "ngram:tri", "--out", "o.jsonl"],
                   "config.json", "field 'order' must be an integer of at least 2")


def _trials(extra_row: str = "", header: str = JUDGE_HEADER) -> str:
    rows = "".join(f"s1,a{i} b,c{i} d,{1 + i % 6},-3,{-2 - i % 3}\n" for i in range(12))
    return header + rows + extra_row


@pytest.mark.parametrize("content, where, message", [
    (_trials("s1,x y,z w,high,-3,-2\n"), "t.csv, line 14", "column 'rating' is missing or "
     "not a number: 'high'"),
    (_trials("s1,x y,z w,3,n/a-prob,-2\n"), "t.csv, line 14", "column 'sentence1_m_prob' is "
     "missing or not a number: 'n/a-prob'"),
    (_trials("s1,x y,z w,3,-3,nan\n"), "t.csv, line 14", "'sentence2_m_prob' is missing or not a "
     "number: 'nan'"),
    ("subject,sentence1,sentence2,rating\ns1,a b,c d,3\n", "t.csv", "no model columns"),
])
def test_judge_refuses_malformed_trials(tmp_path, content, where, message):
    _write(tmp_path / "t.csv", content)
    assert_refused(tmp_path, ["contrast", "judge", "--trials", "t.csv", "--out", "j.json"],
                   where, message)


def test_contrast_natural_refuses_scores_that_are_all_minus_infinity(tmp_path):
    import numpy as np

    np.savez(tmp_path / "s.npz", m1=np.full(8, -np.inf), m2=np.linspace(-9, -1, 8))
    assert_refused(tmp_path, ["contrast", "natural", "--scores", "s.npz", "--out", "p.jsonl",
                              "--per-pair", "1"], "s.npz", "every score of model 'm1' is -inf")


@pytest.mark.parametrize("change, message", [
    (lambda r: r["dataset"].update(label_names=["x"]), "$.dataset.label_names names 'x'"),
    (lambda r: r["cues"][0].update(label="x"), "$.cues[0].label 'x' is not one of"),
])
def test_report_refuses_label_names_that_disagree(workdir, change, message):
    results = json.loads((workdir / "scan" / "results.json").read_text())
    change(results)
    _write(workdir / "r.json", json.dumps(results))
    assert_refused(workdir, ["report", "r.json", "-o", "r.html"], "r.json", message)


TEMPLATE_HEAD = ("task: nli\nmode: score\n"
                 "answers: entailment=yes, neutral=maybe, contradiction=no\n---\n")


@pytest.mark.parametrize("body, where, message", [
    ('Hi\n{% include "other.prompt" %}', "t.prompt, line 6", "'{% include %}' is not allowed"),
    ('{% import "other.prompt" as o %}', "t.prompt, line 5", "'{% import %}' is not allowed"),
    ('{% from "other.prompt" import x %}', "t.prompt, line 5", "'{% from %}' is not allowed"),
    ('{% extends "other.prompt" %}', "t.prompt, line 5", "'{% extends %}' is not allowed"),
    ("{{ 1/0 }}", "t.prompt", "prompt 't' fails on item 'n0': ZeroDivisionError"),
    ("{{ premise + 1 }}", "t.prompt", "prompt 't' fails on item 'n0': TypeError"),
    ("{{ nothing }}", "t.prompt", "prompt 't' fails on item 'n0': UndefinedError"),
])
def test_prompt_template_errors_name_the_template_and_item(tmp_path, body, where, message):
    """Read and rendered as the LLM probe does (:func:`resolve_template`, ``render`` of each
    test item's fields): one UserError naming the file (and line or item), nothing executed."""
    from cuelens.data.loading import read_split
    from cuelens.data.schema import FieldMap
    from cuelens.probes.llm.templates import item_fields, resolve_template

    _write(tmp_path / "t.prompt", TEMPLATE_HEAD + body + "\n")
    _write(tmp_path / "other.prompt", "{{ premise.__class__ }}")
    _write(tmp_path / "d.jsonl", jsonl(nli_rows()))
    split = read_split(tmp_path / "d.jsonl", "test", FieldMap(), None, False)
    with pytest.raises(UserError) as info:
        template = resolve_template(str(tmp_path / "t.prompt"))
        template.render(item_fields(split, 0, ["contradiction", "entailment", "neutral"]))
    assert where in str(info.value) and message in str(info.value), str(info.value)
    assert "\n" not in str(info.value)
