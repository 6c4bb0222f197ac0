"""What the scan engines take and give (docs/large-datasets.md): :class:`EngineOptions` and
:class:`Loaded`, apart from :mod:`cuelens.engine`'s dispatch so that an engine module can import
them without importing the dispatch that imports it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cuelens.audit.counts import TokenSequences
from cuelens.data.dataset import Dataset

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class EngineOptions:
    """What an engine needs besides the data arguments: the scan's tokenisation (so workers can
    encode their shards), a Ray cluster address and work directory, a progress callback."""

    ngrams: int = 1
    include_premise: bool = False
    address: str | None = None
    progress: Progress | None = None
    work_dir: Path | None = None


@dataclass
class Loaded:
    """A loaded dataset, and (Ray) its fitting-then-evaluation instance texts already encoded."""

    dataset: Dataset
    tokens: TokenSequences | None = None
