"""One normalising pass per split (cuelens.audit.text_keys), shared by grouping and hygiene."""

from __future__ import annotations

import gc

import numpy as np

from cuelens.audit.text_keys import _TEXT_KEYS, as_keys, combine, normal_form, text_key, text_keys
from cuelens.data.dataset import Split, Task


def mcq_split() -> Split:
    split = Split("test", "t.jsonl", Task.MCQ)
    items = [("The Man, walked home.", ["He was tired.", "it rained"], 0, "cause"),
             ("the man walked home", ["IT RAINED!", "he was tired"], 1, None),
             ("Other premise here", ["x", "y", "z"], 2, None)]
    for i, (premise, choices, label, question) in enumerate(items):
        split.append({"id": str(i), "premise": premise, "choices": choices, "label": label,
                      "question": question}, "{}", i + 1)
    return split


def fingerprints(texts: list[str]) -> np.ndarray:
    return as_keys(b"".join(text_key(normal_form(t)) for t in texts))


def test_fingerprints_and_word_counts_of_every_text():
    split = mcq_split()
    keys = text_keys(split)
    np.testing.assert_array_equal(keys.premise, fingerprints(split.premises))
    np.testing.assert_array_equal(keys.premise_words, [4, 4, 3])
    np.testing.assert_array_equal(keys.starts, [0, 2, 4, 7])
    flat = [c for choices in split.choices for c in choices]
    np.testing.assert_array_equal(keys.text, fingerprints(flat))
    np.testing.assert_array_equal(keys.text_words, [3, 2, 2, 3, 1, 1, 1])
    # the question joins the context of item 0 only
    np.testing.assert_array_equal(keys.context, fingerprints(
        [split.premise_context(i) for i in range(3)]))
    assert keys.premise[0] == keys.premise[1] and keys.context[0] != keys.context[1]


def test_option_sets_match_in_any_order_and_only_as_multisets():
    keys = text_keys(mcq_split())
    sets = keys.text_sets()
    assert sets[0] == sets[1] != sets[2]  # same two choices, other order and case
    a, b = fingerprints(["a"]), fingerprints(["b"])
    assert combine(a, b)[0] != combine(b, a)[0]  # pairs are ordered; sets sort first


def test_computed_once_per_split_and_forgotten_with_it():
    split = mcq_split()
    assert text_keys(split) is text_keys(split)
    key = id(split)
    del split
    gc.collect()
    assert key not in _TEXT_KEYS._values


def test_premises_shared_by_adjacent_items_keyed_like_any_other():
    from cuelens.audit.hygiene_keys import near_parts

    premises = ["A man sleeps.", "a MAN sleeps", "A man sleeps.", "Two dogs!", "A man sleeps."]
    split = Split("s", "s.jsonl", Task.NLI, ids=list("abcde"), premises=premises,
                  hypotheses=["He naps.", "x", "He naps", "", "y"], labels=["neutral"] * 5)
    keys = text_keys(split)
    np.testing.assert_array_equal(keys.premise, fingerprints(premises))
    np.testing.assert_array_equal(keys.premise_words, [3, 3, 3, 2, 3])
    np.testing.assert_array_equal(keys.text, fingerprints(split.hypotheses))
    assert near_parts(split, np.array([4, 0, 2, 3])) == [
        ["a man sleeps"] * 3 + ["two dogs"], ["y", "he naps", "he naps", ""]]


def test_forms_kept_once_for_the_words_and_the_same_words():
    from cuelens.audit.chunked_data import encode_chunk
    from cuelens.audit.counts import Encoder
    from cuelens.audit.text_keys import text_forms

    hypotheses = ["He can't SLEEP.", "Don’t go!", "Ça va, ça va", "", "x y x", "it's 42"]
    split = Split("s", "s.jsonl", Task.NLI, ids=list("abcdef"), premises=["p"] * 6,
                  hypotheses=hypotheses, labels=["n", "e", "n", "c", "e", "n"])
    text_keys(split)
    assert text_forms(split) is None  # not asked to keep them
    other = Split("s", "s.jsonl", Task.NLI, ids=split.ids, premises=split.premises,
                  hypotheses=hypotheses, labels=split.labels)
    text_keys(other, keep_forms=True)
    words = encode_chunk(other, False, Encoder(repeats=True), None, {})  # takes the forms
    assert text_forms(other) is None
    expected = encode_chunk(split, False, Encoder(repeats=True), None, {})
    for got, want in zip(words[:2], expected[:2]):
        assert got.vocab == want.vocab
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
    assert words[0].vocab[:3] == ["he", "ca", "n't"]
    text_keys(split, keep_forms=True)  # computed already: nothing kept
    assert text_forms(split) is None
    third = mcq_split()
    text_keys(third, keep_forms=True)
    (forms,) = text_forms(third)
    assert forms.to_pylist() == [normal_form(c) for choices in third.choices for c in choices]
