"""Binary document-term matrices and per-instance token sequences (docs/methods.md §1–2).

:func:`encode` tokenises every text once (:mod:`cuelens.audit.tokenize`) and keeps, per
instance, the ids of its distinct features (words, plus bigrams when ``ngrams=2``) in order of
first occurrence. That order feeds the positional SGD/LR representation of docs/methods.md §3; the sorted
binary matrix :meth:`TokenSequences.matrix` feeds the counts ``#(w,l)``. With ``repeats=True``
every token is kept, in order: :func:`bigram_matrix` builds the bag-of-words baseline's
uni+bigram matrix from those word ids (docs/methods.md §3).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable
from itertools import chain, islice

import numpy as np
import scipy.sparse as sp

from cuelens.audit.tokenize import word_tokens


@dataclass
class TokenSequences:
    """Ragged per-instance feature ids (CSR layout, ids in first-occurrence order)."""

    indptr: np.ndarray  # int64, n + 1
    indices: np.ndarray  # int32, feature ids
    vocab: list[str]

    def __len__(self) -> int:
        return len(self.indptr) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.indptr)

    def take(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ids of instances ``rows`` concatenated in order, and each one's length."""
        starts = self.indptr[rows]
        lengths = self.indptr[rows + 1] - starts
        offsets = np.cumsum(lengths) - lengths
        flat = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(starts - offsets, lengths)
        return self.indices[flat], lengths

    def matrix(self) -> sp.csr_matrix:
        """Binary ``n × V`` instance-by-feature matrix (float32, sorted indices; the sequences
        themselves keep their first-occurrence order)."""
        data = np.ones(len(self.indices), dtype=np.float32)
        X = sp.csr_matrix((data, self.indices.copy(), self.indptr.copy()),
                          shape=(len(self), len(self.vocab)))
        X.sort_indices()
        return X


def _features(tokens: list[str], ngrams: int) -> list[str]:
    grams = list(tokens)
    for n in range(2, ngrams + 1):
        grams.extend(" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
    return grams


ENCODE_CHUNK = 65_536


class Encoder:
    """Incremental :func:`encode`: texts (or already encoded chunks) added in order share one
    vocabulary, ids assigned by first appearance, so the result equals one :func:`encode` of
    every text in that order whatever the chunking. Only numpy arrays are kept per chunk."""

    def __init__(self, ngrams: int = 1, only: set[str] | None = None,
                 repeats: bool = False) -> None:
        self.ngrams, self.only = ngrams, only  # ``only``: keep just these features
        self.repeats = repeats  # keep every occurrence of a feature, in text order
        self.vocab: dict[str, int] = {}
        self._lengths: list[np.ndarray] = []
        self._indices: list[np.ndarray] = []

    def add(self, texts: Iterable[str]) -> "Encoder":
        """Tokenise ``texts`` (in chunks of :data:`ENCODE_CHUNK`) and append them."""
        iterator = iter(texts)
        while chunk := list(islice(iterator, ENCODE_CHUNK)):
            self._add_chunk(chunk)
        return self

    def _add_chunk(self, texts: list[str]) -> None:
        setdefault, vocab, ngrams = self.vocab.setdefault, self.vocab, self.ngrams
        docs: Iterable[Iterable[str]]
        if ngrams == 1:
            docs = map(word_tokens, texts)
        else:
            docs = (_features(word_tokens(text), ngrams) for text in texts)
        if not self.repeats:
            docs = map(dict.fromkeys, docs)
        if self.only is not None:
            only = self.only
            kept = ([token for token in doc if token in only] for doc in docs)
            seqs = [[setdefault(token, len(vocab)) for token in doc] for doc in kept]
        else:
            seqs = [[setdefault(token, len(vocab)) for token in doc] for doc in docs]
        self._lengths.append(np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs)))
        self._indices.append(np.fromiter(chain.from_iterable(seqs), dtype=np.int32,
                                         count=int(self._lengths[-1].sum())))

    def add_encoded(self, seqs: TokenSequences) -> "Encoder":
        """Append a chunk encoded on its own (e.g. one shard on a worker): its local ids are
        mapped to this vocabulary; new words are numbered in the chunk's first-appearance order,
        exactly as if its texts had been added here."""
        setdefault, vocab = self.vocab.setdefault, self.vocab
        remap = np.fromiter((setdefault(token, len(vocab)) for token in seqs.vocab),
                            dtype=np.int32, count=len(seqs.vocab))
        self._lengths.append(seqs.lengths.astype(np.int64))
        self._indices.append(remap[seqs.indices])
        return self

    def result(self) -> TokenSequences:
        lengths = np.concatenate(self._lengths) if self._lengths else np.zeros(0, np.int64)
        indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        indices = np.concatenate(self._indices) if self._indices else np.zeros(0, np.int32)
        return TokenSequences(indptr=indptr, indices=indices, vocab=list(self.vocab))


