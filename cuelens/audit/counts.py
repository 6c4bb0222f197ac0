"""Binary document-term matrices and per-instance token sequences (SPEC §1–2).

:func:`encode` tokenises every text once (:mod:`cuelens.audit.tokenize`) and keeps, per
instance, the ids of its distinct features (words, plus bigrams when ``ngrams=2``) in order of
first occurrence. That order feeds the positional SGD/LR representation of SPEC §3; the sorted
binary matrix :meth:`TokenSequences.matrix` feeds the counts ``#(w,l)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

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


def encode(texts: list[str], ngrams: int = 1) -> TokenSequences:
    """Tokenise ``texts``; feature ids are assigned in order of first appearance in ``texts``."""
    vocab: dict[str, int] = {}
    setdefault = vocab.setdefault
    if ngrams == 1:
        docs = (dict.fromkeys(word_tokens(text)) for text in texts)
    else:
        docs = (dict.fromkeys(_features(word_tokens(text), ngrams)) for text in texts)
    seqs = [[setdefault(token, len(vocab)) for token in doc] for doc in docs]
    lengths = np.fromiter(map(len, seqs), dtype=np.int64, count=len(seqs))
    indptr = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    indices = np.fromiter(chain.from_iterable(seqs), dtype=np.int32, count=int(indptr[-1]))
    return TokenSequences(indptr=indptr, indices=indices, vocab=list(vocab))


def build_term_matrix(texts: list[str], ngrams: int = 1) -> tuple[sp.csr_matrix, list[str]]:
    """Binary ``n × V`` term matrix of ``texts`` and its vocabulary (SPEC §2 counts)."""
    seqs = encode(texts, ngrams)
    return seqs.matrix(), seqs.vocab
