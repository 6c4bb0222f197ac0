"""Records → :class:`~cuelens.data.dataset.Split`: the normalisation every source shares (files,
Hugging Face datasets, in-memory data, streamed shards; docs/methods.md §1), and the split names
a source's parts are recognised by."""

from __future__ import annotations

from pathlib import Path

from cuelens.data.dataset import Split, Task
from cuelens.data.readers import LineError, RepeatedKeys
from cuelens.data.schema import FieldMap, RecordError, detect_task, normalise_mcq, normalise_nli
from cuelens.errors import UserError, option_name

NO_ITEMS = "no usable items (the file is empty or every item was skipped)"
#: :data:`NO_ITEMS` of in-memory records and Hugging Face splits (no file; an empty one is refused
#: before: "the DataFrame has no rows").
NO_RECORD_ITEMS = "no usable items (every record was skipped)"
SPLIT_NAMES = {"train": "train", "dev": "dev", "validation": "dev", "valid": "dev", "val": "dev",
               "test": "test"}
ROLES = ("train", "dev", "test", "all")  # the split roles in the order a dataset holds them


def claim_role(claimed: dict[str, str], name: str, path: str | None = None) -> str | None:
    """The role split ``name`` (a dict key, a ``DatasetDict`` split) names, recorded in
    ``claimed`` (role → name); None for a name of no role. A second name of one role (``dev``
    and ``validation``) is a :class:`UserError`, as two files of one role in a directory are,
    not a silent pick of one."""
    role = SPLIT_NAMES.get(str(name).lower())
    if role in claimed:
        raise UserError(f"split names {claimed[role]!r} and {name!r} both name the {role} split: "
                        "give one of them", path=path)
    if role is not None:
        claimed[role] = name
    return role


def _skip(split: Split, reason: str) -> None:
    split.skipped[reason] = split.skipped.get(reason, 0) + 1


def build_split(records, path: Path, name: str, fields: FieldMap, task: str | None,
                skip_bad: bool, into: Split | None = None, empty: str = NO_ITEMS) -> Split:
    """Normalise ``(line, raw, record)`` triples into a :class:`Split`.

    ``into``: append to this split instead (one shard of a split read shard by shard; the
    caller then checks that the whole split is not empty). ``empty``: the error when no item
    is left.
    """
    split: Split | None = into if into is not None else \
        (Split(name=name, path=str(path), task=task) if task else None)
    skipped_lines = 0
    file_name = path.name
    for line, raw, record in records:
        if isinstance(record, LineError):
            if not skip_bad:
                raise record
            skipped_lines += 1
            continue
        if split is None:
            split = Split(name=name, path=str(path), task=detect_task(record, fields))
        normalise = normalise_nli if split.task == Task.NLI else normalise_mcq
        try:
            item = normalise(record, fields, default_id=f"{file_name}:{line}")
        except RecordError as exc:
            if not skip_bad:
                raise UserError(str(exc), path=str(path), line=line) from None
            _skip(split, "bad record")
            continue
        if item is None:
            _skip(split, "missing label")
            continue
        if isinstance(record, RepeatedKeys):
            item["duplicate_keys"] = record.repeated
        if fields.group is not None:
            if record.get(fields.group) in (None, ""):

                raise UserError(f"no group id in field '{fields.group}' "
                                f"({option_name('group_field')})", path=str(path), line=line)
            item["group"] = str(record[fields.group])
        split.append(item, raw, line)
    if into is None and (split is None or len(split) == 0):
        raise UserError(empty, path=str(path))
    if split is not None:
        split.overrides = fields.item_fields()
    if skipped_lines and split is not None:
        split.skipped["malformed line"] = split.skipped.get("malformed line", 0) + skipped_lines
    return split  # type: ignore[return-value]
