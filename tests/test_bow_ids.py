"""The BoW baseline's uni+bigram matrices from word ids (docs/methods.md §3), columns found and
evaluation rows built a chunk at a time, equal the string-based ``encode(..., ngrams=2)`` path
they replace whatever the chunk size: same rows, columns, order and values, hence the same scan
results."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

import cuelens
from cuelens.audit import leakage
from cuelens.audit.counts import TokenSequences, encode, row_starts
from cuelens.audit.leakage import BOW_MIN_COUNT
from cuelens.audit.passes import subset
from cuelens.data.synthetic import make_mcq, make_nli
from scan_helpers import bigram_columns, held, store_words

WORDS = ["a", "b", "the", "cat", "don't", "it's", "can't", "We're", "dog", "Dog", "x_y", "7",
         "’s", "n't", "dont", "CAT"]
PUNCT = ["", ",", ".", " - ", "!?", "'", "’"]


def string_bow_matrices(texts: list[str], sample: np.ndarray,
                        eval_rows: np.ndarray) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """The bigram-string implementation this change replaced (both of its branches), kept as
    the reference."""
    rows = np.union1d(sample, eval_rows)
    if len(rows) == len(texts):
        full = encode(texts, ngrams=2).matrix()
        X = full[sample]
        support = np.flatnonzero(np.asarray(X.sum(axis=0)).ravel() >= BOW_MIN_COUNT)
        return X[:, support], full[eval_rows][:, support]
    fitted = encode([texts[i] for i in sample], ngrams=2)
    counts = np.bincount(fitted.indices, minlength=len(fitted.vocab))
    keep = {fitted.vocab[i] for i in np.flatnonzero(counts >= BOW_MIN_COUNT)}
    union = encode([texts[i] for i in rows], ngrams=2)
    bow = union.matrix()[:, [i for i, token in enumerate(union.vocab) if token in keep]]
    return bow[np.searchsorted(rows, sample)], bow[np.searchsorted(rows, eval_rows)]


def chunked_bow_matrices(words: TokenSequences, sample: np.ndarray, eval_rows: np.ndarray,
                         chunk: int) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """The sample's matrix and the evaluation rows' one stacked from ``chunk``-row pieces, the
    columns numbered over the union of both (as the scan's BoW baseline numbers them)."""
    fitted, weights = np.unique(sample, return_counts=True)
    columns = bigram_columns(words, fitted, weights, BOW_MIN_COUNT, np.union1d(sample, eval_rows),
                             chunk)
    pieces = [columns.matrix(words, eval_rows[start:start + chunk])
              for start in range(0, len(eval_rows), chunk)]
    return columns.matrix(words, sample), sp.vstack(pieces, format="csr")


def assert_same_csr(new: sp.csr_matrix, old: sp.csr_matrix) -> None:
    assert new.shape == old.shape and new.dtype == old.dtype == np.float32
    assert new.has_sorted_indices and old.has_sorted_indices
    np.testing.assert_array_equal(new.indptr, old.indptr)
    np.testing.assert_array_equal(new.indices, old.indices)
    np.testing.assert_array_equal(new.data, old.data)


def random_text(rng: np.random.Generator) -> str:
    n = rng.choice([0, 1, 1, 2, 3, 5, 8, 12])
    words = rng.choice(WORDS[:int(rng.integers(3, len(WORDS) + 1))], size=n)
    return "".join(str(w) + str(rng.choice(PUNCT)) + " " * int(rng.integers(0, 2))
                   for w in words)


def bigram_matrix(words: TokenSequences, rows: np.ndarray, weights: np.ndarray, min_count: int,
                  chunk: int) -> np.ndarray:
    """Dense matrix of ``rows`` over the features with support ≥ ``min_count`` in the rows of
    positive weight."""
    fitted = weights > 0
    columns = bigram_columns(words, rows[fitted], weights[fitted], min_count, rows, chunk)
    return columns.matrix(words, rows).toarray()


@pytest.mark.parametrize("chunk", [1, 2, 7, 100])
def test_hand_computed_matrix(chunk):
    """"a b c b a" → a b c, "a b" "b c" "c b" "b a" (first-appearance order, not key order:
    "b a" has a smaller key than "b c"); "c b" → c b "c b"; "" and "." → nothing; "b" → b."""
    words = encode(["a b c b a", "", "c b", ".", "b"], repeats=True)
    assert words.vocab == ["a", "b", "c"] and words.indices.tolist() == [0, 1, 2, 1, 0, 2, 1, 1]
    everything = bigram_matrix(words, np.arange(5), np.ones(5), 1, chunk)
    np.testing.assert_array_equal(everything, [[1, 1, 1, 1, 1, 1, 1],
                                               [0, 0, 0, 0, 0, 0, 0],
                                               [0, 1, 1, 0, 0, 1, 0],
                                               [0, 0, 0, 0, 0, 0, 0],
                                               [0, 1, 0, 0, 0, 0, 0]])
    # Support ≥ 2 keeps b (3 rows), c and "c b" (2 rows each).
    np.testing.assert_array_equal(bigram_matrix(words, np.arange(5), np.ones(5), 2, chunk),
                                  [[1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 0, 0], [1, 0, 0]])
    # Rows 2 and 4, only row 4 sampled: b alone has support.
    only_b = bigram_matrix(words, np.array([2, 4]), np.array([0, 1]), 1, chunk)
    np.testing.assert_array_equal(only_b, [[1], [1]])
    # Weights count a row repeatedly: row 0 twice gives each of its 7 features support 2.
    np.testing.assert_array_equal(bigram_matrix(words, np.array([0, 4]), np.array([2, 0]), 2,
                                                chunk), [[1] * 7, [0, 1, 0, 0, 0, 0, 0]])
    # Rows 2 and 4 sampled keep c, b, "c b" in that order over themselves, but the unsampled
    # row 0 comes first and lists b before c: columns b, c, "c b".
    np.testing.assert_array_equal(bigram_matrix(words, np.arange(5), np.array([0, 0, 1, 0, 1]),
                                                1, chunk),
                                  [[1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 0, 0], [1, 0, 0]])


@pytest.mark.parametrize("seed", range(6))
def test_random_texts_equal_the_string_path(seed):
    """Repeats, contractions, punctuation, case, empty and one-token texts; fitting samples
    that are a subset, all rows, or rows repeated; evaluation rows overlapping or not; chunks
    of one row, a few rows, or all of them."""
    rng = np.random.default_rng(seed)
    texts = [random_text(rng) for _ in range(int(rng.integers(1, 120)))]
    texts[0] = ""
    n = len(texts)
    words = encode(texts, repeats=True)
    samples = [np.sort(rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False)),
               np.arange(n), np.sort(rng.choice(n, size=n, replace=True))]
    for sample in samples:
        for eval_rows in (np.sort(rng.choice(n, size=int(rng.integers(1, n + 1)),
                                             replace=False)),
                          np.setdiff1d(np.arange(n), sample), np.arange(n)):
            if len(eval_rows) == 0:
                continue
            old = string_bow_matrices(texts, sample, eval_rows)
            for chunk in (1, 7, leakage.BOW_CHUNK):
                new = chunked_bow_matrices(words, sample, eval_rows, chunk)
                assert_same_csr(new[0], old[0])
                assert_same_csr(new[1], old[1])


