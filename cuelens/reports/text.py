"""Display forms of (untrusted, possibly very long) dataset strings: light, no plotly import."""

from __future__ import annotations

from collections.abc import Sequence


def short(value, limit: int = 40) -> str:
    """A display label of at most ``limit`` characters (long dataset strings would squash the
    plot area), cut in the middle so that both its start and its end stay readable; the full
    string stays in the data and the hover text."""
    text = str(value)
    if len(text) <= limit:
        return text
    head = limit // 2  # of the limit − 1 characters kept, the start gets the odd one
    return text[:head] + "…" + text[len(text) - (limit - 1 - head):]


def short_labels(names: Sequence[str], limit: int = 40) -> list[str]:
    """:func:`short` of each name, distinct for distinct names (a clash is numbered)."""
    labels: list[str] = []
    seen: dict[str, int] = {}
    for name in names:
        label = short(name, limit)
        seen[label] = seen.get(label, 0) + 1
        labels.append(label if seen[label] == 1 else short(name, limit - 4) + f" #{seen[label]}")
    return labels
