"""The sentence-scorer protocol shared by LM scoring (``audit score``) and controversial-pair
synthesis (``audit contrast``). Implementations live in ``cuelens/models/lm/`` (SPEC §9)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class SentenceScorer(Protocol):
    """Anything that gives natural-log probabilities of whole sentences.

    ``name``: a short display name (e.g. ``"gpt2"``, ``"ngram:models/tri"``).
    ``score(sentences)``: float64 array, ``log p(s | model)`` per sentence (natural log).
    ``word_scores(sentence)``: list of ``(word, log p(word | context))`` whose sum is ``score``.
    """

    name: str

    def score(self, sentences: list[str]) -> np.ndarray: ...

    def word_scores(self, sentence: str) -> list[tuple[str, float]]: ...
