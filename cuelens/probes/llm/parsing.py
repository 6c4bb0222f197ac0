"""Reading the answer out of a generated text (docs/methods.md §6, docs/llm-probe.md).

``parse_answer(text, options, letters)`` returns the index of the option the text answers, or
``None`` (unparseable; counted separately, and scored as a wrong answer). Rules, in order:

1. the **last** ``Answer: X`` / ``answer is X`` in the text (chain-of-thought ends this way);
2. the text **starts** with an option (``"No, because …"``);
3. exactly **one** distinct option occurs anywhere in the text.

Words match whole words, case-insensitively (multi-word options as phrases). Letters
(``options`` A, B, …) match case-sensitively, alone or as ``(B)`` / ``B.`` / ``B)``, so the
article "a" is never read as option A.
"""

from __future__ import annotations

import re


def _pattern(options: list[str], letters: bool) -> re.Pattern:
    alternatives = "|".join(re.escape(o) for o in sorted(options, key=len, reverse=True))
    flags = 0 if letters else re.IGNORECASE
    return re.compile(rf"(?<![\w])({alternatives})(?![\w])", flags)


_ANSWER = re.compile(r"answer\s*(?:is|:|=)\s*[:\-]?\s*[\"'*(\[]*", re.IGNORECASE)


def parse_answer(text: str, options: list[str], letters: bool = False) -> int | None:
    """Index into ``options`` of the answer given by ``text``, or ``None``."""
    pattern = _pattern(options, letters)
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
