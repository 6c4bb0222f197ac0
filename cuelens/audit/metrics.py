"""The ten word-cue metrics of docs/methods.md §2, vectorised over a ``V × L`` table of ``#(w,l)``
(``joint``) and ``#(l)`` (``labels``); smoothing as docs/word-cues.md, "Metrics". Rows of words
with ``#(w) = 0`` are meaningless: callers leave such words out."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numpy as np

from cuelens.registry import Registry

Z_PRIORS = ("empirical", "uniform")


@dataclass
class CountTable:
    """Co-occurrence counts of one fitting portion (docs/methods.md §2)."""

    joint: np.ndarray  # V × L, #(w,l)
    labels: np.ndarray  # L, #(l)
    alpha: float = 1.0
    z_prior: str = "empirical"

    def __post_init__(self) -> None:
        self.joint = np.asarray(self.joint, dtype=np.float64)
        self.labels = np.asarray(self.labels, dtype=np.float64)
        if self.z_prior not in Z_PRIORS:
            raise ValueError(f"z_prior must be one of {Z_PRIORS}, got {self.z_prior!r}")

    @property
    def n(self) -> float:
        return float(self.labels.sum())

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    @cached_property
    def word(self) -> np.ndarray:
        """``#(w)`` as a ``V × 1`` column."""
        return self.joint.sum(axis=1, keepdims=True)

    @cached_property
    def rest(self) -> np.ndarray:
        """``#(w,L')``."""
        return self.word - self.joint

    @property
    def rest_labels(self) -> np.ndarray:
        """``#(L')``."""
        return self.n - self.labels

    @cached_property
    def smoothed_pmi(self) -> np.ndarray:
        joint = self.joint + self.alpha
        word = self.word + self.n_labels * self.alpha
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(joint * self.n / (word * self.labels))


def _safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), 0.0)


def freq(t: CountTable) -> np.ndarray:
    """``#(w,l)``."""
    return t.joint.copy()


def cp(t: CountTable) -> np.ndarray:
    """``#(w,l) / #(w)`` = p(l | w)."""
    return _safe_div(t.joint, t.word)


def pmi(t: CountTable) -> np.ndarray:
    """Smoothed ``log p(w,l) / (p(w) p(l))``."""
    return t.smoothed_pmi.copy()


def lmi(t: CountTable) -> np.ndarray:
    """``p~(w,l) · PMI``."""
    with np.errstate(invalid="ignore"):  # α = 0: 0 · −∞ is undefined (NaN)
        return (t.joint + t.alpha) / t.n * t.smoothed_pmi


def npmi(t: CountTable) -> np.ndarray:
    """``PMI / −log p~(w,l)`` in [−1, 1]."""
    with np.errstate(divide="ignore", invalid="ignore"):  # α = 0: log 0, −∞/∞
        denominator = -np.log(np.minimum((t.joint + t.alpha) / t.n, 1.0))
        return np.where(denominator > 0,
                        t.smoothed_pmi / np.where(denominator > 0, denominator, 1.0), 1.0)


def rd(t: CountTable) -> np.ndarray:
    """``|#~(w,l)/#~(w,L') − #(l)/#(L')|``."""
    with np.errstate(divide="ignore", invalid="ignore"):  # α = 0: x/0 = ∞
        smoothed = (t.joint + t.alpha) / (t.rest + (t.n_labels - 1) * t.alpha)
    return np.abs(smoothed - _safe_div(t.labels, t.rest_labels))


def ad(t: CountTable) -> np.ndarray:
    """``|arctan(#(w,l)/#(w,L')) − arctan(#(l)/#(L'))|`` with arctan(x/0) = π/2."""
    return np.abs(np.arctan2(t.joint, t.rest) - np.arctan2(t.labels, t.rest_labels))


def cos(t: CountTable) -> np.ndarray:
    """Cosine of ``[#(w,l), #(w,L')]`` and ``[#(l), #(L')]``; 1 = no information."""
    dot = t.joint * t.labels + t.rest * t.rest_labels
    norms = np.hypot(t.joint, t.rest) * np.hypot(t.labels, t.rest_labels)
    return _safe_div(dot, norms)


def wp(t: CountTable) -> np.ndarray:
    """Weighted power ``(1 − Cos) · #(w)^Cos``."""
    c = cos(t)
    return (1.0 - c) * np.power(t.word, c)


def z(t: CountTable) -> np.ndarray:
    """Gardner et al.'s ``(p̂ − p0) / sqrt(p0 (1 − p0) / #(w))``."""
    p_hat = cp(t)
    with np.errstate(divide="ignore", invalid="ignore"):  # an empty table (N = 0): p0 undefined
        p0 = t.labels / t.n if t.z_prior == "empirical" else np.full(t.n_labels, 1.0 / t.n_labels)
        return np.where(t.word > 0, (p_hat - p0) / np.sqrt(p0 * (1.0 - p0) / t.word), 0.0)


METRICS: Registry[Callable[[CountTable], np.ndarray]] = Registry("metric", {
    "freq": freq, "cp": cp, "pmi": pmi, "lmi": lmi, "rd": rd, "ad": ad, "cos": cos, "wp": wp,
    "z": z, "npmi": npmi,
}, field="metric")


def bonferroni_z(n_tests: int, alpha: float = 0.05) -> float:
    """One-sided Bonferroni threshold: a cue is significant when
    ``z > Φ⁻¹(1 − alpha / n_tests)``.

    One-sided because a cue is a word that *over*-predicts a label (positive association);
    ``n_tests`` is the number of (word, label) pairs tested (those with ``#(w) ≥ min_count``).
    """
    from scipy.stats import norm  # scipy only when scanning (the CLI reads METRICS for --help)

    return float(norm.isf(alpha / max(n_tests, 1)))
