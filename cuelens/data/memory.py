"""In-memory data sources for the Python API — a DataFrame, a list of dicts, a Hugging Face
``Dataset``/``DatasetDict`` or a dict of splits — normalised as files are (docs/api.md)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from cuelens.data.dataset import Dataset, Split
from cuelens.data.loading import assemble_dataset
from cuelens.data.readers import LineError
from cuelens.data.schema import FieldMap
from cuelens.data.splits import NO_RECORD_ITEMS, ROLES, build_split, claim_role
from cuelens.errors import UserError


def _plain(value: Any) -> Any:
    """numpy scalars → Python; NaN (pandas' missing value) → None; numpy arrays (the list
    columns of ``pd.read_parquet`` and ``datasets``' ``to_pandas``) → lists, inside dicts too."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or getattr(value, "ndim", 0) > 0:
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            return value
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _record_rows(records, path: str) -> Iterator[tuple[int, str, dict | LineError]]:
    """``(record number, JSON text, record)``; a record that is not a dict is a
    :class:`LineError`, as a file's line that is no object (``skip_bad`` skips it)."""
    for number, record in enumerate(records, start=1):
        if not isinstance(record, Mapping):
            yield number, "", LineError(f"record {number} is of type {type(record).__name__}, "
                                        "not a dict", path=path, line=number)
            continue
        row = {str(k): _plain(v) for k, v in record.items()}
        yield number, json.dumps(row, ensure_ascii=False, default=str), row


def _records(source: Any, path: str) -> list | None:
    """The records of a DataFrame (its named index levels, e.g. ``set_index("id")``, as fields;
    two columns of one name are a :class:`UserError`) or a list of dicts (None for other
    sources); ``path``: the split's label for messages."""
    if hasattr(source, "to_dict") and hasattr(source, "columns"):  # pandas.DataFrame
        repeated = source.columns[source.columns.duplicated()]
        if len(repeated):  # to_dict kept one of them, silently
            raise UserError(f"the DataFrame has two columns named {str(repeated[0])!r}: rename "
                            "one", path=path)
        named = [n for n in source.index.names if n is not None and n not in source.columns]
        return (source.reset_index(level=named) if named else source).to_dict("records")
    if isinstance(source, (list, tuple)):
        return list(source)
    return None


def memory_split(source: Any, path: str, role: str, fields: FieldMap, skip_bad: bool) -> Split:
    """One split from a DataFrame, a list of dicts or a Hugging Face ``Dataset``."""
    if type(source).__module__.startswith("datasets") and hasattr(source, "features"):
        from cuelens.data.hf import hf_split

        return hf_split(source, path, role, fields, skip_bad)
    if isinstance(source, (str, Path)):
        raise UserError(f"a path ({str(source)!r}) among in-memory data: give paths as the "
                        "data or as both train= and test=, not inside a dict or next to a "
                        "DataFrame or list", path=path)
    records = _records(source, path)
    if records is None:
        raise UserError(f"cannot read data from a {type(source).__name__}: give a path, a "
                        "pandas.DataFrame, a list of dicts or a datasets.Dataset")
    if not records:  # not build_split's 'the file is empty': there is no file
        kind = "DataFrame has no rows" if hasattr(source, "columns") else \
            f"{type(source).__name__} of records is empty"
        raise UserError(f"no items: the {kind}", path=path)
    return build_split(_record_rows(records, path), Path(path), role, fields, None, skip_bad,
                       empty=NO_RECORD_ITEMS)


def is_memory_source(source: Any) -> bool:
    """True for the in-memory forms this module reads (False for paths and names)."""
    return not isinstance(source, (str, Path)) and source is not None


def load_memory(source: Any = None, *, train: Any = None, test: Any = None, name: str = "data",
                fields: FieldMap = FieldMap(), skip_bad: bool = False) -> Dataset:
    """A :class:`Dataset` from in-memory ``source`` (one split: cross-validated; a dict /
    ``DatasetDict`` of train/dev/test splits) or from ``train`` and ``test``."""
    if source is not None and (train is not None or test is not None):
        raise UserError("give either the data or train=/test=, not both")
    if source is None:
        if train is None or test is None:
            raise UserError("train= and test= must be given together")
        parts: dict[str, Any] = {"train": train, "test": test}
    elif isinstance(source, Mapping):
        if type(source).__name__ == "DatasetDict":
            from cuelens.data.hf import hf_splits

            return assemble_dataset(hf_splits(source, name, fields, skip_bad), name,
                                    "huggingface", skip_bad)
        if not source:
            raise UserError("the dict of splits is empty: give it a test split (and a train "
                            "split), or pass one split's records")
        parts = {}
        keys: dict[str, Any] = {}  # role → the key naming it
        for key, value in source.items():
            role = claim_role(keys, key)
            if role is None:
                raise UserError(f"unknown split name {key!r}: use train, dev/validation or test")
            parts[role] = value
    else:
        parts = {"all": source}
    loaded = {role: memory_split(value, f"{name}/{role}", role, fields, skip_bad)
              for role, value in parts.items()}
    ordered: dict[str, Split] = {role: loaded[role] for role in ROLES if role in loaded}
    return assemble_dataset(ordered, name, "memory", skip_bad)
