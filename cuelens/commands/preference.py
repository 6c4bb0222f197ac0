"""``audit scan`` of preference pairs (called by :mod:`cuelens.commands.scan` when the data holds
them), the subset table's terminal lines, and ``audit judge`` (docs/preference.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from cuelens.commands.common import console, progress_bar, user_errors
from cuelens.wording import plural

SubsetFieldOpt = Annotated[Optional[str], typer.Option(
    "--subset-field", help="Field naming each item's subset (MMLU subject, RewardBench subset): "
    "every baseline and verdict per subset, Holm-corrected across the table "
    "(docs/preference.md). Preference data: 'subset' when present.")]


def scan_preference_data(data, train, test, subset_field: str | None, skip_bad: bool, config,
                         out: Path | None, report: Path | None, item_files: str):
    """Load and scan preference pairs, after checking the outputs can be written; return the
    scan's result and its output directory (``audit scan`` saves and prints it)."""
    from cuelens.audit.pipeline import check_scan_outputs
    from cuelens.audit.preference_scan import scan_preferences
    from cuelens.data.preference import load_preferences

    preferences = load_preferences(data, train=train, test=test, subset_field=subset_field,
                                   skip_bad=skip_bad)
    for role, split in preferences.splits.items():
        skipped = ", ".join(f"{n} {reason}" for reason, n in split.skipped.items())
        if skipped:
            console.print(f"[yellow]warning:[/] {role}: skipped {skipped}")
    out_dir = out or Path("audit-results") / preferences.name
    n_responses = 2 * len(preferences.splits.get("test", preferences.splits.get(
        "dev", next(iter(preferences.splits.values())))))
    check_scan_outputs(preferences.input_paths, n_responses, out_dir, report, uses_cache=False,
                       item_files=item_files)
    with progress_bar(f"scanning {preferences.name} (preference pairs)") as progress:
        result = scan_preferences(preferences, config, subset_field=subset_field,
                                  progress=progress)
    return result, out_dir


def print_preference(section: dict | None) -> None:
    """One line per significant shortcut of each split."""
    from cuelens.audit.preference import shortcut_verdict

    if not section:
        return
    for role, split in section["splits"].items():
        console.print(f"[bold]preference shortcuts ({escape(role)})[/]: "
                      f"{plural(split['pairs'], 'pair')}, {plural(split['ties'], 'tie')}")
        for row in split["shortcuts"]:
            if row["decided"]:
                mark = "[bold red]![/] " if row["significant"] else "  "
                console.print(f"{mark}{escape(shortcut_verdict(row))}")


def print_subsets(table: dict | None) -> None:
    """The significant cells of the subset × shortcut table and each subset's word-cue D (an
    NLI table has only that column)."""
    if not table:
        return
    hits = [(row["subset"], name, cell) for row in table["rows"]
            for name, cell in row["cells"].items() if cell["significant"]]
    cells = f", {len(hits)} of {plural(table['n_tests'], 'cell')} significant (Holm, α = " \
        f"{table['alpha']})" if table["n_tests"] else ""  # NLI: the leakage column alone
    console.print(f"[bold]subsets[/] by {escape(table['field'])}: "
                  f"{plural(len(table['rows']), 'subset')}{cells}")
    leakage = [(row["subset"], row["leakage"]) for row in table["rows"] if row.get("leakage")]
    if leakage:
        console.print("  word-cue D [95% CI], verdict: " + "; ".join(
            f"{escape(subset)} {100 * d['effect']:+.1f} [{100 * d['ci'][0]:+.1f}, "
            f"{100 * d['ci'][1]:+.1f}] {d['verdict']}" for subset, d in leakage))
    for subset, name, cell in hits:
        console.print(f"  [bold red]![/] {escape(subset)} · {escape(name)}: "
                      f"{table['measure']} {100 * cell['value']:.1f}% "
                      f"(adjusted p = {cell['p_adjusted']:.3g})")
    small = table.get("small", {})
    if small.get("subsets"):
        console.print(f"  {plural(small['subsets'], 'subset')} with fewer than "
                      f"{small['min_items']} items: no word-cue scan of their own (their leakage "
                      "is empty)")
    if table.get("rewritten"):
        from cuelens.data.labels import rewrites_text

        console.print(f"[yellow]warning:[/] subset values merged into their normal form "
                      f"(Unicode NFC, invisible characters and surrounding spaces removed): "
                      f"{escape(rewrites_text(table['rewritten']))}")


@user_errors
def judge(
    log: Annotated[Path, typer.Argument(help="Judge log (JSONL/CSV): FastChat *_pair.jsonl or "
                                        "two records per pair.", show_default=False)],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")]
    = Path("audit-results/judge"),
    subset_field: SubsetFieldOpt = None,
) -> None:
    """Position consistency of an LLM judge that saw every pair in both orders: the consistent
    and flip rates with 95% intervals and whether flips favour one position.

    Example: audit judge model_judgment/gpt-4_pair.jsonl --out results/judge
    """
    from cuelens.audit.judge import judge_section, judge_verdict
    from cuelens.atomic import output_set
    from cuelens.jsonio import write_json
    from cuelens.outputs import check_outputs
    from cuelens.reports import render_report

    results_path, report_path = out / "results.json", out / "report.html"
    check_outputs([results_path, report_path], [str(log)])
    results = judge_section(log, subset_field)
    with output_set():
        write_json(results_path, results)
        render_report(results, report_path, inputs=[log])
    console.print(escape(judge_verdict(results)))
    if results["skipped"]:
        console.print(f"[yellow]warning:[/] {results['skipped']:,} skipped (judge errors, or "
                      "pairs judged in one order only): not in the rates")
    console.print(f"results written to [bold]{escape(str(out))}[/]")
