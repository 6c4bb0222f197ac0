"""Shared word-level LM behaviour: next-word distributions, memoised encodings, unknown words and
the open-vocabulary spelling model (docs/methods.md §9)."""

import itertools
import math
import unicodedata

import numpy as np
import pytest

from cuelens.lm.ngram import NgramModel
from cuelens.lm.rnn import RNNConfig, RNNModel
from cuelens.errors import UserError
from cuelens.lm.text import WordSplitter

CORPUS = ["the cat sat on the mat", "the dog sat on the log", "a cat saw the dog",
          "the mat was red", "a dog ate", "the <unk> sat on a <unk>"]


def ngram() -> NgramModel:
    splitter = WordSplitter()
    return NgramModel.train([splitter(s) for s in CORPUS], order=3, splitter=splitter)


def rnn(cutoffs=()) -> RNNModel:
    import torch

    torch.manual_seed(0)
    vocab = ["<unk>", "<s>", "</s>", "the", "cat", "sat", "on", "mat", "dog", "log", "a", "saw",
             "."]
    config = RNNConfig(vocab_size=len(vocab), embedding_size=8, hidden_size=8, layers=2,
                       cutoffs=list(cutoffs), div_value=2.0)
    return RNNModel(config, vocab, WordSplitter())


MODELS = {"ngram": ngram, "lstm": rnn, "lstm-adaptive": lambda: rnn((5, 9))}


@pytest.mark.parametrize("make", MODELS.values(), ids=MODELS.keys())
@pytest.mark.parametrize("open_vocab", [False, True])
def test_next_word_logprobs_equal_the_word_scores_of_the_extended_sentence(make, open_vocab):
    model = make()
    model.open_vocab = open_vocab
    candidates = ["cat", "dog", "the", "zebra", "mat.", "Cat", "."]
    for prefix in ["", "the", "a cat saw the"]:
        got = model.next_word_logprobs(prefix, candidates)
        n = len(model.splitter(prefix))
        expected = [sum(v for _, v in model.word_scores(f"{prefix} {c}".strip())[n:-1])
                    for c in candidates]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


@pytest.mark.parametrize("make", MODELS.values(), ids=MODELS.keys())
def test_identical_encodings_are_scored_once(make, monkeypatch):
    model = make()
    seen = []
    original = model._logprobs

    def counting(encoded):
        seen.append(len(encoded))
        return original(encoded)

    monkeypatch.setattr(model, "_logprobs", counting)
    sentences = ["the zebra sat", "the yak sat", "The cat sat", "the cat sat", "the gnu sat"]
    scores = model.score(sentences)
    assert seen == [2]                       # "the <unk> sat" and "the cat sat"
    assert scores[0] == scores[1] == scores[4] and scores[2] == scores[3]
    monkeypatch.setattr(model, "_logprobs", original)
    np.testing.assert_allclose(scores, [model.score([s])[0] for s in sentences], atol=1e-5)


def test_oov_counts_match_hand_counts():
    model = ngram()
    words, unknown = model.oov_counts(["the zebra sat .", "a cat saw the dog", "Yaks ate <unk>"])
    # "." and "zebra"; none; "yaks" and the literal <unk>
    assert words.tolist() == [4, 5, 3] and unknown.tolist() == [2, 0, 2]


def test_open_vocabulary_spreads_the_unk_mass_by_spelling():
    model = ngram()
    closed = model.score(["the zebra sat", "the zzzzzq sat", "the cat sat"])
    model.open_vocab = True
    opened = model.score(["the zebra sat", "the zzzzzq sat", "the cat sat"])
    assert closed[0] == closed[1] and opened[2] == closed[2]       # in-vocabulary unchanged
    assert opened[0] > opened[1] and opened[0] < closed[0]         # word-like spelling wins
    penalty = model.spelling_penalties(["zebra"])[0]
    speller, log_rest = model._speller()
    assert penalty == pytest.approx(speller.score(["z e b r a"])[0] - log_rest, abs=1e-9)


