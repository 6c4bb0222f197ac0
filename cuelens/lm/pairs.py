"""Minimal pairs (BLiMP style, docs/methods.md §9): accuracy (ties count as wrong, as published),
the tie rate beside it, OOV coverage per model, paradigm and field (docs/lm.md, "Unknown words")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _by(values: np.ndarray, groups: Sequence[str]) -> dict[str, float]:
    """Mean of ``values`` per group (sorted keys), rounded."""
    keys, inverse = np.unique(np.asarray(groups), return_inverse=True)
    sums = np.bincount(inverse, weights=values)
    counts = np.bincount(inverse)
    return {str(k): round(float(s / c), 6) for k, s, c in zip(keys, sums, counts)}


def pair_accuracy(good, bad, paradigm: list[str], field: list[str]) -> dict:
    """``{"overall", "n", "by_paradigm", "by_field", "ties"}``: the fraction of pairs whose good
    sentence scores strictly higher (ties count as errors), and the fraction of exact ties
    (``{"overall", "by_paradigm", "by_field"}``)."""
    good, bad = np.asarray(good), np.asarray(bad)
    correct = (good > bad).astype(np.float64)
    ties = (good == bad).astype(np.float64)
    return {"overall": round(float(correct.mean()), 6), "n": int(len(correct)),
            "by_paradigm": _by(correct, paradigm), "by_field": _by(correct, field),
            "ties": {"overall": round(float(ties.mean()), 6), "by_paradigm": _by(ties, paradigm),
                     "by_field": _by(ties, field)}}


def oov_rates(words: np.ndarray, unknown: np.ndarray, n_pairs: int, paradigm: list[str],
              field: list[str]) -> dict:
    """OOV coverage of pairs from per-sentence counts (good sentences first, then bad):
    ``word_rate`` (unknown words / words), ``pair_rate`` (pairs with an unknown word in either
    sentence) overall and per paradigm and field."""
    words, unknown = np.asarray(words), np.asarray(unknown)
    has = ((unknown[:n_pairs] > 0) | (unknown[n_pairs:] > 0)).astype(np.float64)
    total = int(words.sum())
    return {"word_rate": round(float(unknown.sum() / total), 6) if total else 0.0,
            "pair_rate": round(float(has.mean()), 6) if n_pairs else 0.0,
            "by_paradigm": _by(has, paradigm), "by_field": _by(has, field)}


def oov_counts(scorer, sentences: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """``scorer.oov_counts(sentences)`` (words and unknown words per sentence), or ``None`` for
    a scorer that cannot tell which words it knows."""
    counts = getattr(scorer, "oov_counts", None)
    return counts(sentences) if callable(counts) else None


def evaluate_pairs(scorer, scores: np.ndarray, good: list[str], bad: list[str],
                   paradigm: list[str], field: list[str]) -> dict:
    """One model's ``score_pairs`` entry: :func:`pair_accuracy` of ``scores`` (good sentences
    first, then bad) plus, when the scorer can tell, ``"oov"`` (:func:`oov_rates`)."""
    n = len(good)
    entry = pair_accuracy(scores[:n], scores[n:], paradigm, field)
    counts = oov_counts(scorer, good + bad)
    if counts is not None:
        entry["oov"] = oov_rates(*counts, n, paradigm, field)
    return entry
