"""The word tokenizer used by every cue statistic (docs/methods.md §1).

Lower-cased word tokens; punctuation is dropped; English contractions are split the way spaCy
splits them ("don't" → "do", "n't"; "it's" → "it", "'s"; "can't" → "ca", "n't"). A word counts
once per text: :func:`tokenize` returns the distinct tokens in order of first occurrence.
Typographic apostrophes (’) are read as ASCII ones.
"""

from __future__ import annotations

import re

TOKEN_PATTERN = r"[^\W_]+(?=n't\b)|n't\b|'(?:s|re|ve|ll|d|m)\b|[^\W_]+"
TOKEN_RE = re.compile(TOKEN_PATTERN)
WORD_RE = re.compile(r"[^\W_]+")  # TOKEN_PATTERN on a text without an apostrophe, ⅓ faster


def normalise(text: str) -> str:
    """Lower-case and unify apostrophes before matching :data:`TOKEN_PATTERN`."""
    return text.lower().replace("\u2019", "'")


def word_tokens(text: str) -> list[str]:
    """All word tokens of ``text`` in order, repeats kept (needed to form n-grams)."""
    text = normalise(text)
    return (TOKEN_RE if "'" in text else WORD_RE).findall(text)


def tokenize(text: str) -> list[str]:
    """Distinct lower-cased word tokens of ``text`` in order of first occurrence."""
    return list(dict.fromkeys(word_tokens(text)))
