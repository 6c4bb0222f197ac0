"""WORD: each lower-cased word of the text (docs/methods.md §5), from the shared tokenizer."""

from __future__ import annotations

from cuelens.audit.features.base import TextFeature
from cuelens.audit.tokenize import tokenize


class Word(TextFeature):
    name = "word"
    label = "WORD"
    english_only = False

    def values(self, text: str) -> tuple[str, ...]:
        return tuple(tokenize(text))
