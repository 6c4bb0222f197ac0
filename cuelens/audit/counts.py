"""Binary document-term matrices and per-instance token sequences (docs/methods.md §1–2).

:func:`encode` tokenises every text once (:mod:`cuelens.audit.tokenize`) and keeps, per
instance, the ids of its distinct features (words, plus bigrams when ``ngrams=2``) in order of
first occurrence. That order feeds the positional SGD/LR representation of docs/methods.md §3;
the counts ``#(w,l)`` are bincounts over the same ids (:meth:`TokenSequences.take`), and
:meth:`TokenSequences.matrix` is their binary document-term matrix. With ``repeats=True``
every token is kept, in order: :func:`kept_bigrams` and :func:`first_positions` pick the
bag-of-words baseline's uni+bigram columns from those word ids and :meth:`BigramColumns.matrix`
builds its matrices, a piece of rows at a time (docs/methods.md §3).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from cuelens.audit.tokenize import active_segmenter, batches, word_tokens
from cuelens.data.dataset import Task

if TYPE_CHECKING:  # imported where a matrix is built: the reports load no scipy
    import scipy.sparse as sp


def row_starts(lengths) -> np.ndarray:
    """The CSR ``indptr`` of rows of ``lengths``: ``[0, l₀, l₀ + l₁, …]`` (int64)."""
    starts = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    return starts


TAKE_BY_MASK = 8  # TokenSequences.take: a mask when taking at least 1/8 of the rows, in order


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
        """The ids of instances ``rows`` concatenated in order, and each one's length. Many
        increasing rows (e.g. a sample's) are selected by a per-id mask (one byte an id), other
        rows by an index (three int64 arrays the size of the result)."""
        rows = np.asarray(rows)
        starts = self.indptr[rows]
        lengths = self.indptr[rows + 1] - starts
        if TAKE_BY_MASK * len(rows) >= len(self) and np.all(rows[1:] > rows[:-1]):
            chosen = np.zeros(len(self), dtype=bool)
            chosen[rows] = True
            return self.indices[np.repeat(chosen, self.lengths)], lengths
        offsets = np.cumsum(lengths) - lengths
        flat = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(starts - offsets, lengths)
        return self.indices[flat], lengths

    def matrix(self) -> sp.csr_matrix:
        """Binary ``n × V`` instance-by-feature matrix (float32, sorted indices; the sequences
        themselves keep their first-occurrence order)."""
        import scipy.sparse as sp

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

    def __init__(self, ngrams: int = 1, repeats: bool = False) -> None:
        self.ngrams = ngrams
        self.repeats = repeats  # keep every occurrence of a feature, in text order
        self.vocab: dict[str, int] = {}
        self._lengths: list[np.ndarray] = []
        self._indices: list[np.ndarray] = []

    def add(self, texts: Iterable[str]) -> "Encoder":
        """Tokenise ``texts`` (in chunks of :data:`ENCODE_CHUNK`) and append them."""
        for chunk in batches(texts, ENCODE_CHUNK):
            self._add_chunk(chunk)
        return self

    def _add_chunk(self, texts: list[str]) -> None:
        forms = active_segmenter().form_array(texts) if self.ngrams == 1 else None
        if forms is not None:  # the compiled path: ids by Arrow's dictionary encoding
            words = form_sequences(forms)
            self.add_encoded(words if self.repeats else first_occurrences(words))
            return
        setdefault, vocab, ngrams = self.vocab.setdefault, self.vocab, self.ngrams
        docs: Iterable[Iterable[str]]
        if ngrams == 1:
            docs = map(word_tokens, texts)
        else:
            docs = (_features(word_tokens(text), ngrams) for text in texts)
        if not self.repeats:
            docs = map(dict.fromkeys, docs)
        seqs = [[setdefault(token, len(vocab)) for token in doc] for doc in docs]
        self._lengths.append(np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs)))
        self._indices.append(np.fromiter(chain.from_iterable(seqs), dtype=np.int32,
                                         count=int(self._lengths[-1].sum())))

    def add_encoded(self, seqs: TokenSequences) -> "Encoder":
        """Append a chunk encoded on its own (e.g. one shard on a worker): its local ids are
        mapped to this vocabulary; new words are numbered in the chunk's first-appearance order,
        exactly as if its texts had been added here."""
        self._lengths.append(seqs.lengths.astype(np.int64))
        self._indices.append(self.remap(seqs.vocab)[seqs.indices])
        return self

    def remap(self, vocab: list[str]) -> np.ndarray:
        """The ids in this vocabulary of a chunk's own ``vocab`` (in its first-appearance
        order); its new words are numbered as if its texts had been added here."""
        setdefault, mine = self.vocab.setdefault, self.vocab
        return np.fromiter((setdefault(token, len(mine)) for token in vocab), dtype=np.int32,
                           count=len(vocab))

    def flush(self) -> TokenSequences:
        """The texts added since the last flush (ids in the vocabulary so far), then forgets
        them: a caller encoding chunk by chunk holds one chunk, plus the vocabulary."""
        out = self.result()
        self._lengths, self._indices = [], []
        return out

    def result(self) -> TokenSequences:
        lengths = np.concatenate(self._lengths) if self._lengths else np.zeros(0, np.int64)
        indices = np.concatenate(self._indices) if self._indices else np.zeros(0, np.int32)
        return TokenSequences(indptr=row_starts(lengths), indices=indices, vocab=list(self.vocab))


def form_sequences(forms) -> TokenSequences:
    """The words of an Arrow array of normal forms (:meth:`~cuelens.audit.segmenters.Segmenter.
    form_array`: words joined by a space) as token sequences, repeats kept, ids numbered in
    order of first appearance (Arrow's dictionary encoding), as :class:`Encoder` numbers them."""
    import pyarrow.compute as pc

    words = pc.split_pattern(pc.if_else(pc.equal(forms, ""), None, forms), " ")
    lengths = pc.fill_null(pc.list_value_length(words), 0).to_numpy().astype(np.int64)
    encoded = pc.dictionary_encode(pc.list_flatten(words))
    return TokenSequences(indptr=row_starts(lengths), vocab=encoded.dictionary.to_pylist(),
                          indices=encoded.indices.to_numpy().astype(np.int32))


def encode(texts: Iterable[str], ngrams: int = 1, repeats: bool = False) -> TokenSequences:
    """Tokenise ``texts``; feature ids are assigned in order of first appearance in ``texts``.

    ``repeats``: keep every occurrence in text order (the word sequences that
    :func:`kept_bigrams` reads), not just the first; the vocabulary is the same.
    """
    return Encoder(ngrams, repeats).add(texts).result()


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
    indptr = row_starts(np.concatenate(lengths) if lengths else np.zeros(0, np.int64))
    return TokenSequences(indptr=indptr, vocab=words.vocab,
                          indices=np.concatenate(indices) if indices else np.zeros(0, np.int32))


def _bigram_features(words: TokenSequences, rows: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The uni+bigram features of ``rows`` (``encode(..., ngrams=2)``'s features, repeats
    kept): every row's unigrams (its ``L`` words) first, then every row's bigrams (``L − 1``), as
    int64 keys; each feature's row (index into ``rows``) and its position in its row's
    ``encode`` layout (its words, then its bigrams). A bigram is keyed ``V + id₁·V + id₂``
    (``V`` words; a unigram by its id), so no bigram string is built."""
    n_words = np.int64(len(words.vocab))
    lengths = words.lengths[rows]
    row_of = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
    first_token = np.cumsum(lengths) - lengths
    position = np.arange(len(row_of), dtype=np.int64) - first_token[row_of]  # within its text
    ids = words.indices[words.indptr[rows][row_of] + position].astype(np.int64)
    pair = position[:-1] < lengths[row_of[:-1]] - 1  # a bigram starts here
    bigrams = n_words + ids[:-1][pair] * n_words + ids[1:][pair]
    return (np.concatenate([ids, bigrams]), np.concatenate([row_of, row_of[:-1][pair]]),
            np.concatenate([position, lengths[row_of[:-1][pair]] + position[:-1][pair]]))


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct ``values``, sorted (a plain sort: ``np.unique`` is many times slower on
    these nearly sorted int64 arrays)."""
    values = np.sort(values)
    first = np.empty(len(values), dtype=bool)
    first[:1] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return values[first]


def _find(distinct_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each key's index in ``distinct_keys`` (−1 if absent) and whether it is there at all: a
    hash lookup (pandas' ``Index.get_indexer``), ~10× faster than a binary search for the
    millions of keys of a large evaluated split."""
    import pandas as pd

    index = pd.Index(distinct_keys).get_indexer(keys)
    return index, index >= 0


@dataclass
class BigramColumns:
    """The kept uni+bigram features of :func:`kept_bigrams` and their column numbers."""

    keys: np.ndarray  # sorted feature keys (see _bigram_features)
    column: np.ndarray  # each key's column

    @classmethod
    def ordered(cls, kept: np.ndarray, first: np.ndarray) -> "BigramColumns":
        """Columns of the ``kept`` keys numbered by their :func:`first_positions`."""
        column = np.empty(len(kept), dtype=np.int64)
        column[np.argsort(first, kind="stable")] = np.arange(len(kept))
        return cls(keys=kept, column=column)

    def matrix(self, words: TokenSequences, rows: np.ndarray) -> sp.csr_matrix:
        """Binary ``len(rows) × len(keys)`` matrix (float32, sorted indices) of ``rows``."""
        import scipy.sparse as sp

        keys, feature_row, _ = _bigram_features(words, rows)
        index, kept = _find(self.keys, keys)
        n_columns = len(self.keys)
        cells = _distinct(feature_row[kept] * n_columns + self.column[index[kept]])
        indptr = row_starts(np.bincount(cells // n_columns, minlength=len(rows)))
        return sp.csr_matrix((np.ones(len(cells), dtype=np.float32), cells % n_columns, indptr),
                             shape=(len(rows), n_columns))


def kept_bigrams(words: TokenSequences, fitted: np.ndarray, weights: np.ndarray,
                 min_count: int) -> np.ndarray:
    """The sorted keys of the uni+bigram features whose support over the distinct ``fitted``
    rows (each counted ``weights`` times) is at least ``min_count``."""
    keys, feature_row, _ = _bigram_features(words, fitted)
    fitted_keys, key_index = np.unique(keys, return_inverse=True)
    del keys
    cells = _distinct(key_index * len(fitted) + feature_row)  # (feature, row) pairs, once each
    support = np.bincount(cells // len(fitted), weights=weights[cells % len(fitted)],
                          minlength=len(fitted_keys))
    return fitted_keys[support >= min_count]


ROW_SHIFT = 24  # a first position packs (row rank, feature position within the row)
FIRST_BLOCK = 16_384  # rows first_positions looks at a time when given a bound


def first_positions(words: TokenSequences, rows: np.ndarray, order: np.ndarray,
                    kept: np.ndarray, bound: np.ndarray | None = None) -> np.ndarray:
    """Per ``kept`` key, where it first appears among ``rows`` (``order``: each row's rank in
    the layout the columns follow; then its position within the row), packed in one int64;
    absent keys get the int64 maximum. The minimum over pieces of the rows is the position
    over all of them, so pieces (chunks) combine in any order.

    ``bound``: per key, a position the caller takes the minimum with (e.g. the training
    sample's); ``rows`` then come in increasing ``order`` and are looked at
    :data:`FIRST_BLOCK` at a time, up to the first block that starts after every key's bound
    or position found: the minimum with ``bound`` is the same, the later rows never read."""
    order = np.asarray(order, dtype=np.int64)
    first = np.full(len(kept), np.iinfo(np.int64).max)
    step = len(rows) if bound is None else FIRST_BLOCK
    for start in range(0, len(rows), max(step, 1)):
        if bound is not None and np.minimum(first, bound).max(initial=-1) < (
                order[start] << ROW_SHIFT):
            break
        piece = slice(start, start + step)
        keys, feature_row, within = _bigram_features(words, rows[piece])
        packed = (order[piece][feature_row] << ROW_SHIFT) + within
        index, found = _find(kept, keys)
        np.minimum.at(first, index[found], packed[found])
    return first


def build_term_matrix(texts: Iterable[str], ngrams: int = 1) -> tuple[sp.csr_matrix, list[str]]:
    """Binary ``n × V`` term matrix of ``texts`` and its vocabulary (docs/methods.md §2 counts)."""
    seqs = encode(texts, ngrams)
    return seqs.matrix(), seqs.vocab


def instance_texts(split, include_premise: bool):
    """Instance texts: the hypotheses/choices, optionally after the premise (docs/methods.md §1)."""
    if split.task == Task.NLI:
        if not include_premise:  # the common case, without copies
            return split.hypotheses
        return [f"{p} {h}" for p, h in zip(split.premises, split.hypotheses)]
    if not include_premise:
        return [choice for choices in split.choices for choice in choices]
    return [f"{split.premise_context(i)} {choice}" for i, choices in enumerate(split.choices)
            for choice in choices]
