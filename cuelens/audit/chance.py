"""Accuracy against chance for multiple-choice items with any number of choices.

Chance accuracy is ``mean(1/k_i)``; the exact Poisson-binomial test against it, the
Clopper–Pearson interval and the gold-position chi-square are described in
docs/mcq-artifacts.md ("Baselines in `audit scan`") and docs/methods.md §3, §12.
"""

from __future__ import annotations

import numpy as np

ALPHA = 0.05


def _r(x: float) -> float:
    return round(float(x), 6)


def null_pmf(k: np.ndarray) -> np.ndarray:
    """P(X = x), x = 0..n, of the number of items right by chance (Poisson-binomial)."""
    from scipy import stats

    values, sizes = np.unique(np.asarray(k, dtype=np.int64), return_counts=True)
    pmf = np.ones(1)
    for value, size in zip(values, sizes):
        pmf = np.convolve(pmf, stats.binom.pmf(np.arange(size + 1), size, 1.0 / value))
    return pmf


def chance_p_value(total: float, k: np.ndarray) -> float:
    """Two-sided p-value of ``total`` right items (fractional with ties) against chance."""
    pmf = null_pmf(k)
    x = np.arange(len(pmf))
    lower = pmf[x <= total + 1e-9].sum()
    upper = pmf[x >= total - 1e-9].sum()
    return float(min(1.0, 2.0 * min(lower, upper)))


def exact_interval(accuracy: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Clopper–Pearson interval of a proportion ``accuracy`` over ``n`` items."""
    from scipy import stats

    if n == 0:
        return 0.0, 1.0
    x, tail = accuracy * n, (1 - confidence) / 2
    low = float(stats.beta.ppf(tail, x, n - x + 1)) if x > 1e-9 else 0.0
    high = float(stats.beta.ppf(1 - tail, x + 1, n - x)) if x < n - 1e-9 else 1.0
    return low, high


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of the proportion ``k / n`` (``(0, 1)`` for ``n = 0``)."""
    from scipy import stats

    if n == 0:
        return 0.0, 1.0
    ci = stats.binomtest(int(k), n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def accuracy_row(accuracy: float, k: np.ndarray, confidence: float = 0.95) -> dict:
    """Accuracy, chance, D, their intervals at ``confidence`` and the two-sided p-value against
    chance."""
    n = len(k)
    chance = float(np.mean(1.0 / np.asarray(k, dtype=np.float64)))  # random guessing
    low, high = exact_interval(accuracy, n, confidence)
    return {"accuracy": _r(accuracy), "accuracy_ci": [_r(low), _r(high)],
            "chance": _r(chance), "D": _r(accuracy - chance),
            "D_ci": [_r(low - chance), _r(high - chance)],
            "p_value": float(f"{chance_p_value(accuracy * n, k):.6g}"), "n_items": n}


def tie_credit(scores: list[np.ndarray], gold: np.ndarray) -> np.ndarray:
    """Per item: ``1/t`` when the gold choice is among the ``t`` top-scored choices, else 0."""
    out = np.zeros(len(scores))
    for i, (row, g) in enumerate(zip(scores, gold)):
        top = row == row.max()
        out[i] = top[g] / top.sum()
    return out


def position_chi_square(positions: np.ndarray, k: np.ndarray) -> dict:
    """Counts per position, expected counts, chi-square, df and p-value (see module doc)."""
    from scipy import stats

    positions, k = np.asarray(positions, dtype=np.int64), np.asarray(k, dtype=np.int64)
    width = int(k.max()) if len(k) else 0
    counts = np.bincount(positions, minlength=width).astype(np.int64)
    expected = np.zeros(width)
    statistic, df = 0.0, 0
    for value in np.unique(k):
        group = positions[k == value]
        observed = np.bincount(group, minlength=value)
        expected[:value] += len(group) / value
        statistic += float(stats.chisquare(observed).statistic)
        df += int(value) - 1
    p_value = float(stats.chi2.sf(statistic, df)) if df else 1.0
    n = max(len(positions), 1)
    top = int(np.argmax(counts)) if width else 0
    out = {"counts": counts.tolist(), "expected": [_r(e) for e in expected],
           "shares": [_r(c / n) for c in counts], "chi2": _r(statistic), "df": df,
           "p_value": float(f"{p_value:.6g}"), "significant": bool(p_value < ALPHA),
           "most_common": {"position": top, "share": _r(counts[top] / n) if width else 0.0,
                           "expected_share": _r(expected[top] / n) if width else 0.0}}
    if width and expected.min() < 5:
        out["warning"] = "some expected counts are below 5: the chi-square p-value is rough"
    return out


def letter(position: int) -> str:
    """Position 0 → ``A``, 1 → ``B``, …"""
    return chr(ord("A") + position)


def p_text(p_value: float) -> str:
    return "p < 0.001" if p_value < 0.001 else f"p = {p_value:.3f}"


def positions_verdict(counts: dict, what: str) -> str:
    """Plain-English reading of :func:`position_chi_square` (``what``: e.g. "gold answers")."""
    if not sum(counts["counts"]):
        return f"None of {what} could be read: their positions cannot be tested."
    top = counts["most_common"]
    share = (f"{what.capitalize()} sit at position {letter(top['position'])} in "
             f"{100 * top['share']:.1f}% of the items ({100 * top['expected_share']:.1f}% "
             f"expected if positions were balanced; χ² = {counts['chi2']:.1f}, df {counts['df']}, "
             f"{p_text(counts['p_value'])})")
    if counts["significant"]:
        return f"{share}: the positions are unbalanced."
    return f"{share}: no evidence of imbalance."


def clustered_upper_bound(effects: np.ndarray, clusters: np.ndarray,
                          confidence: float = 0.95) -> tuple[float, int]:
    """(one-sided ``confidence`` upper bound of ``mean(effects)``, number of clusters) with a
    cluster-robust (CR1) standard error over ``clusters`` (a cluster id per item;
    docs/methods.md §17): residuals ``e_i = effects_i − mean``, cluster sums ``S_g``,
    ``SE² = G / (G − 1) · Σ_g S_g² / n²``, bound ``mean + t(confidence; G − 1) · SE``."""
    from scipy import stats

    effects = np.asarray(effects, dtype=np.float64)
    _, ids = np.unique(np.asarray(clusters), return_inverse=True)
    n, g = len(effects), int(ids.max()) + 1 if len(effects) else 0
    mean = float(effects.mean()) if n else 0.0
    if g < 2:
        return 1.0, g  # one cluster: no spread to estimate, no bound below the largest D
    sums = np.bincount(ids, weights=effects - mean, minlength=g)
    se = float(np.sqrt(g / (g - 1) * np.sum(sums ** 2))) / n
    return mean + float(stats.t.ppf(confidence, g - 1)) * se, g
