"""The interactive HTML report (docs/methods.md §10): ``render_report(results, out_path)``."""

from cuelens.reports.render import load_results, render_report, script_json
from cuelens.reports.schema import validate_results

__all__ = ["load_results", "render_report", "script_json", "validate_results"]
