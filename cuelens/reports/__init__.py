"""The interactive HTML report (docs/methods.md §10): ``render_report(results, out_path)``."""

from cuelens.reports.options import PLOTLY_MODES, ReportOptions
from cuelens.reports.render import render_report, script_json
from cuelens.reports.schema import load_results, validate_results

__all__ = ["PLOTLY_MODES", "ReportOptions", "load_results", "render_report", "script_json",
           "validate_results"]
