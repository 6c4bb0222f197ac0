"""The shortcut tables of preference pairs (``preference``, docs/preference.md) and of subsets
(``subsets``, docs/methods.md §16)."""

from __future__ import annotations

import typing
from dataclasses import dataclass

from cuelens.audit.results.section import Section


@dataclass(frozen=True, kw_only=True, repr=False)
class PreferenceSection(Section):
    """``preference`` (docs/preference.md): the records' shape and, per split role, its pair
    counts, the length/formatting/position shortcut rows (Holm-adjusted) and the pair
    checks (the settings ``None`` in hand-made files)."""

    key: typing.ClassVar[str] = "preference"

    shape: str | None = None
    correction: str | None = None
    alpha: float | None = None
    splits: dict[str, dict]

    @property
    def rows(self) -> list[tuple[str, dict]]:
        """Every shortcut row with its split role, in split order."""
        return [(role, row) for role, split in self.splits.items() for row in split["shortcuts"]]


@dataclass(frozen=True, kw_only=True, repr=False)
class SubsetsSection(Section):
    """``subsets`` (docs/methods.md §16): the subset × shortcut table, Holm-adjusted, with each
    subset's own word-cue leakage (``small``: the subsets too small for one) and the subset
    names rewritten to their normal form."""

    key: typing.ClassVar[str] = "subsets"

    field: str
    measure: str
    correction: str
    alpha: float
    n_tests: int
    shortcuts: list[str]
    overall: dict[str, dict]
    rows: list[dict]
    small: dict | None = None
    rewritten: list[dict] | None = None
