"""Per-item bias outputs of a scan (docs/mitigation.md, docs/results-schema.md ``items``).

For every item of the scan (fitting split, then evaluated split) the *bias-only* probabilities:
the held-out predictions of the scan's headline cue-only model (its (metric, aggregator) from
``leakage.best``), each item predicted by a model that never saw it —

* evaluated items: the held-out decisions of the leakage pass itself (its fold fits kept by
  :func:`~cuelens.audit.passes.predict_run`: fitted on train, or cross-validated over the
  file with the scan's folds), with no refit;
* fitting items (train/test data): folds over the fitting split, each fold predicted by the
  model fitted on the other folds (the test labels are never used);
  :func:`~cuelens.audit.chunk_scan.streamed_items` writes both, chunk by chunk.

Decision scores become probabilities by :func:`probabilities`; MCQ probabilities are over the
question's choices. Each item also gets its strongest cue, its easy/hard flag and its exact
duplicate / overlap flags (:class:`~cuelens.audit.streamed_hygiene.ItemFlags`), so the table joins
the user's data on ``id``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from cuelens.audit.counts import TokenSequences
from cuelens.audit.fitting import Fit, Trained, model_decisions, signed_decisions
from cuelens.audit.results import CueRow
from cuelens.data.dataset import RIGHT, Dataset, Task
from cuelens.jsonio import Coded, JsonlColumn, column_rows, jsonl_rows


def probabilities(decision: np.ndarray, signed: bool | None = None) -> np.ndarray:
    """Rows of decision scores as probabilities: non-negative scores (CP, Freq, a linear model's
    ``predict_proba``; −inf = a label absent from the fit, counted 0) divided by their row sum
    (uniform where it is 0); signed scores (PMI, z, margins, …) through a softmax. ``signed``:
    which of the two the model's scores are (:func:`~cuelens.audit.fitting.signed_decisions`);
    None: signed when any score of ``decision`` is negative.

    >>> probabilities(np.array([[1.0, 3.0], [0.0, 0.0]])).tolist()
    [[0.25, 0.75], [0.5, 0.5]]
    """
    decision = np.asarray(decision, dtype=np.float64)
    finite = np.isfinite(decision)
    if signed is None:
        signed = bool((decision[finite] < 0).any())
    if not signed:
        values = np.where(finite, decision, 0.0)
        total = values.sum(axis=1, keepdims=True)
        uniform = np.full_like(values, 1.0 / max(values.shape[1], 1))
        return np.where(total > 0, values / np.where(total > 0, total, 1.0), uniform)
    shifted = decision - np.max(np.where(finite, decision, -np.inf), axis=1, keepdims=True)
    weights = np.where(finite, np.exp(np.where(finite, shifted, 0.0)), 0.0)
    return weights / weights.sum(axis=1, keepdims=True)


def item_probabilities(decision: np.ndarray, task: str, k: int,
                      signed: bool | None = None) -> np.ndarray:
    """Per item: NLI ``n × L`` label probabilities; MCQ ``n × k`` probabilities over the choices
    (each choice's P(right) score, :func:`probabilities` across the question's choices)."""
    if task == Task.MCQ:
        return probabilities(decision[:, RIGHT].reshape(-1, k), signed)
    return probabilities(decision, signed)


def held_out_probabilities(fit: Fit, trained: Trained, model: tuple[str, str],
                           seqs: TokenSequences, rows: np.ndarray, task: str, k: int,
                           n_labels: int) -> np.ndarray:
    """:func:`item_probabilities` of the ``trained`` ``model`` of ``fit`` on instances ``rows``
    of ``seqs`` (whole items), the transform chosen by the fit
    (:func:`~cuelens.audit.fitting.signed_decisions`)."""
    decision = model_decisions(fit, trained, model, seqs, rows, k, n_labels)
    return item_probabilities(decision, task, k, signed_decisions(trained, model))


def cue_ranks(vocab: Sequence[str], cues: list[CueRow]) -> tuple[np.ndarray, np.ndarray]:
    """Per cue feature id of ``vocab`` (and a last, sentinel row): the largest z of a listed cue
    on it (−inf: none) and that cue's index in ``cues`` (−1: none)."""
    index = {token: i for i, token in enumerate(vocab)}
    best_z = np.full(len(index) + 1, -np.inf)
    best_cue = np.full(len(index) + 1, -1, dtype=np.int64)
    for c, cue in enumerate(cues):
        z = cue.metrics["z"]
        v = index.get(cue.token)
        if v is not None and isinstance(z, (int, float)) and z > best_z[v]:
            best_z[v], best_cue[v] = z, c
    return best_z, best_cue


