"""``audit augment``: crossover / mutation augmentation of MCQ training data (docs/methods.md §8)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from cuelens.commands.common import (DataSource, OutFileOpt, SeedOpt, console, data_options,
                                     user_errors)


@user_errors
@data_options(without=("test", "hypothesis_field"))
def augment(
    source: DataSource,
    out: OutFileOpt = Path("augmented.jsonl"),
    ops: Annotated[str, typer.Option(help="Comma-separated: crossover, mutation, mutation2.")]
    = "crossover,mutation",
    ratio: Annotated[float, typer.Option(
        help="Generated items as a fraction of the training set (1.0 doubles it).")] = 1.0,
    seed: SeedOpt = 0,
) -> None:
    """Augment MCQ training data with crossover/mutation questions (provenance: source_id, op).

    A directory's train split is used (else the single file given); --out gets its questions
    and the generated ones as JSONL. The input is never overwritten; no generated question
    repeats an existing one or has two equal choices.

    Example: audit augment data/arct/ --ops crossover,mutation --ratio 1.0 --out arct-aug.jsonl
    """
    from cuelens.augment.augmentation import augment as run_augment
    from cuelens.augment.augmentation import parse_augmenters
    from cuelens.jsonio import write_jsonl
    from cuelens.outputs import check_jsonl_output, check_outputs

    check_jsonl_output(out)
    names = parse_augmenters(ops)
    dataset = source.load(alone="train")
    split = dataset.train or dataset.test
    check_outputs([out], dataset.input_paths)
    result = run_augment(split, names, ratio=ratio, seed=seed)
    write_jsonl(out, result.rows)
    if result.shortfall is not None:
        console.print(f"[yellow]warning:[/] {result.shortfall}")
    made = ", ".join(f"{name} {n}" for name, n in result.counts.items())
    console.print(f"{len(split)} original + {sum(result.counts.values())} generated ({made}) → "
                  f"[bold]{escape(str(out))}[/]")
