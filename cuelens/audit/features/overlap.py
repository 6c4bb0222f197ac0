"""OVERLAP (docs/methods.md §5): a non-stopword lemma of the hypothesis also occurs in the premise.

Per text the detector keeps the lower-cased lemmas of its alphabetic, non-stopword tokens
(spaCy's stop list, rule-based lemmatizer); an instance has ``present`` when its hypothesis and
premise share one. The premise is the one of docs/methods.md §1 (COPA's question appended).
The pipeline's lemmatizer is applied to those tokens only (lemmas are a function of the
token's text, POS and morphology, memoised on them), not to every token.
"""

from __future__ import annotations

import copy as copy_module
from typing import Any

import numpy as np

from cuelens.audit.features.base import PRESENT, Annotations, DocFeature


class Overlap(DocFeature):
    name = "overlap"
    label = "OVERLAP"
    components = ("tok2vec", "tagger", "attribute_ruler", "lemmatizer")
    uses_premise = True

    def __init__(self) -> None:
        self.source: Any = None  #: the pipeline's lemmatizer (set by :meth:`prepare`)
        self.lemmatizer: Any = None  #: :func:`indexed` of it
        self.lemmas: dict[tuple[int, int, int], str] = {}

    def prepare(self, nlp) -> None:
        lemmatizer = nlp.get_pipe("lemmatizer")
        if lemmatizer is not self.source:
            self.source, self.lemmatizer, self.lemmas = lemmatizer, indexed(lemmatizer), {}

    def values(self, doc) -> tuple[str, ...]:
        return tuple(self._lemma(t).lower() for t in doc if t.is_alpha and not t.is_stop)

    def _lemma(self, token) -> str:
        """``token``'s lemma as the pipeline's lemmatizer sets it (a lemma the attribute ruler
        set is kept unless the lemmatizer overwrites)."""
        if token.lemma and not self.lemmatizer.overwrite:
            return token.lemma_
        key = (token.orth, token.pos, token.morph.key)
        lemma = self.lemmas.get(key)
        if lemma is None:
            lemma = self.lemmas[key] = lemmatize(self.lemmatizer, token)
        return lemma

    def combine(self, hypothesis: Annotations, premise: Annotations | None) -> Annotations:
        assert premise is not None  # uses_premise: annotate() always passes the premises
        vocab = list(dict.fromkeys(hypothesis.vocab + premise.vocab))
        shared = hypothesis.reindex(vocab).matrix.multiply(premise.reindex(vocab).matrix)
        present = np.asarray(shared.sum(axis=1)).ravel() > 0
        values: list[tuple[str, ...]] = [PRESENT if p else () for p in present]
        return Annotations.from_lists(values)


def indexed(lemmatizer):
    """A copy of spaCy's rule ``lemmatizer`` whose lemma index lists are sets: the rules only
    ask ``form in index`` of them, which scans a list (57k nouns) but hashes into a set."""
    from spacy.lookups import Lookups, Table

    if lemmatizer.mode != "rule":
        return lemmatizer
    copy = copy_module.copy(lemmatizer)
    copy.lookups, copy.cache = Lookups(), {}
    for name in lemmatizer.lookups.tables:
        table = lemmatizer.lookups.get_table(name)
        if name == "lemma_index":
            table = Table(name, {pos: frozenset(forms) for pos, forms in table.items()})
        copy.lookups.set_table(name, table)
    return copy


def lemmatize(lemmatizer, token) -> str:
    """The lemma spaCy's ``lemmatizer`` gives ``token`` (its own mode's method, as called by
    the component)."""
    return getattr(lemmatizer, f"{lemmatizer.mode}_lemmatize")(token)[0]
