"""SENTIMENT (docs/methods.md §5): sign of the summed VADER lexicon valence of the text's words.

Every word occurrence (the shared tokenizer's tokens, repeats kept) adds its valence from the
lexicon shipped with the ``vadersentiment`` package (7,500 entries, valence −4…+4); words not in
the lexicon add 0. A positive sum gives ``positive``, a negative one ``negative``, zero no value.
VADER's rules (negation flipping, intensifiers, capitals) are deliberately not applied: negation
is its own feature, and the sum stays a plain lexicon statistic.
"""

from __future__ import annotations

import functools

from cuelens.audit.features.base import TextFeature
from cuelens.audit.features.registry import register
from cuelens.audit.tokenize import word_tokens


@functools.cache
def vader_lexicon() -> dict[str, float]:
    """VADER's word → valence table (read from the installed package, no download)."""
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return dict(SentimentIntensityAnalyzer().lexicon)


@register
class Sentiment(TextFeature):
    name = "sentiment"
    label = "SENTIMENT"

    def values(self, text: str) -> tuple[str, ...]:
        lexicon = vader_lexicon()
        total = sum(lexicon.get(token, 0.0) for token in word_tokens(text))
        if total > 0:
            return ("positive",)
        return ("negative",) if total < 0 else ()
