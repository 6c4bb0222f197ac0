"""TYPO (docs/methods.md §5): the text has at least one misspelled word.

Which tokens are checked and when a checked word is a typo: docs/icq-features.md ("Detectors").
The correction search uses rapidfuzz over the dictionary, the same candidates as
``SpellChecker.candidates`` at distance 2, which takes ~0.1 s per word in pure Python.
"""

from __future__ import annotations

import functools

from cuelens.audit.features.base import PRESENT, DocFeature

PROPER_NOUN_TAGS = frozenset({"NNP", "NNPS"})
MAX_DISTANCE = 2


@functools.cache
def _checker():
    from spellchecker import SpellChecker

    checker = SpellChecker(distance=MAX_DISTANCE)
    by_length: dict[int, list[str]] = {}
    for word in checker.word_frequency.dictionary:
        by_length.setdefault(len(word), []).append(word)
    return checker, by_length


@functools.lru_cache(maxsize=200_000)
def is_typo(word: str) -> bool:
    """``word`` (lower-cased) is unknown and has a dictionary correction within distance 2."""
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    checker, by_length = _checker()
    if word in checker:
        return False
    n = len(word)
    for length in sorted(range(max(1, n - MAX_DISTANCE), n + MAX_DISTANCE + 1),
                         key=lambda m: abs(m - n)):
        if process.extractOne(word, by_length.get(length, ()), scorer=OSA.distance,
                              score_cutoff=MAX_DISTANCE) is not None:
            return True
    return False


def _glued(token) -> bool:
    """Part of a word spaCy split without whitespace (contractions, "gon|na", "can|not")."""
    doc = token.doc
    after = token.i + 1 < len(doc) and not token.whitespace_ and \
        (doc[token.i + 1].is_alpha or doc[token.i + 1].text[:1] in "'\u2019n")
    before = token.i > 0 and not doc[token.i - 1].whitespace_ and \
        (doc[token.i - 1].is_alpha or doc[token.i - 1].text[:1] in "'\u2019")
    return after or before


def typo(token) -> bool:
    """``token`` is checked (alphabetic, two letters or more, no proper noun, not glued) and
    a typo; the memoised dictionary test comes before the neighbours' look-up."""
    return (token.is_alpha and len(token) > 1 and token.tag_ not in PROPER_NOUN_TAGS
            and is_typo(token.lower_) and not _glued(token))


class Typo(DocFeature):
    name = "typo"
    label = "TYPO"
    components = ("tok2vec", "tagger")

    def prepare(self, nlp) -> None:
        _checker()

    def values(self, doc) -> tuple[str, ...]:
        return PRESENT if any(typo(t) for t in doc) else ()
