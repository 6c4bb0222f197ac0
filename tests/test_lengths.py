"""Word counts of the length section (cuelens.audit.lengths) read off the cached text keys; the
length-only tree fitted on (length, label) counts predicts as the tree on the instances."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from cuelens.audit import lengths
from cuelens.audit.text_keys import cached_text_keys, text_keys
from cuelens.data.dataset import Dataset, Split, Task
from tests.scan_helpers import length_section


def nli_split() -> Split:
    hypotheses = ["A dog.", "It's a big dog, isn't it?", "", "Don't  run!!", "two words"] * 12
    labels = ["entailment", "neutral", "contradiction"] * 20
    return Split("s", "s.jsonl", Task.NLI, ids=[str(i) for i in range(60)], premises=["p"] * 60,
                 hypotheses=hypotheses, labels=labels)


def mcq_split() -> Split:
    split = Split("s", "s.jsonl", Task.MCQ)
    items = [("p", ["He was tired.", "it rained"], 0), ("q", ["x", "y y", "can't stop"], 2),
             ("r", ["", "one"], 1)]
    for i, (premise, choices, label) in enumerate(items):
        split.append({"id": str(i), "premise": premise, "choices": choices, "label": label},
                     "{}", i + 1)
    return split


@pytest.mark.parametrize("make, names", [(nli_split, ["contradiction", "entailment", "neutral"]),
                                         (mcq_split, ["0", "1"])])
def test_counts_from_cached_text_keys_equal_counting_again(make, names, monkeypatch):
    fresh, cached = make(), make()
    dataset = lambda split: Dataset("toy", "jsonl", split.task, None, split, names)  # noqa: E731
    assert cached_text_keys(fresh) is None
    counted = length_section(dataset(fresh))
    text_keys(cached)
    monkeypatch.setattr(lengths, "text_length", None)  # the cached split tokenises nothing
    assert length_section(dataset(cached)) == counted


def test_text_word_counts_item_by_item():
    assert lengths.text_word_counts(mcq_split()).tolist() == [3, 2, 1, 2, 3, 0, 1]
    assert lengths.text_word_counts(nli_split()).tolist()[:5] == [2, 8, 0, 3, 2]


NAMES = ["neutral", "entailment", "contradiction", "Z"]  # not in sorted order


def instance_tree(x_fit, y_fit, x_eval, y_eval) -> np.ndarray:
    """The length-only hits as first computed: a tree on every fitting instance, string labels."""
    tree = DecisionTreeClassifier(max_leaf_nodes=lengths.MAX_LEAVES,
                                  min_samples_leaf=lengths.MIN_LEAF, random_state=0)
    tree.fit(x_fit[:, None], y_fit)
    return (tree.predict(x_eval[:, None]) == y_eval).astype(np.float64)


def assert_same_hits(x_fit, y_fit, x_eval, y_eval):
    x_fit, x_eval = np.asarray(x_fit, dtype=np.int64), np.asarray(x_eval, dtype=np.int64)
    y_fit, y_eval = np.asarray(y_fit, dtype=str), np.asarray(y_eval, dtype=str)
    names = sorted({*y_fit, *y_eval})
    code = {name: i for i, name in enumerate(names)}
    codes = [np.array([code[label] for label in y], dtype=np.int64) for y in (y_fit, y_eval)]
    fit = np.zeros((x_fit.max() + 1, len(names)), dtype=np.int64)  # word count × label code
    np.add.at(fit, (x_fit, codes[0]), 1)
    predicted = lengths.length_predictions(fit, int(x_eval.max()) + 1)
    np.testing.assert_array_equal((predicted[x_eval] == codes[1]).astype(np.float64),
                                  instance_tree(x_fit, y_fit, x_eval, y_eval))


@st.composite
def length_data(draw):
    """Fitting and evaluated (length, label) arrays: few or many instances, lengths in a narrow
    or wide range (beyond MAX_WORDS), labels more or less determined by the length."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    names = NAMES[:draw(st.integers(1, len(NAMES)))]
    top, n = draw(st.sampled_from([0, 1, 3, 8, 45, 70])), draw(st.integers(1, 400))
    noise = draw(st.sampled_from([0.0, 0.3, 1.0]))

    def labels(x):
        ruled = (x * len(names)) // (top + 1) % len(names)
        return np.array(names)[np.where(rng.random(len(x)) < noise,
                                        rng.integers(0, len(names), len(x)), ruled)]

    x_fit, x_eval = rng.integers(0, top + 1, n), rng.integers(0, top + 4, 60)
    return x_fit, labels(x_fit), x_eval, labels(x_eval)


@settings(max_examples=300, deadline=None)
@given(length_data())
def test_tree_on_pair_counts_predicts_as_the_tree_on_instances(data):
    assert_same_hits(*data)


@pytest.mark.parametrize("x_fit, y_fit", [
    ([1] * 20 + [2] * 19, ["a"] * 20 + ["b"] * 19),  # 39: too few to split
    ([1] * 20 + [2] * 20, ["a"] * 20 + ["b"] * 20),  # 40: split 20 | 20
    ([1] * 19 + [2] * 21, ["a"] * 19 + ["b"] * 21),  # 40: no side of 20 at a length boundary
    ([1] * 20 + [2] * 20 + [3] * 20, ["a"] * 20 + ["b"] * 20 + ["a"] * 20),
    ([5] * 100, ["b", "a"] * 50),  # one length, tied labels: the lowest label
    ([1, 2, 3] * 30, ["a"] * 90),  # one label
    ([1] * 30 + [2] * 30, ["a", "b"] * 30),  # a split that gains nothing
    ([0] * 25 + [90] * 25, ["b"] * 25 + ["a"] * 25),  # beyond MAX_WORDS
    ([3], ["a"]), ([3, 4], ["b", "a"]),
])
def test_tree_edge_cases(x_fit, y_fit):
    assert_same_hits(x_fit, y_fit, [0, 1, 2, 3, 4, 5, 50, 90, 200] * 2, ["a", "b"] * 9)


def test_letter_counts_of_decomposed_text_are_the_composed_ones():
    """Without spaces, lengths count letters and digits of the composed text: decomposed (NFD)
    Korean counted each syllable's two or three jamo."""
    import unicodedata

    from cuelens.audit.tokenize import segmenting, text_length

    text = "大學校 학생들이 中國 문화를 배웁니다"
    with segmenting("chars"):
        assert text_length(unicodedata.normalize("NFD", text)) == text_length(text) == 16
