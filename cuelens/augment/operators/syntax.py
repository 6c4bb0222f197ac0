"""Operators that edit the clause structure of the correct choice: Neg+, Neg−, Voice (docs/methods.md §7)."""

from __future__ import annotations

from cuelens.augment.operators.lexicons import PRONOUNS, pronoun_role
from cuelens.augment.operators.registry import OpContext
from cuelens.augment.operators.text import (agreement_edit, capitalise, decapitalise, inflections,
                                            keep_case, noun_number, render)

DO_SUPPORT = {"VBD": "did", "VBZ": "does", "VBP": "do", "VB": "do"}
# already-negative adverbs ("barely passed") and negative-polarity items that need the negation
NEGATIVE_ADVERBS = {"barely", "hardly", "scarcely", "rarely", "seldom"}
POLARITY_ITEMS = {"any", "anymore", "anything", "anyone", "anybody", "ever", "yet", "until",
                  "either"}
CLITIC_AUX = {"ca": "can", "wo": "will", "sha": "shall"}  # spaCy splits can't -> ca n't


def _root(doc):
    return next(iter(doc.sents)).root


def add_negation(doc, ctx: OpContext) -> str | None:
    """Neg+: "not" added to the main verb, with do-support ("They called" → "They did not call")."""
    root = _root(doc)
    if any(t.dep_ == "neg" or t.lower_ in NEGATIVE_ADVERBS for t in doc):
        return None
    auxes = [c for c in root.children if c.dep_ in {"aux", "auxpass"} and c.i < root.i
             and c.tag_ != "TO"]
    if auxes:
        target = auxes[0]
        return render(doc, {target.i: (target.i + 1, target.text + " not")})
    if root.lemma_ == "be":
        return render(doc, {root.i: (root.i + 1, root.text + " not")})
    if root.pos_ != "VERB" or root.tag_ not in DO_SUPPORT:
        return None
    if root.tag_ == "VB" and any(c.dep_ in {"nsubj", "nsubjpass"} for c in root.children):
        return None  # a bare verb with a subject is a fragment we cannot negate reliably
    start = root.i  # "Mary quickly opened" -> "Mary did not quickly open"
    while start > 0 and doc[start - 1].dep_ == "advmod" and doc[start - 1].head == root:
        start -= 1
    phrase = f"{DO_SUPPORT[root.tag_]} not {doc[start:root.i].text_with_ws}{root.lemma_.lower()}"
    return render(doc, {start: (root.i + 1, keep_case(phrase, doc[start].text))})


def remove_negation(doc, ctx: OpContext) -> str | None:
    """Neg−: the negation of the correct choice removed ("did not call" → "called")."""
    negs = [t for t in doc if t.dep_ == "neg" and t.lower_ in {"not", "n't", "never"}]
    if len(negs) != 1 or negs[0].head != _root(doc) \
            or any(t.lower_ in POLARITY_ITEMS for t in doc):
        return None  # only the main clause's single negation, without "any"/"until" after it
    neg = negs[0]
    head = neg.head
    before = doc[neg.i - 1] if neg.i > 0 else None
    edits = {neg.i: (neg.i + 1, "")}
    if (before is not None and before.lemma_ == "do" and before.dep_ == "aux"
            and before.head == head and before.tag_ in DO_SUPPORT and neg.lower_ != "never"):
        if before.tag_ in {"VBD", "VBZ"}:
            forms = inflections(head.lemma_.lower(), before.tag_)
            if not forms:
                return None
            form = forms[0]
        else:
            form = head.lemma_.lower()
        edits = {before.i: (neg.i + 1, ""), head.i: (head.i + 1, form)}
    elif before is not None and neg.lower_ == "n't" and before.lower_ in CLITIC_AUX:
        edits = {before.i: (neg.i + 1, keep_case(CLITIC_AUX[before.lower_], before.text))}
    return render(doc, edits)


def _span(token):
    return token.left_edge.i, token.right_edge.i + 1


def _moved(doc, start: int, end: int, role: str, to_start: bool) -> str:
    """Text of a subject/object phrase moved to the other slot (pronoun case, capitals)."""
    if end - start == 1 and (found := pronoun_role(doc[start])) is not None:
        group, _ = found
        word = getattr(PRONOUNS[group], role)
    else:
        word = decapitalise(doc[start]) + doc[start].whitespace_ + doc[start + 1:end].text
        word = word.strip()
    return capitalise(word) if to_start else word


def _pronoun_phrase(doc, start: int, end: int) -> bool:
    """A phrase longer than one token headed by a case-marked pronoun ("we all")."""
    found = pronoun_role(doc[start])
    return end - start > 1 and found is not None and found[1] in {"nom", "acc"}


def _number(doc, start: int, end: int, head) -> str:
    if end - start == 1 and (found := pronoun_role(doc[start])) is not None:
        return PRONOUNS[found[0]].number
    return noun_number(head)


def swap_subject_object(doc, ctx: OpContext) -> str | None:
    """Voice: subject and object of the main verb swapped ("The dog bit the man" → "The man bit
    the dog"), with pronoun case and verb agreement fixed."""
    root = _root(doc)
    subj = next((c for c in root.children if c.dep_ == "nsubj"), None)
    obj = next((c for c in root.children if c.dep_ == "dobj"), None)
    if subj is None or obj is None or any(c.dep_ in {"prt", "conj"} for c in root.children):
        return None  # "set aside them", "found me and was happy" would not parse back
    s0, s1 = _span(subj)
    o0, o1 = _span(obj)
    if not s1 <= root.i < o0 or doc[o0:o1].text.lower().endswith(("self", "selves")) \
            or _pronoun_phrase(doc, s0, s1) or _pronoun_phrase(doc, o0, o1):
        return None  # reflexive objects; "we all" has no object form we could build
    edits = {s0: (s1, _moved(doc, o0, o1, "nom", to_start=s0 == 0)),
             o0: (o1, _moved(doc, s0, s1, "acc", to_start=False))}
    new_number = _number(doc, o0, o1, obj)
    if new_number != _number(doc, s0, s1, subj):
        edits.update(agreement_edit(subj, new_number))
    return render(doc, edits)
