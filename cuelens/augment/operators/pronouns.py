"""Operators on people in the correct choice: NER, PR and PI (docs/methods.md §7)."""

from __future__ import annotations

from cuelens.augment.operators.lexicons import PRONOUNS, FEMALE, MALE, name_pool, pronoun_role
from cuelens.augment.operators.registry import OpContext
from cuelens.augment.operators.text import SG3, agreement_edit, keep_case, render

SWITCH = {"masc": ("fem",), "fem": ("masc",), "1sg": ("1pl",), "1pl": ("1sg",),
          "3pl": ("masc", "fem")}
GROUP_GENDER = {"masc": MALE, "fem": FEMALE}
SUBJECT = {"nsubj", "nsubjpass"}
QUANTIFIERS = {"all", "both", "each"}


def _pronouns(doc):
    return [(t, found) for t in doc if t.pos_ == "PRON" and (found := pronoun_role(t))]


def _quantified(doc, token) -> bool:
    """A pronoun followed by "all"/"both"/"each" ("them all")."""
    return token.i + 1 < len(doc) and doc[token.i + 1].lower_ in QUANTIFIERS


def _new_name(ctx: OpContext, gender: str | None, avoid: set[str]) -> str | None:
    options = [n for n in name_pool().pool(gender) if n.lower() not in avoid]
    return ctx.pick(options) if options else None


def switch_pronoun(doc, ctx: OpContext) -> str | None:
    """PR: the pronouns of one person switched by gender or number (he→she, I→we), with
    verb agreement."""
    found = _pronouns(doc)
    if not found:
        return None
    group = found[0][1][0]
    if group == "3pl" and any(_quantified(doc, t) for t, (g, _) in found if g == group):
        return None  # "they all" has no singular counterpart
    target = PRONOUNS[ctx.pick(SWITCH[group])]
    edits = {}
    for token, (g, role) in found:
        if g != group:
            continue
        new = getattr(target, role)
        edits[token.i] = (token.i + 1, new if new == "I" else keep_case(new, token.text))
        if token.dep_ in SUBJECT and PRONOUNS[group].number != target.number:
            edits.update(agreement_edit(token, target.number))
    return render(doc, edits)


def pronoun_to_name(doc, ctx: OpContext) -> str | None:
    """PI: a personal pronoun replaced by a random person name (his → "Mary's")."""
    pronouns = _pronouns(doc)
    found = [(t, f) for t, f in pronouns if f[1] != "refl" and not _quantified(doc, t)]
    if not found:
        return None
    token, (group, role) = found[0]
    if any(f == (group, "refl") for _, f in pronouns):
        return None  # "I wrapped myself" cannot become "Mary wrapped myself"
    name = _new_name(ctx, GROUP_GENDER.get(group), {t.lower_ for t in doc})
    if name is None:
        return None
    edits = {token.i: (token.i + 1, name + "'s" if role in {"det", "pron"} else name)}
    if token.dep_ in SUBJECT and PRONOUNS[group].number != SG3:
        edits.update(agreement_edit(token, SG3))
    return render(doc, edits)


def _person_spans(doc):
    """Person names: spaCy PERSON entities, else single proper nouns found in the name pool."""
    spans = [(e.start, e.end) for e in doc.ents if e.label_ == "PERSON"
             and e[-1].tag_ != "NNPS" and not (e.start and doc[e.start - 1].lower_ == "the")]
    known = name_pool().gender
    return spans or [(t.i, t.i + 1) for t in doc if t.pos_ == "PROPN" and t.lower_ in known]


def replace_name(doc, ctx: OpContext) -> str | None:
    """NER: a person name in the correct choice replaced by another name of the same gender."""
    spans = _person_spans(doc)
    if not spans:
        return None
    start, end = spans[0]
    pool = name_pool()
    first = doc[start].text
    name = _new_name(ctx, pool.gender.get(first.lower()), {t.lower_ for t in doc})
    if name is None:
        return None
    if end - start > 1:
        name = f"{name} {ctx.pick([n for n in pool.last if n != doc[end - 1].text])}"
    return render(doc, {start: (end, name)})
