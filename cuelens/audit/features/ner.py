"""NER (docs/methods.md §5): labels of the entities spaCy's recogniser finds (PERSON, ORG, GPE,
DATE …)."""

from __future__ import annotations

from cuelens.audit.features.base import DocFeature


class Ner(DocFeature):
    name = "ner"
    label = "NER"
    components = ("ner",)

    def values(self, doc) -> tuple[str, ...]:
        return tuple(dict.fromkeys(ent.label_ for ent in doc.ents))
