"""Read per-model sentence log-probabilities for natural pair selection (docs/methods.md §9):
an ``.npz`` (one float array per model, loaded with ``allow_pickle=False``) or a ``.jsonl``
file, as the "Input" item of docs/contrast.md describes them; ``null`` means ``-inf``.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from cuelens.data.readers import check_regular_file, jsonl_objects
from cuelens.errors import UserError


#: Fields of a .jsonl line that may hold its ``{model: log-probability}`` object (``logprob``:
#: what ``audit score --out`` writes).
SCORE_FIELDS = ("scores", "logprobs", "logprob")


def parse_models(models: str | None) -> list[str] | None:
    """``"m1,m2"`` → ``["m1", "m2"]`` (``None`` when not given); duplicates are an error."""
    if not models:
        return None
    names = [m.strip() for m in models.split(",") if m.strip()]
    if len(set(names)) != len(names):
        raise UserError(f"--models lists a model twice: {models}")
    return names


def load_npz(path: Path, models: list[str] | None) -> tuple[list[str], np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as data:
            names = models or list(data.keys())
            missing = [m for m in names if m not in data]
            if missing:
                raise UserError(f"no array for model(s) {', '.join(missing)}; the file has "
                                f"{', '.join(data.keys())}", path=str(path))
            columns = [np.asarray(data[m], dtype=np.float64) for m in names]
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise UserError(f"cannot read .npz file: {exc}", path=str(path)) from None
    shapes = {c.shape for c in columns}
    if len(shapes) != 1 or len(next(iter(shapes))) != 1:
        raise UserError(f"model arrays must be 1-D and of equal length, got {sorted(shapes)}",
                        path=str(path))
    return names, np.column_stack(columns)


def load_jsonl(path: Path, models: list[str] | None
               ) -> tuple[list[str], np.ndarray, list[str]]:
    texts, rows, names = [], [], models
    for line_no, record in jsonl_objects(path):
        text = record.get("text", record.get("sentence"))
        if not isinstance(text, str):
            raise UserError('missing "text"', path=str(path), line=line_no)
        scores = next((record[k] for k in SCORE_FIELDS if isinstance(record.get(k), dict)),
                      record)
        if names is None:
            names = [k for k, v in scores.items()
                     if k not in ("text", "sentence", "id") and (
                         v is None or isinstance(v, (int, float)))]
            if not names:
                raise UserError("no log-probabilities: expected numbers keyed by model name, "
                                f"at the top level or under {' / '.join(SCORE_FIELDS)}",
                                path=str(path), line=line_no)
        row = []
        for m in names:
            value = scores.get(m, "missing")
            if value is None:
                value = -np.inf
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise UserError(f"no numeric log-probability for model {m!r}",
                                path=str(path), line=line_no)
            row.append(float(value))
        texts.append(text)
        rows.append(row)
    if not rows or names is None:
        raise UserError("no sentences", path=str(path))
    return names, np.asarray(rows, dtype=np.float64), texts


def load_scores(path: Path, models: list[str] | None
                ) -> tuple[list[str], np.ndarray, list[str] | None]:
    """``(model names, (n, M) log-prob matrix, texts or None)`` from an .npz or .jsonl file."""
    path = check_regular_file(path)
    if path.suffix == ".npz":
        names, matrix = load_npz(path, models)
        texts = None
    elif path.suffix in (".jsonl", ".json"):
        names, matrix, texts = load_jsonl(path, models)
    else:
        raise UserError("expected a .npz or .jsonl scores file", path=str(path))
    _check_rankable(names, matrix, path)
    return names, matrix, texts


def _check_rankable(names: list[str], matrix: np.ndarray, path: Path) -> None:
    """A model whose every score is −∞ (or NaN) ranks nothing: one error naming it."""
    finite = np.isfinite(np.asarray(matrix, dtype=np.float64)).any(axis=0)
    for name, ok in zip(names, np.atleast_1d(finite).tolist()):
        if not ok:
            raise UserError(f"every score of model {name!r} is -inf or NaN (probability 0 for "
                            "every sentence): nothing to rank", path=str(path))
