"""The context layers of spaCy's ``tok2vec`` (and of NER's own) run once per distinct window of
a batch (docs/icq-features.md, "Speed")."""

from __future__ import annotations

from typing import Any

import numpy as np

#: Multipliers of the row hash that finds equal rows (each match is then checked bit for bit).
_HASH = np.random.default_rng(0).integers(1, 2**63, size=1024, dtype=np.uint64) | np.uint64(1)


def dedupe_windows(nlp: Any) -> bool:
    """Run the context layers (``with_array(residual(expand_window >> maxout …) × depth, pad)``)
    of each component of ``nlp`` that has its own (the ``tok2vec`` component, NER) through
    :func:`encode` when predicting, once (training runs the original layers); False, changing
    nothing, when none has such layers."""
    from cuelens.models.spacy_pipeline import component_models

    return any([_dedupe(model) for model in component_models(nlp)])  # a list: every one


def _dedupe(model: Any) -> bool:
    """:func:`dedupe_windows` of one component's ``model``."""
    from thinc.api import Model

    if any(node.name == "deduped_windows" for node in model.walk()):
        return True
    encoder = next((node for node in model.walk() if node.name.startswith("with_array(")
                    and "pad" in node.attrs and node.layers[0].layers
                    and all(_is_window_block(block) for block in node.layers[0].layers)), None)
    if encoder is None:
        return False

    def forward(node: Model, arrays: list, is_train: bool):
        return encoder(arrays, is_train) if is_train else (encode(encoder, arrays), None)

    model.replace_node(encoder, Model("deduped_windows", forward, layers=[encoder]))
    return True


def _is_window_block(block: Any) -> bool:
    """Whether ``block`` is ``residual(expand_window >> layers that read one row each)``."""
    return block.name.startswith("residual(expand_window>>") and \
        len(block.layers[0].layers) == 2 and "window_size" in block.layers[0].layers[0].attrs


def encode(encoder: Any, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """``encoder.predict(arrays)``, each block run once per distinct window among the rows that
    the later blocks read.

    The arrays are laid end to end with ``pad`` zero rows around each, as ``with_array`` does.
    After k blocks a row depends only on the inputs within k windows of it, so rows whose windows
    hold the same inputs get the same output; block k runs on one row per distinct window among
    the rows within the remaining blocks' reach of a token (the last block: the tokens only) and
    copies its output to the others. Equal to spaCy's up to the rounding of a matrix product over
    fewer rows."""
    blocks = encoder.layers[0].layers
    ops, pad = encoder.ops, encoder.attrs["pad"]
    lengths = [len(array) for array in arrays]
    if not sum(lengths):
        return encoder.predict(arrays)
    X = ops.flatten(arrays, pad=pad)
    token = np.zeros(len(X), dtype=bool)
    start = pad
    for length in filter(None, lengths):  # ``flatten`` leaves out empty arrays
        token[start:start + length] = True
        start += length + pad
    ids = _row_ids(X)
    X = np.concatenate([X, np.zeros((1, X.shape[1]), X.dtype)])  # row -1: zeros beyond the ends
    reach = sum(block.layers[0].layers[0].attrs["window_size"] for block in blocks)
    for block in blocks:
        expand, rest = block.layers[0].layers
        width = expand.attrs["window_size"]
        reach -= width
        needed = np.flatnonzero(np.convolve(token, np.ones(2 * reach + 1), "same") > 0.5)
        _, first, inverse = np.unique(_window_keys(ids, width)[needed], return_index=True,
                                      return_inverse=True)
        inverse = inverse.ravel()
        rows = needed[first]
        window = rows[:, None] + np.arange(-width, width + 1)
        window[(window < 0) | (window >= len(token))] = -1
        out = X[rows] + rest.predict(X[window].reshape(len(rows), -1))
        X = np.zeros_like(X)  # rows no later block reads stay zero
        X[needed] = out[inverse]
        ids = np.full(len(token), len(rows), dtype=np.int64)
        ids[needed] = inverse
    X = X[:-1]
    return ops.unflatten(X, ops.asarray1i(lengths), pad=pad)


def _row_ids(X: np.ndarray) -> np.ndarray:
    """An id per row of ``X``, equal exactly for rows equal bit for bit."""
    bits = np.ascontiguousarray(X).view(np.uint32)
    hashed = bits.astype(np.uint64) @ np.resize(_HASH, bits.shape[1])  # wraps around: a hash
    _, first, inverse = np.unique(hashed, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    if np.array_equal(bits[first][inverse], bits):
        return inverse
    rows = bits.view(np.dtype((np.void, bits.itemsize * bits.shape[1]))).ravel()
    return np.unique(rows, return_inverse=True)[1].ravel()  # a collision: sort the rows


def _window_keys(ids: np.ndarray, width: int) -> np.ndarray:
    """Per row, a key of the ``ids`` from ``width`` rows before it to ``width`` after it (a
    separate id beyond the ends): equal keys for equal windows."""
    base = int(ids.max()) + 2
    keys = np.zeros(len(ids), dtype=np.int64)
    for offset in range(-width, width + 1):
        shifted = np.full(len(ids), base - 1, dtype=np.int64)
        if offset < 0:
            shifted[-offset:] = ids[:offset]
        else:
            shifted[:len(ids) - offset] = ids[offset:]
        if int(keys.max()) >= (2**62) // base:  # renumber before the product overflows
            keys = np.unique(keys, return_inverse=True)[1].ravel()
        keys = keys * base + shifted
    return keys
