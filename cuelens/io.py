"""Small file helpers shared by every command: atomic writes, output sets, JSON/JSONL, and the
output-path rules checked before any computation (docs/robustness.md, "Outputs").

Temporaries are ``.NAME.cuelens-PID-XXXX.tmp`` in the target's directory; inside
``with output_set():`` their renames are deferred until the block ends without error.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import errno
import io
import json
import math
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain, repeat
from operator import itemgetter
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from cuelens.errors import UserError

PathLike = str | os.PathLike
_TEMP = re.compile(r"^\..*\.cuelens-(\d+)-[^/]*\.tmp$")
_pending: contextvars.ContextVar[list[tuple[Path, Path]] | None] = contextvars.ContextVar(
    "cuelens_pending_writes", default=None)
_created: contextvars.ContextVar[list[Path] | None] = contextvars.ContextVar(
    "cuelens_created_dirs", default=None)
NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


# ---------------------------------------------------------------- a full disk
def size_text(n: float) -> str:
    """``1.5 MB``-style size (decimal units)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def _existing_ancestor(path: PathLike) -> Path:
    """``path`` itself when it exists, else its nearest existing ancestor."""
    probe = Path(path)
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    return probe


def disk_full_error(path: PathLike, needed: int | None = None) -> UserError:
    """The one line for a full disk (or quota) while writing under ``path``: the space needed
    (a lower bound when known) and the space left (on its nearest existing ancestor's disk)."""
    try:
        free: int | None = shutil.disk_usage(_existing_ancestor(path)).free
    except OSError:
        free = None
    parts = ([f"at least {size_text(needed)} needed"] if needed else []) + \
        ([f"{size_text(free)} left"] if free is not None else [])
    return UserError(f"no space left on the device ({', '.join(parts)}); free some space or "
                     "write elsewhere", path=str(path))


@contextlib.contextmanager
def disk_space(path: PathLike, needed: int | None = None) -> Iterator[None]:
    """Turn a full disk (``ENOSPC``/``EDQUOT``) inside the block into :func:`disk_full_error`."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in NO_SPACE:
            raise
        raise disk_full_error(path, needed) from None


# ---------------------------------------------------------------- atomic writes
def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def clean_stale_temporaries(directory: Path) -> None:
    """Remove temporaries (files or staging directories) of dead cuelens processes."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        match = _TEMP.match(entry.name)
        if match and int(match.group(1)) != os.getpid() and not _alive(int(match.group(1))):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                Path(entry.path).unlink(missing_ok=True)


def _temp_name(path: Path) -> str:
    return f".{path.name}.cuelens-{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp"


def atomic_write_text(path: PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temp file in the same directory, then rename)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: PathLike, data: bytes) -> None:
    with atomic_open(path) as handle:
        handle.write(data)


