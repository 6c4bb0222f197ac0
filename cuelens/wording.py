"""Counts in sentences — "1 pair", "2 pairs" — for every terminal message, error, report and
card sentence that states a count."""

from __future__ import annotations


def plural(n: int, word: str, plural_form: str | None = None) -> str:
    """``n`` (thousands separated) and ``word``, or its plural (``word + "s"`` unless given)
    when ``n`` is not 1; ``word`` may carry its verb ("item is", "items are").

    >>> plural(1, "pair"), plural(1200, "pair"), plural(2, "copy", "copies")
    ('1 pair', '1,200 pairs', '2 copies')
    """
    return f"{n:,} {word if n == 1 else plural_form or word + 's'}"
