"""Word segmentation by language (issue 53; docs/languages.md, docs/methods.md §1)."""

from __future__ import annotations

import json
import random
import re
import unicodedata
from pathlib import Path

import pytest

from cuelens.audit import segmenters
from cuelens.audit.counts import encode
from cuelens.audit.segmentation import unsegmented_warning
from cuelens.audit.segmenters import char_grams, choose_segmenter, compiled_forms, get_segmenter, \
    installed
from cuelens.audit.tokenize import segmenting, word_tokens
from cuelens.data.synthetic import make_nli
from cuelens.errors import UserError

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
UNICODE = get_segmenter("unicode")
OLD_PATTERN = re.compile(r"[^\W_]+(?=n't\b)|n't\b|'(?:s|re|ve|ll|d|m)\b|[^\W_]+")


def old_tokens(text: str) -> list[str]:
    """The tokenizer before segmenters: the English behaviour that must not change."""
    return OLD_PATTERN.findall(text.lower().replace("\u2019", "'"))


def texts_of(path: Path, limit: int) -> list[str]:
    rows = [json.loads(line) for line in path.open(encoding="utf-8")][:limit]
    return [row[key] for row in rows for key in ("premise", "hypothesis") if key in row]


def test_combining_marks_stay_inside_words():
    assert UNICODE.words("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"]
    assert UNICODE.words("தமிழ் மொழி") == ["தமிழ்", "மொழி"]
    assert UNICODE.words("ภาษาไทยง่าย") == ["ภาษาไทยง่าย"]  # one run: no dictionary here


def test_nfd_text_reads_as_nfc():
    nfd = unicodedata.normalize("NFD", "Un été à Noël")
    assert nfd != "Un été à Noël"
    assert UNICODE.words(nfd) == UNICODE.words("Un été à Noël") == ["un", "été", "à", "noël"]


@pytest.mark.parametrize("text", [
    "I don't know; it's John's café, naïve Zoë’s résumé.", "snake_case words_here can't_",
    "Ångström ÷ 3½ × ½ ﬁnal", "don't_x won't", "ÉTÉ — «citation» ¿qué?"])
def test_english_and_latin1_cut_as_before(text):
    assert UNICODE.words(text) == old_tokens(text)


@pytest.mark.skipif(not (DATA / "snli").is_dir(), reason="needs ../shared/data")
def test_real_english_text_cut_as_before():
    texts = texts_of(DATA / "snli" / "dev.jsonl", 3000) + texts_of(DATA / "mnli" / "dev.jsonl",
                                                                   3000)
    assert sum(not t.isascii() for t in texts) > 10  # the non-ASCII path is exercised too
    assert [UNICODE.words(t) for t in texts] == [old_tokens(t) for t in texts]
    assert UNICODE.normal_forms(texts) == [" ".join(old_tokens(t)) for t in texts]


# contractions at every edge: a marker character in the text, n't without a boundary, ’, _
TRICKY = ["", "Don't", "can't've", "n'tn't", "'sn't", "rock'n'roll", "x_n't", "IT'S", "nn't",
          "'dn't", "a\x00b", "won't's", "don\x01t it\x02s", "I’m", "ΑΣ b", "\u212a", "snake_case"]


def fuzz_texts(count: int, seed: int = 0) -> list[str]:
    """Random texts of contraction pieces, punctuation, digits, ASCII and a few non-ASCII."""
    rng = random.Random(seed)
    pieces = [*"an'tsdrevlmNT _-.0X\n\t’é", "n't", "'s", "'ll", "'re", "'ve", "'d", "'m", "can't"]
    return TRICKY + ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
                     for _ in range(count)]


@pytest.mark.skipif(segmenters._arrow_compute() is None, reason="the compiled path needs pyarrow")
def test_compiled_forms_are_the_python_words():
    texts = fuzz_texts(20_000)
    forms, done = compiled_forms(texts)
    assert 5_000 < done.true_count < len(texts)  # both paths are exercised
    python = [" ".join(UNICODE.words(text)) for text in texts]
    assert [f for f in forms.to_pylist() if f is not None] == \
        [form for form, ok in zip(python, done.to_pylist()) if ok]
    assert UNICODE.normal_forms(texts) == python
    assert compiled_forms(["Don't stop; it's Bob's!"])[0].to_pylist() == ["do n't stop it 's bob 's"]


