"""Bounded display text of loaded data (the one-screen reprs of :class:`~cuelens.data.Dataset`
and :class:`~cuelens.data.dataset.Split`): dataset strings are untrusted and may be very long."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path

import regex

from cuelens.wording import plural

MAX_TEXT = 60  # characters of a dataset string shown in a repr
MAX_NAMES = 8  # label names shown in a repr


def short(value, limit: int = 40) -> str:
    """A display label of at most ``limit`` characters (long dataset strings would squash the
    plot area), cut in the middle so that both its start and its end stay readable, between
    whole grapheme clusters (never between a letter and its combining marks, nor inside an emoji
    ZWJ sequence or a flag); the full string stays in the data and the hover text."""
    text = str(value)
    if len(text) <= limit:
        return text
    clusters = regex.findall(r"\X", text)
    head = _fitting(clusters, limit // 2)  # of the limit − 1 characters kept, the start gets
    tail = _fitting(clusters[::-1], limit - 1 - limit // 2)  # the odd one
    return "".join(clusters[:head]) + "…" + "".join(clusters[len(clusters) - tail:])


def _fitting(clusters: Sequence[str], room: int) -> int:
    """How many of ``clusters``, from the first, fit in ``room`` characters."""
    used = count = 0
    for cluster in clusters:
        used += len(cluster)
        if used > room:
            break
        count += 1
    return count


def cluster_end(text: str, room: int) -> int:
    """The length of the longest start of ``text`` made of whole grapheme clusters (a letter with
    its combining marks, an emoji ZWJ sequence, a flag) that fits in ``room`` characters."""
    clusters = regex.findall(r"\X", text[:room + 1])  # the clusters ending by room: as in text
    return sum(map(len, clusters[:_fitting(clusters, room)]))


def shown(value) -> str:
    """A dataset string (a cue word, a label) as a sentence names it: at most :data:`MAX_TEXT`
    characters (:func:`short`), as the report's cue lists show it; a 3,000-character "word"
    would otherwise fill the summary, the next steps and the terminal."""
    return short(value, MAX_TEXT)


def shown_html(value) -> str:
    """:func:`shown`, escaped for HTML (a notebook's summary table)."""
    return html.escape(shown(value))


#: What :func:`one_line` shows as an escape: the control characters (tab, newline, ESC, …), the
#: line and paragraph separators and the bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE,
#: the embeddings, isolates and marks), which reorder the text around them on screen.
UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e"
                     "\u2066-\u2069]")


def one_line(text: str) -> str:
    """``text`` with its control characters, line or paragraph separators and bidirectional
    controls (a newline, an escape sequence or a U+202E in a dataset's name or label) as Python
    escapes (``\\n``, ``\\x1b``, ``\\u202e``), so a repr or a terminal line stays one line
    and can neither restyle the terminal nor show its text reordered."""
    return UNSHOWN.sub(lambda match: repr(match.group())[1:-1], text)


def names_text(names: Sequence) -> str:
    """``a, b, c`` (each :func:`shown`), then ``… and N more`` past :data:`MAX_NAMES` names."""
    text = ", ".join(map(shown, names[:MAX_NAMES]))
    return text + (f" … and {len(names) - MAX_NAMES:,} more" if len(names) > MAX_NAMES else "")


def split_text(role: str, items: int, task: str, path: str) -> str:
    """``test 500 MCQ items (test.jsonl)``."""
    return (f"{shown(role)} {plural(items, str(task).upper() + ' item')} "
            f"({shown(Path(path).name)})")


def dataset_html(name: str, task: str, rows: Sequence[tuple[str, str, int]],
                 labels: Sequence, note: str | None) -> str:
    """A small escaped HTML table for Jupyter: the dataset, its splits (role, file, items), its
    labels and the roles note."""
    body = "".join(f"<tr><td>{shown_html(role)}</td><td>{shown_html(Path(file).name)}</td>"
                   f"<td>{items:,}</td></tr>" for role, file, items in rows)
    extra = f"<br>{html.escape(note)}" if note else ""
    return (f"<div class='cuelens-summary'><b>{shown_html(name)}</b> "
            f"({shown_html(str(task).upper())}; "
            f"labels: {html.escape(names_text(labels))}){extra}<table><tr><th>split</th>"
            f"<th>file</th><th>items</th></tr>{body}</table></div>")
