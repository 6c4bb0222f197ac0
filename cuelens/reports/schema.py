"""Validation of results files against ``results.schema.json`` (docs/results-schema.md, SPEC §10)."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from cuelens.errors import UserError

SCHEMA_FILE = "results.schema.json"


@functools.lru_cache(maxsize=1)
def results_schema() -> dict:
    """The JSON Schema of results.json (v1.0) shipped with the package."""
    return json.loads(resources.files("cuelens.reports").joinpath(SCHEMA_FILE).read_text("utf-8"))


def _where(path) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def validate_results(results: Any, source: str | None = None) -> None:
    """Raise :class:`UserError` naming the first offending JSON path when ``results`` does not
    follow the schema (the deepest, most specific error is reported)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    validator = Draft202012Validator(results_schema())
    error = best_match(validator.iter_errors(results))
    if error is not None:
        raise UserError(f"not a cuelens results file: {_where(error.absolute_path)}: "
                        f"{error.message}", path=source)