def strongest_cues(seqs: TokenSequences, k: int, ranks: tuple[np.ndarray, np.ndarray]
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Per item of the instances ``seqs`` (``k`` per item): the index of the listed cue among
    its words with the largest z (any label; −1: the item holds no listed cue) and that z
    (NaN: none); ``ranks``: :func:`cue_ranks` of ``seqs``' vocabulary."""
    best_z, best_cue = ranks
    n, sentinel = len(seqs) // k, len(best_z) - 1
    ids = seqs.indices[seqs.indptr[0]:seqs.indptr[-1]]
    item = np.repeat(np.arange(len(seqs)), np.diff(seqs.indptr)) // k
    values = best_z[ids]
    best = np.full(n, -np.inf)
    np.maximum.at(best, item, values)
    # per item, its first word with the largest z (in instance, then word order)
    hits = np.flatnonzero(values == best[item])
    first = hits[np.r_[True, item[hits[1:]] != item[hits[:-1]]]] if len(hits) else hits
    winner = np.full(n, sentinel)  # the sentinel row: no cue
    winner[item[first]] = ids[first]
    chosen = best_cue[winner]
    return chosen, np.where(chosen >= 0, best_z[winner], np.nan)


@dataclass(frozen=True)
class CueNames:
    """The listed cues' words and labels as the table's columns code them (built once per
    scan): ``tokens`` per cue, then None (no cue); the distinct ``labels``, then None; per cue
    (then no cue) its label's index in ``labels``."""

    tokens: list[str | None]
    labels: list[str | None]
    label_codes: np.ndarray

    @classmethod
    def of(cls, cues: list[CueRow]) -> "CueNames":
        labels = list(dict.fromkeys(cue.label for cue in cues))
        index = {label: i for i, label in enumerate(labels)}
        codes = np.array([index[cue.label] for cue in cues] + [len(labels)], dtype=np.int64)
        return cls([cue.token for cue in cues] + [None], labels + [None], codes)

    def columns(self, chosen: np.ndarray) -> tuple[Coded, Coded]:
        """The ``cue`` and ``cue_label`` columns of the items whose strongest cue is
        ``chosen`` (:func:`strongest_cues`)."""
        rows = np.where(chosen >= 0, chosen, len(self.tokens) - 1)
        return Coded(rows, self.tokens), Coded(self.label_codes[rows], self.labels)


FLAGS = ("duplicate", "label_conflict", "overlap", "shared_premise")


def probability_names(dataset: Dataset) -> list[str]:
    """The probability columns: ``p_bias_<label>`` (NLI) or ``p_bias_<choice>`` (MCQ, 0-based)."""
    return _probability_names(dataset.task, dataset.label_names, dataset.n_choices)


def _probability_names(task: str, label_names: list[str], n_choices: int | None) -> list[str]:
    if task == Task.MCQ:
        return [f"p_bias_{j}" for j in range(n_choices or 0)]
    return [f"p_bias_{label}" for label in label_names]


@dataclass(frozen=True)
class TableLayout:
    """What every part of one scan's table shares: task, label names (NLI), probability
    columns and the headline model (``metric/aggregator``)."""

    task: str
    label_names: list[str]
    probability_names: list[str]
    model: str

    @classmethod
    def of(cls, task: str, label_names: list[str], n_choices: int | None,
           model: tuple[str, str]) -> "TableLayout":
        return cls(task, label_names, _probability_names(task, label_names, n_choices),
                   f"{model[0]}/{model[1]}")

    def schema(self):
        """The Parquet schema (the same for every scan of this layout, whatever its values)."""
        import pyarrow as pa

        answer = pa.string() if self.task == Task.NLI else pa.int64()
        return pa.schema([("id", pa.string()), ("split", pa.string()), ("label", answer),
                          ("bias_model", pa.string()),
                          *[(name, pa.float64()) for name in self.probability_names],
                          ("p_bias_gold", pa.float64()), ("bias_prediction", answer),
                          ("bias_correct", pa.bool_()), ("cue", pa.string()),
                          ("cue_label", pa.string()), ("cue_z", pa.float64()),
                          ("easy", pa.bool_()), *[(name, pa.bool_()) for name in FLAGS]])


def item_columns(layout: TableLayout, ids: Sequence[str], role: str, gold: np.ndarray,
                 probs: np.ndarray, strongest: tuple[Coded, Coded, np.ndarray],
                 easy: np.ndarray | None, flags: dict[str, np.ndarray | None]
                 ) -> dict[str, JsonlColumn]:
    """The table's columns for items ``ids`` of split ``role`` (all of a split or a chunk of
    it): ``gold`` label indices, bias-only ``probs``, the strongest cue's ``cue`` and
    ``cue_label`` columns (:meth:`CueNames.columns`) and z, the easy mask (None: fitting
    items) and the :data:`FLAGS` (None: not defined for these items, null); labels, names and
    flags as codes into their values (:class:`~cuelens.jsonio.Coded`), numbers rounded to 6
    decimals."""
    n = len(gold)
    answers = layout.label_names if layout.task == Task.NLI else \
        list(range(len(layout.probability_names)))
    gold = np.asarray(gold, dtype=np.int64)
    predicted, same = probs.argmax(axis=1), np.zeros(n, dtype=np.int64)
    columns: dict[str, JsonlColumn] = {
        "id": list(ids), "split": Coded(same, [role]), "label": Coded(gold, answers),
        "bias_model": Coded(same, [layout.model])}
    rounded = np.round(probs, 6)
    for j, name in enumerate(layout.probability_names):
        columns[name] = rounded[:, j]
    columns["p_bias_gold"] = rounded[np.arange(n), gold]
    columns["bias_prediction"] = Coded(predicted, answers)
    columns["bias_correct"] = _flag(predicted == gold, n)
    columns["cue"], columns["cue_label"], cue_z = strongest
    columns["cue_z"] = np.round(cue_z, 6)
    columns["easy"] = _flag(easy, n)
    for name in FLAGS:
        columns[name] = _flag(flags.get(name), n)
    return columns


def _flag(mask: np.ndarray | None, n: int) -> Coded:
    """A bool column of ``n`` rows (``mask`` None: null)."""
    if mask is None:
        return Coded(np.zeros(n, dtype=np.int64), [None])
    return Coded(np.asarray(mask, dtype=bool).astype(np.int64), [False, True])


ITEMS_JSONL, ITEMS_PARQUET = "items.jsonl", "items.parquet"
PARQUET_MISSING = ("items.parquet needs pyarrow (pip install 'cuelens[ray]'); "
                   "items.jsonl holds the same table")


def parquet_available() -> bool:
    from importlib.util import find_spec

    return find_spec("pyarrow") is not None


def item_table(directory: Path) -> Path | None:
    """The per-item table a scan output ``directory`` holds: items.parquet where pyarrow can
    read it, else items.jsonl (files only); None when neither is there."""
    names = (ITEMS_PARQUET, ITEMS_JSONL) if parquet_available() else (ITEMS_JSONL,)
    return next((directory / name for name in names if (directory / name).is_file()), None)


JSONL_BATCH = 16_384  # lines encoded at once
COPY_BUFFER = 1 << 20  # bytes copied at once from a part file of JSONL lines


def jsonl_blocks(columns: dict[str, JsonlColumn]) -> Iterator[bytes]:
    """The items.jsonl lines of :func:`item_columns`, :data:`JSONL_BATCH` rows at a time
    (:func:`~cuelens.jsonio.jsonl_rows`, NaN as null)."""
    n = len(columns["id"])
    for start in range(0, n, JSONL_BATCH):
        rows = slice(start, start + JSONL_BATCH)
        yield jsonl_rows({name: column_rows(column, rows) for name, column in columns.items()},
                         nan_as_null=True).encode("utf-8")


def arrow_table(columns: dict[str, JsonlColumn], layout: TableLayout) -> Any:
    """The pyarrow table of :func:`item_columns` in the ``layout``'s schema (codes taken from
    their values, numbers as they are)."""
    import pyarrow as pa

    def array(column: JsonlColumn, kind: Any) -> Any:
        if isinstance(column, Coded):
            used = column.used()
            return pa.array(list(used.values), kind).take(pa.array(used.codes))
        return pa.array(column, kind)

    schema = layout.schema()
    return pa.Table.from_arrays([array(columns[f.name], f.type) for f in schema], schema=schema)


class ItemsWriter:
    """The per-item table's ``files`` (:func:`item_paths`, in a work directory) written part by
    part (the parts of one scan, chunk by chunk: one part in memory at a time): the first
    part's file of JSONL lines becomes items.jsonl (renamed, not copied), the next ones are
    appended to it; their Arrow tables go into items.parquet. A context manager."""

    def __init__(self, files: dict[str, Path], layout: TableLayout) -> None:
        self._files, self._layout = files, layout
        self._stack = ExitStack()
        self._jsonl: BinaryIO | None = None
        self._parquet: Any = None  # the Parquet writer, from the first part on

    def append_file(self, part: Path | None, table: Any) -> None:
        """Append one part: its JSONL lines, written to the file ``part`` (:func:`jsonl_blocks`;
        moved or removed here), and its :func:`arrow_table`."""
        if "items" in self._files and part is not None:
            if self._jsonl is None:
                os.replace(part, self._files["items"])
                self._jsonl = self._stack.enter_context(open(self._files["items"], "ab"))
            else:
                with open(part, "rb") as piece:
                    shutil.copyfileobj(piece, self._jsonl, COPY_BUFFER)
                part.unlink()
        if "items_parquet" in self._files:
            if self._parquet is None:
                import pyarrow.parquet as pq

                handle = self._stack.enter_context(open(self._files["items_parquet"], "xb"))
                self._parquet = self._stack.enter_context(pq.ParquetWriter(handle, table.schema))
            self._parquet.write_table(table)

    def __enter__(self) -> "ItemsWriter":
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is None:  # no part: an empty table, not a missing file
            if "items" in self._files and self._jsonl is None:
                open(self._files["items"], "xb").close()
            if "items_parquet" in self._files and self._parquet is None:
                import pyarrow.parquet as pq

                pq.write_table(self._layout.schema().empty_table(), self._files["items_parquet"])
        self._stack.__exit__(*exc)


JSONL_MAX_ROWS = 1_000_000  # above this, with pyarrow, the table is items.parquet only


def item_paths(directory: Path, rows: int) -> dict[str, Path]:
    """The per-item table's paths in ``directory`` for a table of ``rows`` items:
    ``items_parquet`` (items.parquet) with pyarrow, ``items`` (items.jsonl) without it or up to
    :data:`JSONL_MAX_ROWS` rows (about 300 bytes a row: 16 GB at 50M items)."""
    parquet = parquet_available()
    files = {"items": directory / ITEMS_JSONL} if rows <= JSONL_MAX_ROWS or not parquet else {}
    if parquet:
        files["items_parquet"] = directory / ITEMS_PARQUET
    return files


@dataclass
class SpilledItems:
    """A per-item table written to files (``items``: the JSONL, ``items_parquet``: the Parquet
    or None) part by part during a scan (chunk by chunk): :meth:`frame` reads it back,
    :meth:`write` copies it to an output directory."""

    files: dict[str, Path]

    def frame(self):
        import pandas as pd

        if self.files.get("items_parquet") is not None:
            return pd.read_parquet(self.files["items_parquet"])
        return pd.read_json(self.files["items"], lines=True, dtype=False)

    def write(self, out_dir, inputs: list[str]) -> dict:
        """The table's files copied (linked where possible, atomically) into ``out_dir``."""
        from cuelens.atomic import atomic_copy
        from cuelens.outputs import check_outputs

        files = {name: Path(out_dir) / path.name for name, path in self.files.items()}
        check_outputs(files.values(), inputs)
        for name, path in files.items():
            atomic_copy(self.files[name], path)
        return files


