"""Parquet shards through pyarrow (a dependency of the ``cuelens[ray]`` extra)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from cuelens.errors import UserError


def iter_parquet_rows(path: Path, batch_size: int) -> Iterator[dict]:
    """Rows of a Parquet file as dicts, one record batch in memory at a time."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError("reading Parquet needs pyarrow: pip install 'cuelens[ray]' "
                        "(or pip install pyarrow)") from None
    try:
        handle = pq.ParquetFile(path)
        for batch in handle.iter_batches(batch_size=batch_size):
            yield from batch.to_pylist()
    except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
        raise UserError(f"cannot read Parquet file: {exc}", path=str(path)) from None
