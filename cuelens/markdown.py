"""Untrusted text as literal Markdown (card.md and any other Markdown writer)."""

from __future__ import annotations

import re

_MARKDOWN_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MARKDOWN_SPECIAL = re.compile(r"[\\`*_\[\]#|~$!]")
_LINE_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]+")
_LIST_MARKER = re.compile(r"^([-+=]|\d+(?=[.)]))")


def markdown_text(text: object) -> str:
    """Untrusted text (a label, a file name, an example, a cue word) as literal Markdown inline text
    on one line (what is escaped, and why: docs/robustness.md, "Markdown outputs").

    >>> markdown_text("<img src=x> [x](javascript:y)")
    '&lt;img src=x&gt; \\\\[x\\\\](javascript:y)'
    >>> markdown_text("1. ## heading")
    '1\\\\. \\\\#\\\\# heading'
    """
    one_line = _LINE_BREAKS.sub(" ", str(text)).strip()
    escaped = "".join(_MARKDOWN_ENTITIES.get(ch, ch) for ch in one_line)
    escaped = _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(), escaped)
    return _LIST_MARKER.sub(lambda m: m.group() + "\\" if m.group().isdigit()
                            else "\\" + m.group(), escaped)
