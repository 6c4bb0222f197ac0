"""Per-item bias outputs of a scan (docs/mitigation.md, docs/results-schema.md ``items``).

For every item of the scan (fitting split, then evaluated split) the *bias-only* probabilities:
the held-out predictions of the scan's headline cue-only model (its (metric, aggregator) from
``leakage.best``), each item predicted by a model that never saw it —

* evaluated items: the held-out decisions of the leakage pass itself (its fold fits kept as
  :class:`~cuelens.audit.fitting.HeldOut`: fitted on train, or cross-validated over the file
  with the scan's grouped folds), with no refit;
* fitting items (train/test data): grouped, stratified folds over the fitting split, each fold
  predicted by the model fitted on the other folds (the test labels are never used).

Decision scores become probabilities by :func:`probabilities`; MCQ probabilities are over the
question's choices. Each item also gets its strongest cue, its easy/hard flag and its exact
duplicate / overlap flags (:func:`hygiene_flags`), so the table joins the user's data on ``id``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cuelens.audit.fitting import Fit, HeldOut, PassFits, ScanData, ScoringOptions, over_folds, \
    train_models
from cuelens.audit.groups import grouped_folds
from cuelens.data.dataset import RIGHT, Dataset, Split, Task


def probabilities(decision: np.ndarray) -> np.ndarray:
    """Rows of decision scores as probabilities: non-negative scores (CP, Freq, a linear model's
    ``predict_proba``; −inf = a label absent from the fit, counted 0) divided by their row sum
    (uniform where it is 0); scores with negative values (PMI, z, …) through a softmax.

    >>> probabilities(np.array([[0.2, 0.6], [0.0, 0.0]])).tolist()
    [[0.25, 0.75], [0.5, 0.5]]
    """
    decision = np.asarray(decision, dtype=np.float64)
    finite = np.isfinite(decision)
    if (decision[finite] >= 0).all():
        values = np.where(finite, decision, 0.0)
        total = values.sum(axis=1, keepdims=True)
        uniform = np.full_like(values, 1.0 / max(values.shape[1], 1))
        return np.where(total > 0, values / np.where(total > 0, total, 1.0), uniform)
    shifted = decision - np.max(np.where(finite, decision, -np.inf), axis=1, keepdims=True)
    weights = np.where(finite, np.exp(np.where(finite, shifted, 0.0)), 0.0)
    return weights / weights.sum(axis=1, keepdims=True)


def item_probabilities(decision: np.ndarray, task: str, k: int) -> np.ndarray:
    """Per item: NLI ``n × L`` label probabilities; MCQ ``n × k`` probabilities over the choices
    (each choice's P(right) score, :func:`probabilities` across the question's choices)."""
    if task == Task.MCQ:
        return probabilities(decision[:, RIGHT].reshape(-1, k))
    return probabilities(decision)


def bias_probabilities(data: ScanData, options: ScoringOptions, model: tuple[str, str],
                       n_folds: int, fits: PassFits) -> np.ndarray:
    """Out-of-fold bias-only probabilities of every item of ``data`` (fitting items first) from
    ``model`` = (metric, aggregator): the evaluated items' from the leakage pass's ``fits``, the
    fitting items' refitted over folds of the fitting split, warm-starting from the pass's
    models (module docstring)."""
    pool = data.pool
    evaluated = np.zeros((pool.n_items, pool.k if pool.task == Task.MCQ else pool.n_labels))
    for fold in fits.folds:
        evaluated[fold.eval_rows[::pool.k] // pool.k] = item_probabilities(
            fold.decisions(pool, model), pool.task, pool.k)
    if data.train_items is None:
        return evaluated
    train, bank = data.train_items, fits.bank
    assert bank is not None

    def fold_fn(fit_rows, eval_rows, inner):
        fit = Fit.of_rows(pool, fit_rows, inner, options)
        trained = train_models(fit, [model], bank, pool.n_labels)
        decision = HeldOut(fit, eval_rows, trained).decisions(pool, model)
        return {"p": item_probabilities(decision, pool.task, pool.k)}

    # a training item needs a fold without it, also with --folds 1 (train/test scans)
    folds = grouped_folds(data.groups[train], data.strata[train], max(n_folds, 2), options.seed,
                          "training items")
    evaluated[train] = over_folds(pool, train, None, folds, fold_fn)["p"]
    return evaluated


def strongest_cues(data: ScanData, cues: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item: the listed cue among its words with the largest z (any label), its label and z
    (None / NaN when the item holds no listed cue)."""
    vocab = {token: i for i, token in enumerate(data.pool.seqs.vocab)}
    best_z = np.full(len(vocab) + 1, -np.inf)
    best_cue = np.full(len(vocab) + 1, -1, dtype=np.int64)
    for c, cue in enumerate(cues):
        z = cue["metrics"]["z"]
        v = vocab.get(cue["token"])
        if v is not None and isinstance(z, (int, float)) and z > best_z[v]:
            best_z[v], best_cue[v] = z, c
    seqs, n = data.pool.seqs, data.pool.n_items
    ids, lengths = seqs.take(np.arange(len(seqs)))
    instance = np.repeat(np.arange(len(seqs)), lengths)
    item = instance // data.pool.k
    order = np.lexsort((-best_z[ids], item))  # per item, its best word first
    first = np.unique(item[order], return_index=True)
    winner = np.full(n, len(vocab))  # the sentinel row: no cue
    winner[first[0]] = ids[order][first[1]]
    chosen = best_cue[winner]
    tokens = np.array([cues[c]["token"] if c >= 0 else None for c in chosen], dtype=object)
    labels = np.array([cues[c]["label"] if c >= 0 else None for c in chosen], dtype=object)
    return tokens, labels, np.where(chosen >= 0, best_z[winner], np.nan)


