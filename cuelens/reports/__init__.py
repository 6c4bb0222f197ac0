"""The interactive HTML report (docs/methods.md §10): ``render_report(results, out_path)``."""

from cuelens.reports.options import ReportOptions
from cuelens.reports.render import render_report, script_json
from cuelens.reports.schema import load_results, validate_results

__all__ = ["ReportOptions", "load_results", "render_report", "script_json", "validate_results"]
