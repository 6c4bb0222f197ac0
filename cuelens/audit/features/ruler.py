"""spaCy's ``attribute_ruler`` with its one-token patterns looked up instead of matched
(docs/icq-features.md, "Speed").

The English pipeline's attribute ruler (the tag map and morph rules: POS, MORPH, LEMMA …) runs
its ~180 patterns through a ``Matcher`` over every token, a fifth of a default scan's parse.
Nearly all of them test one token's TAG, LOWER, DEP and IS_SPACE for a value or a set of
values: :class:`LookupRuler` finds the ones a token matches from its ``(tag, lower, dep,
is_space)``, once per distinct combination, and matches only the others (several tokens,
regular expressions) with a ``Matcher``. A token's matches are applied in the ruler's order (the
pattern added later wins), so each token gets the attributes the ruler gives it;
tests/test_features_ruler.py compares both on real data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Token attributes a looked-up pattern may test, in the order of a token's signature.
ATTRS = ("TAG", "LOWER", "DEP", "IS_SPACE")
#: The attribute a pattern is indexed by: the first it tests for a value or a set of values.
ANCHOR_ORDER = ("LOWER", "DEP", "TAG", "IS_SPACE")

Check = tuple[int, bool, frozenset]  #: (attribute position, must be in / not in, values)


@dataclass
class LookupRuler:
    """The patterns and attributes of a pipeline's ``attribute_ruler``, applied by
    :meth:`__call__`."""

    attrs: list[dict]  #: pattern id → the normalised attributes it sets
    indices: list[int]  #: pattern id → the matched token it sets them on
    checks: dict[int, list[tuple[Check, ...]]]  #: pattern id → its one-token patterns' checks
    anchors: dict[tuple[int, object], list[int]]  #: (attribute position, value) → pattern ids
    matcher: Any  #: spaCy ``Matcher`` of the other patterns, keyed by their pattern id
    _ids: dict[tuple, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, nlp) -> LookupRuler:
        """The ruler of ``nlp`` (which holds an ``attribute_ruler``)."""
        from spacy.matcher import Matcher

        ruler = nlp.get_pipe("attribute_ruler")
        checks: dict[int, list[tuple[Check, ...]]] = {}
        anchors: dict[tuple[int, object], list[int]] = {}
        matcher = Matcher(nlp.vocab)
        for attr_id, entry in enumerate(ruler.patterns):
            for pattern in entry["patterns"]:
                compiled = _compile(pattern, nlp.vocab.strings)
                if compiled is None:
                    matcher.add(str(attr_id), [pattern])
                    continue
                checks.setdefault(attr_id, []).append(compiled)
                position, _, values = min((c for c in compiled if c[1]),
                                          key=lambda c: ANCHOR_ORDER.index(ATTRS[c[0]]))
                for value in values:
                    anchors.setdefault((position, value), []).append(attr_id)
        return cls(list(ruler.attrs), list(ruler.indices), checks, anchors, matcher)

    def __call__(self, doc: Any) -> Any:
        """Set the ruler's attributes on ``doc``'s tokens, as ``attribute_ruler(doc)`` does."""
        from spacy.tokens._retokenize import set_token_attrs

        strings = doc.vocab.strings
        matched: dict[int, list[int]] = {}
        for match_id, start, end in self.matcher(doc, allow_missing=True):
            attr_id = int(strings[match_id])
            index = self.indices[attr_id]
            matched.setdefault((start if index >= 0 else end) + index, []).append(attr_id)
        for token in doc:
            ids = self._matching((token.tag, token.lower, token.dep, token.is_space))
            if token.i in matched:
                ids = tuple(sorted(ids + tuple(matched[token.i])))
            for attr_id in ids:
                set_token_attrs(token, self.attrs[attr_id])
        return doc

    def _matching(self, signature: tuple) -> tuple[int, ...]:
        """The looked-up patterns a token with ``signature`` (:data:`ATTRS`) matches, in order."""
        ids = self._ids.get(signature)
        if ids is None:
            candidates = {attr_id for position, value in enumerate(signature)
                          for attr_id in self.anchors.get((position, value), ())}
            ids = self._ids[signature] = tuple(sorted(
                attr_id for attr_id in candidates
                if any(all((signature[p] in values) == inside for p, inside, values in pattern)
                       for pattern in self.checks[attr_id])))
        return ids


def _compile(pattern: list[dict], strings) -> tuple[Check, ...] | None:
    """The checks of a one-token pattern on :data:`ATTRS` by values or ``IN``/``NOT_IN`` sets
    with at least one positive test; ``None`` for any other pattern (left to the Matcher)."""
    if len(pattern) != 1 or not pattern[0].keys() <= set(ATTRS):
        return None
    compiled = []
    for name, spec in pattern[0].items():
        position = ATTRS.index(name)
        if isinstance(spec, dict) and len(spec) == 1 and spec.keys() <= {"IN", "NOT_IN"}:
            inside = "IN" in spec
            values = list(spec["IN"] if inside else spec["NOT_IN"])
        elif isinstance(spec, (str, bool)):
            inside, values = True, [spec]
        else:
            return None
        keys = [v if isinstance(v, bool) else strings.add(v) for v in values]
        compiled.append((position, inside, frozenset(keys)))
    return tuple(compiled) if any(inside for _, inside, _ in compiled) else None