def encode(texts: Iterable[str], ngrams: int = 1, only: set[str] | None = None,
           repeats: bool = False) -> TokenSequences:
    """Tokenise ``texts``; feature ids are assigned in order of first appearance in ``texts``.

    ``only``: drop every other feature. The result is then the full encoding restricted to
    those features' columns, in the same relative order, without building the full vocabulary.
    ``repeats``: keep every occurrence in text order (the word sequences that
    :func:`bigram_matrix` reads), not just the first; the vocabulary is the same.
    """
    return Encoder(ngrams, only, repeats).add(texts).result()


def first_occurrences(words: TokenSequences, chunk: int = ENCODE_CHUNK) -> TokenSequences:
    """Each instance's distinct ids in order of first occurrence — :func:`encode` without
    ``repeats`` — from ``words`` (an :func:`encode` with ``repeats=True``; the vocabulary is the
    same), without tokenising again. Works ``chunk`` instances at a time."""
    n_words = np.int64(max(len(words.vocab), 1))
    indices, lengths = [], []
    for start in range(0, len(words), chunk):
        rows = np.arange(start, min(start + chunk, len(words)))
        ids, sizes = words.take(rows)
        row = np.repeat(rows - start, sizes)
        first = np.unique(row * n_words + ids, return_index=True)[1]
        first.sort()
        indices.append(ids[first])
        lengths.append(np.bincount(row[first], minlength=len(rows)))
    indptr = np.zeros(len(words) + 1, dtype=np.int64)
    if lengths:
        np.cumsum(np.concatenate(lengths), out=indptr[1:])
    return TokenSequences(indptr=indptr, vocab=words.vocab,
                          indices=np.concatenate(indices) if indices else np.zeros(0, np.int32))


def bigram_matrix(words: TokenSequences, rows: np.ndarray, weights: np.ndarray,
                  min_count: int) -> sp.csr_matrix:
    """Binary uni+bigram matrix of ``rows`` computed from word ids, without bigram strings.

    ``words``: :func:`encode` of the texts with ``repeats=True``; ``rows``: the texts, in order;
    ``weights``: per row, how many times it counts towards support. Kept: the features whose
    support (the weighted number of rows containing them) is at least ``min_count``. The
    result equals ``encode([texts[r] for r in rows], ngrams=2).matrix()`` restricted to the
    kept columns: per text its words then its bigrams, each feature once, columns numbered by
    first appearance. A bigram is keyed ``V + id₁·V + id₂`` (``V`` words; a unigram by its id),
    so the work is a few sorts of ``O(Σ tokens)`` int64s (docs/methods.md §3).
    """
    n_words = np.int64(len(words.vocab))
    lengths = words.lengths[rows]
    n_tokens = int(lengths.sum())
    row_of = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
    first_token = np.cumsum(lengths) - lengths
    position = np.arange(n_tokens, dtype=np.int64) - first_token[row_of]  # within its text
    ids = words.indices[words.indptr[rows][row_of] + position].astype(np.int64)
    # Each text's features laid out as encode lists them: its L words, then its L − 1 bigrams.
    n_features = np.maximum(2 * lengths - 1, 0)
    start = (np.cumsum(n_features) - n_features)[row_of] + position
    pair = position < lengths[row_of] - 1  # a bigram starts here
    features = np.empty(int(n_features.sum()), dtype=np.int64)
    features[start] = ids
    features[start[pair] + lengths[row_of[pair]]] = \
        n_words + ids[pair] * n_words + ids[1:][pair[:-1]]
    del ids, start, position
    feature_row = np.repeat(np.arange(len(rows), dtype=np.int64), n_features)
    # Stable sort by key: within a key, rows ascend and its first element is its first appearance.
    order = np.argsort(features, kind="stable")
    keys, feature_row = features[order], feature_row[order]
    del features
    new_key = np.empty(len(keys), dtype=bool)
    new_key[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=new_key[1:])
    first_in_row = new_key.copy()  # a (feature, row) pair's first occurrence
    first_in_row[1:] |= feature_row[1:] != feature_row[:-1]
    key_index = np.cumsum(new_key) - 1
    pair_key, pair_row = key_index[first_in_row], feature_row[first_in_row]
    support = np.bincount(pair_key, weights=weights[pair_row], minlength=int(new_key.sum()))
    kept = np.flatnonzero(support >= min_count)
    column = np.full(len(support), -1, dtype=np.int64)
    column[kept[np.argsort(order[new_key][kept])]] = np.arange(len(kept))
    pair_column = column[pair_key]
    present = pair_column >= 0
    pair_row, pair_column = pair_row[present], pair_column[present]
    by_row = np.argsort(pair_row * len(kept) + pair_column)
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(np.bincount(pair_row, minlength=len(rows)), out=indptr[1:])
    return sp.csr_matrix((np.ones(len(by_row), dtype=np.float32), pair_column[by_row], indptr),
                         shape=(len(rows), len(kept)))


def build_term_matrix(texts: Iterable[str], ngrams: int = 1) -> tuple[sp.csr_matrix, list[str]]:
    """Binary ``n × V`` term matrix of ``texts`` and its vocabulary (docs/methods.md §2 counts)."""
    seqs = encode(texts, ngrams)
    return seqs.matrix(), seqs.vocab
