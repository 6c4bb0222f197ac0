"""Atomic files (docs/robustness.md, "Outputs"): every output is written to a temporary in its
directory and renamed into place; inside ``with output_set():`` the renames wait until the block
ends without error, so a run's files appear together or not at all; a directory output is built
beside the old one and exchanged (:func:`replace_directory`); a full disk is one clear error.

Temporaries are ``.NAME.cuelens-PID-XXXX.tmp`` in the target's directory.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import errno
import io
import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, TextIO

from cuelens.errors import UserError


PathLike = str | os.PathLike
TEMPORARY = re.compile(r"^\..*\.cuelens-(\d+)-[^/]*\.tmp$")
_pending: contextvars.ContextVar[list[tuple[Path, Path]] | None] = contextvars.ContextVar(
    "cuelens_pending_writes", default=None)
_created: contextvars.ContextVar[list[Path] | None] = contextvars.ContextVar(
    "cuelens_created_dirs", default=None)
NO_SPACE = (errno.ENOSPC, errno.EDQUOT)



# ---------------------------------------------------------------- a full disk
def size_text(n: float) -> str:
    """``1.5 MB``-style size (decimal units)."""
    for unit in ("B", "kB", "MB", "GB"):
        if abs(n) < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def existing_ancestor(path: PathLike) -> Path:
    """``path`` itself when it exists, else its nearest existing ancestor."""
    probe = Path(path)
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    return probe


def disk_full_error(path: PathLike, needed: int | None = None) -> UserError:
    """The one line for a full disk (or quota) while writing under ``path``: the space needed
    (a lower bound when known) and the space left (on its nearest existing ancestor's disk)."""
    try:
        free: int | None = shutil.disk_usage(existing_ancestor(path)).free
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
        match = TEMPORARY.match(entry.name)
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
        write_block(handle, path, data)


def write_block(handle: BinaryIO, path: PathLike, data: bytes) -> None:
    """Write ``data`` to ``handle`` (a file being written to ``path``): a full disk is
    :func:`disk_full_error` with the end of this block as the space needed, since a block that
    does not fit fails whole and leaves the handle's position where it was."""
    with disk_space(path, handle.tell() + len(data)):
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
    missing = chain[:chain.index(existing_ancestor(directory))][::-1]
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


def write_lines(path: PathLike, lines: Iterable[str]) -> None:
    """Write ``lines`` (each ending in a newline) atomically."""
    atomic_write_text(path, "".join(line + "\n" for line in lines))


# ---------------------------------------------------------------- directory outputs
def replace_directory(directory: PathLike, build: Callable[[Path], None]) -> None:
    """Build a directory in a staging directory next to ``directory`` (``build(staging)``) and
    move it into place, replacing an old one only at the end, in one atomic exchange where the
    system has one (Linux): a run stopped at any point (an error, Ctrl-C, SIGKILL) leaves the
    old directory whole (the checks are :func:`cuelens.outputs.check_replaceable_dir`,
    :func:`cuelens.outputs.check_output_dir`)."""
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