@pytest.mark.skipif(segmenters._arrow_compute() is None, reason="the compiled path needs pyarrow")
def test_compiled_forms_without_apostrophes_are_the_python_words():
    """The numpy byte pass: every ASCII text without an apostrophe is done (markers, NUL, tabs,
    underscores and empty texts included), each text starting afresh at its first byte."""
    rng = random.Random(2)
    pieces = [*"abZ09_ -.,\x00\x01\x02\t\né", "Ab", "99", "", "  "]
    texts = ["", "a", "A", " a", "a ", "_", "\x01b\x02", "ab", "cd", "", "e"] + \
        ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(5_000)]
    forms, done = compiled_forms(texts)
    assert done.to_pylist() == [text.isascii() for text in texts]
    assert [f for f in forms.to_pylist() if f is not None] == \
        [" ".join(UNICODE.words(text)) for text in texts if text.isascii()]
    assert forms.to_pylist()[:11] == ["", "a", "a", "a", "a", "", "b", "ab", "cd", "", "e"]


@pytest.mark.skipif(segmenters._arrow_compute() is None, reason="the compiled path needs pyarrow")
def test_compiled_encoding_equals_the_python_one(monkeypatch):
    texts = fuzz_texts(70_000, seed=1)  # more than one Encoder chunk
    compiled = [encode(texts, **options) for options in ({}, {"repeats": True})]
    monkeypatch.setattr(segmenters, "_arrow_compute", lambda: None)  # as without pyarrow
    assert UNICODE.form_array(texts) is None
    for options, fast in zip(({}, {"repeats": True}), compiled):
        slow = encode(texts, **options)
        assert fast.vocab == slow.vocab
        assert fast.indptr.tolist() == slow.indptr.tolist()
        assert fast.indices.tolist() == slow.indices.tolist()


def test_chars_fallback_is_unigrams_then_bigrams_per_run():
    assert char_grams("没有人") == ["没", "有", "人", "没有", "有人"]
    assert char_grams("ไม่ดี") == ["ไ", "ม่", "ดี", "ไม่", "ม่ดี"]  # a letter keeps its marks
    assert get_segmenter("chars").words("他没有去 Obama 的家") == \
        ["他", "没", "有", "去", "他没", "没有", "有去", "obama", "的", "家", "的家"]


def test_mixed_script_latin_words_and_han_runs():
    chars = get_segmenter("chars")
    assert chars.words("奥巴马Obama说") == ["奥", "巴", "马", "奥巴", "巴马", "obama", "说"]
    pytest.importorskip("rjieba")
    assert get_segmenter("chinese").words("奥巴马Obama没有去过北京大学") == \
        ["奥巴马", "obama", "没有", "去过", "北京大学"]


def test_dictionary_segmenters_cut_words():
    pytest.importorskip("rjieba")
    pytest.importorskip("fugashi")
    pytest.importorskip("pythainlp")
    assert get_segmenter("japanese").words("森の中で犬が") == ["森", "の", "中", "で", "犬", "が"]
    assert get_segmenter("thai").words("ภาษาไทยง่ายมาก") == ["ภาษาไทย", "ง่าย", "มาก"]
    # a dictionary segmenter gives another unspaced script to that script's dictionary
    assert get_segmenter("chinese").words("ไม่ดี") == get_segmenter("thai").words("ไม่ดี")


def test_mixed_unspaced_scripts_are_cut_script_by_script(monkeypatch):
    """Han then Thai in one run: each script by its own rules (jieba cut the Thai into letters
    and lone tone marks; chars made a bigram across the two scripts)."""
    chars = get_segmenter("chars")
    assert chars.words("北京ไม่ดี") == ["北", "京", "北京", *char_grams("ไม่ดี")]
    pytest.importorskip("rjieba")
    pytest.importorskip("pythainlp")
    chinese = get_segmenter("chinese")
    assert chinese.words("他说ภาษาไทย很难") == ["他", "说", "ภาษาไทย", "很难"]
    assert get_segmenter("thai").words("ภาษาไทยง่ายมาก北京大学") == \
        ["ภาษาไทย", "ง่าย", "มาก", "北京大学"]
    monkeypatch.setattr(segmenters, "_installed_dictionary", lambda script: None)
    assert chinese.words("北京ไม่ดี") == ["北京", *char_grams("ไม่ดี")]  # marks with letters


@pytest.mark.parametrize("language, dictionary", [
    ("hi", "unicode"), ("zh", "chinese"), ("ja", "japanese"), ("th", "thai")])
