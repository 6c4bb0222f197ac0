"""Turning aggregator scores into per-item correctness, ties and unseen words as docs/methods.md
§2–3 say (MCQ: a question's ``k`` choices are consecutive instances, scored by P(right)).
"""

from __future__ import annotations

import numpy as np

from cuelens.data.dataset import RIGHT, Task


def nli_predictions(decision: np.ndarray, label_order: np.ndarray,
                    fallback: np.ndarray | None = None) -> np.ndarray:
    """Arg-max labels with ties toward ``label_order`` (most frequent training label first).

    One comparison per label column (a few times faster than ``np.argmax`` over the ``L``
    columns of each row); a NaN anywhere (or ±inf together, whose sum is NaN) takes
    ``np.argmax``'s own path, whose first NaN wins."""
    with np.errstate(invalid="ignore"):  # inf − inf
        unordered = np.isnan(decision.sum())
    if not len(label_order) or unordered:
        predicted = label_order[np.argmax(decision[:, label_order], axis=1)]
    else:
        best, predicted = decision[:, label_order[0]], np.full(len(decision), label_order[0])
        for position, label in enumerate(label_order[1:], start=2):
            column = decision[:, label]
            better = column > best
            predicted[better] = label
            if position < len(label_order):
                best = np.where(better, column, best)
    if fallback is not None:
        predicted = np.where(fallback, label_order[0], predicted)
    return predicted


def nli_correct(decision: np.ndarray, labels: np.ndarray, label_order: np.ndarray,
                fallback: np.ndarray | None = None) -> np.ndarray:
    """Per-item correctness (bool) of an ``n × L`` NLI decision matrix."""
    return nli_predictions(decision, label_order, fallback) == labels


def mcq_correct(right_scores: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Per-question correctness from each choice's P(right) (``labels``: RIGHT per choice)."""
    scores = right_scores.reshape(-1, k)
    tied = scores == scores.max(axis=1, keepdims=True)
    right = labels.reshape(-1, k) == RIGHT
    return (tied & right).sum(axis=1) / tied.sum(axis=1)


def item_correct(decision: np.ndarray, labels: np.ndarray, task: str, k: int,
                 label_order: np.ndarray) -> np.ndarray:
    """Per-item correctness (float) of an ``n × L`` decision matrix."""
    if task == Task.MCQ:
        return mcq_correct(decision[:, RIGHT], labels, k)
    return nli_correct(decision, labels, label_order).astype(np.float64)