@pytest.mark.parametrize("chunk", [1, 7, 65_536])
def test_scan_fold_matrices_equal_the_string_path(chunk):
    """The capped fitting samples and folds of a planted scan: identical matrices."""
    dataset = cuelens.load_dataset(make_nli(1500, seed=5))
    store, grouped = held(dataset)
    items = np.arange(len(dataset.test))
    folds, rng = grouped.outer(items, items, 0), np.random.default_rng(0)
    for fold in range(5):
        eval_rows = np.flatnonzero(folds == fold)
        sample = np.sort(rng.choice(np.flatnonzero(folds != fold), 500, replace=False))
        new, old = chunked_bow_matrices(store_words(store), sample, eval_rows, chunk), \
            string_bow_matrices(list(dataset.test.hypotheses), sample, eval_rows)
        assert new[0].shape[1] > 100
        assert_same_csr(new[0], old[0])
        assert_same_csr(new[1], old[1])


@pytest.mark.parametrize("rows", [make_nli(3000, seed=11), make_mcq(1500, seed=4, n_choices=3)],
                         ids=["nli", "mcq"])
def test_scan_results_unchanged(rows, monkeypatch):
    """Planted scans (capped fits): the BoW baseline's evaluation rows scored 7 at a time (MCQ
    questions split across pieces) give the results of scoring them at once."""
    options = dict(features="none", folds=3, iterations=1, max_fit_items=800)  # portions > cap
    old = cuelens.scan(rows, **options).results
    monkeypatch.setattr(leakage, "BOW_CHUNK", 7)
    chunked = cuelens.scan(rows, **options).results
    assert chunked == old
    bow, = (b for b in old["leakage"]["baselines"] if "BoW" in b["name"])
    assert bow["accuracy"] > old["leakage"]["majority"]


