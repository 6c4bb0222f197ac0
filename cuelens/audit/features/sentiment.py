"""SENTIMENT (docs/methods.md §5): sign of the summed VADER lexicon valence of the text's words
(repeats counted; VADER's negation and intensity rules deliberately not applied: NEGATION is its
own feature), docs/icq-features.md ("Detectors")."""

from __future__ import annotations

import functools

from cuelens.audit.features.base import TextFeature
from cuelens.audit.tokenize import word_tokens


@functools.cache
def vader_lexicon() -> dict[str, float]:
    """VADER's word → valence table (read from the installed package, no download)."""
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return dict(SentimentIntensityAnalyzer().lexicon)


class Sentiment(TextFeature):
    name = "sentiment"
    label = "SENTIMENT"

    def values(self, text: str) -> tuple[str, ...]:
        lexicon = vader_lexicon()
        total = sum(lexicon.get(token, 0.0) for token in word_tokens(text))
        if total > 0:
            return ("positive",)
        return ("negative",) if total < 0 else ()
