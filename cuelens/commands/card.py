"""``audit card``: a dataset card's "Bias, Risks and Limitations" section and the Croissant RAI
fields from a scan (docs/mitigation.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from cuelens.commands.common import ScanPath, console, user_errors


@user_errors
def card(
    results: ScanPath,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Directory for card.md and croissant-rai.json (default: the "
        "scan's directory).")] = None,
    command: Annotated[Optional[str], typer.Option(
        "--command", help="The scan command to quote under 'How to reproduce' (default: the "
        "one recorded in run.json, paths relative to here or by name).")] = None,
) -> None:
    """Write card.md (Bias, Risks and Limitations, for a Hugging Face dataset card) and
    croissant-rai.json (rai:dataBiases, rai:dataLimitations).

    Example: audit card audit-results/snli
    """
    from cuelens.audit.compare import load_scan_results
    from cuelens.atomic import atomic_write_text, output_set
    from cuelens.jsonio import write_json
    from cuelens.outputs import check_outputs
    from cuelens.mitigate.card import card_markdown, croissant_rai, recorded_argv, \
        reproduce_command

    scan = load_scan_results(results, command="card")
    folder = results if results.is_dir() else results.parent
    if command is None:
        command = reproduce_command(recorded_argv(folder / "run.json"), Path.cwd())
    target = out or folder
    paths = [target / "card.md", target / "croissant-rai.json"]
    check_outputs(paths, [folder / "results.json", folder / "run.json"])
    with output_set():
        atomic_write_text(paths[0], card_markdown(scan, command))
        write_json(paths[1], croissant_rai(scan))
    console.print(f"dataset card section: [bold]{escape(str(paths[0]))}[/]; Croissant RAI: "
                  f"[bold]{escape(str(paths[1]))}[/]")
