"""Word counts of the length section (cuelens.audit.lengths) read off the cached text keys."""

from __future__ import annotations

import pytest

from cuelens.audit import lengths
from cuelens.audit.text_keys import cached_text_keys, text_keys
from cuelens.data.dataset import Dataset, Split, Task


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
    counted = lengths.length_section(dataset(fresh))
    text_keys(cached)
    monkeypatch.setattr(lengths, "word_tokens", None)  # the cached split tokenises nothing
    assert lengths.length_section(dataset(cached)) == counted


def test_text_word_counts_item_by_item():
    assert lengths.text_word_counts(mcq_split()).tolist() == [3, 2, 1, 2, 3, 0, 1]
    assert lengths.text_word_counts(nli_split()).tolist()[:5] == [2, 8, 0, 3, 2]