@pytest.mark.parametrize("chunk", [1, 3, 1000])
def test_first_occurrences_equal_encode_without_repeats(chunk):
    """Distinct ids derived from the repeated word ids are exactly encode()'s, any chunking."""
    from cuelens.audit.counts import first_occurrences

    rng = np.random.default_rng(chunk)
    words = ["a", "b", "c", "don't", "it's", "Dog", "dog"]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(0, 9)))) for _ in range(50)]
    expected = encode(texts)
    found = first_occurrences(encode(texts, repeats=True), chunk)
    assert found.vocab == expected.vocab
    np.testing.assert_array_equal(found.indptr, expected.indptr)
    np.testing.assert_array_equal(found.indices, expected.indices)


def store_of(seqs: TokenSequences, labels: np.ndarray, chunk: int):
    """An evaluated split of single-instance NLI items in memory, in chunks of ``chunk``."""
    from cuelens.audit.passes import TokenStore

    store = TokenStore(None, "nli", 1, 3, vocab=list(seqs.vocab), words_vocab=list(seqs.vocab),
                       label_map=np.arange(3))
    for start in range(0, len(labels), chunk):
        items = np.arange(start, min(start + chunk, len(labels)))
        piece = subset(seqs, items)
        store.add(False, piece, piece, labels[items], items)
    return store


def test_run_counts_equal_brute_force_counting():
    """#(w, inner fold, label) of a count pass over chunks of 4 items equals counting by
    hand."""
    from cuelens.audit.passes import count_run
    from cuelens.audit.tokenize import tokenize

    rng = np.random.default_rng(5)
    texts = [" ".join(rng.choice(["x", "y", "z", "w"], size=int(rng.integers(1, 6))))
             for _ in range(30)]
    labels, folds = rng.integers(0, 3, 30), rng.integers(0, 2, 30)
    seqs = encode(texts)
    store = store_of(seqs, labels, 4)
    inner = SimpleNamespace(inner_folds=2, inner=lambda items, keys: folds[items],
                            priority=lambda items, seed: items.astype(np.uint64))
    expected = np.zeros((len(seqs.vocab), 2, 3))
    for r in range(30):
        for token in set(tokenize(texts[r])):
            expected[seqs.vocab.index(token), folds[r], labels[r]] += 1
    counts = count_run(store, inner, 1, 0, 0, False, 30)
    np.testing.assert_array_equal(counts.joint[:, 0], expected)  # slot 0: the evaluated items


def test_outer_fold_portions_count_the_items_of_the_other_folds():
    """The fitting portion of outer fold f (the run's total less f's slot) counts
    #(w, inner fold, label) over exactly the items outside fold f, by hand."""
    from cuelens.audit.passes import count_run
    from cuelens.audit.tokenize import tokenize

    rng = np.random.default_rng(8)
    texts = [" ".join(rng.choice(["x", "y", "z", "w", "v"], size=int(rng.integers(1, 6))))
             for _ in range(40)]
    labels, inner, outer = rng.integers(0, 3, 40), rng.integers(0, 2, 40), rng.integers(0, 3, 40)
    seqs = encode(texts)
    folds = SimpleNamespace(inner_folds=2, inner=lambda items, keys: inner[items],
                            outer=lambda items, keys, seed: outer[items],
                            priority=lambda items, seed: items.astype(np.uint64))
    counts = count_run(count_store := store_of(seqs, labels, 7), folds, 3, 0, 0, True, 40)
    assert count_store.n_eval == 40
    for fold in range(3):
        expected = np.zeros((len(seqs.vocab), 2, 3))
        for r in np.flatnonzero(outer != fold):
            for token in set(tokenize(texts[r])):
                expected[seqs.vocab.index(token), inner[r], labels[r]] += 1
        joint, label_counts, _ = counts.portion(fold)
        np.testing.assert_array_equal(joint, expected)
        np.testing.assert_array_equal(label_counts.sum(), np.sum(outer != fold))


