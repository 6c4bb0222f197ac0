"""Output-path rules, checked before any computation (docs/robustness.md, "Outputs"): an output
is never an input, nor inside an input directory, nor another output of the same run; its
directory can be written; a directory output replaces only what the command wrote before.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from cuelens.atomic import TEMPORARY, PathLike, existing_ancestor
from cuelens.errors import UserError


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)  # hard links
    except OSError:
        return False


def _inside(path: Path, directory: Path) -> bool:
    return directory.is_dir() and path.resolve().is_relative_to(directory.resolve())


RUN_FILES = ("results.json", "run.json", "cues.csv", "items.jsonl", "items.parquet", "easy.jsonl",
             "hard.jsonl", "easy.ids.txt", "hard.ids.txt", "predictions.jsonl")
"""The files a scan or probe writes beside its results.json (its report aside); an LLM probe
also writes predictions-TEMPLATE.jsonl."""


def with_run_files(results: PathLike) -> list[Path]:
    """A results file read by a command and the files of its run beside it (:data:`RUN_FILES`,
    an LLM probe's predictions-*.jsonl): its inputs, so that no output of the command replaces
    them (a report over items.jsonl)."""
    results = Path(results)
    return [results, *(results.parent / name for name in RUN_FILES if name != results.name),
            *sorted(results.parent.glob("predictions-*.jsonl"))]


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


def check_output_name(path: PathLike | None, endings: tuple[str, ...], message: str) -> None:
    """Refuse, with ``message``, an output whose name (in any case) does not end in one of
    ``endings``, so that it is named as what it holds is read: ``aug.csv`` would hold JSON Lines
    under a CSV name, and a later ``audit scan aug.csv`` would fail on it; a name that is the
    ending alone (``.jsonl``, a hidden file no reader takes) fails too; ``None`` (not asked
    for) passes."""
    if path is None:
        return
    name = os.path.basename(os.fspath(path)).lower()
    if not any(name.endswith(ending) and len(name) > len(ending) for ending in endings):
        raise UserError(message, path=str(path))


def check_jsonl_output(path: PathLike) -> None:
    """A data file this command writes as JSON Lines (augment, stress) is named so that the data
    readers read it as such, ``.jsonl`` or ``.jsonl.gz``."""
    check_output_name(path, (".jsonl", ".jsonl.gz"),
                      "this output is JSON Lines: give a name ending in .jsonl or .jsonl.gz")


def check_json_output(path: PathLike | None, option: str) -> None:
    """A results document this command writes as JSON (``audit report`` renders it) is named
    ``.json``: ``judge.csv`` would hold JSON under a CSV name."""
    check_output_name(path, (".json",), f"{option} is written as JSON: give a name ending in .json")


def check_writable_dir(directory: PathLike) -> None:
    """Fail now, before any computation, when ``directory`` cannot be created or written: its
    nearest existing ancestor must be a writable directory (nothing is created)."""
    directory = Path(directory)
    probe = existing_ancestor(directory)
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
    _check_not_a_file(directory)
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
    _check_not_a_file(directory)
    _check_holds_no_input(directory, inputs)
    if directory.is_dir():
        owned = set(names)
        foreign = sorted(p.name for p in directory.iterdir()
                         if p.name not in owned and not TEMPORARY.match(p.name))
        if foreign:
            raise UserError(f"the output directory holds {', '.join(foreign[:3])}"
                            f"{' …' if len(foreign) > 3 else ''}, which this command did not "
                            "write and would replace; choose another --out",
                            path=str(directory))
    check_writable_dir(directory)


def _check_not_a_file(directory: Path) -> None:
    if directory.exists() and not directory.is_dir():
        raise UserError("output exists and is not a directory; choose another --out",
                        path=str(directory))


def _check_holds_no_input(directory: Path, inputs: Iterable[PathLike | None]) -> None:
    for item in inputs:
        if item is not None and (_same_file(directory, Path(item))
                                 or Path(item).resolve().is_relative_to(directory.resolve())):
            raise UserError(f"the output directory holds the input {item}; choose another --out",
                            path=str(directory))
