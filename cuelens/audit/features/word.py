"""WORD: each lower-cased word of the text (docs/methods.md §5), from the shared tokenizer —
or, in a scan, read from the words the scan encoded for its cue table (:func:`word_annotations`)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from cuelens.audit.counts import TokenSequences, first_occurrences
from cuelens.audit.features.base import Annotations, TextFeature
from cuelens.audit.tokenize import tokenize


class Word(TextFeature):
    name = "word"
    label = "WORD"
    english_only = False

    def values(self, text: str) -> tuple[str, ...]:
        return tuple(tokenize(text))


def word_annotations(words: TokenSequences) -> Annotations:
    """WORD's values of each instance from its encoded ``words`` (the scan's word ids, repeats
    kept, cut by the same segmenter as :func:`tokenize`): its distinct words, over the
    encoder's whole vocabulary (a word no instance here has gets no count)."""
    distinct = first_occurrences(words)
    matrix = sp.csr_matrix((np.ones(len(distinct.indices), dtype=bool), distinct.indices,
                            distinct.indptr), shape=(len(distinct), len(words.vocab)))
    return Annotations(matrix, list(words.vocab))