@pytest.mark.parametrize("cap", [1, 3, 20])
def test_sample_candidates_are_the_lowest_priorities_however_the_chunks_merge(cap):
    """The training-sample candidates of a count pass (per label, the ``2 × cap`` items of
    lowest priority) are found by brute force, and again by merging the passes of each chunk
    in order (a Ray task per chunk)."""
    from cuelens.audit.passes import count_chunks, count_run

    rng = np.random.default_rng(cap)
    labels, priority = rng.integers(0, 3, 30), rng.permutation(30).astype(np.uint64)
    seqs = encode([" ".join(rng.choice(["x", "y", "z"], size=3)) for _ in range(30)])
    store = store_of(seqs, labels, 4)
    inner = SimpleNamespace(inner_folds=2, inner=lambda items, keys: items % 2,
                            priority=lambda items, seed: priority[items])
    whole = count_run(store, inner, 1, 0, 0, False, cap).candidates
    for label in range(3):
        mine = np.flatnonzero(labels == label)
        expected = np.sort(mine[np.argsort(priority[mine])][:2 * cap])
        assert whole.item[whole.stratum == label].tolist() == expected.tolist()
    merged, *rest = [count_chunks(replace(store, files=[chunk]), inner, 1, 0, 0, False, 2 * cap)
                     for chunk in store.files]
    for part in rest:
        merged.merge(part)
    merged.candidates.compact()
    assert merged.candidates.item.tolist() == whole.item.tolist()
    assert merged.candidates.words.indices.tolist() == whole.words.indices.tolist()


def test_scan_keeps_each_instance_in_first_occurrence_order():
    """The positional SGD/LR input reads words in text order (SPEC §3), not in the order the
    vocabulary first met them: building the term matrix must not sort the sequences."""
    texts = ["a dog was here", "the cat was out", "the grass was cut"]
    seqs = encode(texts)
    seqs.matrix()
    row = seqs.indices[seqs.indptr[2]:seqs.indptr[3]]
    assert [seqs.vocab[i] for i in row] == ["the", "grass", "was", "cut"]
    rows = [{"premise": "p", "hypothesis": t, "label": "x" if i % 2 else "y"}
            for i, t in enumerate(texts * 4)]
    (chunk,) = held(cuelens.load_dataset(rows), 2)[0].chunks()
    pool = chunk.seqs
    assert [pool.vocab[i] for i in pool.indices[pool.indptr[2]:pool.indptr[3]]] == \
        ["the", "grass", "was", "cut"]


