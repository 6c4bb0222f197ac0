"""spaCy's ``attribute_ruler`` with its simple patterns looked up instead of matched
(docs/methods.md §5, "Parsing").

The English pipeline's attribute ruler (the tag map and morph rules: POS, MORPH, LEMMA …) runs
its ~180 patterns through a ``Matcher`` over every token, a fifth of a default scan's parse.
Most patterns test one token's TAG and/or LOWER for equality: :class:`LookupRuler` finds those
in a dict by ``(tag, lower)`` and matches only the others (several tokens, DEP, IS_SPACE, sets
of values) with a ``Matcher``. A token's matches are applied in the ruler's order (the pattern
added later wins), so each token gets the attributes the ruler gives it;
tests/test_features_ruler.py compares both on real data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SIMPLE_KEYS = frozenset({"TAG", "LOWER"})


@dataclass
class LookupRuler:
    """The patterns and attributes of a pipeline's ``attribute_ruler``, applied by :meth:`__call__`."""

    attrs: list[dict]  #: pattern id → the normalised attributes it sets
    indices: list[int]  #: pattern id → the matched token it sets them on
    simple: dict[tuple[int, int], list[int]]  #: (TAG hash, LOWER hash), 0 = any → pattern ids
    matcher: object  #: spaCy ``Matcher`` of the other patterns, keyed by their pattern id
    _ids: dict[tuple[int, int], tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, nlp) -> LookupRuler:
        """The ruler of ``nlp`` (which holds an ``attribute_ruler``)."""
        from spacy.matcher import Matcher

        ruler = nlp.get_pipe("attribute_ruler")
        strings = nlp.vocab.strings
        simple: dict[tuple[int, int], list[int]] = {}
        matcher = Matcher(nlp.vocab)
        for attr_id, entry in enumerate(ruler.patterns):
            for pattern in entry["patterns"]:
                spec = pattern[0]
                if len(pattern) == 1 and spec.keys() <= SIMPLE_KEYS and \
                        all(isinstance(v, str) for v in spec.values()):
                    key = (strings.add(spec["TAG"]) if "TAG" in spec else 0,
                           strings.add(spec["LOWER"]) if "LOWER" in spec else 0)
                    simple.setdefault(key, []).append(attr_id)
                else:
                    matcher.add(str(attr_id), [pattern])
        return cls(list(ruler.attrs), list(ruler.indices), simple, matcher)

    def __call__(self, doc):
        """Set the ruler's attributes on ``doc``'s tokens, as ``attribute_ruler(doc)`` does."""
        from spacy.tokens._retokenize import set_token_attrs

        strings = doc.vocab.strings
        matched: dict[int, list[int]] = {}
        for match_id, start, end in self.matcher(doc, allow_missing=True):
            attr_id = int(strings[match_id])
            index = self.indices[attr_id]
            matched.setdefault((start if index >= 0 else end) + index, []).append(attr_id)
        for token in doc:
            ids = self._simple_ids(token.tag, token.lower)
            if token.i in matched:
                ids = tuple(sorted(ids + tuple(matched[token.i])))
            for attr_id in ids:
                set_token_attrs(token, self.attrs[attr_id])
        return doc

    def _simple_ids(self, tag: int, lower: int) -> tuple[int, ...]:
        """The simple patterns a token with ``tag`` and ``lower`` matches, in pattern order."""
        ids = self._ids.get((tag, lower))
        if ids is None:
            simple = self.simple
            ids = self._ids[tag, lower] = tuple(sorted(set(
                simple.get((tag, lower), []) + simple.get((tag, 0), []) +
                simple.get((0, lower), []))))
        return ids
