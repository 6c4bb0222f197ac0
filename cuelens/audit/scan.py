"""``run_word_audit``: the statistical core of ``audit scan`` (docs/methods.md §2–4).

Tokenise once, list cues fitted on the train split (or on all items when the file is
cross-validated), build the metric × aggregator leakage table with its baselines (and, for MCQ,
the artifact baselines of :mod:`cuelens.audit.mcq_baselines`), and split the
evaluation items into easy and hard with the headline (metric, aggregator). The returned
sections follow docs/results-schema.md: fractions, floats rounded to 6 decimals, deterministic
for a given seed. ``progress(stage, fraction)`` is called at stage boundaries; nothing prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from cuelens.audit.config import ScanConfig
from cuelens.audit.counts import TokenSequences
from cuelens.audit.easy_hard import easy_hard_split
from cuelens.audit.examples import sort_value
from cuelens.audit.fitting import PassFits, ScanData, scan_data
from cuelens.audit.leakage import bow_name, leakage_table
from cuelens.audit.mcq_baselines import mcq_baselines
from cuelens.audit.metrics import METRICS, CountTable, bonferroni_z
from cuelens.audit.uncertainty import BELOW, CHANCE
from cuelens.data.dataset import Task
from cuelens.data.labels import rare_labels
from cuelens.io import json_number
from cuelens.audit.bias_items import ItemBias, bias_probabilities, item_bias

SIGNIFICANCE = 0.05
Progress = Callable[[str, float], None]


@dataclass
class WordAudit:
    cues: list[dict]
    cue_stats: dict
    cue_finding: dict
    leakage: dict
    easy_hard: dict
    item_easy: np.ndarray  # bool per dataset.test item
    item_score: np.ndarray  # C[q]/k per dataset.test item
    mcq_baselines: dict | None = None  # MCQ artifact baselines (cuelens.audit.mcq_baselines)
    items: ItemBias | None = None  # per-item bias outputs (cuelens.audit.bias_items)


def _numbers(values: np.ndarray) -> list:
    """Floats rounded to 6 decimals as Python numbers; ±∞ as "inf"/"-inf", NaN as None
    (:func:`cuelens.io.json_number`; ``--alpha 0`` makes PMI/RD infinite)."""
    rounded = np.round(values.astype(np.float64), 6)
    out = rounded.tolist()
    if not np.isfinite(rounded).all():
        out = [json_number(x) for x in out]
    return out


def cue_list(data: ScanData, config: ScanConfig) -> tuple[list[dict], dict]:
    """Every (token, label) with ``#(w) ≥ min_count``, sorted by label then metric (desc)."""
    pool = data.pool
    fitted = data.train_items if data.train_items is not None else data.eval_items
    rows = pool.rows(fitted)
    return cue_table(pool.block_counts(rows).sum(axis=1),
                     np.bincount(pool.labels[rows], minlength=pool.n_labels), pool.seqs.vocab,
                     data.label_names, config,
                     "train" if data.train_items is not None else "all")


def binomial_tails(joint: np.ndarray, labels: np.ndarray, z_prior: str) -> np.ndarray:
    """Exact one-sided p-values ``P(Bin(#(w), p0) ≥ #(w,l))`` of every (word, label) (``p0``:
    z's prior, docs/methods.md §2), one vectorised ``binom.sf`` over the ``V × L`` table: the
    normal approximation behind z is anti-conservative for rare words and rare labels (6 of 6
    occurrences with a 30% label: z = 3.98, exact p = 7·10⁻⁴), so a cue is significant only
    when this tail passes the Bonferroni level too."""
    from scipy.stats import binom

    n_labels = len(labels)
    p0 = labels / max(labels.sum(), 1) if z_prior == "empirical" else \
        np.full(n_labels, 1.0 / n_labels)
    word = joint.sum(axis=1, keepdims=True)
    return binom.sf(joint - 1, word, p0[None, :])


