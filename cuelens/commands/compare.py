"""``audit compare``: D with CIs and cues gained/lost between two scans (terminal + HTML)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from cuelens.commands.common import PlotlyOpt, ScanPath, console, user_errors


@user_errors
def compare(
    before: ScanPath,
    after: ScanPath,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="HTML report to write (default: compare.html next to AFTER's "
                            "results).")] = None,
    plotly: PlotlyOpt = "inline",
) -> None:
    """Compare two scans: a status per dimension (conclusion, cue leakage D, cues, hygiene, gold
    positions, training items lost) and overall, the significant cues gained, lost and kept;
    warns when the scans used different protocols.

    Example: audit compare audit-results/snli-v1 audit-results/snli-v2 -o v1-vs-v2.html
    """
    from cuelens.audit.compare import compare_scans, load_scan_results
    from cuelens.audit.results import CONCLUSION_TEXT
    from cuelens.data.display import shown
    from cuelens.outputs import check_outputs, with_run_files
    from cuelens.reports import ReportOptions, render_report

    scans = load_scan_results(before), load_scan_results(after)
    after_dir = after if after.is_dir() else after.parent
    read = [p / "results.json" if p.is_dir() else p for p in (before, after)]
    inputs = [path for results in read for path in with_run_files(results)]  # and their runs'
    target = out or after_dir / "compare.html"
    check_outputs([target], inputs)  # before anything is compared or printed
    result = compare_scans(*scans, str(before), str(after))
    colour = {"improved": "green", "worsened": "red", "mixed": "yellow", "unchanged": "dim",
              "still_leaking": "red"}
    console.print(f"[bold {colour[result['status']]}]{escape(result['headline'])}[/]")
    for warning in result["warnings"]:
        console.print(f"[bold yellow]warning:[/] {escape(warning)}")
    for label, side in (("before", result["before"]), ("after", result["after"])):
        conclusion = side["conclusion"]
        console.print(f"{label:6} {escape(side['source'])}: "
                      f"{escape(CONCLUSION_TEXT[conclusion['status']])}: "
                      f"{escape(conclusion['reason'])}")
    marks = {"better": "[green]better[/]", "worse": "[red]worse[/]", "same": "[dim]same[/]",
             "not compared": "[yellow]not compared[/]"}
    for row in result["dimensions"]:
        console.print(f"  {marks[row['status']]}: {escape(row['name'])}: {escape(row['text'])}")
    if result["cues_compared"]:
        changes = result["cue_changes"]
        lists = [(f"significant cues {title}", result[f"n_cues_{title}"], result[f"cues_{title}"])
                 for title in ("gained", "lost", "kept")]
        lists += [(f"cues {way} beyond their noise", len(changes[way]), changes[way])
                  for way in (("weakened", "strengthened") if changes else ())]
        for title, n, cues in lists:
            tokens = ", ".join(f"{shown(c['token'])}→{shown(c['label'])}" for c in cues[:10])
            console.print(f"{title}: {n}" + (f" ({escape(tokens)})" if tokens else ""))
    written = render_report(result, target, inputs=inputs,
                            options=ReportOptions(plotly=plotly))
    console.print(f"report: [bold]{escape(str(written))}[/]")
