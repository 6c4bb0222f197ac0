"""The ``examples`` section (docs/results-schema.md): the sampled instances the report shows."""

from __future__ import annotations

import typing
from dataclasses import dataclass, field

from cuelens.audit.results.section import Section


@dataclass(frozen=True, kw_only=True, repr=False)
class ExamplesSection(Section):
    """``examples`` (:mod:`cuelens.audit.examples`): the sampled evaluated instances
    (``items``: id, premise, text, label, easy), and per listed cue, then for the easy and the
    hard items, the indices of those shown (empty in older files without them)."""

    key: typing.ClassVar[str] = "examples"

    items: list[dict]
    by_cue: dict[str, list[int]] = field(default_factory=dict)
    easy: list[int] = field(default_factory=list)
    hard: list[int] = field(default_factory=list)

