"""``audit report``: re-render the HTML report from a saved results file (docs/methods.md §10)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from cuelens.audit.metrics import METRICS
from cuelens.commands.common import PlotlyOpt, console, user_errors


@user_errors
def report(
    results: Annotated[Path, typer.Argument(
        help="A results.json written by audit scan / probe, a score-pairs result file, or an "
             "audit contrast judge --out / natural|synthetic --summary file.",
        show_default=False)],
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="HTML file to write (default: report.html next to the results file).")]
    = None,
    plotly: PlotlyOpt = "inline",
    rank_by: Annotated[str, typer.Option(
        "--rank-by", help="Cue metric the cue table is ranked by (z: significance; or "
                          f"{', '.join(name for name in METRICS if name != 'z')}).")] = "z",
) -> None:
    """Render a results file to one self-contained, offline HTML report.

    Example: audit report audit-results/snli/results.json -o snli-report.html
    """
    from cuelens.outputs import with_run_files
    from cuelens.reports import ReportOptions, load_results, render_report

    options = ReportOptions(plotly=plotly, rank_by=rank_by)
    out = out or results.parent / "report.html"
    written = render_report(load_results(results), out, inputs=with_run_files(results),
                            source=str(results), options=options)
    console.print(f"report written to [bold]{escape(str(written))}[/]", highlight=False)