def test_auto_choice_by_script(language, dictionary):
    texts = [r["hypothesis"] for r in make_nli(50, seed=0, language=language)]
    choice = choose_segmenter(texts)
    if dictionary == "unicode" or installed(dictionary):
        assert (choice.name, choice.warning) == (dictionary, None)
    else:
        assert choice.name == "chars" and f"cuelens[" in choice.warning
    assert choose_segmenter(["ជំរាបសួរ ពិភពលោក"]).name == "chars"  # Khmer: no dictionary
    assert choose_segmenter(["A man in a park", "Zoë’s café"]).name == "unicode"
    assert choose_segmenter(texts, "chars").name == "chars"  # a named one is kept


def test_auto_reason_names_the_largest_script():
    """Japanese, mostly Han letters with some kana, reads 'mostly han, 14% kana (Japanese)', as
    results.json's letter shares say (it read 'mostly kana' beside han 0.86, kana 0.14)."""
    choice = choose_segmenter(["森の中で犬が走っていません", "大学生活動中心"])
    assert choice.scripts["han"] > choice.scripts["kana"]
    assert choice.reason.endswith(f"mostly han, {choice.scripts['kana']:.0%} kana (Japanese)")
    assert choose_segmenter(["ひらがなだけのぶんしょう"]).reason.endswith("mostly kana")


def test_auto_reason_of_text_without_letters_says_so():
    """Digits and emoji only: unicode, 'no letters in the sample' (it read '0% of letters in
    scripts written with spaces', as if the text were in a script without spaces)."""
    choice = choose_segmenter(["12 + 12 = 24 \U0001f600", "7 \u00d7 3 \U0001f389", ""])
    assert (choice.name, choice.scripts) == ("unicode", {})
    assert choice.reason == "no letters in the sample (only digits, symbols or emoji)"


def test_auto_reads_decomposed_text_as_composed():
    """Decomposed (NFD) text gets the composed text's letter shares and segmenter (Korean
    jamo counted three letters a syllable, and a dakuten a kana: Korean with Hanja was cut with
    unicode when decomposed, with a dictionary when composed)."""
    for texts in (["大學校 학생들이 中國 문화를 배웁니다"], ["犬が公園で走っています。ですが"]):
        composed = choose_segmenter(texts)
        decomposed = choose_segmenter([unicodedata.normalize("NFD", t) for t in texts])
        assert (decomposed.name, decomposed.scripts) == (composed.name, composed.scripts)
    assert choose_segmenter(["大學校 학생들이 中國 문화를 배웁니다"]).name != "unicode"


def test_missing_extra_names_it(monkeypatch):
    import sys

    get_segmenter.cache_clear()
    monkeypatch.setitem(sys.modules, "rjieba", None)  # as if cuelens[cjk] were not installed
    try:
        with pytest.raises(UserError, match=r"cuelens\[cjk\]"):
            get_segmenter("chinese")
        choice = choose_segmenter(["他没有去北京"] * 5)
        assert choice.name == "chars" and "pip install 'cuelens[cjk]'" in choice.warning
    finally:
        get_segmenter.cache_clear()


@pytest.mark.parametrize("text, language", [
    ("他没有去北京", "Chinese"), ("犬が公園で走っています", "Japanese"), ("ภาษาไทยง่ายมาก", "Thai")])
def test_missing_extra_warning_names_the_language(monkeypatch, text, language):
    """the warning named the script ('words of kana text'), not the language."""
    monkeypatch.setattr(segmenters, "installed", lambda name: False)
    choice = choose_segmenter([text] * 5)
    assert choice.name == "chars"
    assert choice.warning.startswith(f"words of {language} text are character unigrams")


def test_unknown_segmenter_is_one_user_error():
    with pytest.raises(UserError, match="unknown segmenter 'klingon'"):
        get_segmenter("klingon")


def test_active_segmenter_reaches_word_tokens():
    assert word_tokens("没有人") == ["没有人"]
    with segmenting("chars"):
        assert word_tokens("没有人") == ["没", "有", "人", "没有", "有人"]
    assert word_tokens("没有人") == ["没有人"]


@pytest.mark.skipif(not (DATA / "ocnli").is_dir(), reason="needs ../shared/data")
def test_guard_warns_on_unsegmented_chinese():
    texts = texts_of(DATA / "ocnli" / "dev.jsonl", 1000)
    warning = unsegmented_warning(texts, UNICODE)
    assert warning is not None and "look unsegmented" in warning
    assert unsegmented_warning(texts, get_segmenter("chars")) is None
    english = texts_of(DATA / "snli" / "dev.jsonl", 1000)
    assert unsegmented_warning(english, UNICODE) is None