@pytest.mark.parametrize("seed", range(30))
def test_take_equals_a_loop_over_rows(seed):
    """Both ways of TokenSequences.take (a mask for many increasing rows, an index otherwise)
    give each row's ids in the order asked."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 5, size=int(rng.integers(0, 40)))
    seqs = TokenSequences(row_starts(lengths), rng.integers(0, 9, size=int(lengths.sum()),
                                                            dtype=np.int32), [])
    n = len(lengths)
    for rows in (np.sort(rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False)),
                 rng.integers(0, max(n, 1), size=int(rng.integers(0, 3 * n + 1)) if n else 0),
                 np.arange(n)[::-1]):
        ids, got = seqs.take(rows.astype(np.int64))
        expected = [seqs.indices[seqs.indptr[r]:seqs.indptr[r + 1]] for r in rows]
        assert got.tolist() == [len(e) for e in expected]
        assert ids.tolist() == [int(x) for e in expected for x in e]
        assert ids.dtype == seqs.indices.dtype


@pytest.mark.parametrize("piece", [7, 10_000])
def test_bow_columns_are_numbered_over_the_chunks_as_over_all_rows(piece):
    """The BoW baseline's columns, found chunk by chunk on the store's passes (a task per
    evaluated chunk), are numbered by first appearance over the sample and the items the fold
    predicts, as over all of those rows at once (the reference), whatever the chunk size."""
    from cuelens.audit.passes import TokenStore, _assigned, _bag_of_words, count_run

    whole, folds = held(cuelens.load_dataset(make_nli(600, seed=3)))
    (data,) = whole.chunks()
    store = TokenStore(None, whole.task, 1, whole.n_labels, vocab=whole.vocab,
                       words_vocab=whole.words_vocab,
                       label_map=np.arange(whole.n_labels, dtype=np.int64))
    for start in range(0, whole.n_items, piece):
        rows = np.arange(start, min(start + piece, whole.n_items))
        store.add(False, subset(data.words, rows), subset(data.seqs, rows), data.labels[rows],
                  data.keys[rows])
    counts = count_run(store, folds, 5, 0, 0, True, 0)
    fold_of = np.concatenate([_assigned(folds, chunk, 0, True) for chunk in store.chunks()])
    c = counts.candidates
    sample = np.flatnonzero(fold_of[c.item] != 1)  # fold 1's fitting portion, uncapped
    bow = _bag_of_words(store, counts, folds, 1, 0, sample, c.label[sample])
    expected = bigram_columns(data.words, c.item[sample], np.ones(len(sample)), BOW_MIN_COUNT,
                              np.union1d(c.item[sample], np.flatnonzero(fold_of == 1)), 50)
    assert len(expected.keys) > 100
    np.testing.assert_array_equal(bow.columns.keys, expected.keys)
    np.testing.assert_array_equal(bow.columns.column, expected.column)


@pytest.mark.parametrize("seed", range(20))
def test_lowest_keeps_the_lowest_priorities_of_each_group_ties_to_the_earlier(seed):
    """``_lowest`` (a partition per group) against a brute-force sort by (priority, index),
    on few distinct priorities (many ties) and keeps from 0 to past the group sizes."""
    from cuelens.audit.passes import _lowest

    rng = np.random.default_rng(seed)
    n, keep = int(rng.integers(0, 80)), int(rng.integers(0, 15))
    priority = rng.integers(0, 4, n).astype(np.uint64)
    group = rng.integers(0, 5, n)
    expected = sorted(i for g in set(group.tolist()) for i in sorted(
        np.flatnonzero(group == g).tolist(), key=lambda i: (priority[i], i))[:keep])
    assert _lowest(priority, group, keep).tolist() == expected


@pytest.mark.parametrize("block", [1, 7, 50])
def test_first_positions_with_a_bound_give_the_same_minimum_and_stop_early(block, monkeypatch):
    """Given the sample's positions as a bound, first_positions looks at the rows a block at a
    time and stops once no key can move: its minimum with the bound is the unbounded one's
    (every block size), and the later rows are never read (rows of one at a time)."""
    from cuelens.audit import counts
    from cuelens.audit.counts import first_positions, kept_bigrams

    whole, _ = held(cuelens.load_dataset(make_nli(600, seed=5)))
    (data,) = whole.chunks()
    sample, rows = np.arange(0, 600, 3), np.setdiff1d(np.arange(600), np.arange(0, 600, 3))
    kept = kept_bigrams(data.words, sample, np.ones(len(sample)), BOW_MIN_COUNT)
    bound = first_positions(data.words, sample, sample, kept)
    whole_rows = first_positions(data.words, rows, rows, kept)
    monkeypatch.setattr(counts, "FIRST_BLOCK", block)
    read = []
    features = counts._bigram_features
    monkeypatch.setattr(counts, "_bigram_features",
                        lambda words, piece: read.append(len(piece)) or features(words, piece))
    bounded = first_positions(data.words, rows, rows, kept, bound)
    np.testing.assert_array_equal(np.minimum(bounded, bound), np.minimum(whole_rows, bound))
    assert len(kept) > 50 and sum(read) <= len(rows)
    if block == 1:  # the sample's last first appearance comes before the last rows
        assert sum(read) < len(rows) - 10
