"""NEGATION (docs/methods.md §5): the dependency label ``neg`` or a word of :data:`NEGATION_WORDS`
(the negative determiners, pronouns and prepositions the parser does not label), matched on the
lower-cased token with typographic apostrophes read as ASCII ones."""

from __future__ import annotations

from cuelens.audit.features.base import PRESENT, DocFeature
from cuelens.audit.features.registry import register

NEGATION_WORDS = frozenset({
    "no", "not", "n't", "nt", "never", "nothing", "nobody", "none", "neither", "nor", "without",
    "nowhere", "noone", "cannot",
})


@register
class Negation(DocFeature):
    name = "negation"
    label = "NEGATION"
    components = ("tok2vec", "parser")

    def values(self, doc) -> tuple[str, ...]:
        for token in doc:
            if token.dep_ == "neg" or token.lower_.replace("\u2019", "'") in NEGATION_WORDS:
                return PRESENT
        return ()
