"""Binary document-term matrices and per-instance token sequences (docs/methods.md §1–2).

:func:`encode` tokenises every text once (:mod:`cuelens.audit.tokenize`) and keeps, per
instance, the ids of its distinct features (words, plus bigrams when ``ngrams=2``) in order of
first occurrence. That order feeds the positional SGD/LR representation of docs/methods.md §3; the sorted
binary matrix :meth:`TokenSequences.matrix` feeds the counts ``#(w,l)``.
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

    def matrix(self) -> sp.csr_matrix:
        """Binary ``n × V`` instance-by-feature matrix (float32, sorted indices)."""
        data = np.ones(len(self.indices), dtype=np.float32)
        X = sp.csr_matrix((data, self.indices, self.indptr), shape=(len(self), len(self.vocab)))
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

    def __init__(self, ngrams: int = 1, only: set[str] | None = None) -> None:
        self.ngrams, self.only = ngrams, only  # ``only``: keep just these features
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
        if ngrams == 1:
            docs = (dict.fromkeys(word_tokens(text)) for text in texts)
        else:
            docs = (dict.fromkeys(_features(word_tokens(text), ngrams)) for text in texts)
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


def encode(texts: Iterable[str], ngrams: int = 1, only: set[str] | None = None) -> TokenSequences:
    """Tokenise ``texts``; feature ids are assigned in order of first appearance in ``texts``.

    ``only``: drop every other feature. The result is then the full encoding restricted to
    those features' columns, in the same relative order, without building the full vocabulary.
    """
    return Encoder(ngrams, only).add(texts).result()


def build_term_matrix(texts: Iterable[str], ngrams: int = 1) -> tuple[sp.csr_matrix, list[str]]:
    """Binary ``n × V`` term matrix of ``texts`` and its vocabulary (docs/methods.md §2 counts)."""
    seqs = encode(texts, ngrams)
    return seqs.matrix(), seqs.vocab
