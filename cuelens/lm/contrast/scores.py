"""Read per-model sentence log-probabilities for natural pair selection (docs/methods.md §9):
an ``.npz`` (one float array per model, loaded with ``allow_pickle=False``) or a ``.jsonl``
file, as the "Input" item of docs/contrast.md describes them; ``null`` means ``-inf``.
"""

from __future__ import annotations

import unicodedata
import zipfile
from pathlib import Path

import numpy as np

from cuelens.data.readers import check_regular_file, jsonl_objects
from cuelens.errors import UserError
from cuelens.lm.text import JSONL_SUFFIXES, suffix
from cuelens.wording import plural


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
    for name, column in zip(names, columns):
        nan = np.flatnonzero(np.isnan(column))
        if len(nan):   # fractional_ranks said 'log-probabilities contain NaN (column 0)'
            more = f" and {len(nan) - 1:,} more" if len(nan) > 1 else ""
            raise UserError(f"model {name!r} has NaN at index {nan[0]} (the sentence on line "
                            f"{nan[0] + 1}){more}: a log-probability is a number, or -inf for "
                            "probability 0", path=str(path))
    return names, np.column_stack(columns)


def load_jsonl(path: Path, models: list[str] | None
               ) -> tuple[list[str], np.ndarray, list[str], np.ndarray | None]:
    """``(names, matrix, texts, corpus index of each row or None)`` of a .jsonl scores file."""
    texts, rows, names, lines, numbers = [], [], models, [], []
    for line_no, record in jsonl_objects(path):
        text = record.get("text", record.get("sentence"))
        if not isinstance(text, str):
            raise UserError('no "text" or "sentence" field holding the scored sentence as text; '
                            f'the fields of this line are {_listed(record)}', path=str(path),
                            line=line_no)
        scores = next((record[k] for k in SCORE_FIELDS if isinstance(record.get(k), dict)),
                      record)
        if names is None:
            names = [k for k, v in scores.items()
                     if k not in ("text", "sentence", "id", "line") and (
                         v is None or isinstance(v, (int, float)))]
            if not names:
                raise UserError("no log-probabilities: expected numbers keyed by model name, "
                                f"at the top level or under {' / '.join(SCORE_FIELDS)}",
                                path=str(path), line=line_no)
        row = []
        for m in names:
            if m not in scores:
                named = "named by --models" if models else "scored on the first line"
                raise UserError(f"no log-probability for model {m!r} ({named}); this line has "
                                f"{_listed(scores)}", path=str(path), line=line_no)
            value = scores[m]
            if value is None:
                value = -np.inf
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise UserError(f"no numeric log-probability for model {m!r}",
                                path=str(path), line=line_no)
            row.append(float(value))
        texts.append(text)
        rows.append(row)
        lines.append(record.get("line"))
        numbers.append(line_no)
    if not rows or names is None:
        raise UserError("no sentences", path=str(path))
    return names, np.asarray(rows, dtype=np.float64), texts, _corpus_indices(lines, numbers,
                                                                             path)


def _listed(fields: dict) -> str:
    """The keys of a JSON object as a message lists them: ``"x", "y"`` (``none``)."""
    return ", ".join(f'"{key}"' for key in fields) or "none"


def _corpus_indices(lines: list, numbers: list[int], path: Path) -> np.ndarray | None:
    """Each row's corpus index: its ``"line"`` − 1 (``audit score --out`` writes the input line
    a sentence came from, its blank lines counted), or ``None`` when no row has a line."""
    if all(line is None for line in lines):
        return None
    seen: dict[int, int] = {}
    for line, number in zip(lines, numbers):
        if isinstance(line, bool) or not isinstance(line, int) or line < 1:
            raise UserError(f'"line" must be a line number (a whole number from 1), not '
                            f'{line!r}' + (" (other lines have one)" if line is None else ""),
                            path=str(path), line=number)
        if line in seen:
            raise UserError(f"line {line} is scored twice (also on line {seen[line]})",
                            path=str(path), line=number)
        seen[line] = number
    return np.asarray(lines, dtype=np.int64) - 1


def load_scores(path: Path, models: list[str] | None
                ) -> tuple[list[str], np.ndarray, list[str] | None, np.ndarray | None]:
    """``(model names, (n, M) log-prob matrix, texts or None, corpus index of each row or
    None)`` from an .npz or .jsonl file; ``None`` indices: row *i* is corpus line index *i*."""
    path = check_regular_file(path)
    if path.suffix == ".npz":
        names, matrix = load_npz(path, models)
        texts, indices = None, None
    elif suffix(path) in JSONL_SUFFIXES:     # also gzipped, as audit score --out writes it
        names, matrix, texts, indices = load_jsonl(path, models)
    else:
        raise UserError("expected a .npz or .jsonl scores file (optionally .jsonl.gz)",
                        path=str(path))
    _check_rankable(names, matrix, path)
    return names, matrix, texts, indices


def on_corpus_lines(matrix: np.ndarray, indices: np.ndarray | None, texts: list[str] | None,
                    corpus: list[str], path: Path, corpus_path: Path) -> np.ndarray:
    """The rows of ``matrix`` laid out on the lines of ``corpus`` (NaN on its blank lines).

    Row *r* scores corpus line index ``indices[r]`` (row *r* without indices, when the counts
    must agree); its text, when the scores file has one, must be that line's, and every
    sentence of the corpus needs a score: otherwise one error naming the line."""
    if indices is None:
        if len(corpus) != len(matrix):
            raise UserError(f"{len(corpus)} sentences but {len(matrix)} scores",
                            path=str(corpus_path))
        indices = np.arange(len(matrix))
    laid_out = np.full((len(corpus), matrix.shape[1]), np.nan)
    scored = np.zeros(len(corpus), dtype=bool)
    for row, index in enumerate(indices.tolist()):
        if index >= len(corpus):
            raise UserError(f"{path} scores line {index + 1}, but the file's last sentence "
                            f"is on line {len(corpus)}", path=str(corpus_path))
        if texts is not None and not _same_text(texts[row], corpus[index]):
            raise UserError(f"{path} scores another sentence for this line: "
                            f"{texts[row].strip()[:60]!r}, not {corpus[index][:60]!r}",
                            path=str(corpus_path), line=index + 1)
        laid_out[index], scored[index] = matrix[row], True
    unscored = [i for i, text in enumerate(corpus) if text and not scored[i]]
    if unscored:
        raise UserError(f"no score for this sentence in {path}"
                        + (f" ({plural(len(unscored), 'line')} without one)"
                           if len(unscored) > 1 else ""),
                        path=str(corpus_path), line=unscored[0] + 1)
    return laid_out


def _same_text(a: str, b: str) -> bool:
    """Whether two lines are the same sentence: stripped, in NFC (a decomposed copy is one)."""
    return unicodedata.normalize("NFC", a.strip()) == unicodedata.normalize("NFC", b.strip())


def _check_rankable(names: list[str], matrix: np.ndarray, path: Path) -> None:
    """A model whose every score is −∞ (or NaN) ranks nothing: one error naming it."""
    finite = np.isfinite(np.asarray(matrix, dtype=np.float64)).any(axis=0)
    for name, ok in zip(names, np.atleast_1d(finite).tolist()):
        if not ok:
            raise UserError(f"every score of model {name!r} is -inf or NaN (probability 0 for "
                            "every sentence): nothing to rank", path=str(path))
