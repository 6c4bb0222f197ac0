"""The word tokenizer used by every cue statistic (docs/methods.md §1, §1b; its rules:
docs/word-cues.md, "Tokens and counts"): the words of the active segmenter
(:mod:`cuelens.audit.segmenters`; ``unicode`` unless a scan sets another with
:func:`segmenting`), so everything that counts words — cues, baselines, hygiene keys, lengths,
examples — cuts a text the same way within a scan. :func:`tokenize` returns a text's distinct
tokens in order of first occurrence (a word counts once per text).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import islice
from typing import TypeVar

from cuelens.audit.segmenters import TOKEN_PATTERN, TOKEN_RE, WORD_RE, Segmenter, get_segmenter

__all__ = ["TOKEN_PATTERN", "TOKEN_RE", "WORD_RE", "active_segmenter", "normal_forms",
           "segmenting", "batches", "text_length", "tokenize", "word_tokens"]

BATCH = 65_536  # texts cut at once by normal_forms
T = TypeVar("T")

_ACTIVE: ContextVar[Segmenter | None] = ContextVar("cuelens_segmenter", default=None)


def active_segmenter() -> Segmenter:
    """The segmenter of the running scan (``unicode`` outside one)."""
    return _ACTIVE.get() or get_segmenter("unicode")


@contextmanager
def segmenting(segmenter: Segmenter | str) -> Iterator[Segmenter]:
    """Make ``segmenter`` (or the registered one of that name) the active one inside the block."""
    chosen = get_segmenter(segmenter) if isinstance(segmenter, str) else segmenter
    token = _ACTIVE.set(chosen)
    try:
        yield chosen
    finally:
        _ACTIVE.reset(token)


def word_tokens(text: str) -> list[str]:
    """All word tokens of ``text`` in order, repeats kept (needed to form n-grams)."""
    return active_segmenter().words(text)


def char_length(text: str) -> int:
    """Characters of ``text`` in its composed form (NFC): a letter written decomposed (an ``e``
    and a combining accent, Hangul as jamo) counts as the one character it shows."""
    return len(text if text.isascii() else unicodedata.normalize("NFC", text))


def text_length(text: str) -> int:
    """The length of ``text`` for the length rules (docs/methods.md §1): its words, or, with a
    segmenter of scripts without spaces, the letters and digits of its composed form (a word
    count depends too much on the dictionary, and uni+bigrams are no words)."""
    segmenter = active_segmenter()
    if segmenter.spaced:
        return len(segmenter.words(text))
    return sum(map(str.isalnum, text if text.isascii() else unicodedata.normalize("NFC", text)))


def tokenize(text: str) -> list[str]:
    """Distinct lower-cased word tokens of ``text`` in order of first occurrence."""
    return list(dict.fromkeys(word_tokens(text)))


def batches(texts: Iterable[T], size: int = BATCH) -> Iterator[list[T]]:
    """``texts`` as lists of ``size`` (the last one shorter)."""
    iterator = iter(texts)
    while batch := list(islice(iterator, size)):
        yield batch


def normal_forms(texts: Iterable[str]) -> Iterator[str]:
    """Each text's :func:`word_tokens` joined by a space, in order, :data:`BATCH` texts at a
    time (the ASCII ones in one compiled pass: :meth:`~cuelens.audit.segmenters.Segmenter.
    normal_forms`)."""
    segmenter = active_segmenter()
    for batch in batches(texts):
        yield from segmenter.normal_forms(batch)

