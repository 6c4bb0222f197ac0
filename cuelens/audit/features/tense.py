"""TENSE (docs/methods.md §5): past / present / future of the text's first root verb; the rules,
future first, then past, then present (a verbless root: no value), are in docs/icq-features.md
("Detectors")."""

from __future__ import annotations

from cuelens.audit.features.base import DocFeature

FUTURE_MODALS = frozenset({"will", "shall", "'ll", "wo", "\u2019ll"})
AUX_DEPS = frozenset({"aux", "auxpass"})


def _tense(root) -> str | None:
    if not (root.tag_.startswith("VB") or root.tag_ == "MD"):
        return None
    auxes = [child for child in root.lefts if child.dep_ in AUX_DEPS]
    if any(a.tag_ == "MD" and a.lower_ in FUTURE_MODALS for a in auxes):
        return "future"
    if root.lower_ in ("going", "gon") and any(
            child.dep_ == "xcomp" and any(g.lower_ in ("to", "na") for g in child.lefts)
            for child in root.rights):
        return "future"
    finite = auxes[0] if auxes else root
    passive = any(a.dep_ == "auxpass" for a in auxes)
    if finite.tag_ == "VBD" or (root.tag_ == "VBN" and not passive) or \
            any(a.lower_ == "been" for a in auxes):
        return "past"
    return "present"


class Tense(DocFeature):
    name = "tense"
    label = "TENSE"
    components = ("tok2vec", "tagger", "parser")

    def values(self, doc) -> tuple[str, ...]:
        root = next((token for token in doc if token.dep_ == "ROOT"), None)
        tense = _tense(root) if root is not None else None
        return (tense,) if tense else ()