def cue_table(joint: np.ndarray, labels: np.ndarray, vocab: list[str], label_names: list[str],
              config: ScanConfig, fitted_on: str) -> tuple[list[dict], dict]:
    """The ``cues`` and ``cue_stats`` sections from the fitted split's ``#(w,l)`` (``V × L``)
    and label counts (docs/methods.md §2)."""
    keep = np.flatnonzero(joint.sum(axis=1) >= config.min_count)
    table = CountTable(joint[keep], labels, alpha=config.alpha, z_prior=config.z_prior)
    scores = {name: fn(table) for name, fn in METRICS.items()}
    n_tests = len(keep) * len(label_names)
    threshold = bonferroni_z(n_tests, SIGNIFICANCE)
    tails = binomial_tails(joint[keep], np.asarray(labels), config.z_prior)
    counts = dict(zip(label_names, np.asarray(labels).astype(np.int64).tolist()))
    excluded = {label: f"rare label: {counts[label]} item(s), fewer than --min-label-items "
                f"{config.min_label_items}" for label in rare_labels(counts, config.min_label_items)}
    tokens = np.array([vocab[i] for i in keep], dtype=object)
    word = table.word[:, 0].astype(np.int64).tolist()
    cues = []
    for l, label in enumerate(label_names):
        order = np.lexsort((tokens.astype(str), -scores[config.metric][:, l]))
        columns = {name: _numbers(values[order, l]) for name, values in scores.items()}
        columns["freq"] = joint[keep[order], l].astype(np.int64).tolist()
        rare = label in excluded  # docs/robustness.md, "Labels": never significant
        significant = ((scores["z"][order, l] > threshold)
                       & (tails[order, l] < SIGNIFICANCE / max(n_tests, 1))).tolist() \
            if not rare else [False] * len(order)
        names = list(columns)
        for j, i in enumerate(order.tolist()):
            cues.append({"token": tokens[i], "label": label, "count": word[i],
                         "label_count": columns["freq"][j],
                         "metrics": {name: columns[name][j] for name in names},
                         "significant": significant[j]})
            if rare:
                cues[-1]["excluded"] = excluded[label]
    stats = {"bonferroni_z": round(threshold, 6), "n_tests": n_tests, "alpha": SIGNIFICANCE,
             "min_count": config.min_count, "fitted_on": fitted_on}
    return cues, stats


TOP_SIGNIFICANT = 10  # cues listed in ``cue_finding.top``


def significant_ids(cues: list[dict], vocab: list[str]) -> np.ndarray:
    """Feature ids of the significant cue tokens (any label)."""
    index = {token: i for i, token in enumerate(vocab)}
    return np.asarray(sorted({index[c["token"]] for c in cues if c["significant"]}),
                      dtype=np.int64)


def covered_items(seqs: TokenSequences, rows: np.ndarray, ids: np.ndarray, k: int) -> int:
    """How many items (``k`` consecutive instances each, ``rows`` of ``seqs``) hold at least
    one feature of ``ids`` in any instance."""
    if len(ids) == 0 or len(rows) == 0:
        return 0
    tokens, lengths = seqs.take(rows)
    hit = np.zeros(len(rows), dtype=bool)
    owner = np.repeat(np.arange(len(rows)), lengths)
    hit[owner[np.isin(tokens, ids)]] = True
    return int(hit.reshape(-1, k).any(axis=1).sum())


def cue_finding_section(cues: list[dict], cue_stats: dict, covered: int, n_items: int) -> dict:
    """The ``cue_finding`` section (docs/results-schema.md): the first of the scan's two
    findings — significant individual cues (z above the Bonferroni threshold of
    docs/methods.md §2), how many of the ``n_items`` evaluated items hold one (``covered``),
    and the strongest by z."""
    significant = [c for c in cues if c["significant"]]
    top = sorted(significant, key=lambda c: (-sort_value(c["metrics"]["z"]), -c["count"],
                                             c["token"], c["label"]))[:TOP_SIGNIFICANT]
    return {"n_significant": len(significant), "items_covered": covered,
            "share_items": round(covered / n_items, 6) if n_items else 0.0,
            "bonferroni_z": cue_stats["bonferroni_z"],
            "top": [{"token": c["token"], "label": c["label"], "z": c["metrics"]["z"]}
                    for c in top]}


