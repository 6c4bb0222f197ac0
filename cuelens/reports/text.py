"""Display forms of (untrusted, possibly very long) dataset strings: light, no plotly import."""

from __future__ import annotations

import re
from collections.abc import Sequence

from markupsafe import Markup, escape

from cuelens.data.display import short

_QUOTED = re.compile(r"“([^“”]*)”")  # a sentence's quoted dataset text (a cue word)
_RTL = "\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe\U00010800-\U00010fff\U0001e800-\U0001efff"
_WORD = r"[^\s“”()\[\],;:&]*"  # the rest of a word (never into an HTML entity)
_RTL_RUN = re.compile(f"[{_RTL}]{_WORD}(?:[ ,]+[{_RTL}]{_WORD})*")  # Hebrew, Arabic, … words


def short_labels(names: Sequence[str], limit: int = 40) -> list[str]:
    """:func:`short` of each name, distinct for distinct names (a clash is numbered)."""
    labels: list[str] = []
    seen: dict[str, int] = {}
    for name in names:
        label = short(name, limit)
        seen[label] = seen.get(label, 0) + 1
        labels.append(label if seen[label] == 1 else short(name, limit - 4) + f" #{seen[label]}")
    return labels


def isolated(sentence: str) -> Markup:
    """``sentence`` (built in Python, naming dataset text) HTML-escaped, each quoted “…” text and
    each other run of right-to-left words (Hebrew, Arabic, …) in a ``<bdi>``: their direction
    comes from their own letters, as in the cue lists (they were laid out with the English
    sentence around them)."""
    parts = []
    for i, piece in enumerate(_QUOTED.split(str(sentence))):
        if i % 2:
            parts.append(f"“<bdi>{escape(piece)}</bdi>”")
        else:
            parts.append(_RTL_RUN.sub(lambda m: f"<bdi>{m.group()}</bdi>", str(escape(piece))))
    return Markup("".join(parts))