def test_guard_warns_on_unsegmented_sentences_that_repeat():
    """Templated Japanese: each whole sentence, cut by ``unicode`` as one "word", recurs in many
    items. The guard counts a repeated text once, so it still fires (the sentences occurred
    more than once and passed for words); segmented, the same texts keep it silent."""
    sentences = ["犬が公園で走っています。", "男の人が本を読んでいます。", "誰も家にいません。",
                 "犬は決して走りません。", "たぶん雨が降るでしょう。", "女の子はたぶん学生です。"]
    texts = [sentences[i % len(sentences)] for i in range(600)]
    warning = unsegmented_warning(texts, UNICODE)
    assert warning is not None and "occur in one distinct text only" in warning
    assert unsegmented_warning(texts, get_segmenter("chars")) is None


@pytest.mark.parametrize("language", ["hi", "th", "ja", "zh"])
def test_planted_cues_are_the_top_cues_as_whole_words(language):
    import cuelens
    from cuelens.data.synthetic import LANGUAGES

    result = cuelens.scan(make_nli(450, seed=1, language=language), features="none", folds=2,
                          iterations=1)
    top = result.cues.sort_values("z", ascending=False).head(3)
    planted = {(cue.word, cue.label) for cue in LANGUAGES[language].cues}
    if result.results["segmentation"]["name"] == "chars":  # no dictionary installed
        planted = {(w, l) for w, l in planted if len(w) <= 2}
    assert planted <= set(zip(top["token"], top["label"]))
    assert "warnings" not in result.results


def test_an_emoji_is_one_word_whole():
    """An emoji is a word, a whole grapheme cluster (docs/methods.md §1): its variation selector,
    skin tone and ZWJ-joined partners stay with it (it was dropped, and ❤️ left its invisible
    variation selector as a 'word')."""
    text = "I love it ❤️ 👍🏽 👨\u200d👩\u200d👧 🇯🇵 😀😀 great👍"
    words = ["i", "love", "it", "❤\ufe0f", "👍🏽", "👨\u200d👩\u200d👧", "🇯🇵", "😀", "😀",
             "great", "👍"]
    assert UNICODE.words(text) == words
    assert UNICODE.words(unicodedata.normalize("NFD", text + " café")) == [*words, "café"]
    assert get_segmenter("chars").words("好😀") == ["好", "😀"]
    assert UNICODE.words("it's 😀") == ["it", "'s", "😀"]


def test_an_emoji_cue_is_found():
    import cuelens

    rows = make_nli(300, seed=2)
    for row in rows:
        if row["label"] == "entailment":
            row["hypothesis"] += " 👍🏽"
    cues = cuelens.scan(rows, features="none", folds=2, iterations=1).cues
    top = cues[cues["label"] == "entailment"].sort_values("z", ascending=False)
    assert top["token"].iloc[0] == "👍🏽"


def test_hugging_face_tokenizer_pieces_lose_their_markers(tmp_path):
    pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from cuelens.audit.segmentation import build_segmenter

    vocab = {"[UNK]": 0, "play": 1, "##ing": 2, "dog": 3, "▁": 4}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]").save_pretrained(
        tmp_path)
    segmenter = build_segmenter(f"hf:{tmp_path}")
    assert segmenter.name == f"hf:{tmp_path}" and not segmenter.spaced
    assert segmenter.words("play playing, cat dog!") == ["play", "play", "ing", "dog"]  # cat: [UNK]
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="not a Hugging Face tokenizer directory"):
        build_segmenter(f"hf:{tmp_path / 'empty'}")


def test_cached_text_keys_belong_to_their_segmenter():
    from cuelens.audit.text_keys import text_keys
    from cuelens.data.dataset import Split

    split = Split(name="test", path="zh.jsonl", task="nli")
    for i, record in enumerate(make_nli(5, seed=0, language="zh")):
        split.append(record, raw="", line=i + 1)
    assert text_keys(split).text_words.tolist() == [1] * 5  # unicode: one run, one word
    with segmenting("chars"):  # letters, not uni+bigrams
        assert text_keys(split).text_words.tolist() == \
            [sum(map(str.isalnum, h)) for h in split.hypotheses]
