"""Bounded reading of evaluation-log files: JSONL lines, whole JSON documents and zip members, each
capped at :func:`size_cap` bytes; Zstandard members through :mod:`zipfile` (Python ≥ 3.14) or the
optional ``zstandard`` package (docs/eval-logs.md, "Size caps and damaged files")."""

from __future__ import annotations

import gzip
import io
import lzma
import os
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cuelens.data.readers import LineError, check_regular_file, parse_json
from cuelens.errors import UserError

DEFAULT_CAP_MB = 256
CAP_ENV = "CUELENS_MAX_LOG_MB"
ZSTANDARD = 93  # zip compression method id of Zstandard
_CHUNK = 1 << 20
_LOCAL_HEADER = struct.Struct("<4s5H3I2H")  # zip local file header (30 bytes)


def size_cap(cap: int | None = None) -> int:
    """The cap in bytes: ``cap`` when given, else ``$CUELENS_MAX_LOG_MB`` MiB, else the default."""
    if cap is not None:
        return cap
    value = os.environ.get(CAP_ENV, "")
    try:
        mb = float(value) if value.strip() else DEFAULT_CAP_MB
    except ValueError:
        raise UserError(f"{CAP_ENV} must be a number of MiB, got {value!r}") from None
    if mb <= 0:
        raise UserError(f"{CAP_ENV} must be positive, got {value!r}")
    return int(mb * 2**20)


def _too_large(what: str, cap: int) -> str:
    return (f"{what} is larger than the {cap / 2**20:g} MiB cap for one log unit; raise it with "
            f"{CAP_ENV}=MiB if the file is trusted")


# ---------------------------------------------------------------- JSONL lines
def _open_binary(path: Path):
    return gzip.open(path, "rb") if path.suffix.lower() == ".gz" else open(path, "rb")


