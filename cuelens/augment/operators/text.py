"""Text helpers shared by the operators: token-span rewriting, casing, verb agreement (docs/methods.md §7)."""

from __future__ import annotations

import re
import unicodedata


def inflections(lemma: str, tag: str) -> tuple[str, ...]:
    """lemminflect's inflections of ``lemma`` for Penn ``tag`` (imported on first use: it loads
    spaCy, which a scan never needs)."""
    from lemminflect import getInflection

    return getInflection(lemma, tag)


_SPACE = re.compile(r"\s+")
# person/number classes used for subject–verb agreement
SG1, SG3, PLURAL = "1sg", "3sg", "pl"
_BE = {("present", SG1): "am", ("present", SG3): "is", ("present", PLURAL): "are",
       ("past", SG1): "was", ("past", SG3): "was", ("past", PLURAL): "were"}
_BE_CLITIC = {SG1: "'m", SG3: "'s", PLURAL: "'re"}
_FINITE_PRESENT = {"VBZ", "VBP"}


#: final punctuation a comparison key drops: the ASCII marks and their counterparts in other
#: scripts (CJK and full-width, Devanagari danda, Arabic, Ethiopic)
FINAL_PUNCT = ".!?;, 。．！？；，、｡।॥؟؛،።፧"


def normalise(text: str) -> str:
    """Comparison key of a choice: case-folded, in Unicode's composed form (NFC: a decomposed
    accent matches a precomposed one), whitespace collapsed, final punctuation dropped
    (:data:`FINAL_PUNCT`: '是的。' is '是的', 'हाँ।' is 'हाँ')."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", text.casefold())).strip() \
        .rstrip(FINAL_PUNCT)


def is_punct(text: str) -> bool:
    """True when every character of ``text`` is punctuation or a symbol."""
    return bool(text) and all(unicodedata.category(c)[0] in "PS" for c in text)


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def keep_case(new: str, old: str) -> str:
    """``new`` with the initial capital of ``old`` (lower-case stays as written)."""
    return capitalise(new) if old[:1].isupper() else new


def decapitalise(token) -> str:
    """Text of a sentence-initial token once it no longer starts the sentence."""
    if token.pos_ == "PROPN" or token.ent_type_ or token.text == "I" \
            or token.text.isupper() and len(token) > 1:
        return token.text
    return token.text[:1].lower() + token.text[1:]


def render(doc, edits: dict[int, tuple[int, str]]) -> str:
    """Rebuild ``doc`` with ``edits`` {start: (end, text)} replacing token spans.

    An empty replacement deletes the span (its trailing space moves to the previous token).
    The first character keeps the original's capitalisation.
    """
    parts: list[str] = []
    i = 0
    while i < len(doc):
        if i in edits:
            end, text = edits[i]
            space = doc[end - 1].whitespace_
            if text:
                parts.append(text + space)
            elif space and parts and not parts[-1].endswith(space):
                parts[-1] += space
            i = end
        else:
            parts.append(doc[i].text_with_ws)
            i += 1
    out = "".join(parts).strip()
    return capitalise(out) if doc.text[:1].isupper() else out


def noun_number(token) -> str:
    """Agreement class of a subject head token (pronouns are handled by the pronoun table)."""
    return PLURAL if token.tag_ in {"NNS", "NNPS"} else SG3


def agreement_edit(subject, number: str) -> dict[int, tuple[int, str]]:
    """Re-inflect the finite verb governed by ``subject`` for a new subject of class ``number``.

    Only present-tense forms and past ``be`` change in English; other verbs need no edit.
    """
    head = subject.head
    finite = [c for c in head.children if c.dep_ in {"aux", "auxpass"} and c.i < head.i]
    verb = finite[0] if finite else head
    if verb.tag_ not in _FINITE_PRESENT and not (verb.tag_ == "VBD" and verb.lemma_ == "be"):
        return {}
    if verb.lemma_ == "be":
        if verb.text.startswith("'"):
            new = _BE_CLITIC[number]
        else:
            new = _BE[("past" if verb.tag_ == "VBD" else "present", number)]
    else:  # VBZ / VBP: past forms other than be's are checked out above
        lemma = verb.lemma_.lower()
        new = (inflections(lemma, "VBZ") or (lemma + "s",))[0] if number == SG3 else lemma
    if new.lower() == verb.lower_:
        return {}
    return {verb.i: (verb.i + 1, keep_case(new, verb.text))}
