"""Results files: reading them and validating them against ``results.schema.json``, compiled once
with ``fastjsonschema`` (docs/results-schema.md; docs/report.md, "Validation")."""

from __future__ import annotations

import functools
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any, Callable

from cuelens.errors import UserError

SCHEMA_FILE = "results.schema.json"


@functools.lru_cache(maxsize=1)
def results_schema() -> dict:
    """The JSON Schema of results.json (v1.0) shipped with the package."""
    return json.loads(resources.files("cuelens.reports").joinpath(SCHEMA_FILE).read_text("utf-8"))


@functools.lru_cache(maxsize=1)
def _compiled() -> Callable[[Any], Any]:
    import fastjsonschema

    return fastjsonschema.compile(results_schema())


def json_path(path) -> str:
    """``["data", "cues", 0, "token"]`` → ``$.cues[0].token``."""
    parts = list(path)[1:] if path and path[0] == "data" else list(path)
    return "$" + "".join(f"[{p}]" if str(p).isdigit() else f".{p}" for p in parts)


def validate_results(results: Any, source: str | None = None) -> None:
    """Raise :class:`UserError` naming the offending JSON path when ``results`` does not follow
    the schema."""
    import fastjsonschema

    try:
        _compiled()(results)
    except fastjsonschema.JsonSchemaValueException as exc:
        message = exc.message.removeprefix(exc.name or "").strip()
        raise UserError(f"not a cuelens results file: {json_path(exc.path)}: {message}",
                        path=source) from None
    check_label_names(results, source)


def check_label_names(results: dict, source: str | None = None) -> None:
    """``dataset.label_names`` must name the labels the file itself counts: every split's
    ``label_counts`` holds each of them, and every cue's label is one of them."""
    dataset = results.get("dataset") if isinstance(results, dict) else None
    if not isinstance(dataset, dict):
        return
    names = set(dataset["label_names"])
    for role, split in dataset.get("splits", {}).items():
        missing = names - set(split.get("label_counts", {}))
        if missing:
            raise UserError(f"not a cuelens results file: $.dataset.label_names names "
                            f"{', '.join(map(repr, sorted(missing)))}, which "
                            f"$.dataset.splits.{role}.label_counts does not count", path=source)
    for k, cue in enumerate(results.get("cues", [])):
        if cue["label"] not in names:
            raise UserError(f"not a cuelens results file: $.cues[{k}].label {cue['label']!r} is "
                            "not one of $.dataset.label_names", path=source)


def load_results(path: str | os.PathLike) -> dict:
    """Read a results JSON file, with a one-line :class:`UserError` for a missing or malformed
    one."""
    from cuelens.data.readers import read_json

    if not Path(path).exists():
        raise UserError("no such results file", path=str(path))
    results = read_json(Path(path))
    if not isinstance(results, dict):
        raise UserError("not a cuelens results file (expected a JSON object)", path=str(path))
    return results
