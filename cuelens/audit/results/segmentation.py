"""The ``segmentation`` section (docs/languages.md): the segmenter a scan used and why."""

from __future__ import annotations

import typing
from dataclasses import dataclass

from cuelens.audit.results.section import Section


@dataclass(frozen=True, kw_only=True, repr=False)
class SegmentationSection(Section):
    """``segmentation``: the segmenter asked for and the one used, why, each kind of script's
    share of the letters, the auto choice's ``warning``, the text's language and whether its
    words look unsegmented (the guard: no conclusion but leakage, docs/methods.md §17)."""

    key: typing.ClassVar[str] = "segmentation"

    requested: str
    name: str
    reason: str
    scripts: dict[str, float]
    warning: str | None = None
    language: str | None = None  # None: a file written before languages
    unsegmented: bool | None = None  # None: the guard did not fire