@contextlib.contextmanager
def atomic_open(path: PathLike) -> Iterator[BinaryIO]:
    """A binary handle on a temporary file renamed to ``path`` when the block ends without an
    error (deferred inside :func:`output_set`): big outputs are streamed, still atomically."""
    path = Path(path)
    created = _make_parents(path.parent)
    clean_stale_temporaries(path.parent)
    tmp = path.parent / _temp_name(path)
    written = 0
    try:
        with open(tmp, "xb") as handle:
            try:
                yield handle
            finally:
                with contextlib.suppress(OSError, ValueError):
                    written = handle.tell()
        os.chmod(tmp, 0o666 & ~_umask())
        _commit(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if _created.get() is None:
            _remove_empty(created)
        if isinstance(exc, OSError) and exc.errno in NO_SPACE:
            raise disk_full_error(path, written or None) from None
        raise


def atomic_copy(source: PathLike, path: PathLike) -> None:
    """``source`` copied to ``path`` as :func:`atomic_open` writes it: a hard link where both lie
    on one file system (a large spilled table costs no second copy), else a streamed copy. For
    a ``source`` that is never written again (a fresh scan's spilled files)."""
    path = Path(path)
    _make_parents(path.parent)
    tmp = path.parent / _temp_name(path)
    try:
        os.link(source, tmp)
    except OSError:
        with open(source, "rb") as handle, atomic_open(path) as out:
            shutil.copyfileobj(handle, out)
        return
    _commit(tmp, path)


def _commit(tmp: Path, path: Path) -> None:
    """Rename a finished temporary file to ``path``, now or at the end of the
    :func:`output_set` it was written in."""
    pending = _pending.get()
    if pending is None:
        os.replace(tmp, path)
    else:
        pending.append((tmp, path))


def _make_parents(directory: Path) -> list[Path]:
    """Create ``directory`` and its missing ancestors; return those created (deepest last),
    also noted for :func:`output_set`, which removes them again when the set fails."""
    chain = [directory, *directory.parents]
    missing = chain[:chain.index(_existing_ancestor(directory))][::-1]
    directory.mkdir(parents=True, exist_ok=True)
    created = _created.get()
    if created is not None:
        created.extend(missing)
    return missing


def _remove_empty(directories: list[Path]) -> None:
    for directory in reversed(directories):
        try:
            directory.rmdir()
        except OSError:
            return


@contextlib.contextmanager
def atomic_open_text(path: PathLike) -> Iterator[TextIO]:
    """:func:`atomic_open` as UTF-8 text, newlines untranslated, for streamed text outputs."""
    with atomic_open(path) as handle:
        text = io.TextIOWrapper(handle, encoding="utf-8", newline="")
        yield text
        text.detach()  # flushed; ``atomic_open`` closes the file


@contextlib.contextmanager
def output_set() -> Iterator[None]:
    """Defer the final renames of every atomic write inside the block to its end: the whole set
    of files appears together, or (on an error) none does and the temporaries are removed."""
    if _pending.get() is not None:  # nested: the outermost block commits
        yield
        return
    pending: list[tuple[Path, Path]] = []
    created: list[Path] = []
    token, made = _pending.set(pending), _created.set(created)
    try:
        yield
    except BaseException:
        for tmp, _ in pending:
            tmp.unlink(missing_ok=True)
        _remove_empty(created)
        raise
    finally:
        _pending.reset(token)
        _created.reset(made)
    for tmp, path in pending:
        os.replace(tmp, path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def json_number(x: float, digits: int = 6) -> float | str | None:
    """The results.json encoding of a float (docs/results-schema.md, "Non-finite numbers"):
    finite → rounded to ``digits``; +∞ → ``"inf"``; −∞ → ``"-inf"``; NaN (undefined) → null."""
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return round(float(x), digits)


def read_number(value: float | str | None) -> float:
    """Inverse of :func:`json_number` (null → NaN; ``float`` reads ``"inf"``/``"-inf"``)."""
    return math.nan if value is None else float(value)


def format_number(value: float | str | None, digits: int = 3) -> str:
    """Display text of an encoded number: ``∞``/``−∞`` for infinities, ``n/a`` for null."""
    x = read_number(value)
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.{digits}f}"


_JSON = json.JSONEncoder(ensure_ascii=False, indent=2, allow_nan=False)


def dumps_json(obj: Any) -> str:
    """Deterministic JSON text: sorted keys are NOT used (field order is part of the schema),
    but floats are plain, NaN is rejected, and the output ends with a newline."""
    return "".join(json_pieces(obj)) + "\n"


def write_json(path: PathLike, obj: Any) -> None:
    """Write :func:`dumps_json` of ``obj`` atomically, streamed from its pieces (a big results
    file is never one string in memory); the bytes are the same."""
    with atomic_open_text(path) as text:
        text.writelines(json_pieces(obj))
        text.write("\n")


RECORDS_MIN = 64  # a list of at least this many records is encoded column by column
RECORDS_BATCH = 4096  # records encoded at once (their texts in memory) and joined into one piece


def json_pieces(obj: Any, level: int = 0) -> Iterator[str]:
    """The text of ``_JSON.encode(obj)`` (2-space indent) at nesting ``level``, in pieces.

    The standard encoder's indented mode is pure Python, one call per value; a long list of
    records (dicts with the same string keys in the same order, whose values are scalars or
    such records, as the cue table of results.json) is encoded column by column instead, by
    C-level maps (:func:`json_texts`). Dicts with string keys are walked here to find those
    lists; anything else is the encoder's own text, re-indented (a JSON text has no raw
    newline inside a string, so every ``\\n`` starts a line)."""
    if type(obj) is dict and obj and all(type(key) is str for key in obj):
        inner = "\n" + "  " * (level + 1)
        yield "{"
        for i, (key, value) in enumerate(obj.items()):
            yield f"{',' if i else ''}{inner}{encode_basestring(key)}: "
            yield from json_pieces(value, level + 1)
        yield "\n" + "  " * level + "}"
        return
    if type(obj) is list and len(obj) >= RECORDS_MIN and \
            (rows := _record_rows(obj[:RECORDS_BATCH], level + 1)) is not None:
        inner = "\n" + "  " * (level + 1)
        yield "[" + inner
        for start in range(0, len(obj), RECORDS_BATCH):  # a batch's texts in memory at a time
            if start:
                yield "," + inner
                rows = _record_rows(obj[start:start + RECORDS_BATCH], level + 1)
            if rows is None:  # a batch of another layout: its items one by one
                for i, item in enumerate(obj[start:start + RECORDS_BATCH]):
                    if i:
                        yield "," + inner
                    yield from json_pieces(item, level + 1)
            else:
                yield ("," + inner).join(rows)
        yield "\n" + "  " * level + "]"
        return
    indent = "\n" + "  " * level
    for piece in _JSON.iterencode(obj):
        yield piece.replace("\n", indent) if level else piece


def _record_rows(rows: list, level: int) -> list[str] | None:
    """The indented text of each record of ``rows`` at nesting ``level``, or None when they
    are not all records of one layout (or a float is out of range: the encoder's error)."""
    try:
        layout = _record_layout(rows, level)
    except ValueError:
        return None
    if layout is None:
        return None
    return list(map("".join, _interleaved(*layout)))


def _interleaved(texts: list[str], columns: list[list[str]]) -> Iterator[tuple[str, ...]]:
    """Per row, the pieces of its text: ``texts[0]``, its value of ``columns[0]``,
    ``texts[1]``, … ``texts[-1]`` (the constant texts between the columns' values)."""
    pieces: list[Iterable[str]] = [repeat(texts[0])]
    for column, text in zip(columns, texts[1:]):
        pieces += [column, repeat(text)]
    return zip(*pieces)


def _record_layout(rows: list, level: int) -> tuple[list[str], list[list[str]]] | None:
    """The constant texts of records ``rows`` at nesting ``level`` and, between them, the
    texts of each scalar column (one per record); None unless ``rows`` are records of one
    layout."""
    first = rows[0]
    if type(first) is not dict or not first or not all(type(key) is str for key in first):
        return None
    keys = tuple(first)
    if set(map(type, rows)) != {dict} or list(map(tuple, rows)).count(keys) != len(rows):
        return None
    inner = "\n" + "  " * (level + 1)
    texts, columns = ["{"], []
    for i, key in enumerate(keys):
        texts[-1] += f"{',' if i else ''}{inner}{encode_basestring(key)}: "
        column = list(map(itemgetter(key), rows))
        kinds = set(map(type, column))
        if kinds == {dict}:
            nested = _record_layout(column, level + 1)
            if nested is None:
                return None
            texts[-1] += nested[0][0]
            texts += nested[0][1:]
            columns += nested[1]
        elif kinds <= _SCALARS:
            columns.append(json_texts(column))
            texts.append("")
        else:
            return None
    texts[-1] += "\n" + "  " * level + "}"
    return texts, columns


_JSON_LINE = json.JSONEncoder(ensure_ascii=False, allow_nan=False)  # json.dumps's bytes, one encoder


def jsonl_line(row: dict) -> str:
    """One JSONL line (with its newline) as :func:`write_jsonl` writes it; NaN/Infinity are
    refused (they are not JSON)."""
    return _JSON_LINE.encode(row) + "\n"


_JSON_CONSTANTS = {True: "true", False: "false", None: "null"}
_SCALARS = {str, int, float, bool, type(None)}
_FLOAT_NULLS = {"nan": "null", "None": "null"}  # repr of NaN / None in a float column


def json_texts(values: Sequence, nan_as_null: bool = False) -> list[str]:
    """The JSON text of each of ``values`` as :func:`jsonl_line` writes it inside a row (float
    NaN as ``null`` when ``nan_as_null``, else refused like infinities); a column of one plain
    type (str, int, float, bool or None) is encoded by C-level maps, not value by value."""
    kinds = set(map(type, values))
    if kinds <= {str}:
        return list(map(encode_basestring, values))
    if kinds <= {bool, type(None)}:
        return list(map(_JSON_CONSTANTS.__getitem__, values))
    if kinds <= {int}:
        return list(map(int.__repr__, values))
    if kinds <= {float, type(None)}:
        return _float_texts(values, nan_as_null)
    return [_JSON_LINE.encode(None if nan_as_null and isinstance(v, float) and v != v else v)
            for v in values]


def _float_texts(values: Sequence[float | None], nan_as_null: bool) -> list[str]:
    """Floats (or None) as JSON: their repr, like the encoder's."""
    texts = list(map(repr, values))
    odd = {"inf", "-inf", "nan", "None"}.intersection(texts)
    if not odd:
        return texts
    if odd & {"inf", "-inf"} or ("nan" in odd and not nan_as_null):
        raise ValueError("Out of range float values are not JSON compliant")
    return [_FLOAT_NULLS.get(text, text) for text in texts]


def jsonl_lines(columns: Mapping[str, Sequence], nan_as_null: bool = False) -> str:
    """The JSONL lines of the rows of equal-length ``columns`` (row ``i``: each name with its
    ``i``-th value), the text :func:`jsonl_line` writes for each row dict, built column by
    column (:func:`json_texts`) and interleaved with the constant keys."""
    if not columns:
        return ""
    keys = [f"{', ' if k else '{'}{encode_basestring(name)}: " for k, name in enumerate(columns)]
    return "".join(chain.from_iterable(_interleaved(
        [*keys, "}\n"], [json_texts(values, nan_as_null) for values in columns.values()])))


def write_jsonl(path: PathLike, rows: Iterable[dict]) -> None:
    """One JSON object per line; NaN/Infinity are refused (they are not JSON)."""
    atomic_write_text(path, "".join(map(jsonl_line, rows)))


def write_lines(path: PathLike, lines: Iterable[str]) -> None:
    atomic_write_text(path, "".join(line + "\n" for line in lines))


# ---------------------------------------------------------------- output-path rules
def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)  # hard links
    except OSError:
        return False


