"""Cue metrics (docs/methods.md §2) against hand-computed values on an 8-instance toy dataset."""

import math

import numpy as np
import pytest

from cuelens.audit.counts import build_term_matrix, encode
from cuelens.audit.metrics import METRICS, CountTable, bonferroni_z
from cuelens.audit.tokenize import tokenize

# label A: 5 instances, label B: 3 instances; N = 8
TEXTS = ["Not good.", "not bad", "very good!", "Good, good good", "fine",
         "not fine", "BAD", "very bad"]
LABELS = np.array([0, 0, 0, 0, 0, 1, 1, 1])


def table(**kwargs) -> tuple[CountTable, dict]:
    X, vocab = build_term_matrix(TEXTS)
    Y = np.eye(2)[LABELS]
    joint = np.asarray(X.T @ Y)
    return CountTable(joint, np.bincount(LABELS), **kwargs), {w: i for i, w in enumerate(vocab)}


def value(metric: str, word: str, label: int, **kwargs) -> float:
    t, index = table(**kwargs)
    return float(METRICS[metric](t)[index[word], label])


# "not": #(not,A)=2, #(not,B)=1, #(not)=3;  "good": #(good,A)=3, #(good,B)=0 (counted once
# per instance although instance 4 repeats it); #(A)=5, #(B)=3.
EXPECTED = {
    ("freq", "not", 0): 2,
    ("freq", "good", 0): 3,
    ("cp", "not", 0): 2 / 3,
    ("cp", "good", 1): 0.0,
    ("pmi", "not", 0): math.log((3 / 8) / ((5 / 8) * (5 / 8))),  # (2+1)/8, (3+2)/8, 5/8
    ("pmi", "good", 1): math.log((1 / 8) / ((5 / 8) * (3 / 8))),  # (0+1)/8, (3+2)/8, 3/8
    ("lmi", "not", 0): (3 / 8) * math.log((3 / 8) / ((5 / 8) * (5 / 8))),
    ("rd", "not", 0): abs((2 + 1) / (1 + 1) - 5 / 3),
    ("rd", "good", 0): abs((3 + 1) / (0 + 1) - 5 / 3),
    ("ad", "not", 0): abs(math.atan(2 / 1) - math.atan(5 / 3)),
    ("ad", "good", 0): abs(math.pi / 2 - math.atan(5 / 3)),  # arctan(3/0) = pi/2
    ("cos", "not", 0): (2 * 5 + 1 * 3) / (math.sqrt(2 ** 2 + 1) * math.sqrt(5 ** 2 + 3 ** 2)),
    ("cos", "good", 1): (0 * 3 + 3 * 5) / (math.sqrt(0 + 3 ** 2) * math.sqrt(3 ** 2 + 5 ** 2)),
    ("z", "not", 0): (2 / 3 - 5 / 8) / math.sqrt((5 / 8) * (3 / 8) / 3),
    ("z", "good", 1): (0 - 3 / 8) / math.sqrt((3 / 8) * (5 / 8) / 3),
    ("npmi", "not", 0): math.log((3 / 8) / ((5 / 8) * (5 / 8))) / -math.log(3 / 8),
}


@pytest.mark.parametrize("key", sorted(EXPECTED), ids=lambda k: "-".join(map(str, k)))
def test_metric_matches_hand_computation(key):
    metric, word, label = key
    assert value(metric, word, label) == pytest.approx(EXPECTED[key], rel=1e-12, abs=1e-12)


def test_wp_is_weighted_power_of_cos():
    c = (2 * 5 + 1 * 3) / (math.sqrt(5) * math.sqrt(34))
    assert value("wp", "not", 0) == pytest.approx((1 - c) * 3 ** c)


def test_every_registered_metric_is_covered():
    assert set(METRICS) == {"freq", "cp", "pmi", "lmi", "rd", "ad", "cos", "wp", "z", "npmi"}
    assert {m for m, _, _ in EXPECTED} | {"wp"} == set(METRICS)


def test_alpha_zero_gives_unsmoothed_pmi():
    expected = math.log((2 / 8) / ((3 / 8) * (5 / 8)))
    assert value("pmi", "not", 0, alpha=0.0) == pytest.approx(expected)


def test_z_with_uniform_prior():
    expected = (2 / 3 - 1 / 2) / math.sqrt(0.5 * 0.5 / 3)
    assert value("z", "not", 0, z_prior="uniform") == pytest.approx(expected)


def test_bonferroni_threshold_is_one_sided():
    # P(Z > 1.6448536) = 0.05: a single test; 100 tests → alpha 0.0005 → 3.2905
    assert bonferroni_z(1) == pytest.approx(1.6448536, abs=1e-6)
    assert bonferroni_z(100) == pytest.approx(3.2905267, abs=1e-6)


def test_the_apostrophe_free_fast_path_tokenizes_like_the_full_pattern():
    """``word_tokens`` skips the contraction alternatives on a text without an apostrophe;
    on random texts over letters, digits, ``_``, accents, punctuation and both apostrophes it
    returns what the full :data:`TOKEN_PATTERN` finds."""
    import random
    import re

    from cuelens.audit.tokenize import TOKEN_PATTERN, word_tokens

    def normalise(text: str) -> str:  # what every segmenter does first
        return text.lower().replace("\u2019", "'")

    full = re.compile(TOKEN_PATTERN)
    rng = random.Random(0)
    alphabet = "abnt  'sdlmrve_9ÉéßДж.,!-’\u00a0"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(30)))
             for _ in range(5000)] + ["don't", "Dont", "it's", "can’t", "n't", "won't_"]
    assert sum("'" not in normalise(t) for t in texts) > 1000  # both paths are exercised
    for text in texts:
        assert word_tokens(text) == full.findall(normalise(text)), text


def test_tokenizer_splits_contractions_and_drops_punctuation():
    assert tokenize("Don't panic, it's the dog's bone!") == \
        ["do", "n't", "panic", "it", "'s", "the", "dog", "bone"]
    assert tokenize("I can’t, we'll go. Go!") == ["i", "ca", "n't", "we", "'ll", "go"]


def test_sequences_keep_first_occurrence_order_and_presence():
    seqs = encode(["b a b c", "c a"])
    vocab = seqs.vocab
    first = [vocab[i] for i in seqs.indices[seqs.indptr[0]:seqs.indptr[1]]]
    second = [vocab[i] for i in seqs.indices[seqs.indptr[1]:seqs.indptr[2]]]
    assert first == ["b", "a", "c"] and second == ["c", "a"]
    assert seqs.matrix().toarray().tolist() == [[1, 1, 1], [0, 1, 1]]  # vocab b, a, c


def test_bigrams_are_features():
    _, vocab = build_term_matrix(["not at all"], ngrams=2)
    assert vocab == ["not", "at", "all", "not at", "at all"]