def hygiene_flags(split: Split, fitting: Split | None) -> dict[str, np.ndarray]:
    """Per item of ``split``: ``duplicate`` (its normalised input occurs again in the split),
    ``label_conflict`` (such copies carry different answers) and, against the fitting split,
    ``overlap`` (its input occurs there) and ``shared_premise`` (docs/data-hygiene.md; exact
    copies only — near duplicates are counted in results.json)."""
    from cuelens.audit.hygiene import ItemKeys, first_match

    keys = ItemKeys.of(split)
    values, inverse, counts = np.unique(keys.inputs, return_inverse=True, return_counts=True)
    low = np.full(len(values), np.iinfo(np.uint64).max, dtype=np.uint64)
    high = np.zeros(len(values), dtype=np.uint64)
    np.minimum.at(low, inverse, keys.answers)
    np.maximum.at(high, inverse, keys.answers)
    out = {"duplicate": counts[inverse] > 1, "label_conflict": (low != high)[inverse]}
    if fitting is not None:
        fit = ItemKeys.of(fitting)
        out["overlap"] = first_match(keys.inputs, fit.inputs) >= 0
        out["shared_premise"] = first_match(keys.premises, fit.premises) >= 0
    return out


@dataclass
class ItemBias:
    """The per-item table's columns, fitting items first (:func:`item_bias`)."""

    columns: dict[str, list]

    def __len__(self) -> int:
        return len(self.columns["id"])

    def rows(self):
        """One dict per item (the JSONL lines), NaN as None."""
        names = list(self.columns)
        for values in zip(*self.columns.values()):
            yield {name: (None if isinstance(v, float) and v != v else v)
                   for name, v in zip(names, values)}

    def frame(self):
        import pandas as pd

        return pd.DataFrame(self.columns)


def probability_names(dataset: Dataset) -> list[str]:
    """The probability columns: ``p_bias_<label>`` (NLI) or ``p_bias_<choice>`` (MCQ, 0-based)."""
    if dataset.task == Task.MCQ:
        return [f"p_bias_{j}" for j in range(dataset.n_choices or 0)]
    return [f"p_bias_{label}" for label in dataset.label_names]


def item_bias(dataset: Dataset, data: ScanData, probs: np.ndarray, cues: list[dict],
              item_easy: np.ndarray, model: tuple[str, str]) -> ItemBias:
    """The per-item table of ``dataset`` from :func:`bias_probabilities` ``probs``, the scan's
    ``cues`` and the evaluated items' easy mask (docs/results-schema.md ``items``)."""
    splits = [(role, split) for role, split in dataset.splits.items()
              if split is dataset.train or split is dataset.test]
    gold = np.concatenate([split.item_labels(dataset.label_names) for _, split in splits])
    names = dataset.label_names if dataset.task == Task.NLI else None
    predicted = probs.argmax(axis=1)
    token, cue_label, cue_z = strongest_cues(data, cues)
    flags: dict[str, list] = {}
    for role, split in splits:
        found = hygiene_flags(split, dataset.train if split is dataset.test else None)
        for name in ("duplicate", "label_conflict", "overlap", "shared_premise"):
            flags.setdefault(name, []).extend(
                found[name].tolist() if name in found else [None] * len(split))
    n_fit = len(dataset.train) if dataset.train is not None else 0
    columns: dict[str, list] = {
        "id": [i for _, split in splits for i in split.ids],
        "split": [role for role, split in splits for _ in range(len(split))],
        "label": [names[g] if names else int(g) for g in gold],
        "bias_model": [f"{model[0]}/{model[1]}"] * len(gold)}
    rounded = np.round(probs, 6)
    for j, name in enumerate(probability_names(dataset)):
        columns[name] = rounded[:, j].tolist()
    columns["p_bias_gold"] = rounded[np.arange(len(gold)), gold].tolist()
    columns["bias_prediction"] = [names[p] if names else int(p) for p in predicted]
    columns["bias_correct"] = (predicted == gold).tolist()
    columns["cue"], columns["cue_label"] = token.tolist(), cue_label.tolist()
    columns["cue_z"] = np.round(cue_z, 6).tolist()
    columns["easy"] = [None] * n_fit + np.asarray(item_easy, dtype=bool).tolist()
    columns.update(flags)
    return ItemBias(columns)


ITEMS_JSONL, ITEMS_PARQUET = "items.jsonl", "items.parquet"
PARQUET_MISSING = ("items.parquet needs pyarrow (pip install 'cuelens[ray]'); "
                   "items.jsonl holds the same table")


def parquet_available() -> bool:
    from importlib.util import find_spec

    return find_spec("pyarrow") is not None


def write_items(out_dir, bias: ItemBias, inputs: list[str]) -> dict:
    """items.jsonl and (with pyarrow) items.parquet in ``out_dir``, atomically, never over one
    of the ``inputs``; returns the written paths."""
    from pathlib import Path

    from cuelens.io import atomic_open, check_outputs, write_jsonl

    files = {"items": Path(out_dir) / ITEMS_JSONL}
    if parquet_available():
        files["items_parquet"] = Path(out_dir) / ITEMS_PARQUET
    check_outputs(files.values(), inputs)
    write_jsonl(files["items"], bias.rows())
    if "items_parquet" in files:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pydict(bias.columns)
        with atomic_open(files["items_parquet"]) as handle:
            pq.write_table(table, handle)
    return files
