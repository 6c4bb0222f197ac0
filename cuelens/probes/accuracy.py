"""Accuracy test and easy/hard gap (docs/methods.md §6; the p- and q-values: docs/data-hygiene.md,
"Probe sanity"): ΔAcc per cue with a 95% percentile-bootstrap interval, seeded with the same
generator seed for every cue so that a cue's interval does not depend on which other cues are
tested; a cue with fewer than ``min_items`` items on either side is skipped, never ΔAcc = 0.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import bootstrap, false_discovery_control

from cuelens.audit.chance import _r

MIN_ITEMS = 10
FDR = 0.05
CORRECTION = "Benjamini-Hochberg (false discovery rate 5%) over the tested cues"


def _difference(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return a.mean(axis=axis) - b.mean(axis=axis)


def delta_accuracy(correct: np.ndarray, mask: np.ndarray, *, n_boot: int = 1000, seed: int = 0,
                   min_items: int = MIN_ITEMS) -> dict:
    """ΔAcc of one cue: sizes, both accuracies, delta and its CI, or a ``skipped`` reason."""
    with_cue, without = correct[mask].astype(float), correct[~mask].astype(float)
    row = {"n_with": int(mask.sum()), "n_without": int((~mask).sum())}
    if min(len(with_cue), len(without)) < min_items:
        return {**row, "skipped": f"fewer than {min_items} test items with/without the cue"}
    result = bootstrap((with_cue, without), _difference, n_resamples=n_boot,
                       confidence_level=0.95, method="percentile", vectorized=True,
                       paired=False, batch=max(1, 2_000_000 // max(len(without), 1)),
                       random_state=np.random.default_rng(seed))
    low, high = result.confidence_interval
    return {**row, "acc_with": _r(with_cue.mean()), "acc_without": _r(without.mean()),
            "delta": _r(with_cue.mean() - without.mean()), "ci_low": _r(low), "ci_high": _r(high),
            "p_value": _r(bootstrap_p(result.bootstrap_distribution))}


def bootstrap_p(replicates: np.ndarray) -> float:
    """Two-sided bootstrap p-value of "ΔAcc = 0": twice the smaller share of replicates on one
    side of 0, with the +1 correction so that it is never 0."""
    n = len(replicates)
    below, above = int((replicates <= 0).sum()), int((replicates >= 0).sum())
    return min(1.0, 2 * (min(below, above) + 1) / (n + 1))


def accuracy_test(correct: np.ndarray, cues, *, n_boot: int = 1000, seed: int = 0,
                  min_items: int = MIN_ITEMS) -> dict:
    """``probe.accuracy_test``: tested cues, skipped cues and Σ|ΔAcc|."""
    tested: list[dict] = []
    skipped: list[dict] = []
    for cue in cues:
        row = delta_accuracy(correct, cue.test_mask, n_boot=n_boot, seed=seed,
                             min_items=min_items)
        entry = {"cue": cue.name, "kind": cue.kind, **row}
        (skipped if "skipped" in row else tested).append(entry)
    if tested:  # Benjamini–Hochberg over the tested cues (docs/methods.md §6)
        q = false_discovery_control([c["p_value"] for c in tested], method="bh")
        for c, value in zip(tested, q):
            c["q_value"] = _r(value)
            c["significant"] = bool(value < FDR)
    section = {"cues": tested, "correction": CORRECTION,
               "total_abs_delta": _r(sum(abs(c["delta"]) for c in tested))}
    if skipped:
        section["skipped"] = skipped
    return section


def easy_hard_gap(correct: np.ndarray, item_easy: np.ndarray, *, n_boot: int = 1000,
                  seed: int = 0) -> dict | None:
    """``probe.easy_hard``: accuracy on easy items, on hard items, and easy − hard with its 95%
    bootstrap interval (computed as a cue's ΔAcc, :func:`delta_accuracy`)."""
    easy = np.asarray(item_easy, dtype=bool)
    if easy.all() or not easy.any():
        return None
    row = delta_accuracy(correct, easy, n_boot=n_boot, seed=seed, min_items=1)
    return {"easy_accuracy": row["acc_with"], "hard_accuracy": row["acc_without"],
            "gap": row["delta"], "ci_low": row["ci_low"], "ci_high": row["ci_high"]}
