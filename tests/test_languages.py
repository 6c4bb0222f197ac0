"""ICQ features and stress operators by language (issue 53; docs/languages.md)."""

from __future__ import annotations

import pytest

from cuelens.audit.features import get_features
from cuelens.audit.features.negation import LexiconNegation
from cuelens.audit.segmentation import split_language
from cuelens.audit.tokenize import segmenting
from cuelens.data.dataset import Split
from cuelens.data.synthetic import make_mcq, make_nli
from cuelens.errors import UserError


def test_english_only_features_are_left_out_for_other_languages():
    names = [f.name for f in get_features(None)]
    assert [f.name for f in get_features(None, "en")] == names
    chinese = get_features(None, "zh")
    assert [f.name for f in chinese] == ["word", "negation"]
    assert isinstance(chinese[1], LexiconNegation)
    assert [f.name for f in get_features(None, "hi")] == ["word"]  # no lexicon for Hindi


@pytest.mark.parametrize("segmenter, text, negated", [
    ("chars", "他没有去北京", True), ("chars", "他去了北京", False),
    ("chinese", "我不知道", True), ("chinese", "这本书非常好", False),
    ("japanese", "犬が走っていません", True), ("japanese", "犬が走っている", False),
    ("japanese", "猫は食べなかった", True)])
def test_negation_lexicon_on_the_scan_words(segmenter, text, negated):
    from cuelens.audit.segmenters import installed

    if not installed(segmenter):
        pytest.skip(f"{segmenter} not installed")
    language = "ja" if segmenter == "japanese" else "zh"
    negation = next(f for f in get_features(["negation"], language))
    with segmenting(segmenter):
        assert negation.values(text) == (("present",) if negated else ())


def test_scan_of_chinese_records_the_features_it_skipped():
    import cuelens

    result = cuelens.scan(make_nli(240, seed=2, language="zh"), features="negation,tense",
                          folds=2, iterations=1)
    config = result.results["features_config"]
    assert config["features"] == ["negation"] and config["language"] == "zh"
    assert config["skipped"] == [{"feature": "tense",
                                  "reason": "needs English text (the text is zh)"}]
    assert result.results["segmentation"]["language"] == "zh"
    negation = next(row for row in result.results["features"] if row["feature"] == "NEGATION")
    assert max(negation["train_dist"], key=negation["train_dist"].get) == "contradiction"


def _mcq_split(records: list[dict]) -> Split:
    split = Split(name="train", path="train.jsonl", task="mcq")
    for i, record in enumerate(records):
        split.append(record, raw="", line=i + 1)
    return split


def _chinese_mcq(n: int) -> list[dict]:
    nli = make_nli(2 * n, seed=3, language="zh")
    return [{"id": f"q{i}", "premise": nli[2 * i]["premise"],
             "choices": [nli[2 * i]["hypothesis"], nli[2 * i + 1]["hypothesis"]], "label": i % 2}
            for i in range(n)]


def test_english_only_operators_refuse_other_languages():
    import cuelens

    chinese = _chinese_mcq(20)
    assert split_language(_mcq_split(chinese)) == "zh"
    with pytest.raises(UserError, match=r"operator\(s\) neg\+, voice work on English text only "
                                        r"and this text is 'zh'"):
        cuelens.stress(chinese, ops="co,neg+,voice")
    made = cuelens.stress(chinese, ops="co", seed=0)  # language-free operators still run
    assert made.counts["co"]["generated"] > 0
    assert split_language(_mcq_split(make_mcq(20, seed=0))) == "en"


