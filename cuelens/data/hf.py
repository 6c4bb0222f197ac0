"""Optional Hugging Face ``datasets`` source (``--hf snli`` or ``--hf super_glue:copa``).

Needs the ``datasets`` package (not a core dependency) and, for hub names, network access or a
populated local cache. Integer class labels are mapped to their names (SNLI's -1 = missing),
except the label of multiple-choice data: the index of the correct choice.
"""

from __future__ import annotations

import json
from pathlib import Path

from cuelens.data.dataset import Split, Task
from cuelens.data.schema import LABEL_ALIASES, FieldMap, detect_task, is_missing_label
from cuelens.data.splits import NO_RECORD_ITEMS, build_split, claim_role
from cuelens.errors import UserError, option_name


def _rows(dataset, class_names: dict[str, list[str]], is_mcq_hint: bool):
    for number, row in enumerate(dataset, start=1):
        row = dict(row)
        for field, names in class_names.items():
            value = row.get(field)
            if isinstance(value, int) and not is_mcq_hint:
                row[field] = names[value] if 0 <= value < len(names) else None
        yield number, json.dumps(row, ensure_ascii=False, default=str), row


def load_hf_splits(spec: str, fields: FieldMap, skip_bad: bool) -> dict[str, Split]:
    """Load ``name[:config]`` with ``datasets.load_dataset`` (a directory of one ``Dataset`` or
    a ``DatasetDict`` saved with ``save_to_disk``: ``datasets.load_from_disk``, which keeps the
    splits as saved, where ``load_dataset`` merged ``dev`` and ``validation`` by their folders'
    names) and normalise each split."""

    try:
        import datasets  # noqa: F401  (optional dependency)
    except ImportError:
        raise UserError(f"{option_name('hf')} needs the optional 'datasets' package: "
                        "pip install 'cuelens[hf]'") from None
    name, _, config = spec.partition(":")
    local = Path(name).expanduser()  # "~/saved" from Python, where no shell expands it
    if name.startswith(("/", "./", "../", "~")) and not local.exists():
        raise UserError(f"{option_name('hf')}: no such directory {name!r} (a local path; a hub "
                        "dataset is named without a leading '/', './' or '~')")
    saved = (local / "state.json").is_file() or (local / "dataset_dict.json").is_file()
    if saved and config:  # load_from_disk takes no config: it was ignored
        raise UserError(f"{option_name('hf')}: {name} is a dataset saved with save_to_disk, "
                        f"which has no configs: drop ':{config}'")
    try:
        if (local / "state.json").is_file():  # one Dataset saved with save_to_disk
            loaded = {"train": datasets.load_from_disk(str(local))}  # one split: cross-validated
        elif (local / "dataset_dict.json").is_file():  # a DatasetDict saved with it
            loaded = datasets.load_from_disk(str(local))
        else:
            loaded = datasets.load_dataset(str(local) if local.is_dir() else name, config or None)
    except Exception as exc:  # hub/network/cache errors all end the same way for the user
        raise UserError(f"cannot load Hugging Face dataset '{spec}': {exc}") from None
    return hf_splits(loaded, spec, fields, skip_bad)


def hf_split(dataset, path: str, role: str, fields: FieldMap, skip_bad: bool) -> Split:
    """Normalise one ``datasets.Dataset`` (class-label integers become their names); one of no
    rows is a :class:`UserError` saying so (no file is involved)."""
    if getattr(dataset, "num_rows", None) == 0:  # an IterableDataset has no row count
        raise UserError("no items: the Hugging Face dataset split has no rows", path=path)
    features = dataset.features
    # a multiple-choice label is the choice's index, whatever its class names (as the records'
    # task is detected: any choices alias, ending0.., question.choices, --choices-field)
    mcq_hint = "answerKey" in features or detect_task(dict(features), fields) == Task.MCQ
    class_names = {name: list(names) for name, feature in features.items()
                   if (names := getattr(feature, "names", None))}  # of every ClassLabel feature
    rows = _rows(dataset, class_names, mcq_hint)
    return build_split(rows, Path(path), role, fields, None, skip_bad, empty=NO_RECORD_ITEMS)


def _unlabelled(dataset, fields: FieldMap) -> bool:
    """Whether no row of ``dataset`` has a label (the hub's test splits: -1 or null everywhere)."""
    name = fields.label or next((n for n in LABEL_ALIASES if n in dataset.features), None)
    return name is not None and len(dataset) > 0 and \
        all(is_missing_label(value) for value in dataset[name])


def _unknown_splits(names: list[str], spec: str) -> UserError:
    """The error for labelled splits ``names`` whose names give no role (MNLI's
    ``validation_matched``), with how to choose the splits to scan."""
    quoted = ", ".join(repr(name) for name in names)
    return UserError(f"Hugging Face dataset '{spec}' has labelled splits of no known role: "
                     f"{quoted} (the roles: train, dev/validation, test); choose the splits to "
                     f"scan: in Python a dict such as {{'train': d['train'], 'test': "
                     f"d[{names[0]!r}]}}, for the CLI save them as train.jsonl and test.jsonl "
                     "(Dataset.to_json) in one directory and give it as DATA")


def hf_splits(loaded, spec: str, fields: FieldMap, skip_bad: bool) -> dict[str, Split]:
    """The train/dev/test splits of a ``datasets.DatasetDict``; a split without any label (a
    hub test split) is dropped, as its items would all be skipped; a labelled split of no role
    (``validation_matched``) and two labelled splits of one role (``dev`` and ``validation``)
    are a :class:`UserError`, not a silent pick."""
    if not loaded:
        raise UserError(f"Hugging Face dataset '{spec}' has no splits")
    roles: dict[str, str] = {}  # split name → its role
    claimed: dict[str, str] = {}  # role → the split naming it
    unknown: list[str] = []
    for split_name, dataset in loaded.items():
        if _unlabelled(dataset, fields):
            continue
        role = claim_role(claimed, split_name, spec)
        if role is None:
            unknown.append(split_name)
        else:
            roles[split_name] = role
    if unknown:
        raise _unknown_splits(unknown, spec)
    out = {role: hf_split(loaded[split_name], f"{spec}/{split_name}", role, fields, skip_bad)
           for split_name, role in roles.items()}
    if not out:
        raise UserError(f"Hugging Face dataset '{spec}' has no labelled train/validation/test "
                        "split")
    return out