def _inside(path: Path, directory: Path) -> bool:
    return directory.is_dir() and path.resolve().is_relative_to(directory.resolve())


def check_outputs(outputs: Iterable[PathLike | None], inputs: Iterable[PathLike | None]) -> None:
    """Refuse an output that is an input (or inside an input directory) or another output of the
    same run, or whose directory cannot be written; ``None`` entries are ignored. Symlinks and
    hard links are resolved."""
    ins = [Path(p) for p in inputs if p is not None]
    outs = [Path(p) for p in outputs if p is not None]
    for k, out in enumerate(outs):
        if out.is_dir():
            raise UserError("output path is a directory; give a file path", path=str(out))
        check_writable_dir(out.parent)
        for item in ins:
            if _same_file(out, item):
                raise UserError(f"output path is the same as an input file ({item}); choose "
                                "another output path", path=str(out))
            if _inside(out, item):
                raise UserError(f"output path is inside the input directory {item}; choose "
                                "another output path", path=str(out))
        for other in outs[:k]:
            if _same_file(out, other):
                raise UserError(f"two outputs of this run would be the same file ({other}); "
                                "give them different paths", path=str(out))


def check_writable_dir(directory: PathLike) -> None:
    """Fail now, before any computation, when ``directory`` cannot be created or written: its
    nearest existing ancestor must be a writable directory (nothing is created)."""
    directory = Path(directory)
    probe = _existing_ancestor(directory)
    if not probe.is_dir():
        raise UserError(f"cannot write here: {probe} is not a directory", path=str(directory))
    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        raise UserError(f"cannot write here: {exc.strerror or exc}", path=str(directory)) \
            from None