def test_unsegmented_text_warns_in_terminal_results_and_report(tmp_path):
    import json

    from typer.testing import CliRunner

    from cuelens.cli import app
    from cuelens.jsonio import write_jsonl

    data = tmp_path / "zh.jsonl"
    write_jsonl(data, make_nli(240, seed=4, language="zh"))
    out = tmp_path / "out"
    ran = CliRunner().invoke(app, ["scan", str(data), "--segmenter", "unicode", "--features",
                                   "none", "--folds", "2", "--iterations", "1", "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    assert "segmenter: unicode (requested)" in ran.output
    assert "warning: words look unsegmented" in " ".join(ran.output.split())
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["config"]["segmenter"] == "unicode"
    assert results["segmentation"]["name"] == "unicode"
    assert results["warnings"][0].startswith("words look unsegmented")
    assert results["segmentation"]["unsegmented"] is True
    # whole phrases cannot rule leakage out: never a clean bill
    assert results["conclusion"]["status"] == "inconclusive"
    assert "look unsegmented" in results["conclusion"]["reason"]
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "Warning: words look unsegmented" in report and "<strong>unicode</strong>" in report
    refused = CliRunner().invoke(app, ["scan", str(data), "--segmenter", "klingon"])
    assert refused.exit_code == 2 and "unknown segmenter 'klingon'" in refused.output


def test_lengths_of_unspaced_text_are_named_characters():
    """Without spaces lengths count letters and digits: results.json and the report say
    characters, not words (docs/languages.md, "Lengths")."""
    import cuelens
    from cuelens.reports.render import render_html

    options = {"features": "none", "folds": 2, "iterations": 1}
    chinese = cuelens.scan(make_nli(240, seed=6, language="zh"), segmenter="chars",
                           **options).results
    assert chinese["lengths"]["unit"] == "characters per hypothesis"
    page = render_html(chinese)
    assert "mean characters per hypothesis" in page and "number of characters" in page
    assert "words per hypothesis" not in page
    hindi = cuelens.scan(make_nli(240, seed=6, language="hi"), **options).results
    assert hindi["lengths"]["unit"] == "words per hypothesis"


def test_streamed_statistics_cut_words_as_the_exact_scan_does(tmp_path):
    """A streamed scan picks the exact scan's segmenter from the same sample and encodes its
    chunks with it: the same cue words (it cut Chinese with unicode, whole sentences as
    'words', and refused --segmenter chars)."""
    import cuelens
    from cuelens.jsonio import write_jsonl

    data = tmp_path / "zh.jsonl"
    write_jsonl(data, make_nli(200, seed=5, language="zh"))
    options = {"features": "none", "folds": 2, "iterations": 1}
    streamed = cuelens.scan(str(data), stats="streaming", **options).results
    exact = cuelens.scan(str(data), **options).results
    assert streamed["segmentation"] == exact["segmentation"]
    assert streamed["segmentation"]["name"] in ("chinese", "chars")
    assert streamed["cues"] == exact["cues"] and "warnings" not in streamed
    chars = cuelens.scan(str(data), stats="streaming", segmenter="chars", **options).results
    assert chars["segmentation"]["name"] == "chars"


def test_streamed_scan_of_repeated_japanese_sentences_says_they_are_unsegmented(tmp_path):
    """Sentences that recur across items, read whole by ``unicode``, are no words: the guard
    fires and the conclusion says so (the sentences were listed as cue words with no
    warning)."""
    import cuelens
    from cuelens.jsonio import write_jsonl

    pools = {"entailment": ["犬が公園で走っています。", "男の人が本を読んでいます。"],
             "contradiction": ["誰も家にいません。", "犬は決して走りません。"],
             "neutral": ["たぶん雨が降るでしょう。", "女の子はたぶん学生です。"]}
    labels = sorted(pools)
    rows = [{"id": str(i), "premise": "公園に犬と男の人と女の子がいます。",
             "hypothesis": pools[labels[i % 3]][(i // 3) % 2], "label": labels[i % 3]}
            for i in range(300)]
    write_jsonl(tmp_path / "ja.jsonl", rows)
    results = cuelens.scan(str(tmp_path / "ja.jsonl"), stats="streaming", features="none",
                           folds=2, iterations=1, segmenter="unicode").results
    assert results["segmentation"]["unsegmented"] is True
    assert any(w.startswith("words look unsegmented") for w in results["warnings"])


def test_demo_data_in_another_language(tmp_path):
    import json

    from cuelens.data.synthetic import write_demo_data

    paths = write_demo_data(tmp_path, size=60, seed=0, language="ja")
    assert list(paths) == ["nli"]  # no MCQ generator in other languages
    rows = [json.loads(line) for line in (paths["nli"] / "train.jsonl").open(encoding="utf-8")]
    assert len(rows) == 60 and all(row["hypothesis"].endswith("。") for row in rows)
    with pytest.raises(UserError, match="unknown language 'xx'"):
        write_demo_data(tmp_path / "x", size=60, language="xx")


def test_features_skipped_on_text_of_another_language_say_it_is_not_english():
    """Hindi (language ``other``) reads 'the text is not English' (it read 'the text is
    other')."""
    import cuelens

    result = cuelens.scan(make_nli(120, seed=3, language="hi"), features="negation",
                          folds=2, iterations=1)
    config = result.results["features_config"]
    assert config["language"] == "other"
    assert config["skipped"] == [{"feature": "negation",
                                  "reason": "needs English text (the text is not English)"}]
