"""Which scan a set of data arguments and options runs — preference pairs, streaming or exact
statistics — with one set of errors, shared by ``audit scan`` and ``cuelens.scan``
(docs/api.md, docs/large-datasets.md, docs/preference.md)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from cuelens.audit.config import ScanConfig
from cuelens.audit.engines import ENGINES
from cuelens.data.preference import is_preference_source
from cuelens.data.schema import FieldMap
from cuelens.errors import UserError, option_name

STATISTICS = ("exact", "streaming")


@dataclass(frozen=True)
class ScanMode:
    """The scan to run: ``kind`` ``preference``, ``streaming`` or ``exact``."""

    kind: str

    @property
    def preference(self) -> bool:
        return self.kind == "preference"

    @property
    def streaming(self) -> bool:
        return self.kind == "streaming"


def scan_mode(data: Any, train: Any = None, *, stats: str = "exact", engine: str = "local",
              hf: str | None = None, subset_field: str | None = None,
              test: Any = None) -> ScanMode:
    """The :class:`ScanMode` of these data arguments and options, or the :class:`UserError`
    that both the CLI and the API raise for a combination that cannot run."""
    if stats not in STATISTICS:
        raise UserError(f"{option_name('stats')}: unknown statistics {stats!r}; choose from "
                        f"{', '.join(STATISTICS)}")
    ENGINES.get(engine)  # an unknown engine is an error before any loading
    if subset_field is not None and not subset_field.strip():
        raise UserError(f"{option_name('subset_field')} is empty: give a field name, or leave "
                        "the option out")
    first = data if data is not None else train
    if hf is None and isinstance(first, (str, Path)) and is_preference_source(str(first)):
        if stats != "exact":
            raise UserError(f"preference pairs are scanned with exact statistics, not "
                            f"{option_name('stats')} {stats} (docs/preference.md)")
        if engine == "ray":
            raise UserError("preference pairs are scanned in memory, not with --engine ray "
                            "(docs/preference.md)")
        return ScanMode("preference")
    if stats == "streaming":
        if subset_field is not None:
            raise UserError(f"{option_name('subset_field')} needs exact statistics, not "
                            "streaming ones")
        if engine == "memory" or hf:
            raise UserError("streaming statistics read files, directories or globs with the "
                            "local or ray engine (not --hf or --engine memory)")
        if not all(isinstance(x, (str, Path)) for x in (data, train, test) if x is not None):
            raise UserError("streaming statistics read files, directories or globs: pass paths, "
                            "not in-memory data")
        return ScanMode("streaming")
    return ScanMode("exact")


def check_features(mode: ScanMode, names: list[str] | None) -> None:
    """Features asked for (``names``: not ``[]``, ``None`` = all) on preference pairs are a
    :class:`UserError`: their scan audits word cues and shortcuts, no ICQ features
    (docs/preference.md); they were ignored silently."""
    if mode.preference and names != []:
        raise UserError(f"{option_name('features')}: preference pairs are scanned for word cues "
                        "and shortcuts, not ICQ features (docs/preference.md); leave the option "
                        "out or give 'none'")


FIELD_OPTIONS = {f"{f.name}_field": f.name for f in fields(FieldMap)}  # premise_field, …


def split_options(options: dict[str, Any],
                  arguments: Iterable[str] = ()) -> tuple[ScanConfig, FieldMap]:
    """``cuelens.scan``'s keyword options as the CLI's: the :class:`ScanConfig` fields and the
    field overrides (``premise_field``, …, ``group_field``: the CLI's ``--premise-field``, …);
    an unknown name is a :class:`UserError` listing the known ones, the caller's own keyword
    ``arguments`` (``features``, ``stats``, …) among them."""
    known = {f.name for f in fields(ScanConfig)}
    unknown = sorted(set(options) - known - set(FIELD_OPTIONS))
    if unknown:
        raise UserError(f"unknown scan option(s): {', '.join(unknown)}; known: "
                        f"{', '.join(sorted(known | set(FIELD_OPTIONS) | set(arguments)))}")
    config = ScanConfig(**{k: v for k, v in options.items() if k in known})
    config.validate()
    for name in FIELD_OPTIONS:
        if options.get(name) is not None and not isinstance(options[name], str):
            raise UserError(f"{option_name(name)} must be a text, not {options[name]!r}")
    return config, FieldMap(**{FIELD_OPTIONS[k]: v for k, v in options.items()
                               if k in FIELD_OPTIONS})
