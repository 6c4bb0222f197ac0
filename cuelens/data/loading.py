"""Resolve a user's data arguments (a file, a directory, ``train``/``test`` files or a Hugging Face
name) to a :class:`Dataset` (docs/methods.md §1; split roles: docs/ARCHITECTURE.md)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from cuelens.data.dataset import MCQ_LABELS, Dataset, Split, Task
from cuelens.data.labels import check_label_count, split_counts
from cuelens.data.readers import file_format, is_data_file, iter_records
from cuelens.data.schema import FieldMap
from cuelens.data.splits import ROLES, SPLIT_NAMES, build_split
from cuelens.errors import UserError

ONE_ITEM = "only 1 usable item: a scan needs at least 2 (cross-validation folds need one each)"


def read_split(path: Path, name: str, fields: FieldMap, task: str | None,
               skip_bad: bool) -> Split:
    """Read and normalise one file. ``task`` None: detect from the first record."""
    return build_split(iter_records(path), path, name, fields, task, skip_bad)


def split_entries(directory: Path, usable: Callable[[Path], bool]) -> dict[str, Path]:
    """Role → the one ``usable`` entry of ``directory`` named after it (``train.jsonl``,
    ``validation.csv``); two for one role (``train.jsonl`` and an output ``train.aug.jsonl``) are
    an error, not a silent pick by name."""
    found: dict[str, list[Path]] = {}
    near: dict[str, list[Path]] = {}  # role → entries named like it: dev_matched, train-00000-…
    for path in sorted(directory.iterdir()):
        stem = path.name.split(".")[0].lower()
        role = SPLIT_NAMES.get(stem)
        if role is not None and usable(path):
            found.setdefault(role, []).append(path)
        elif (like := SPLIT_NAMES.get(re.split(r"[_-]", stem, maxsplit=1)[0])) and usable(path):
            near.setdefault(like, []).append(path)
    unread = [path.name for role, paths in near.items() if role not in found for path in paths]
    if unread:  # they were ignored, or all read as one cross-validated split
        raise UserError(f"{', '.join(unread)}: named like split files, but a split file is named "
                        "train, dev/validation or test: name the files with train= and test= "
                        "(--train/--test; globs such as 'train-*.parquet' read shards)",
                        path=str(directory))
    for role, paths in found.items():
        if len(paths) > 1:
            raise UserError(f"{len(paths)} files could be the {role} split "
                            f"({', '.join(p.name for p in paths)}); move or rename all but one, "
                            "or name the files with train= and test= (--train/--test)",
                            path=str(directory))
    return {role: paths[0] for role, paths in found.items()}


def _find_split_files(directory: Path) -> dict[str, Path]:
    found = split_entries(directory, is_data_file)
    if not found and any((directory / name).is_file()
                         for name in ("state.json", "dataset_dict.json")):
        raise UserError("a Hugging Face dataset saved with save_to_disk, not data files: give it "
                        "as --hf (hf= in the Python API)", path=str(directory))
    if not found:
        raise UserError("no train/dev/test .jsonl/.csv/.tsv/.parquet files in this directory",
                        path=str(directory))
    return found


def unseen_label(label, train_path: str, known: list[str], path: str, line: int) -> UserError:
    """The error for a test ``label`` that the training split lacks."""
    return UserError(f"label '{label}' does not occur in the training split ({train_path}); "
                     f"known labels: {', '.join(known)}", path=path, line=line)


def _check_labels(train: Split | None, test: Split, skip_bad: bool) -> list[str]:
    """Sorted label set of the fitting split; labels unseen in training are an error (or
    skipped)."""
    if test.task == Task.MCQ:
        return list(MCQ_LABELS)
    names = sorted(set((train or test).labels))
    if train is None:
        return names
    known = set(names)
    bad = [i for i, label in enumerate(test.labels) if label not in known]
    if bad and not skip_bad:
        i = bad[0]
        raise unseen_label(test.labels[i], train.path, names, test.path, test.lines[i])
    if bad:
        keep = [i for i in range(len(test)) if test.labels[i] in known]
        skipped = dict(test.skipped)
        skipped["label absent from train"] = skipped.get("label absent from train", 0) + len(bad)
        kept = test.subset(keep)
        kept.skipped = skipped
        test.__dict__.update(kept.__dict__)
    return names


def check_scannable(task: str, counts: Mapping[str, int], items: int, path: str) -> None:
    """The fitting split (the only one, when cross-validated) can be scanned: at least two
    items, and NLI items under at least two labels (the same message in every mode: exact,
    streaming, API)."""
    if items == 1:
        raise UserError(ONE_ITEM, path=path)
    if task == Task.NLI:
        check_label_count(counts, path)


def check_dataset_scannable(dataset: Dataset) -> None:
    """:func:`check_scannable` of a loaded dataset's fitting split."""
    fitted = dataset.train or dataset.test
    check_scannable(fitted.task, split_counts(fitted.labels), len(fitted), fitted.path)


