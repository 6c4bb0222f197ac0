"""Registry of ICQ feature detectors (docs/methods.md §5), spaCy style: modules register their class."""

from __future__ import annotations

from cuelens.audit.features.base import Feature
from cuelens.errors import UserError

#: name → detector instance, in docs/methods.md §5 order (the order of registration).
FEATURES: dict[str, Feature] = {}


def register(cls: type[Feature]) -> type[Feature]:
    """Class decorator: add one instance of ``cls`` to :data:`FEATURES` under ``cls.name``."""
    FEATURES[cls.name] = cls()
    return cls


def get_features(names: list[str] | None = None, language: str = "en") -> list[Feature]:
    """Detectors for ``names`` (``None``: all) in registry order; unknown names are user errors.
    ``language`` other than ``en``: each one's :meth:`~Feature.for_language`, those that cannot
    run left out (docs/languages.md)."""
    chosen = _named(names)
    if language == "en":
        return chosen
    return [f for f in (feature.for_language(language) for feature in chosen) if f is not None]


def _named(names: list[str] | None) -> list[Feature]:
    if names is None:
        return list(FEATURES.values())
    wanted = {name.strip().lower() for name in names if name.strip()}
    unknown = sorted(wanted - FEATURES.keys())
    if unknown:
        raise UserError(f"unknown feature(s) {', '.join(unknown)}; choose from "
                        f"{', '.join(FEATURES)}")
    if not wanted:
        raise UserError(f"no features selected; choose from {', '.join(FEATURES)}")
    return [feature for name, feature in FEATURES.items() if name in wanted]
