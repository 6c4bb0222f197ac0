"""``audit stress``: stress questions for the black-box short-circuit tests (docs/methods.md §7)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from cuelens.augment.defaults import DEFAULT_STRESS_OPS
from cuelens.commands.common import (DataSource, OutFileOpt, SeedOpt, console, data_options,
                                     user_errors)
from cuelens.wording import plural

def summary_path(out: Path) -> Path:
    """``stress.jsonl`` (or ``.jsonl.gz``) → ``stress.summary.json`` (per-operator counts):
    only the file's type suffixes go, so ``run.co.jsonl`` and ``run.mt.jsonl`` keep two
    summaries (both wrote ``run.summary.json``, the second run's counts replacing the first's)."""
    return out.with_name(Path(out.name.removesuffix(".gz")).stem + ".summary.json")


@user_errors
@data_options(without=("train", "hypothesis_field"))
def stress(
    source: DataSource,
    out: OutFileOpt = Path("stress.jsonl"),
    ops: Annotated[str, typer.Option(
        help=f"Comma-separated operators: {DEFAULT_STRESS_OPS}.")]
    = DEFAULT_STRESS_OPS,
    seed: SeedOpt = 0,
) -> None:
    """Build stress questions from MCQ test data: same premise and correct choice, a constructed
    wrong choice per operator (items an operator cannot change are skipped and counted).

    --out gets the questions as JSONL, and NAME.summary.json beside it the counts per operator
    (NAME: the --out file's name less its last suffix and .gz).

    Example: audit stress data/copa/test.jsonl --ops co,mt,neg+,pr --out stress.jsonl
    """
    from cuelens.augment.operators import parse_ops
    from cuelens.augment.stress import build_stress
    from cuelens.commands.model_options import item_progress
    from cuelens.atomic import output_set
    from cuelens.jsonio import write_json, write_jsonl
    from cuelens.outputs import check_jsonl_output, check_outputs

    check_jsonl_output(out)
    operators = parse_ops(ops)
    dataset = source.load(alone="test")
    split = dataset.test
    check_outputs([out, summary_path(out)], dataset.input_paths)
    with item_progress() as progress:
        task = progress.add_task("parsing choices", total=None)
        result = build_stress(split, operators, seed=seed,
                              progress=lambda k: progress.update(task, advance=k))
    with output_set():
        write_jsonl(out, result.rows)
        write_json(summary_path(out), {"kind": "stress", "source": split.path,
                                       "n_source": len(split), "seed": seed,
                                       "ops": result.counts})
    _print_counts(result.counts, len(split), out)


def _print_counts(counts: dict, n: int, out: Path) -> None:
    from rich.table import Table

    table = Table("op", "generated", "skipped", title=f"stress questions from {plural(n, 'item')}")
    for op, row in counts.items():
        table.add_row(op, str(row["generated"]), str(row["skipped"]))
    console.print(table)
    console.print(f"wrote {plural(sum(r['generated'] for r in counts.values()), 'question')} to "
                  f"[bold]{escape(str(out))}[/] (counts: {escape(str(summary_path(out)))})")
