"""Which word cues of two scans changed beyond their noise (docs/methods.md §18): a cue's *excess
share* of the fitted items, compared between the scans per cue with a two-sample z test and
Benjamini–Hochberg over the cues significant in either scan. Counting significant cues instead
calls a random half of a dataset better (fewer items, less power: fewer cues pass the threshold)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import false_discovery_control, norm

from cuelens.audit.results import ConfigSection, CueRow, CueStats, DatasetSummary

LEVEL = 0.05  #: false discovery rate over the tested cues
METHOD = ("excess share of the fitted items (a cue's count with its label beyond its label's "
          "prior), two-sample z test per cue, Benjamini-Hochberg at 5% over the cues significant "
          "in either scan")


@dataclass(frozen=True)
class CueCounts:
    """One scan's counts for the change test: ``#(w, l)`` and ``#w`` per (token, label), the
    fitted items, the label priors of z and the minimum count (a word below it has no row)."""

    rows: dict[tuple[str, str], CueRow]
    n: int
    prior: dict[str, float]
    min_count: int

    @classmethod
    def of(cls, results: dict) -> "CueCounts | None":
        """``None`` when the scan records no label counts of its fitted split."""
        stats, data = CueStats.in_results(results), DatasetSummary.required_in(results)
        split = data.splits.get(stats.fitted_on if stats and stats.fitted_on else
                                data.fitting_role)
        counts = split.label_counts if split is not None else None
        if not counts or stats is None or stats.min_count is None:
            return None
        n = sum(counts.values())
        uniform = ConfigSection.of(results).z_prior == "uniform"
        prior = {label: 1 / len(counts) if uniform else c / n for label, c in counts.items()}
        rows = {(c.token, c.label): c for c in CueRow.rows_in(results)}
        return cls(rows, n, prior, stats.min_count)

    def share(self, key: tuple[str, str]) -> tuple[float, float]:
        """The cue's excess share ``(#(w,l) − p_l·#w) / N`` and its variance; a word without a
        row (fewer than ``min_count`` occurrences) at its largest possible share (every one of
        ``min_count − 1`` occurrences with the label), so that a change is never overstated."""
        row, p = self.rows.get(key), self.prior.get(key[1], 0.0)
        with_label, word = (row.label_count, row.count) if row is not None else \
            (self.min_count - 1, self.min_count - 1)
        share = (with_label - p * word) / self.n
        square = (with_label * (1 - p) ** 2 + (word - with_label) * p ** 2) / self.n
        return share, max(square - share ** 2, 0.0) / self.n


def significant_cues(results: dict) -> dict[tuple[str, str], CueRow]:
    """The scan's significant cues by (token, label)."""
    return {(c.token, c.label): c for c in CueRow.rows_in(results) if c.significant}


def cue_changes(before: dict, after: dict) -> dict | None:
    """``{method, n_tested, weakened, strengthened}`` over the cues significant in either scan;
    each changed cue ``{token, label, share_before, share_after, z, q}``. ``None`` when a scan
    records no counts to test with."""
    old, new = CueCounts.of(before), CueCounts.of(after)
    if old is None or new is None:
        return None
    keys = sorted(significant_cues(before).keys() | significant_cues(after).keys())
    if not keys:
        return {"method": METHOD, "n_tested": 0, "weakened": [], "strengthened": []}
    shares = np.array([[*old.share(k), *new.share(k)] for k in keys])
    z = (shares[:, 2] - shares[:, 0]) / np.sqrt(np.maximum(shares[:, 1] + shares[:, 3], 1e-300))
    q = false_discovery_control(2 * norm.sf(np.abs(z)))
    changed: dict[str, list[dict]] = {"weakened": [], "strengthened": []}
    for i in np.argsort(-np.abs(z), kind="stable"):
        if q[i] < LEVEL:
            (token, label) = keys[i]
            changed["weakened" if z[i] < 0 else "strengthened"].append(
                {"token": token, "label": label, "share_before": round(float(shares[i, 0]), 6),
                 "share_after": round(float(shares[i, 2]), 6), "z": round(float(z[i]), 4),
                 "q": round(float(q[i]), 6)})
    return {"method": METHOD, "n_tested": len(keys), **changed}
