"""Confidence intervals for accuracies (seeded 95% percentile bootstraps over items, MCQ: questions)
and the leakage verdict's simultaneous test (docs/methods.md §3, §6, §11)."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

N_BOOT = 1000
LEVEL = 0.95
VERDICT_QUANTILE = 1 - (1 - LEVEL) / 2  # 0.975: one side of the two-sided simultaneous interval
EQUIVALENCE_QUANTILE = LEVEL  # 0.95: each model's one-sided upper bound (TOST, §17)
EQUIVALENCE_Z = NormalDist().inv_cdf(EQUIVALENCE_QUANTILE)  # 1.645, no multiplicity correction:
# "every model below the margin" is an intersection-union test (Berger 1982)
_BATCH_CELLS = 2_000_000  # items × resamples drawn at once (memory bound)
_MAX_DISTINCT = 64  # up to this many distinct values: multinomial counts, not item indices


def bootstrap_means(values: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``n_boot`` bootstrap replicates of ``values.mean()``, drawn as multinomial counts of each
    distinct value: resampling items' distribution in ``O(n_boot × values)`` (methods.md §11)."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n == 0:
        return np.full(n_boot, np.nan)
    distinct, counts = np.unique(values, return_counts=True)
    if len(distinct) <= _MAX_DISTINCT:
        return rng.multinomial(n, counts / n, size=n_boot) @ distinct / n
    out = np.empty(n_boot)
    step = max(1, _BATCH_CELLS // n)
    for start in range(0, n_boot, step):
        size = min(step, n_boot - start)
        out[start:start + size] = values[rng.integers(0, n, (size, n))].mean(axis=1)
    return out


def accuracy_vs_chance(correct: np.ndarray, chance: float, n_boot: int = N_BOOT,
                       seed: int = 0) -> dict:
    """Accuracy, its 95% interval and whether that interval covers ``chance`` (the majority
    baseline, or 1/k for MCQ): a model or split whose interval covers chance is
    indistinguishable from guessing. The interval: the 95% percentile bootstrap of
    ``correct`` (per-item 0/1, or fractions for ties)."""
    replicates = bootstrap_means(correct, n_boot, np.random.default_rng(seed))
    tail = 100 * (1 - LEVEL) / 2
    low, high = (float(x) for x in np.percentile(replicates, [tail, 100 - tail]))
    return {"accuracy": round(float(np.mean(correct)), 6), "ci_low": round(low, 6),
            "ci_high": round(high, 6), "chance": round(float(chance), 6),
            "covers_chance": bool(low <= chance <= high)}


SIGNIFICANT, MILD, CHANCE, BELOW = "significant", "mild", "chance", "below chance"


def leakage_verdict(low: float, high: float, threshold: float) -> str:
    """The leakage level an interval ``[low, high]`` of D (fractions) supports:
    ``significant`` (the whole interval above the alarm threshold), ``mild`` (above 0 but not
    surely above the threshold), ``chance`` (covers 0), ``below chance`` (entirely below 0)."""
    if low > threshold:
        return SIGNIFICANT
    if low > 0:
        return MILD
    return BELOW if high < 0 else CHANCE


SIMULATION_DRAWS = 20_000  # multivariate-t draws behind the simultaneous critical value
DIFFERENCE_CHUNK = 65_536  # items folded into the moments at once (bounded memory)


class DifferenceMoments:
    """Sums of per-item paired differences (``M`` predictors − one baseline) over any split of the
    items into pieces: ``n``, ``Σ d`` (``total``), ``Σ d dᵀ`` (``cross``) and per predictor the
    smallest non-zero ``|d|`` (``step``), all that :func:`simultaneous_test` needs
    (docs/methods.md §11, item 2); integer differences give sums independent of their order."""

    def __init__(self, n_models: int) -> None:
        self.n = 0
        self.total = np.zeros(n_models)
        self.cross = np.zeros((n_models, n_models))
        self.step = np.full(n_models, np.inf)

    def add(self, differences: np.ndarray) -> None:
        """Fold in an ``items × M`` matrix of paired differences, :data:`DIFFERENCE_CHUNK`
        rows at a time."""
        for start in range(0, len(differences), DIFFERENCE_CHUNK):
            piece = np.asarray(differences[start:start + DIFFERENCE_CHUNK], dtype=np.float64)
            self.n += len(piece)
            self.total += piece.sum(axis=0)
            self.cross += piece.T @ piece
            size = np.where(piece != 0, np.abs(piece), np.inf)
            self.step = np.minimum(self.step, size.min(axis=0, initial=np.inf))

    def merge(self, other: DifferenceMoments) -> None:
        """Fold in the sums of other items (``other``, same predictors)."""
        self.n += other.n
        self.total += other.total
        self.cross += other.cross
        self.step = np.minimum(self.step, other.step)

    def mean(self) -> np.ndarray:
        return self.total / max(self.n, 1)

    def covariance(self) -> np.ndarray:
        """Covariance of the item differences (divisor ``n``, clipped at 0 on the diagonal)."""
        mean = self.mean()
        cov = self.cross / max(self.n, 1) - np.outer(mean, mean)
        np.fill_diagonal(cov, np.maximum(np.diag(cov), 0.0))
        return cov


@dataclass
class SimultaneousTest:
    """Simultaneous inference on the mean differences ``D`` of ``M`` predictors
    (docs/methods.md §11): the score statistics ``t``, their ``critical`` value, the two-sided
    95% simultaneous bounds ``low``/``high``, the max-T adjusted ``p_value`` and the
    ``degenerate`` predictors whose item differences are all 0 (zero-width interval)."""

    D: np.ndarray
    t: np.ndarray
    critical: float
    low: np.ndarray
    high: np.ndarray
    p_value: np.ndarray
    degenerate: np.ndarray
    equivalence_high: np.ndarray  # each model's one-sided 95% upper bound


def null_maxima(moments: DifferenceMoments, live: np.ndarray, seed: int) -> np.ndarray:
    """:data:`SIMULATION_DRAWS` seeded draws of ``max_m T_m`` over the ``live`` predictors
    under ``H0``: ``T = Z / √(χ²_ν / ν)``, ``Z ~ N(0, R0)`` with ``R0`` the correlation of the
    uncentred second moments ``Σ d dᵀ`` (the covariance when every mean difference is 0) and
    ``ν = n − 1`` (a multivariate t: the variances are estimated from the same ``n`` items)."""
    second = moments.cross[np.ix_(live, live)]
    scale = np.sqrt(np.diag(second))
    corr = second / np.outer(scale, scale)
    values, vectors = np.linalg.eigh((corr + corr.T) / 2)
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    rng = np.random.default_rng(seed)
    normal = rng.standard_normal((SIMULATION_DRAWS, len(live))) @ root.T
    nu = max(moments.n - 1, 1)
    return (normal / np.sqrt(rng.chisquare(nu, SIMULATION_DRAWS) / nu)[:, None]).max(axis=1)


def score_bound(moments: DifferenceMoments, critical: float, correction: np.ndarray
                ) -> np.ndarray:
    """Half-width ``u`` of the simultaneous interval ``D ± u``: the shifts ``δ`` that the
    continuity-corrected score test at ``critical`` does not reject, i.e. the root of
    ``n·u − h = c·√(n·(v + u²))`` (``v`` the centred variance, ``h`` the correction); infinite
    when ``n ≤ c²`` (too few items for any bound)."""
    n = float(moments.n)
    v = np.diag(moments.covariance())
    a = n * n - critical ** 2 * n
    if a <= 0:
        return np.full(len(v), np.inf)
    root = np.sqrt(np.maximum(n * n * correction ** 2
                              - a * (correction ** 2 - critical ** 2 * n * v), 0.0))
    return (n * correction + root) / a


def simultaneous_test(moments: DifferenceMoments, seed: int = 0) -> SimultaneousTest:
    """Max-T test of the ``M`` mean differences of ``moments``: continuity-corrected score
    statistics, the critical value of their joint null (:func:`null_maxima`) and intervals that
    invert the same test (:func:`score_bound`); docs/methods.md §11, item 2."""
    D = moments.mean()
    second = np.diag(moments.cross)
    correction = np.where(np.isfinite(moments.step), moments.step, 0.0)
    degenerate = second <= 0  # every item difference is 0
    live = np.flatnonzero(~degenerate)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(~degenerate, (moments.total - correction) / np.sqrt(second), -np.inf)
    critical, maxima = 0.0, np.zeros(0)
    if len(live):
        maxima = null_maxima(moments, live, seed)
        critical = float(np.quantile(maxima, VERDICT_QUANTILE))
    p_value = np.array([(1 + np.sum(maxima >= value)) / (1 + len(maxima)) if len(maxima)
                        else 1.0 for value in t])
    half = np.where(degenerate, 0.0, score_bound(moments, critical, correction))
    # each model's own one-sided 95% score bound: the intersection-union test of §17
    upper = np.where(degenerate, 0.0, score_bound(moments, EQUIVALENCE_Z, correction))
    return SimultaneousTest(D=D, t=t, critical=critical, low=D - half, high=D + half,
                            p_value=p_value, degenerate=degenerate, equivalence_high=D + upper)
