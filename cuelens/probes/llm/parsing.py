"""Reading the answer out of a generated text (docs/methods.md §6): the last ``Answer: X``, else
the option the text starts with, else the only option mentioned; words whole and
case-insensitive, letters case-sensitive (docs/llm-probe.md, "Getting an answer")."""

from __future__ import annotations

import re


_ANSWER = re.compile(r"answer\s*(?:is|:|=)\s*[:\-]?\s*[\"'*(\[]*", re.IGNORECASE)


def parse_answer(text: str, options: list[str], letters: bool = False) -> int | None:
    """Index into ``options`` of the answer given by ``text``, or ``None``."""
    alternatives = "|".join(re.escape(o) for o in sorted(options, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w])({alternatives})(?![\w])", 0 if letters else re.IGNORECASE)
    lookup = {(o if letters else o.lower()): i for i, o in enumerate(options)}

    def index(match: re.Match) -> int:
        found = match.group(1)
        return lookup[found if letters else found.lower()]

    for marker in reversed(list(_ANSWER.finditer(text))):
        after = pattern.match(text, marker.end())
        if after:
            return index(after)
    head = pattern.match(text.lstrip(" \t\n\"'*(["))
    if head:
        return index(head)
    found = {index(m) for m in pattern.finditer(text)}
    return found.pop() if len(found) == 1 else None