def cue_finding(data: ScanData, cues: list[dict], cue_stats: dict) -> dict:
    """:func:`cue_finding_section` over the evaluated items of ``data``."""
    pool = data.pool
    covered = covered_items(pool.seqs, pool.rows(data.eval_items),
                            significant_ids(cues, pool.seqs.vocab), pool.k)
    return cue_finding_section(cues, cue_stats, covered, len(data.eval_items))


def easy_hard_section(n_easy: int, n_items: int, config: ScanConfig, leakage: dict,
                      split: str) -> dict:
    """The ``easy_hard`` section: ``n_easy`` of the ``n_items`` evaluated items are easy under
    the headline (metric, aggregator) of ``leakage`` (docs/methods.md §4)."""
    best = leakage["best"]
    return {"easy": n_easy, "hard": n_items - n_easy,
            "hard_fraction": round(1 - n_easy / n_items, 6),
            "folds": config.folds, "iterations": config.iterations, "seed": config.seed,
            "metric": best["metric"], "aggregator": best["aggregator"], "split": split,
            # the headline's accuracy interval covers the majority baseline: the split
            # separates lucky from unlucky items, not cue-bearing from clean ones
            "chance_level": leakage["verdict"] in (CHANCE, BELOW)}


def run_word_audit(dataset, config: ScanConfig | None = None, progress: Progress | None = None,
                   tokens: TokenSequences | None = None) -> WordAudit:
    """Cues, leakage table and easy/hard split of ``dataset`` (docs/methods.md §2–4).

    ``tokens``: the fitting-then-evaluation instance texts already encoded with the config's
    n-grams (the Ray engine encodes them shard by shard); ``None`` encodes them here.
    """
    config = config or ScanConfig()
    config.validate()
    report = progress or (lambda stage, fraction: None)
    report("tokenise", 0.0)
    data = scan_data(dataset, config.ngrams, config.include_premise, config.folds, config.seed,
                     tokens)
    report("tokenise", 1.0)
    cues, cue_stats = cue_list(data, config)
    finding = cue_finding(data, cues, cue_stats)
    report("cues", 1.0)
    fits = PassFits()
    leakage = leakage_table(data, config.scoring, config.metric, config.folds,
                            config.flag_threshold, report, fits)
    mcq = None
    if dataset.task == Task.MCQ:
        bow = {b["name"]: b["accuracy"] for b in leakage["baselines"]
               if b["name"] == bow_name(Task.MCQ)}
        mcq = mcq_baselines(dataset, config.folds, config.seed, extra=bow)
        report("mcq baselines", 1.0)
    best = leakage["best"]
    split = easy_hard_split(data, config.scoring, best["metric"], best["aggregator"],
                            config.folds, config.iterations, report)
    easy_hard = easy_hard_section(int(split.easy.sum()), len(split.easy), config, leakage,
                                  "test" if data.train_items is not None else "all")
    leakage["groups"] = data.group_summary
    model = (best["metric"], best["aggregator"])
    items = item_bias(dataset, data, bias_probabilities(data, config.scoring, model, config.folds,
                                                       fits),
                      cues, split.easy, model)
    report("bias items", 1.0)
    return WordAudit(cues=cues, cue_stats=cue_stats, cue_finding=finding, leakage=leakage,
                     easy_hard=easy_hard,
                     item_easy=split.easy, item_score=np.round(split.score, 6),
                     mcq_baselines=mcq, items=items)