def test_open_vocabulary_is_a_distribution_over_strings():
    """The <unk> mass is shared among unknown strings, never exceeded: the open next-word
    probabilities of every unknown string of up to 10 letters over the vocabulary's alphabet add
    up to at most p(<unk>) (the rest goes to longer strings, to letters the vocabulary never used
    and to the empty spelling), while without the spelling model they would add up to far more."""
    splitter = WordSplitter()
    model = NgramModel.train([splitter(s) for s in ["ab ba", "ab ab b", "<unk> ba"]], order=2,
                             splitter=splitter)
    model.open_vocab = True
    strings = ["".join(p) for n in range(1, 11) for p in itertools.product("ab", repeat=n)]
    unknown = [s for s in strings if s not in model.index]
    table = np.exp(model._next_logprobs(np.zeros(0, dtype=np.int64)))
    assert table.sum() == pytest.approx(1.0, abs=1e-9)
    p_unk = table[model.index["<unk>"]]
    spread = np.exp(model.next_word_logprobs("", unknown)).sum()
    assert 0.2 * p_unk < spread <= p_unk * (1 + 1e-9)
    assert p_unk * len(unknown) > 100 * p_unk       # the closed model: p(<unk>) for each
    assert math.isfinite(model.score(["ab zz"])[0])


@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_the_splitter_keeps_combining_marks_in_their_word(form):
    """A decomposed accent or a Devanagari vowel sign ends a word before its punctuation; it
    is a combining mark (``\\W``), not punctuation, and was cut off as a word of its own.
    Words come out in NFC whatever the input's form."""
    text = unicodedata.normalize(form, "The naïve man drank café. वह बीमार था।")
    words = ["the", "naïve", "man", "drank", "café", ".", "वह", "बीमार", "था", "।"]
    assert WordSplitter()(text) == words
    assert WordSplitter()('"cat."') == ['"', "cat", ".", '"']


def test_decomposed_text_finds_the_words_of_a_model_trained_on_composed_text():
    """NFD input (``e`` + U+0301) was a different string from the vocabulary's ``é``: every
    accented word unknown, its sentence scored as if full of ``<unk>``."""
    splitter = WordSplitter()
    corpus = ["the café was naïve", "the café is open", "私はコーヒーです"]
    model = NgramModel.train([splitter(s) for s in corpus], order=2, splitter=splitter)
    for sentence in corpus:
        decomposed = unicodedata.normalize("NFD", sentence)
        assert decomposed != sentence
        assert model.oov_counts([decomposed])[1].tolist() == [0]
        assert model.score([decomposed])[0] == pytest.approx(model.score([sentence])[0])


@pytest.mark.parametrize("segmenter, words", [
    ("unicode", ["我喜欢北京", "。", "私は学生です", "สวัสดีครับ"]),
    ("chars", ["我", "喜", "欢", "北", "京", "。", "私", "は", "学", "生", "で", "す",
               "ส", "วั", "ส", "ดี", "ค", "รั", "บ"]),
])
def test_the_splitter_cuts_scripts_without_spaces(segmenter, words):
    """A sentence of Chinese, Japanese or Thai was one "word" (unseen in any other sentence:
    every such sentence <unk>); ``unicode`` keeps that for models saved before the setting."""
    text = unicodedata.normalize("NFD", "我喜欢北京。 私は学生です สวัสดีครับ")
    assert WordSplitter(segmenter=segmenter)(text) == words


def test_the_dictionary_segmenters_cut_words_and_keep_other_scripts():
    pytest.importorskip("rjieba")
    pytest.importorskip("fugashi")
    assert WordSplitter(segmenter="chinese")("他说:“我爱北京Obama。”") == [
        "他", "说", ":", "“", "我", "爱", "北京", "obama", "。", "”"]
    assert WordSplitter(segmenter="japanese")("私は学生です。") == [
        "私", "は", "学生", "です", "。"]
    with pytest.raises(UserError, match="unknown word segmenter 'hf:x'"):
        WordSplitter(segmenter="hf:x")


def test_a_model_saved_without_a_segmenter_keeps_runs_whole(tmp_path):
    import json

    splitter = WordSplitter(segmenter="chars")
    model = NgramModel.train([splitter("我喜欢北京"), splitter("我喜欢你")], order=2,
                             splitter=splitter)
    model.save_pretrained(tmp_path / "m")
    assert NgramModel.from_pretrained(tmp_path / "m").splitter == splitter
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    del config["splitter"]["segmenter"]
    (tmp_path / "m" / "config.json").write_text(json.dumps(config))
    assert NgramModel.from_pretrained(tmp_path / "m").splitter.segmenter == "unicode"
