"""The bias-only probabilities a debiasing loss is fed (docs/mitigation.md): from a scan's
per-item table (``items.jsonl`` / ``items.parquet`` or its directory: the ``p_bias_*`` columns)
or from a user's bias-model predictions file (JSONL, ``{"id", "probs"}`` with ``probs`` a list
over the labels in the dataset's order / the choices, or a ``{label: p}`` object), or computed by
a word-cue scan of the data itself (:func:`scanned_bias`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cuelens.data.dataset import Dataset, Split
from cuelens.errors import UserError
from cuelens.audit.bias_items import ITEMS_JSONL, PARQUET_MISSING, item_table, \
    parquet_available, probability_names
from cuelens.probes.predictions import parse_probs
from cuelens.wording import plural


def _rows(path: Path):
    """``(line or None, record)`` of a JSONL or Parquet table."""
    if path.suffix == ".parquet":
        if not parquet_available():
            raise UserError(PARQUET_MISSING.split(";")[0], path=str(path))
        import pandas as pd
        import pyarrow

        try:
            table = pd.read_parquet(path)
        except (pyarrow.ArrowException, OSError) as exc:
            raise UserError(f"not a readable Parquet table ({exc}); rerun `audit scan` to "
                            "write it again", path=str(path)) from None
        for record in table.to_dict("records"):
            yield None, record
        return
    from cuelens.data.readers import jsonl_objects

    yield from jsonl_objects(path)


def _probs(record: dict, columns: list[str], dataset: Dataset) -> np.ndarray:
    """The record's probabilities: its ``columns`` or its ``probs`` (checked as a predictions
    file's, :func:`~cuelens.probes.predictions.parse_probs`)."""
    if all(name in record for name in columns):
        value = [record[name] for name in columns]
    elif "probs" in record:
        value = record["probs"]
    else:
        raise ValueError(f'each line needs "probs" or the columns {", ".join(columns)}')
    return parse_probs(value, dataset, len(columns))


def read_bias(path: str | Path, dataset: Dataset, split: Split) -> np.ndarray:
    """``len(split) × C`` bias probabilities of ``split``'s items (rows normalised to sum 1);
    every item must be found once by ``id`` (rows of a scan's table whose ``split`` is not
    ``train`` are skipped); items sharing an id (the copies ``audit filter --balance`` writes)
    take that id's rows in order."""
    path = Path(path)
    if path.is_dir():
        table = item_table(path)
        if table is None:
            raise UserError(f"no {ITEMS_JSONL} here (a scan output directory?)", path=str(path))
        path = table
    if not path.exists():
        raise UserError("bias file not found", path=str(path))
    position: dict[str, list[int]] = {}
    for i, item_id in enumerate(split.ids):
        position.setdefault(item_id, []).append(i)
    columns = probability_names(dataset)
    out = np.full((len(split), len(columns)), np.nan)
    for line, record in _rows(path):
        try:
            slots = position.get(str(record.get("id")))
            if slots is None or record.get("split", "train") != "train":
                continue  # items of other splits (a scan's table lists every split)
            row = _probs(record, columns, dataset)
            if not slots:
                raise ValueError(f"duplicate id {str(record['id'])!r}")
            out[slots.pop(0)] = row / row.sum()
        except ValueError as exc:
            raise UserError(str(exc), path=str(path), line=line) from None
    missing = [split.ids[i] for i in np.flatnonzero(np.isnan(out[:, 0]))]
    if missing:
        raise UserError(f"{plural(len(missing), 'training item has', 'training items have')} no bias "
                        f"probabilities (e.g. "
                        f"{', '.join(map(repr, missing[:5]))})", path=str(path))
    return out


def scanned_bias(dataset: Dataset, seed: int = 0, progress=None) -> np.ndarray:
    """The out-of-fold bias-only probabilities of the training items of ``dataset`` from its
    word-cue scan (no ICQ features) with ``seed``."""
    from cuelens.audit.config import ScanConfig
    from cuelens.audit.pipeline import scan_dataset

    result = scan_dataset(dataset, ScanConfig(seed=seed), features=(), progress=progress)
    if result.bias is None:
        raise UserError("no word-cue statistics for this dataset (MCQ items with different "
                        "numbers of choices): give --bias FILE")
    table = result.bias.frame()
    table = table[table["split"] == "train"]  # the training items in order (ids may repeat)
    assert dataset.train is not None and table["id"].tolist() == list(dataset.train.ids)
    return table[probability_names(dataset)].to_numpy(np.float64)


def bias_record(source: dict, probs: np.ndarray, gold: np.ndarray) -> dict:
    """What fed a debiasing loss (recorded with the trained model; docs/mitigation.md):
    ``source`` (``{"source": "file", "path": …}`` or ``{"source": "scan", "seed": …}``), the
    training items, and how well the bias-only model alone does on them: its mean probability
    of the gold column and its accuracy (ties to the first column)."""
    rows = np.arange(len(gold))
    return {**source, "items": int(len(gold)),
            "gold_probability": round(float(probs[rows, gold].mean()), 4) if len(gold) else None,
            "accuracy": round(float((probs.argmax(1) == gold).mean()), 4) if len(gold) else None}
