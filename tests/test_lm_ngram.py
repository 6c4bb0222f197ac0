"""Kneser-Ney n-gram scorer: hand-computed values, NLTK equality, storage round trip (docs/methods.md §9)."""

import json
import math

import numpy as np
import pytest

from cuelens.lm.ngram import NgramModel
from cuelens.lm.text import WordSplitter

TOY = ["a b", "a c", "b a"]


def _model(order=2, discount=0.75, corpus=TOY):
    splitter = WordSplitter()
    return NgramModel.train([splitter(s) for s in corpus], order=order, discount=discount,
                            splitter=splitter)


def test_bigram_matches_hand_computed_kneser_ney():
    # Padded bigrams: (<s>,a)x2 (a,b) (b,</s>) (a,c) (c,</s>) (<s>,b) (b,a) (a,</s>): 8 types.
    # Continuation counts N1+(.w): a=2, b=2, c=1, </s>=3; d = 0.75.
    p_a_bos = (2 - 0.75) / 3 + 0.75 * 2 / 3 * (2 / 8)      # c(<s>)=3, N1+(<s>.)=2
    p_b_a = (1 - 0.75) / 3 + 0.75 * 3 / 3 * (2 / 8)        # c(a)=3, N1+(a.)=3
    p_eos_b = (1 - 0.75) / 2 + 0.75 * 2 / 2 * (3 / 8)      # c(b)=2, N1+(b.)=2
    model = _model()
    expected = math.log(p_a_bos) + math.log(p_b_a) + math.log(p_eos_b)
    assert model.score(["a b"])[0] == pytest.approx(expected, abs=1e-12)
    words = model.word_scores("A b")          # lower-cased like the training text
    assert [w for w, _ in words] == ["a", "b", "</s>"]
    assert [v for _, v in words] == pytest.approx([math.log(p_a_bos), math.log(p_b_a),
                                                   math.log(p_eos_b)])


@pytest.mark.parametrize("order", [2, 3, 4])
def test_equals_nltk_kneser_ney_fitted_independently(order):
    from nltk.lm import KneserNeyInterpolated
    from nltk.lm.preprocessing import padded_everygram_pipeline

    corpus = ["the cat sat on the mat", "the dog sat on the log", "a cat saw the dog",
              "the mat was red", "a red dog sat"]
    splitter = WordSplitter()
    model = _model(order, 0.6, corpus)
    reference = KneserNeyInterpolated(order, discount=0.6)
    reference.fit(*padded_everygram_pipeline(order, [splitter(s) for s in corpus]))
    tests = ["the cat sat on the log", "a dog was red", "the the the", "cat", "red mat saw a cat"]
    expected = []
    for sentence in tests:
        words = [*splitter(sentence), "</s>"]
        history = ["<s>"] * (order - 1) + words
        expected.append(sum(math.log(reference.score(w, history[i:i + order - 1]))
                            for i, w in enumerate(words)))
    np.testing.assert_allclose(model.score(tests), expected, rtol=0, atol=1e-10)


def test_probabilities_sum_to_one_over_the_vocabulary():
    model = _model(3, 0.75, ["the cat sat", "the dog sat", "a cat ran"])
    targets = np.arange(len(model.vocab))   # NLTK gives "<s>" some mass too (padding bigrams)
    for history in (["<s>", "the"], ["the", "cat"], ["dog", "ran"]):
        rows = np.tile([model.index[w] for w in history], (len(targets), 1))
        assert model._probabilities(rows, targets).sum() == pytest.approx(1.0, abs=1e-12)


def test_unknown_words_map_to_unk_and_save_load_round_trip(tmp_path):
    model = _model(3, 0.75, ["the cat sat", "the dog sat", "a rare cat", "the cat ran"] * 2
                   + ["one off words"])
    model2 = NgramModel.train([WordSplitter()(s) for s in ["the cat sat", "the cat"]], order=3,
                              min_count=2)
    assert "sat" not in model2.index and np.isfinite(model2.score(["the zebra sat"])).all()
    model.save_pretrained(tmp_path / "m")
    loaded = NgramModel.from_pretrained(tmp_path / "m")
    sentences = ["the cat sat", "a zebra ran", "the the"]
    np.testing.assert_array_equal(loaded.score(sentences), model.score(sentences))
    assert not list(tmp_path.glob("m/*.pkl"))
    from safetensors.numpy import load_file

    data = load_file(str(tmp_path / "m" / "model.safetensors"))
    assert set(data) == {f"{kind}_{k}" for kind in ("ngrams", "counts") for k in (1, 2, 3)}
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["model_type"] == "cuelens-ngram"
    # the older layout (counts.npz instead of model.safetensors) still loads
    (tmp_path / "m" / "model.safetensors").unlink()
    np.savez(tmp_path / "m" / "counts.npz", **data)
    np.testing.assert_array_equal(NgramModel.from_pretrained(tmp_path / "m").score(sentences),
                                  model.score(sentences))
