"""Operators that need no parse: crossover (CO) and mutation (MT), plus Adv (docs/methods.md §7–8)."""

from __future__ import annotations

import re
import unicodedata
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


def _run_words(run: str, script: str | None) -> list[str]:
    """A run of a script without spaces cut into words: by the dictionary segmenter of the
    text's main unspaced ``script`` when installed (docs/languages.md), on the run's composed
    form (NFC), each word taken back in the run's own form; else into characters. Either way
    a combining mark (a decomposed dakuten) stays with its letter."""
    from cuelens.audit.segmenters import DICTIONARY_OF, characters, get_segmenter, installed

    letters = characters(run)  # each with its combining marks
    name = DICTIONARY_OF.get(script or "")
    if name is None or not installed(name):
        return letters
    split_run = get_segmenter(name).cut_run  # a run of another script: that script's rules
    words, taken = [], 0
    for word in filter(None, split_run(unicodedata.normalize("NFC", run))):
        piece = ""
        while taken < len(letters) and len(unicodedata.normalize("NFC", piece)) < len(word):
            piece, taken = piece + letters[taken], taken + 1
        if unicodedata.normalize("NFC", piece) != word:
            return letters  # the dictionary's words do not tile the run
        words.append(piece)
    return words if taken == len(letters) else letters


def _word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each word of ``text``; runs of scripts without spaces (Chinese, Japanese,
    Thai …) cut into their words, so such a text is not one "word"."""
    from cuelens.audit.segmenters import UNSPACED_RE, main_unspaced_script, script_shares

    if text.isascii():
        return [m.span() for m in _WORD.finditer(text)]
    spans = [m.span() for m in _marked_word().finditer(text)]
    if not UNSPACED_RE.search(text):
        return spans
    script = main_unspaced_script(script_shares([text]))
    out: list[tuple[int, int]] = []
    for start, end in spans:
        position = start
        for run in UNSPACED_RE.finditer(text, start, end):
            if run.start() > position:
                out.append((position, run.start()))
            position = run.start()
            for word in _run_words(run.group(), script):
                out.append((position, position + len(word)))
                position += len(word)
        if position < end:
            out.append((position, end))
    return out


def mutation(text: str, ctx: OpContext) -> str | None:
    """MT: two adjacent words of the correct choice swapped (written with a space between them,
    or next to each other in a script without spaces)."""
    words = _word_spans(text)
    pairs = [i for i in range(len(words) - 1)
             if (text[words[i][1]:words[i + 1][0]].isspace() or words[i][1] == words[i + 1][0])
             and text[slice(*words[i])].lower() != text[slice(*words[i + 1])].lower()]
    if not pairs:
        return None
    i = ctx.pick(pairs)
    (start, end), (next_start, next_end) = words[i], words[i + 1]
    first, second = text[start:end], text[next_start:next_end]
    if start == 0 and first[:1].isupper():
        second = capitalise(second)
        if not _keeps_capital(first):
            first = first[:1].lower() + first[1:]
    return text[:start] + second + text[end:next_start] + first + text[next_end:]


def emphasis_adverb(doc, ctx: OpContext) -> str | None:
    """Adv: an emphasis adverb ("In fact,") put before the wrong choice."""
    if not len(doc) or doc[0].lower_ in {a.split()[0].rstrip(",").lower() for a in ADVERBS}:
        return None
    adverb = ctx.pick(ADVERBS)
    first = doc[0]
    name = _keeps_capital(first.text) and first.pos_ not in {"DET", "ADJ", "PRON"}
    word = first.text if name else decapitalise(first)
    return f"{adverb} {word}{doc.text[first.idx + len(first):]}"
