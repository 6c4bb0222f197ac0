"""Small file helpers shared by every command: atomic writes, JSON/JSONL, output-path safety."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cuelens.errors import UserError


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temp file in the same directory, then rename)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give outputs normal permissions
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def dumps_json(obj: Any) -> str:
    """Deterministic JSON text: sorted keys are NOT used (field order is part of the schema),
    but floats are plain, NaN is rejected, and the output ends with a newline."""
    return json.dumps(obj, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def write_json(path: str | os.PathLike, obj: Any) -> None:
    atomic_write_text(path, dumps_json(obj))


def write_jsonl(path: str | os.PathLike, rows: Iterable[dict]) -> None:
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def write_lines(path: str | os.PathLike, lines: Iterable[str]) -> None:
    atomic_write_text(path, "".join(line + "\n" for line in lines))


def ensure_not_input(output: str | os.PathLike, inputs: Iterable[str | os.PathLike]) -> None:
    """Refuse to write an output file over one of the inputs."""
    out = Path(output).resolve()
    for item in inputs:
        if item is not None and Path(item).resolve() == out:
            raise UserError("output path is the same as an input file; choose another --out",
                            path=str(output))
