"""Distribution test on flattened cue sets (docs/methods.md §6): on label-balanced (NLI) or
answer-balanced (MCQ) samples of the items with a cue, the predicted distribution against
uniform and the training distribution Q(R_f), scored by the Jensen–Shannon divergence (bits)
from uniform, signed + when the skew points the way of Q(R_f).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import jensenshannon

from cuelens.data.dataset import Task
from cuelens.probes.cues import WITH_CUE, WITHOUT_CUE, Cue


def signed_jsd(predicted: np.ndarray, train: np.ndarray) -> float:
    """JSD(predicted ‖ uniform) in bits, signed by whether the skew agrees with ``train``."""
    uniform = np.full(len(predicted), 1.0 / len(predicted))
    jsd = float(jensenshannon(predicted, uniform, base=2) ** 2)
    return jsd if np.dot(predicted - uniform, train - uniform) >= 0 else -jsd


def _balanced_sample(groups: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    size = min(len(g) for g in groups)
    return np.sort(np.concatenate([rng.choice(g, size, replace=False) for g in groups]))


def _entry(cue: Cue, predicted: dict[str, float], n: int, score: float) -> dict:
    return {"cue": cue.name, "train_dist": cue.train_dist,
            "predicted_dist": {k: round(v, 6) for k, v in predicted.items()},
            "n": int(n), "score": round(score, 6)}


def nli_distribution(cue: Cue, pred: np.ndarray, gold: np.ndarray, label_names: list[str],
                     rng: np.random.Generator) -> dict:
    items = np.flatnonzero(cue.test_mask)
    groups = [items[gold[items] == label] for label in range(len(label_names))]
    absent = [label_names[i] for i, g in enumerate(groups) if len(g) == 0]
    if absent:
        return {"cue": cue.name, "skipped": f"no test item with the cue has label {absent[0]}"}
    picked = pred[_balanced_sample(groups, rng)]
    predicted = np.bincount(picked, minlength=len(label_names)) / len(picked)
    assert cue.train_dist is not None  # distribution_test only tests cues that have one
    train = np.asarray([cue.train_dist[name] for name in label_names])
    return _entry(cue, dict(zip(label_names, map(float, predicted))), len(picked),
                  signed_jsd(predicted, train))


def mcq_distribution(cue: Cue, pred: np.ndarray, gold: np.ndarray,
                     rng: np.random.Generator) -> dict:
    assert cue.test_bearing is not None and cue.train_dist is not None  # MCQ word cues
    items = np.flatnonzero(cue.test_mask)
    gold_bears = cue.test_bearing[items, gold[items]]
    groups = [items[gold_bears], items[~gold_bears]]
    if min(len(g) for g in groups) == 0:
        side = "carries" if len(groups[0]) == 0 else "lacks"
        return {"cue": cue.name,
                "skipped": f"no test question where the correct choice {side} the cue"}
    flat = _balanced_sample(groups, rng)
    rate = float(cue.test_bearing[flat, pred[flat]].mean())
    train_rate = cue.train_dist[WITH_CUE]
    score = signed_jsd(np.asarray([rate, 1 - rate]), np.asarray([train_rate, 1 - train_rate]))
    return _entry(cue, {WITH_CUE: rate, WITHOUT_CUE: 1 - rate}, len(flat), score)


def distribution_test(cues: list[Cue], pred: np.ndarray, gold: np.ndarray, task: str,
                      label_names: list[str], *, seed: int = 0, min_items: int = 10) -> dict:
    """``probe.distribution_test`` for the word cues that carry a training distribution; an
    unanswered item (``pred`` −1) is left out before the minimum-size check and the balancing
    (docs/methods.md §6)."""
    tested: list[dict] = []
    skipped: list[dict] = []
    answered = pred >= 0
    for cue in cues:
        if cue.train_dist is None:
            continue
        rng = np.random.default_rng(seed)
        cue = Cue(cue.name, cue.kind, cue.test_mask & answered, cue.test_bearing, cue.train_dist)
        if cue.test_mask.sum() < min_items:
            row = {"cue": cue.name, "skipped": f"fewer than {min_items} test items with the cue"}
        elif task == Task.MCQ:
            row = mcq_distribution(cue, pred, gold, rng)
        else:
            row = nli_distribution(cue, pred, gold, label_names, rng)
        (skipped if "skipped" in row else tested).append(row)
    section = {"cues": tested}
    if skipped:
        section["skipped"] = skipped
    return section
