"""OVERLAP (docs/methods.md §5): a non-stopword lemma of the hypothesis also occurs in the premise.

Per text the detector keeps the lower-cased lemmas of its alphabetic, non-stopword tokens
(spaCy's stop list, rule-based lemmatizer); an instance has ``present`` when its hypothesis and
premise share one. The premise is the one of docs/methods.md §1 (COPA's question appended).
"""

from __future__ import annotations

import numpy as np

from cuelens.audit.features.base import PRESENT, Annotations, DocFeature


class Overlap(DocFeature):
    name = "overlap"
    label = "OVERLAP"
    components = ("tok2vec", "tagger", "attribute_ruler", "lemmatizer")
    uses_premise = True

    def values(self, doc) -> tuple[str, ...]:
        return tuple(t.lemma_.lower() for t in doc if t.is_alpha and not t.is_stop)

    def combine(self, hypothesis: Annotations, premise: Annotations | None) -> Annotations:
        assert premise is not None  # uses_premise: annotate() always passes the premises
        vocab = list(dict.fromkeys(hypothesis.vocab + premise.vocab))
        shared = hypothesis.reindex(vocab).matrix.multiply(premise.reindex(vocab).matrix)
        present = np.asarray(shared.sum(axis=1)).ravel() > 0
        values: list[tuple[str, ...]] = [PRESENT if p else () for p in present]
        return Annotations.from_lists(values)
