"""Sampled examples (cuelens.audit.examples): the instances holding each listed cue."""

from __future__ import annotations

import numpy as np

from cuelens.audit.examples import ExamplePicker
from cuelens.audit.results import CueRow
from cuelens.data.dataset import Dataset, Split, Task


def cue(token: str, z: float) -> dict:
    return CueRow(token=token, label="neutral", count=2, label_count=2, significant=True,
                  metrics={"z": z})


def test_each_cue_lists_every_instance_holding_the_word_once():
    hypotheses = ["The dog, the DOG!", "It isn't a dog.", "Cats don't bark", "dogs"]
    split = Split("s", "s.jsonl", Task.NLI, ids=list("abcd"), premises=["p"] * 4,
                  hypotheses=hypotheses, labels=["neutral"] * 4)
    dataset = Dataset("toy", "jsonl", Task.NLI, None, split, ["neutral"])
    picker = ExamplePicker.of([cue("dog", 5.0), cue("n't", 4.0), cue("cat", 3.0)],
                              dataset.label_names, 0, per_group=0)
    out = picker.section([picker.part(dataset.test, 0, np.ones(4, dtype=bool), None)])
    shown = {token: [out.items[k]["id"] for k in rows] for token, rows in out.by_cue.items()}
    assert shown == {"dog": ["a", "b"], "n't": ["b", "c"], "cat": []}


def test_holders_match_a_brute_force_search_of_every_text():
    from cuelens.audit.counts import encode
    from cuelens.audit.examples import holders, token_ids
    from cuelens.audit.tokenize import word_tokens

    rng = np.random.default_rng(3)
    pieces = ["dog", "Dog", "cat's", "don't", "a", "b-c", "x_y", "", "!"]
    texts = [" ".join(rng.choice(pieces, size=rng.integers(0, 6))) for _ in range(300)]
    tokens = ["dog", "'s", "n't", "b", "c", "x", "absent", "a", "do"]
    words = encode(texts, repeats=True)
    found = holders(words, token_ids(words.vocab, tokens))
    assert [held.tolist() for held in found] == \
        [[i for i, text in enumerate(texts) if token in word_tokens(text)] for token in tokens]
