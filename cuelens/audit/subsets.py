"""Per-subset baselines and verdicts, the subset × shortcut table of ``--subset-field`` with its
Holm-adjusted p-values (docs/methods.md §16; docs/preference.md, "Subsets")."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

import numpy as np

from cuelens.audit.chance import ALPHA, accuracy_row
from cuelens.audit.results import SubsetsSection
from cuelens.data.dataset import Dataset, Split, Task
from cuelens.data.labels import LabelFindings, normalise_label
from cuelens.data.schema import RecordError, subset_text
from cuelens.errors import UserError

MIN_SUBSET_ITEMS = 20  # smaller subsets get no word-cue scan of their own (too few for folds)
MAX_SUBSET_ITEMS = 20_000  # larger subsets: their own word-cue scan reads a sample of this size


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values: the ``i``-th smallest of ``m`` is multiplied by
    ``m − i`` (``i`` from 0), made monotone and capped at 1.

    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adjusted
    return out


def mark_holm(rows: list[dict], key: str = "p_holm") -> list[dict]:
    """``key`` (the Holm-adjusted ``p_value`` of each row, over these rows) and ``significant``
    (adjusted p < :data:`~cuelens.audit.chance.ALPHA`) on every row."""
    for row, p in zip(rows, holm([row["p_value"] for row in rows])):
        row.update({key: float(f"{p:.6g}"), "significant": bool(p < ALPHA)})
    return rows


def record_subset(record: dict, field: str, path: str, line: int) -> str:
    """The subset that ``record`` names in ``field`` (:func:`~cuelens.data.schema.subset_text`);
    none is a :class:`UserError` naming the file and line."""
    try:
        return subset_text(record.get(field), field)
    except RecordError as exc:
        raise UserError(str(exc), path=path, line=line) from None


def subset_values(split: Split, field: str) -> list[str]:
    """The ``field`` value of every item of ``split``, read from its original record text."""
    return [record_subset(json.loads(raw), field, split.path, line)
            for raw, line in zip(split.raw, split.lines)]


def normal_subsets(values: Sequence[str], findings: LabelFindings) -> list[str]:
    """``values`` in the labels' normal form (:func:`~cuelens.data.labels.normalise_label`:
    NFC, no invisible format characters, stripped; case kept), each rewrite counted in
    ``findings`` — so ``"bio "`` and ``"b\u200bio"`` are the subset ``"bio"``."""
    out = []
    for value in values:
        normal = normalise_label(value) or value
        if normal != value:
            findings.rewrite(value, normal)
        out.append(normal)
    return out


def _cell(value: float | None, ci: list | None, effect: float | None, p_value: float) -> dict:
    return {"value": value, "ci": ci, "effect": effect, "p_value": p_value}


def effect_interval(cell: dict) -> tuple[float, float]:
    """A cell's ``ci`` (an interval of its ``value``: an accuracy or a win rate) moved onto the
    scale of its ``effect`` (D, or win rate − ½); as it is when the cell has no effect."""
    shift = cell["value"] - cell["effect"] if cell["effect"] is not None else 0.0
    return cell["ci"][0] - shift, cell["ci"][1] - shift


def subset_table(field: str, measure: str, sizes: dict[str, int],
                 cells: dict[str, dict[str, dict]], overall: dict[str, dict], *,
                 leakage: dict[str, dict | None] | None = None,
                 rewritten: list[dict] | None = None) -> SubsetsSection:
    """The ``subsets`` section (docs/results-schema.md) from test cells (subset → shortcut →
    :func:`_cell`) and the overall cells: Holm over all subset cells, and over the overall
    ones; rows sorted by subset name. ``leakage``: the word-cue D of the
    :func:`scanned_subsets` (:func:`leakage_column`), in every row (``None`` for the small
    ones, counted in ``small``); ``rewritten``: the subset values' rewrites
    (:meth:`~cuelens.data.labels.LabelFindings.rewritten`)."""
    names = list(dict.fromkeys(name for row in cells.values() for name in row))
    family = [(s, name) for s in sorted(cells) for name in cells[s]]
    mark_holm([cells[s][name] for s, name in family], "p_adjusted")
    mark_holm(list(overall.values()), "p_adjusted")
    rows: list[dict] = [{"subset": s, "n_items": sizes[s], "cells": cells[s]}
                        for s in sorted(cells)]
    return SubsetsSection(
        field=field, measure=measure, correction="holm", alpha=ALPHA, n_tests=len(family),
        shortcuts=names, overall=overall,
        rows=rows if leakage is None else [{**row, "leakage": leakage.get(row["subset"])}
                                           for row in rows],
        small=None if leakage is None else {"min_items": MIN_SUBSET_ITEMS,
                                            "subsets": len(rows) - len(leakage)},
        rewritten=rewritten)


def scanned_subsets(sizes: dict[str, int]) -> list[str]:
    """The subsets (sorted) with at least :data:`MIN_SUBSET_ITEMS` evaluated items: those that
    get a word-cue scan of their own (docs/preference.md, "Subsets")."""
    return sorted(s for s, n in sizes.items() if n >= MIN_SUBSET_ITEMS)


def preference_cells(rows: list[dict]) -> dict[str, dict]:
    """Cells of :func:`cuelens.audit.preference.shortcut_rows` rows (effect: win rate − ½)."""
    return {r["shortcut"]: _cell(r["rate"], r["rate_ci"],
                                 None if r["rate"] is None else round(r["rate"] - 0.5, 6),
                                 r["p_value"]) for r in rows}


def mcq_cells(credit: dict[str, np.ndarray], k: np.ndarray, items: np.ndarray) -> dict[str, dict]:
    """Cells of the MCQ baselines (per-item ``credit``) over ``items`` (effect: D)."""
    out = {}
    for name, values in credit.items():
        row = accuracy_row(float(values[items].mean()), k[items])
        out[name] = _cell(row["accuracy"], row["accuracy_ci"], row["D"], row["p_value"])
    return out


def grouped(values: Sequence[str]) -> dict[str, np.ndarray]:
    """Each distinct value (sorted) with the positions holding it, in one sort (linear in the
    items however many values there are).

    >>> {k: v.tolist() for k, v in grouped(["b", "a", "b"]).items()}
    {'a': [1], 'b': [0, 2]}
    """
    array = np.asarray(values, dtype=object)
    if not len(array):
        return {}
    names, inverse = np.unique(array.astype(str), return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.cumsum(np.bincount(inverse, minlength=len(names)))[:-1]
    return dict(zip(names.tolist(), np.split(order, bounds)))


def sample_groups(groups: Sequence, limit: int, seed: int) -> np.ndarray:
    """Sorted positions of a seeded random sample of whole groups (``None``: an item of its
    own) holding at most ``limit`` items — all when they fit, at least one group.

    >>> sample_groups(["a", "a", "b", None], 10, 0).tolist()
    [0, 1, 2, 3]
    """
    n = len(groups)
    if n <= limit:
        return np.arange(n)
    keys = np.asarray([g if g is not None else f"\0{i}" for i, g in enumerate(groups)],
                      dtype=object)
    _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    order = np.random.default_rng(seed).permutation(len(counts))
    kept = max(1, int(np.searchsorted(np.cumsum(counts[order]), limit, side="right")))
    chosen = np.zeros(len(counts), dtype=bool)
    chosen[order[:kept]] = True
    return np.flatnonzero(chosen[inverse])


def subset_datasets(dataset: Dataset, field: str, subsets: Iterable[str],
                    values: Callable[[Split], list[str]], limit: int | None = None,
                    seed: int = 0) -> dict[str, Dataset]:
    """``dataset`` restricted to the items of each of ``subsets`` (fitting and evaluated
    splits), each split grouped once; with ``limit``, to a seeded sample of at most ``limit``
    items of whole groups per split (:func:`sample_groups`)."""
    positions = {id(split): grouped(values(split))
                 for split in (dataset.train, dataset.test) if split is not None}
    empty = np.zeros(0, dtype=np.int64)

    def only(split: Split, subset: str) -> Split:
        index = positions[id(split)].get(subset, empty)
        if limit is not None:
            groups = split.groups or [None] * len(split)
            index = index[sample_groups([groups[i] for i in index], limit, seed)]
        return split.subset(index)

    return {s: replace(dataset, name=f"{dataset.name}[{field}={s}]",
                       train=None if dataset.train is None else only(dataset.train, s),
                       test=only(dataset.test, s), other={}) for s in subsets}


def subset_leakage(dataset: Dataset, config) -> dict | None:
    """The word-cue leakage D of a scan of ``dataset`` alone (one easy/hard iteration) and the
    number of evaluated items it read; None when it is too small or its choice counts vary."""
    from cuelens.audit.scan import run_word_audit

    sizes = [len(s) for s in (dataset.train, dataset.test) if s is not None]
    if min(sizes) < MIN_SUBSET_ITEMS or (dataset.task == Task.MCQ and dataset.n_choices is None):
        return None
    try:
        leak = run_word_audit(dataset, replace(config, iterations=1)).leakage
    except (UserError, ValueError):
        return None  # too few groups or labels in this subset for the folds
    best = leak.best
    return {"value": best["accuracy"], "ci": [best["ci_low"], best["ci_high"]],
            "effect": best["D"], "verdict": leak.verdict, "items_scanned": len(dataset.test)}


def leakage_column(dataset: Dataset, field: str, names: list[str],
                   values: Callable[[Split], list[str]], config) -> dict[str, dict | None]:
    """The descriptive word-cue D of each of the ``names`` subsets' own scan
    (:func:`subset_leakage`, on a seeded sample of at most :data:`MAX_SUBSET_ITEMS` items of
    whole groups per split)."""
    datasets = subset_datasets(dataset, field, names, values, MAX_SUBSET_ITEMS, config.seed)
    return {name: subset_leakage(datasets[name], config) for name in names}


def dataset_subsets(dataset: Dataset, field: str, config) -> SubsetsSection:
    """The ``subsets`` section of an MCQ or NLI scan (NLI: the leakage column only)."""
    from cuelens.audit.mcq_baselines import choice_counts, item_credit

    cache: dict[int, list[str]] = {}
    findings = LabelFindings()

    def values(split: Split) -> list[str]:
        if id(split) not in cache:
            cache[id(split)] = normal_subsets(subset_values(split, field), findings)
        return cache[id(split)]

    groups = grouped(values(dataset.test))
    cells: dict[str, dict[str, dict]] = {s: {} for s in groups}
    overall: dict[str, dict] = {}
    if dataset.task == Task.MCQ:
        credit = item_credit(dataset, config.folds, config.seed)
        k = choice_counts(dataset.test)
        overall = mcq_cells(credit, k, np.arange(len(k)))
        cells = {s: mcq_cells(credit, k, index) for s, index in groups.items()}
    sizes = {s: len(index) for s, index in groups.items()}
    leakage = leakage_column(dataset, field, scanned_subsets(sizes), values, config)
    return subset_table(field, "accuracy" if dataset.task == Task.MCQ else "D", sizes, cells,
                        overall, leakage=leakage, rewritten=findings.rewritten())
