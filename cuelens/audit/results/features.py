"""The ICQ feature sections (docs/methods.md §5): ``features`` rows and ``features_config``."""

from __future__ import annotations

import typing
from dataclasses import dataclass

from cuelens.audit.results.section import Section


@dataclass(frozen=True, kw_only=True, repr=False)
class FeatureRow(Section):
    """One row of ``features`` (docs/methods.md §5): an ICQ feature value, its cueness and its
    support and label distribution in the fitting and the evaluated items."""

    key: typing.ClassVar[str] = "features"
    nullable: typing.ClassVar[tuple[str, ...]] = ("value",)

    feature: str
    value: str | None = None
    cueness: float
    train_support: int
    test_support: int
    train_dist: dict[str, float]
    test_dist: dict[str, float]


@dataclass(frozen=True, kw_only=True, repr=False)
class FeaturesSection(Section):
    """``features_config``: the ICQ features scored, their minimum support, whether the
    evaluation was cross-validated, and those skipped for the text's language (each with its
    reason; docs/languages.md)."""

    key: typing.ClassVar[str] = "features_config"

    features: list[str]
    min_support: int | None = None
    cv_folds_used: bool | None = None
    language: str | None = None
    skipped: list[dict] | None = None