def check_replaceable_dir(directory: PathLike, overwrite: bool) -> None:
    """A directory output (a model) may be new or empty; a non-empty one needs ``overwrite``."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise UserError("output exists and is not a directory; choose another --out",
                        path=str(directory))
    if directory.is_dir() and any(directory.iterdir()) and not overwrite:
        raise UserError("output exists and is not an empty directory; choose another --out or "
                        "pass --overwrite", path=str(directory))
    check_writable_dir(directory)


def check_model_dir(directory: PathLike, inputs: Iterable[PathLike | None],
                    overwrite: bool) -> None:
    """A model output directory: replaceable (:func:`check_replaceable_dir`), not an input and
    holding no input (it is replaced as a whole)."""
    check_replaceable_dir(directory, overwrite)
    _check_holds_no_input(Path(directory), inputs)


def check_output_dir(directory: PathLike, inputs: Iterable[PathLike | None],
                     names: Iterable[str]) -> None:
    """A directory that a command replaces as a whole (:func:`replace_directory`): new, or
    holding only the entries ``names`` (its previous output), not an input and holding none."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise UserError("output exists and is not a directory; choose another --out",
                        path=str(directory))
    _check_holds_no_input(directory, inputs)
    if directory.is_dir():
        owned = set(names)
        foreign = sorted(p.name for p in directory.iterdir()
                         if p.name not in owned and not _TEMP.match(p.name))
        if foreign:
            raise UserError(f"the output directory holds {', '.join(foreign[:3])}"
                            f"{' …' if len(foreign) > 3 else ''}, which this command did not "
                            "write and would replace; choose another --out",
                            path=str(directory))
    check_writable_dir(directory)


