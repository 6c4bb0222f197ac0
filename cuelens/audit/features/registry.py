"""Registry of ICQ feature detectors (docs/methods.md §5): an explicit table of one instance per
detector class, so adding a feature is one module and one entry here."""

from __future__ import annotations

from cuelens.audit.features.base import Feature
from cuelens.audit.features.negation import Negation
from cuelens.audit.features.ner import Ner
from cuelens.audit.features.overlap import Overlap
from cuelens.audit.features.sentiment import Sentiment
from cuelens.audit.features.tense import Tense
from cuelens.audit.features.typo import Typo
from cuelens.audit.features.word import Word
from cuelens.errors import UserError, option_name
from cuelens.registry import Registry

#: name → detector instance, in docs/methods.md §5 order.
FEATURES: Registry[Feature] = Registry("feature", [
    (cls.name, cls()) for cls in (Word, Negation, Tense, Sentiment, Overlap, Ner, Typo)])
#: The features of a scan that names none (docs/icq-features.md, "The default set"): those that
#: parse with at most spaCy's tagger and parser; OVERLAP, NER and TYPO (a parse of every premise,
#: the recogniser, the dictionary search) run when named or with ``all``.
DEFAULT_FEATURES = ("word", "negation", "tense", "sentiment")


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
        raise UserError(f"{option_name('features')}: unknown feature(s) {', '.join(unknown)}; "
                        f"choose from {', '.join(FEATURES)}")
    if not wanted:
        raise UserError(f"{option_name('features')}: no features selected; choose from "
                        f"{', '.join(FEATURES)}")
    return [feature for name, feature in FEATURES.items() if name in wanted]
