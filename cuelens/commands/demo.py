"""``audit demo``: generate NLI and MCQ datasets with planted cues, then scan them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from cuelens.commands.common import SeedOpt, console, progress_bar, user_errors


@user_errors
def demo(
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="Output directory.")] = Path("demo-output"),
    size: Annotated[int, typer.Option(help="Training items per dataset (the test split is 20%, "
                                           "at least 200).")] = 3000,
    seed: SeedOpt = 0,
    language: Annotated[str, typer.Option(
        help="en, or hi/th/ja/zh: NLI data in Hindi, Thai, Japanese or Chinese, scanned with "
             "the segmenter auto picks (docs/languages.md).")] = "en",
) -> None:
    """Generate a synthetic NLI and MCQ dataset with planted cues and scan both.

    The planted cues (which words, which label, which rate) are documented in
    cuelens/data/synthetic.py; a correct scan ranks them at the top.

    Example: audit demo --out demo-output; audit demo --language zh --out demo-zh
    """
    from cuelens.audit.pipeline import scan_dataset
    from cuelens.audit.scan import ScanConfig
    from cuelens.audit.features import DEFAULT_FEATURES
    from cuelens.commands.scan import save_scan, staged_progress
    from cuelens.reports.options import ReportOptions
    from cuelens.data import load_dataset
    from cuelens.data.synthetic import write_demo_data
    from cuelens.outputs import check_writable_dir

    if size < 50:
        raise typer.BadParameter("--size must be at least 50")
    config = ScanConfig(seed=seed)
    config.validate()  # --seed, before any data is written
    check_writable_dir(out)
    data_dirs = write_demo_data(out / "data", size=size, seed=seed, language=language)
    for task, directory in data_dirs.items():
        dataset = load_dataset(str(directory))
        dataset.name = f"demo-{task}"
        with progress_bar(f"scanning {dataset.name}") as progress:
            result = scan_dataset(dataset, config,
                                  features=list(DEFAULT_FEATURES),
                                  progress=staged_progress(progress, True))
        save_scan(result, out / task, (None, ReportOptions()), 3)
    console.print(f"demo data in {escape(str(out / 'data'))}")
