"""``audit demo``: generate NLI and MCQ datasets with planted cues, then scan them."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from cuelens.commands.common import SeedOpt, console, user_errors


@user_errors
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path("demo-output"),
    size: Annotated[int, typer.Option(help="Training items per dataset (the test split is 20%, "
                                           "at least 200).")] = 3000,
    seed: SeedOpt = 0,
) -> None:
    """Generate a synthetic NLI and MCQ dataset with planted cues and scan both.

    The planted cues (which words, which label, which rate) are documented in
    cuelens/data/synthetic.py; a correct scan ranks them at the top.

    Example: audit demo --out demo-output
    """
    from cuelens.commands.scan import (feature_sections, print_summary, scan_dataset,
                                       write_outputs, write_report)
    from cuelens.data import load_dataset
    from cuelens.data.synthetic import write_demo_data

    if size < 50:
        raise typer.BadParameter("--size must be at least 50")
    data_dirs = write_demo_data(out / "data", size=size, seed=seed)
    for task, directory in data_dirs.items():
        started = time.time()
        dataset = load_dataset(str(directory))
        dataset.name = f"demo-{task}"
        results, item_easy = scan_dataset(dataset, seed=seed)
        results.update(feature_sections(dataset, None, None, folds=5, seed=seed))
        write_outputs(out / task, dataset, results, item_easy, started)
        print_summary(results, 3, out / task)
        write_report(results, out / task / "report.html", dataset)
    console.print(f"demo data in {out / 'data'}")
