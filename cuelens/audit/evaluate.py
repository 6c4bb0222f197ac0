"""Turning aggregator scores into per-item correctness, ties and unseen words as docs/methods.md
§2–3 say (MCQ: a question's ``k`` choices are consecutive instances, scored by P(right)).
"""

from __future__ import annotations

import numpy as np

from cuelens.data.dataset import RIGHT, Task


def first_argmax(decision: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """``np.argmax(decision[:, columns], axis=1)`` (the first of tied maxima; a NaN wins), by
    comparing whole columns: a few passes over ``n`` values instead of ``n`` short arg-maxes."""
    if len(columns) == 0 or np.isnan(decision).any():
        return np.argmax(decision[:, columns], axis=1)
    best = decision[:, columns[0]].copy()
    index = np.zeros(len(decision), dtype=np.intp)
    for position in range(1, len(columns)):
        column = decision[:, columns[position]]
        index[column > best] = position
        np.maximum(best, column, out=best)
    return index


def nli_predictions(decision: np.ndarray, label_order: np.ndarray,
                    fallback: np.ndarray | None = None) -> np.ndarray:
    """Arg-max labels with ties toward ``label_order`` (most frequent training label first)."""
    predicted = label_order[first_argmax(decision, label_order)]
    if fallback is not None:
        predicted = np.where(fallback, label_order[0], predicted)
    return predicted


def mcq_correct(right_scores: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Per-question correctness from each choice's P(right) (``labels``: RIGHT per choice)."""
    scores = right_scores.reshape(-1, k)
    tied = scores == scores.max(axis=1, keepdims=True)
    right = labels.reshape(-1, k) == RIGHT
    return (tied & right).sum(axis=1) / tied.sum(axis=1)


def item_correct(decision: np.ndarray, labels: np.ndarray, task: str, k: int,
                 label_order: np.ndarray, fallback: np.ndarray | None = None) -> np.ndarray:
    """Per-item correctness (float) of an ``n × L`` decision matrix."""
    if task == Task.MCQ:
        return mcq_correct(decision[:, RIGHT], labels, k)
    return (nli_predictions(decision, label_order, fallback) == labels).astype(np.float64)
