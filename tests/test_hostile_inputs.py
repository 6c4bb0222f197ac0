"""Hostile inputs (issue 13): every case exits 2 with one line naming the file (and the line
where one applies), no traceback, no output written and every input unchanged."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cuelens.cli import app

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
    return result.exit_code, result.output


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


@pytest.mark.parametrize("case", sorted(DATASET_CASES))
def test_scan_refuses_hostile_dataset(tmp_path, case):
    name, content, where, message = DATASET_CASES[case]
    _write(tmp_path / name, content)
    assert_refused(tmp_path, ["scan", name, "--out", "out", "--features", "none"], where, message)


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


def test_probe_refuses_latin1_easy_file(workdir):
    easy = workdir / "scan" / "easy.jsonl"
    easy.write_bytes(easy.read_bytes() + '{"premise": "café"}\n'.encode("latin-1"))
    _write(workdir / "p.jsonl", _predictions())
    n = easy.read_bytes().count(b"\n")
    assert_refused(workdir, ["probe", "data.jsonl", "-p", "p.jsonl", "--scan", "scan", "--out",
                             "probe"], f"easy.jsonl, line {n}", "not valid UTF-8")


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
    ("s.txt.gz", gzip.compress(b"the cat sat .\n" * 50)[:-12], "s.txt.gz",
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
                              "--summary", "x", "--html", "x"], "x", "two outputs")


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

    def boom(results):
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
