"""Display forms of (untrusted, possibly very long) dataset strings: light, no plotly import."""

from __future__ import annotations

from collections.abc import Sequence

from cuelens.data.display import short


def short_labels(names: Sequence[str], limit: int = 40) -> list[str]:
    """:func:`short` of each name, distinct for distinct names (a clash is numbered)."""
    labels: list[str] = []
    seen: dict[str, int] = {}
    for name in names:
        label = short(name, limit)
        seen[label] = seen.get(label, 0) + 1
        labels.append(label if seen[label] == 1 else short(name, limit - 4) + f" #{seen[label]}")
    return labels
