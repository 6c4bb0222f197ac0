"""Token embeddings computed once per distinct token (docs/icq-features.md, "Speed").

The first stage of the English pipeline's ``tok2vec`` (and of NER's own layers) embeds each
token from its own attributes alone (NORM, PREFIX, SUFFIX, SHAPE, SPACY, IS_SPACE hashed into
six tables, concatenated, then a maxout layer with layer normalisation): a third of the
component's matrix products, although SNLI dev + test's 161,318 hypothesis tokens have only
9,901 distinct attribute rows. :func:`memoise_embedding` replaces that stage by
:class:`EmbeddingMemo`, which runs the same layers on the attribute rows not seen before and
looks the others up (the context layers: :mod:`.window_dedup`)."""

from __future__ import annotations

from typing import Any, cast

import numpy as np

#: Distinct attribute rows kept per pipeline; the memo starts again beyond (bounded memory).
MAX_ROWS = 500_000


class EmbeddingMemo:
    """The embedding of each attribute row seen so far (one row of floats per distinct key)."""

    def __init__(self, embed: Any, mix: Any) -> None:
        self.embed, self.mix = embed, mix  #: the hash tables' layer and the maxout layer
        self.index: dict[bytes, int] = {}
        self.table = np.zeros((0, 0), dtype=np.float32)

    def __call__(self, features: np.ndarray) -> np.ndarray:
        """The embeddings of ``features`` (tokens × attributes, the hashed attribute ids)."""
        rows = np.ascontiguousarray(features)
        keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
        distinct, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        if len(self.index) + len(distinct) > MAX_ROWS:
            self.index, self.table = {}, self.table[:0]
        get = self.index.get
        found = np.fromiter((get(key.tobytes(), -1) for key in distinct), dtype=np.int64,
                            count=len(distinct))
        new = np.flatnonzero(found < 0)
        if len(new):
            vectors = self.mix.predict(self.embed.predict(rows[first[new]]))
            found[new] = np.arange(len(self.table), len(self.table) + len(new))
            self.index.update(zip((distinct[i].tobytes() for i in new), found[new].tolist()))
            self.table = vectors if len(self.table) == 0 else np.concatenate([self.table, vectors])
        return self.table[found[inverse.ravel()]]


def memoise_embedding(nlp: Any) -> bool:
    """Put an :class:`EmbeddingMemo` in each component of ``nlp`` that embeds tokens itself (the
    ``tok2vec`` component, NER's own), once (training still runs the original layers); False,
    changing nothing, when none has the expected shape (``extract_features >> list2ragged >>
    hash tables >> maxout >> …``)."""
    from cuelens.models.spacy_pipeline import component_models

    return any([_memoise(model) for model in component_models(nlp)])  # a list: every one


def _memoise(model: Any) -> bool:
    """:func:`memoise_embedding` of one component's ``model``."""
    from thinc.api import Model, noop
    from thinc.types import Floats2d, Ragged

    if any(node.name == "memoised_embedding" for node in model.walk()):
        return True
    chain = next((node for node in model.walk() if len(node.layers) > 3
                  and node.layers[0].name == "extract_features"
                  and node.layers[1].name == "list2ragged"), None)
    if chain is None or "hashembed" not in chain.layers[2].name or \
            not chain.layers[3].name.startswith("with_array(maxout"):
        return False
    tables, mix = chain.layers[2], chain.layers[3]
    memo = EmbeddingMemo(tables.layers[0], mix.layers[0])

    def forward(node: Model, ragged: Ragged, is_train: bool):
        if not is_train:
            return Ragged(cast(Floats2d, memo(np.asarray(ragged.dataXd))), ragged.lengths), None
        hashed, back_tables = tables(ragged, is_train)
        mixed, back_mix = mix(hashed, is_train)
        return mixed, lambda d_mixed: back_tables(back_mix(d_mixed))

    model.replace_node(mix, noop())
    model.replace_node(tables, Model("memoised_embedding", forward, layers=[tables, mix],
                                            attrs={"memo": memo}))
    return True