def log_lines(path: str | Path, cap: int | None = None) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each non-blank line of a (gzipped) UTF-8 JSONL log; a line
    longer than the cap is refused as soon as the cap is passed, never read whole."""
    path = check_regular_file(path)
    limit = size_cap(cap)
    try:
        with _open_binary(path) as handle:
            number = 0
            while True:
                data = handle.readline(limit + 1)
                if not data:
                    return
                number += 1
                if len(data) > limit:
                    raise UserError(_too_large("the line", limit), path=str(path), line=number)
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise UserError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x})",
                                    path=str(path), line=number) from None
                text = text.removeprefix("\ufeff") if number == 1 else text
                if text.strip():
                    yield number, text.rstrip("\r\n")
    except (OSError, EOFError, zlib.error) as exc:
        raise UserError(f"cannot read the file ({exc})", path=str(path)) from None


def log_objects(path: str | Path, cap: int | None = None) -> Iterator[tuple[int, dict]]:
    """``(line, object)`` of a JSONL log (:func:`log_lines`), raising on the first bad line."""
    for number, text in log_lines(path, cap):
        record = parse_json(text, path, number)
        if not isinstance(record, dict):
            raise LineError("expected a JSON object per line", path=str(path), line=number)
        yield number, record


def read_log_json(path: str | Path, cap: int | None = None) -> Any:
    """A whole-file JSON log, refused before reading when the file is over the cap."""
    path = check_regular_file(path)
    limit = size_cap(cap)
    if path.stat().st_size > limit:
        raise UserError(_too_large("the file", limit), path=str(path))
    data = path.read_bytes()
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise UserError(f"not valid UTF-8 (byte offset {exc.start})", path=str(path)) from None
    return parse_json(text, path)


# ---------------------------------------------------------------- zip members
def _zstd_reader(raw: io.BytesIO, where: str):
    try:
        import zstandard
    except ImportError:
        raise UserError(f"{where} is Zstandard-compressed (what current Inspect writes); "
                        "install the extra: pip install 'cuelens[logs]' (the zstandard "
                        "package), or use Python ≥ 3.14") from None
    return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)


def _raw_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> io.BytesIO:
    """The compressed bytes of ``info`` (read past the local header, at most its declared
    compressed size)."""
    handle = archive.fp
    assert handle is not None
    handle.seek(info.header_offset)
    fields = _LOCAL_HEADER.unpack(handle.read(_LOCAL_HEADER.size))
    if fields[0] != b"PK\x03\x04":
        raise zipfile.BadZipFile("bad local file header")
    handle.seek(fields[-2] + fields[-1], io.SEEK_CUR)  # file name and extra field
    return io.BytesIO(handle.read(info.compress_size))


def _stream(archive: zipfile.ZipFile, info: zipfile.ZipInfo, where: str):
    if info.compress_type == ZSTANDARD and not hasattr(zipfile, "ZIP_ZSTANDARD"):
        return _zstd_reader(_raw_member(archive, info), where)
    return archive.open(info)


def _damage_errors() -> tuple[type[BaseException], ...]:
    """What a damaged member raises while it is inflated (bz2 raises OSError)."""
    errors: list[type[BaseException]] = [zipfile.BadZipFile, zlib.error, lzma.LZMAError,
                                         OSError, EOFError, ValueError]
    try:
        import zstandard

        errors.append(zstandard.ZstdError)
    except ImportError:
        pass
    return tuple(errors)


def member_bytes(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: str | Path,
                 cap: int | None = None) -> bytes:
    """The decompressed bytes of one member, capped (refused on its declared size, stopped as
    soon as it passes the cap); CRC-checked."""
    limit = size_cap(cap)
    where = f"{path}:{info.filename}"
    if info.file_size > limit:
        raise UserError(_too_large(f"member {info.filename} ({info.file_size:,} bytes)", limit),
                        path=str(path))
    parts, size = [], 0
    try:
        with _stream(archive, info, where) as stream:
            while chunk := stream.read(min(_CHUNK, limit + 1 - size)):
                parts.append(chunk)
                size += len(chunk)
                if size > limit:
                    raise UserError(_too_large(f"member {info.filename} (inflating past its "
                                               f"declared {info.file_size:,} bytes)", limit),
                                    path=str(path))
    except NotImplementedError:
        raise UserError(f"member {info.filename} uses zip compression method "
                        f"{info.compress_type}, which cannot be read", path=str(path)) from None
    except _damage_errors() as exc:
        raise UserError(f"member {info.filename} is damaged ({exc})", path=str(path)) from None
    data = b"".join(parts)
    if info.compress_type == ZSTANDARD and zlib.crc32(data) != info.CRC:
        raise UserError(f"member {info.filename} is damaged (CRC mismatch)", path=str(path))
    return data


def member_json(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: str | Path,
                cap: int | None = None) -> Any:
    """One member parsed as JSON (:func:`member_bytes`)."""
    data = member_bytes(archive, info, path, cap)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"member {info.filename} is not valid UTF-8 (byte offset {exc.start})",
                        path=str(path)) from None
    return parse_json(text, f"{path}:{info.filename}")


ZIP_MAGIC = b"PK\x03\x04"


def is_archive(path: str | Path) -> bool:
    """Whether ``path`` is a zip archive (an Inspect ``.eval`` log); a file that starts like one
    but has no end (a copy or download cut short) is one clear error, not read as text."""
    if zipfile.is_zipfile(path):
        return True
    with open(path, "rb") as handle:
        if handle.read(len(ZIP_MAGIC)) == ZIP_MAGIC:
            raise UserError("truncated archive: the file starts as a zip (an Inspect .eval "
                            "log) but its end is missing; copy or download it again",
                            path=str(path))
    return False


def open_archive(path: str | Path) -> zipfile.ZipFile:
    """The zip archive at ``path``; a damaged directory is one clear error."""
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise UserError(f"not a readable zip archive ({exc})", path=str(path)) from None

