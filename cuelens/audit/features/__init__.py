"""ICQ linguistic-feature detectors (docs/methods.md §5), one module per feature, in a registry.

The table :data:`~.registry.FEATURES` lists them in the order of docs/methods.md §5: word,
negation, tense, sentiment, overlap, ner, typo. spaCy is imported only when a
:class:`~.base.DocFeature` parses text.
"""

from cuelens.audit.features.base import Annotations, DocFeature, Feature, TextFeature
from cuelens.audit.features.registry import DEFAULT_FEATURES, FEATURES, get_features

__all__ = ["DEFAULT_FEATURES", "FEATURES", "Annotations", "DocFeature", "Feature", "TextFeature",
           "get_features"]