def _check_holds_no_input(directory: Path, inputs: Iterable[PathLike | None]) -> None:
    for item in inputs:
        if item is not None and (_same_file(directory, Path(item))
                                 or Path(item).resolve().is_relative_to(directory.resolve())):
            raise UserError(f"the output directory holds the input {item}; choose another --out",
                            path=str(directory))


def replace_directory(directory: PathLike, build: Callable[[Path], None]) -> None:
    """Build a directory in a staging directory next to ``directory`` (``build(staging)``) and
    move it into place, replacing an old one only at the end, in one atomic exchange where the
    system has one (Linux): a run stopped at any point (an error, Ctrl-C, SIGKILL) leaves the
    old directory whole (the checks are :func:`check_replaceable_dir`, :func:`check_output_dir`)."""
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temporaries(directory.parent)
    staging = directory.parent / _temp_name(directory)
    old = directory.parent / _temp_name(directory)
    staging.mkdir()
    try:
        build(staging)
        if directory.exists() and _exchange(staging, directory):
            old = staging  # the old directory, now under the staging name
        else:
            if directory.exists():
                directory.rename(old)
            staging.rename(directory)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if old.exists() and not directory.exists():
            old.rename(directory)
        raise
    shutil.rmtree(old, ignore_errors=True)


_RENAME_EXCHANGE, _AT_FDCWD = 2, -100  # linux/fs.h, fcntl.h


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where the
    system or file system has no such call."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def null_non_finite(rows: list[dict]) -> list[dict]:
    """Rows with non-finite float values as ``null`` (log-probabilities of ``-inf``), which
    JSON cannot hold."""
    return [{k: None if isinstance(v, float) and not math.isfinite(v) else v
             for k, v in row.items()} for row in rows]


def append_jsonl(path: str | os.PathLike, row: dict) -> None:
    """Append one JSON line with a single ``O_APPEND`` write, flushed to disk: an interrupted
    run keeps every line it finished (see :func:`read_jsonl_lines` for a torn last line)."""
    data = jsonl_line(row).encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_jsonl_lines(path: str | os.PathLike) -> list[dict]:
    """The complete JSON-object lines of a file written by :func:`append_jsonl`; reading stops
    at the first line that is not a whole JSON object (a write cut short)."""
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                row = json.loads(line) if line.endswith("\n") else None
            except json.JSONDecodeError:
                row = None
            if not isinstance(row, dict):
                break
            rows.append(row)
    return rows


# ------------------------------------------------------------------------------ Markdown text
_MARKDOWN_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MARKDOWN_SPECIAL = re.compile(r"[\\`*_\[\]#|~$!]")
_LINE_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]+")
_LIST_MARKER = re.compile(r"^([-+=]|\d+(?=[.)]))")


def markdown_text(text: object) -> str:
    """Untrusted text (a label, a file name, an example, a cue word) as literal Markdown inline
    text, for card.md and any other Markdown writer: line breaks and control characters become
    spaces; ``& < >`` become HTML entities (no raw HTML, no autolink); ``\\ ` * _ [ ] # | ~ $ !``
    are backslash-escaped (no code span, emphasis, link, image, heading, table cell or math); a
    leading list marker is escaped too. Rendered, it reads as the original text on one line.

    >>> markdown_text("<img src=x> [x](javascript:y)")
    '&lt;img src=x&gt; \\\\[x\\\\](javascript:y)'
    >>> markdown_text("1. ## heading")
    '1\\\\. \\\\#\\\\# heading'
    """
    one_line = _LINE_BREAKS.sub(" ", str(text)).strip()
    escaped = "".join(_MARKDOWN_ENTITIES.get(ch, ch) for ch in one_line)
    escaped = _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(), escaped)
    return _LIST_MARKER.sub(lambda m: m.group() + "\\" if m.group().isdigit()
                            else "\\" + m.group(), escaped)