def _check_same_task(splits: list[Split]) -> None:
    first = splits[0]
    for split in splits[1:]:
        if split.task != first.task:
            raise UserError(f"this split is {split.task.upper()} but {first.path} is "
                            f"{first.task.upper()}", path=split.path)


def directory_name(path: Path) -> str:
    """The name of directory ``path`` as written or relative (``.``, ``..``, ``../data/``): the
    name of the directory it leads to, not ``""`` or ``..``; ``"data"`` for the root."""
    return Path(os.path.abspath(path)).name or "data"


def _dataset_name(path: Path) -> str:
    """A directory's name; a file's name without its extensions, or its directory's name when
    the file is named after a split (``snli/train.jsonl`` → ``snli``)."""
    stem = path.name.split(".")[0]
    if path.is_dir():
        return directory_name(path)
    if stem.lower() not in SPLIT_NAMES:
        return stem
    return directory_name(path.parent) if path.parent.name else stem  # train.jsonl: train


def _hf_name(spec: str) -> str:
    """The name of the ``--hf`` dataset ``spec``: a local directory's folder name (its path
    made the default output ``audit-results/<name>`` another folder: the saved dataset's own,
    for an absolute path), else the hub name as given (``glue:mnli``)."""
    local = Path(spec.partition(":")[0]).expanduser()
    return directory_name(local) if local.is_dir() else spec


def data_files(data: str | Path | None, train: str | Path | None,
               test: str | Path | None) -> tuple[dict[str, Path], Path, str]:
    """Role → file of ``DATA`` (one file: ``all``; a directory: its split files) or of
    ``--train``/``--test``, the path that names the dataset (``DATA`` or the train file) and the
    format."""
    if data:
        path = Path(data)
        if not path.exists():
            raise UserError("file or directory not found", path=str(data))
        if path.is_dir():
            return _find_split_files(path), path, "directory"
        return {"all": path}, path, file_format(path)
    if not (train and test):
        raise UserError("--train and --test must be given together")
    return {"train": Path(train), "test": Path(test)}, Path(train), file_format(Path(train))


def load_dataset(data: str | None = None, *, train: str | None = None, test: str | None = None,
                 hf: str | None = None, fields: FieldMap = FieldMap(),
                 skip_bad: bool = False) -> Dataset:
    """Load a dataset from the CLI's data arguments (exactly one form must be given)."""
    given = [x for x in (data, hf) if x] + ([train] if train or test else [])
    if len(given) != 1:
        raise UserError("give exactly one of: DATA (a file or directory), --train/--test, or --hf")
    files: dict[str, Path] | dict[str, Split]
    if hf:
        from cuelens.data.hf import load_hf_splits

        files, name, fmt = load_hf_splits(hf, fields, skip_bad), _hf_name(hf), "huggingface"
    else:
        files, named_by, fmt = data_files(data, train, test)
        name = _dataset_name(named_by)

    loaded: dict[str, Split] = {}
    task = None
    for role in ROLES:
        if role in files:
            source: Path | Split = files[role]
            split = source if isinstance(source, Split) else \
                read_split(source, role, fields, task, skip_bad)
            task = task or split.task
            loaded[role] = split
    return assemble_dataset(loaded, name, fmt, skip_bad)


def split_roles(roles: list[str]) -> tuple[str | None, str]:
    """(fitting role or None, evaluated role) among the loaded ``roles`` (train, dev, test,
    all, in that order): a single split is cross-validated; train is fitted on, evaluated on
    test (else dev); without train, dev is fitted on and test evaluated."""
    if "all" in roles or len(roles) == 1:
        return None, roles[0]
    if "train" in roles:
        return "train", "test" if "test" in roles else "dev"
    return "dev", "test"


def assemble_dataset(loaded: dict[str, Split], name: str, fmt: str, skip_bad: bool) -> Dataset:
    """Give the loaded splits (role → split) their roles, check them, and build the Dataset."""
    _check_same_task(list(loaded.values()))
    fit_role, eval_role = split_roles(list(loaded))
    fit, evaluate = (loaded[fit_role] if fit_role else None), loaded[eval_role]
    other = {role: s for role, s in loaded.items() if s is not fit and s is not evaluate}
    label_names = _check_labels(fit, evaluate, skip_bad)
    return Dataset(name=name, format=fmt, task=evaluate.task, train=fit, test=evaluate,
                   label_names=label_names, other=other)
