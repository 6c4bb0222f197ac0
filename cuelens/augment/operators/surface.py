"""Operators that need no parse: crossover (CO) and mutation (MT), plus Adv (docs/methods.md §7–8)."""

from __future__ import annotations

import re
from functools import cache

from cuelens.augment.operators.lexicons import name_pool
from cuelens.augment.operators.registry import OpContext
from cuelens.augment.operators.text import capitalise, decapitalise, normalise

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
ADVERBS = ("In fact,", "Indeed,", "Certainly,", "Clearly,", "Obviously,")
CROSSOVER_TRIES = 20


def crossover(text: str, ctx: OpContext) -> str | None:
    """CO: the correct choice of another, randomly drawn question."""
    if len(ctx.pool) < 2:
        return None
    for _ in range(CROSSOVER_TRIES):
        donor = int(ctx.rng.integers(len(ctx.pool)))
        if donor != ctx.item and normalise(ctx.pool[donor]) not in ctx.taken:
            return ctx.pool[donor]
    return None


def _keeps_capital(word: str) -> bool:
    """``I``, acronyms and census first names (except function words such as "Will", "Many")."""
    from spacy.lang.en.stop_words import STOP_WORDS

    lower = word.lower()
    return word == "I" or (len(word) > 1 and word.isupper()) \
        or (lower in name_pool().gender and lower not in STOP_WORDS)


@cache
def _marked_word() -> re.Pattern:
    """:data:`_WORD` with combining marks (Mn/Mc/Me) inside words: Python's ``\\w`` has none,
    so a decomposed ``café`` or Hindi ``बीमार`` would be cut at its marks."""
    from cuelens.audit.segmenters import marked_patterns

    word = marked_patterns()[1].pattern
    return re.compile(f"{word}(?:['’]{word})*")


def mutation(text: str, ctx: OpContext) -> str | None:
    """MT: two adjacent words of the correct choice swapped."""
    words = list((_WORD if text.isascii() else _marked_word()).finditer(text))
    pairs = [i for i in range(len(words) - 1)
             if text[words[i].end():words[i + 1].start()].isspace()
             and words[i].group().lower() != words[i + 1].group().lower()]
    if not pairs:
        return None
    i = ctx.pick(pairs)
    first, second = words[i].group(), words[i + 1].group()
    if words[i].start() == 0 and first[:1].isupper():
        second = capitalise(second)
        if not _keeps_capital(first):
            first = first[:1].lower() + first[1:]
    gap = text[words[i].end():words[i + 1].start()]
    return text[:words[i].start()] + second + gap + first + text[words[i + 1].end():]


def emphasis_adverb(doc, ctx: OpContext) -> str | None:
    """Adv: an emphasis adverb ("In fact,") put before the wrong choice."""
    if not len(doc) or doc[0].lower_ in {a.split()[0].rstrip(",").lower() for a in ADVERBS}:
        return None
    adverb = ctx.pick(ADVERBS)
    first = doc[0]
    name = _keeps_capital(first.text) and first.pos_ not in {"DET", "ADJ", "PRON"}
    word = first.text if name else decapitalise(first)
    return f"{adverb} {word}{doc.text[first.idx + len(first):]}"
