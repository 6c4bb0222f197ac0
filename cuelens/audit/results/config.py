"""The ``config`` section (docs/results-schema.md): the options a scan ran with."""

from __future__ import annotations

import typing
from dataclasses import dataclass

from cuelens.audit.results.section import Section
from cuelens.data.labels import MIN_LABEL_ITEMS

DEFAULT_MARGIN = 0.03  # fraction (3 points); --margin on the CLI in points


@dataclass(frozen=True, kw_only=True, repr=False)
class ScanSettings(Section):
    """A scan's options with the CLI's and the API's defaults, as results.json's ``config``
    records them: :class:`cuelens.audit.config.ScanConfig` checks them, :class:`ConfigSection`
    reads them back (a setting an older file lacks as its default; ``max_fit_items``: None,
    no cap recorded)."""

    key: typing.ClassVar[str] = "config"

    metric: str = "cp"
    min_count: int = 5
    ngrams: int = 1
    alpha: float = 1.0
    folds: int = 5
    iterations: int = 5
    seed: int = 0
    in_sample_features: bool = False
    z_prior: str = "empirical"
    flag_threshold: float = 0.10
    include_premise: bool = False
    max_fit_items: int | None = None
    min_label_items: int = MIN_LABEL_ITEMS  # rarer labels' cues are never significant; 0 = off
    margin: float = DEFAULT_MARGIN  # no_meaningful_leakage below it (fraction; --margin points)
    segmenter: str = "auto"  # cuelens.audit.segmenters: auto, a registered name or hf:PATH


@dataclass(frozen=True, kw_only=True, repr=False)
class ConfigSection(ScanSettings):
    """``config`` (docs/results-schema.md): the :class:`ScanSettings` a scan ran with and
    ``statistics`` ``"streaming"`` under ``--stats streaming`` (docs/large-datasets.md)."""

    statistics: str | None = None

    @classmethod
    def of(cls, results: dict) -> ConfigSection:
        """The ``config`` of a results.json content; the defaults when it has none (a
        hand-made file)."""
        return cls.in_results(results) or cls()
