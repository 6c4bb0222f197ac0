"""Syn: an adjective or adverb of the wrong choice replaced by a synonym (docs/methods.md §7)."""

from __future__ import annotations

from cuelens.augment.operators.lexicons import Thesaurus
from cuelens.augment.operators.registry import OpContext
from cuelens.augment.operators.text import keep_case, render

TAGS = {"JJ", "RB"}  # positive-degree adjectives/adverbs: a synonym's base form fits


def _replaceable(token) -> bool:
    """Bare adjectives, and manner adverbs in -ly (other adverbs are mostly function words)."""
    return (token.tag_ in TAGS and token.dep_ != "neg" and not token.is_stop and token.is_alpha
            and (token.tag_ == "JJ" or token.lower_.endswith("ly"))
            and not any(True for _ in token.children))  # "glad he came", "proud of": fixed frames


def synonym(doc, ctx: OpContext) -> str | None:
    """Syn: an adjective/adverb of the wrong choice replaced by a Moby-thesaurus synonym."""
    thesaurus = Thesaurus.load()
    candidates = [(t, syns) for t in doc if _replaceable(t) and (syns := thesaurus.synonyms(t.text, top=2))]
    if not candidates:
        return None
    token, syns = ctx.pick(candidates)
    new = ctx.pick(syns)
    edits = {token.i: (token.i + 1, keep_case(new, token.text))}
    article = doc[token.i - 1] if token.i else None
    if article is not None and article.lower_ in {"a", "an"}:  # a/an agrees with the new word
        edits[article.i] = (article.i + 1, keep_case("an" if new[0] in "aeiou" else "a",
                                                     article.text))
    return render(doc, edits)
