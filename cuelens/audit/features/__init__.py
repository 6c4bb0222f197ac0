"""ICQ linguistic-feature detectors (docs/methods.md §5), one module per feature, in a registry.

Importing this package registers, in the order of docs/methods.md §5: word, negation, tense, sentiment, overlap,
ner, typo. spaCy is imported only when a :class:`~.base.DocFeature` parses text.
"""

from cuelens.audit.features import (word, negation, tense, sentiment,  # noqa: F401
                                    overlap, ner, typo)
from cuelens.audit.features.base import Annotations, DocFeature, Feature, TextFeature
from cuelens.audit.features.registry import FEATURES, get_features

__all__ = ["FEATURES", "Annotations", "DocFeature", "Feature", "TextFeature", "get_features"]
