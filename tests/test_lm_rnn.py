"""Word LSTM/RNN language models: learning, storage round trip (docs/methods.md §9)."""

import math
from collections import Counter

import numpy as np
import pytest

from cuelens.lm.rnn import RNNConfig, RNNModel, train_rnn
from cuelens.lm.text import WordSplitter

CORPUS = ["the cat sat on the mat", "the dog sat on the log", "a cat saw the dog",
          "the dog saw a cat", "a dog sat on a mat"] * 8


@pytest.fixture(scope="module")
def trained():
    import torch

    torch.set_num_threads(1)
    splitter = WordSplitter()
    sentences = [splitter(s) for s in CORPUS]
    model = train_rnn(sentences, sentences[:5], RNNConfig(embedding_size=16, hidden_size=32),
                      splitter, epochs=8, batch_size=8, lr=1e-2, log=lambda _: None)
    return model, sentences


def test_lstm_beats_the_unigram_perplexity(trained):
    model, sentences = trained
    tokens = [w for words in sentences for w in [*words, "</s>"]]
    counts = Counter(tokens)
    unigram = math.exp(-np.mean([math.log(counts[w] / len(tokens)) for w in tokens]))
    assert model.perplexity(sentences) < 0.7 * unigram


def test_word_scores_add_up_and_save_load_is_identical(trained, tmp_path):
    model, _ = trained
    sentences = ["the cat sat on the log", "a zebra saw the dog", "dog"]
    words = model.word_scores(sentences[1])
    assert [w for w, _ in words] == ["a", "zebra", "saw", "the", "dog", "</s>"]
    assert sum(v for _, v in words) == pytest.approx(model.score(sentences)[1], abs=1e-5)
    model.save_pretrained(tmp_path / "lstm")
    loaded = RNNModel.from_pretrained(tmp_path / "lstm")
    np.testing.assert_array_equal(loaded.score(sentences), model.score(sentences))
    assert loaded.config == model.config and loaded.vocab == model.vocab


def test_rnn_scores_are_batch_independent():
    splitter = WordSplitter()
    config = RNNConfig(arch="rnn", vocab_size=6, embedding_size=4, hidden_size=8)
    model = RNNModel(config, ["<unk>", "a", "b", "c", "<s>", "</s>"], splitter)
    sentences = ["a b c a", "b", "c c", "a b"]
    one_by_one = np.array([model.score([s])[0] for s in sentences])
    np.testing.assert_allclose(model.score(sentences), one_by_one, atol=1e-5)


@pytest.mark.parametrize("change, message", [
    ({"splitter": {"foo": 1}}, "field 'splitter' is not a word-splitter setting"),
    ({"splitter": None}, "field 'splitter' is not a word-splitter setting"),  # KeyError before
    ({"hidden_size": "x"}, "field 'hidden_size' has an invalid value: 'x'"),
    ({"layers": 0}, "field 'layers' has an invalid value: 0"),
    ({"dropout": 3}, "field 'dropout' has an invalid value: 3"),
    ({"cutoffs": [3, 2]}, "field 'cutoffs' has an invalid value"),
    ({"extra": 1}, "unknown field(s) extra"),
    ({"vocab_size": 5}, "vocab.json has 6 words but config.json's vocab_size is 5"),
])
def test_a_malformed_recurrent_config_is_one_error(tmp_path, change, message):
    """The n-gram config was checked field by field; a recurrent one gave the dataclass's or
    torch's traceback (TypeError, KeyError, ValueError)."""
    import json

    from cuelens.errors import UserError

    config = RNNConfig(arch="rnn", vocab_size=6, embedding_size=4, hidden_size=8)
    RNNModel(config, ["<unk>", "a", "b", "c", "<s>", "</s>"], WordSplitter()).save_pretrained(
        tmp_path / "m")
    path = tmp_path / "m" / "config.json"
    saved = json.loads(path.read_text())
    path.write_text(json.dumps({**saved, **change}))
    with pytest.raises(UserError) as caught:
        RNNModel.from_pretrained(tmp_path / "m")
    assert message in str(caught.value)


@pytest.mark.parametrize("option, value", [("epochs", 0), ("epochs", -2), ("batch_size", 0)])
def test_train_rnn_counts_below_1_are_one_error(option, value):
    """train_rnn(epochs=0) returned an untrained model silently, batch_size=0 was a
    ZeroDivisionError (the CLI refused both; the Python call did not)."""
    from cuelens.errors import UserError
    from cuelens.lm.text import WordSplitter

    with pytest.raises(UserError, match=rf"{option} \(--{option.replace('_', '-')}\) must be "
                                        rf"at least 1, got {value}"):
        train_rnn([["a", "b"]], None, RNNConfig(embedding_size=4, hidden_size=4), WordSplitter(),
                  **{option: value})
