"""``audit filter``: a debiased subset by z-filtering or AFLite, rescanned and compared with the
input (docs/mitigation.md)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from cuelens.commands.common import (DataSource, SeedOpt, console, data_options, progress_bar,
                                     user_errors)
from cuelens.data.dataset import Task
from cuelens.errors import UserError
from cuelens.mitigate import CUTOFF, ENSEMBLE, THRESHOLD, TRAIN_SIZE
from cuelens.wording import plural


@user_errors
@data_options()
def filter(  # noqa: A001 - the sub-command's name
    source: DataSource,
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="Output directory, replaced as a whole when the run ends: "
        "train.jsonl (filtered), test.jsonl (unchanged), filter.json, scan-before/, "
        "scan-after/, compare.html.")] = Path("audit-filtered"),
    method: Annotated[str, typer.Option(
        "--method", help="z: remove the fewest items so that no cue stays significant by z "
        "(Bonferroni, 5%), label shares kept; aflite: adversarial filtering with linear "
        "models.")] = "z",
    balance: Annotated[bool, typer.Option(
        "--balance", help="z: restore the label shares by re-sampling (copies) instead of "
        "removing more items.")] = False,
    model: Annotated[Optional[str], typer.Option(
        "--model", "-m", help="aflite: sentence-embedding features from this encoder (e.g. "
        "minilm) instead of the cue words.")] = None,
    ensemble: Annotated[int, typer.Option(help="aflite: linear models per round (m).")]
    = ENSEMBLE,
    cutoff: Annotated[int, typer.Option(help="aflite: items removed per round (k).")] = CUTOFF,
    threshold: Annotated[float, typer.Option(help="aflite: predictability threshold (τ).")]
    = THRESHOLD,
    train_size: Annotated[int, typer.Option(help="aflite: training items per model (t).")]
    = TRAIN_SIZE,
    target: Annotated[int, typer.Option(help="aflite: stop at this many items (0: when fewer "
                                             "than k items reach τ).")] = 0,
    min_count: Annotated[int, typer.Option(help="Minimum support #(w) of a tested cue.")] = 5,
    seed: SeedOpt = 0,
) -> None:
    """Write a debiased subset of the training split (a single file: of the file) and show,
    by rescanning it, how much cue leakage is left.

    Example: audit filter data/snli/ --method z --out snli-z

    Example: audit filter data/copa/ --method aflite --out copa-aflite
    """
    from cuelens.audit.compare import compare_scans
    from cuelens.audit.config import ScanConfig
    from cuelens.audit.findings import d_with_ci
    from cuelens.audit.pipeline import scan_dataset
    from cuelens.atomic import output_set, replace_directory
    from cuelens.outputs import check_output_dir
    from cuelens.mitigate.aflite import AFLiteOptions, load_encoder
    from cuelens.mitigate.subset import (METHODS, OUTPUT_NAMES, filter_dataset, fitting_split,
                                         load_subset, subset_paths, write_subset)
    from cuelens.reports import render_report
    from cuelens.results import ScanResult

    if method not in METHODS:
        raise UserError(f"unknown --method {method!r}; choose from {', '.join(METHODS)}")
    if method != "aflite" and (model is not None):
        raise UserError("--model gives AFLite its features: use it with --method aflite")
    if method != "z" and balance:
        raise UserError("--balance applies to --method z")
    aflite_options = AFLiteOptions(ensemble, cutoff, threshold, train_size, target, seed)
    given = [f"--{f.name.replace('_', '-')}" for f in fields(AFLiteOptions)
             if f.name != "seed" and getattr(aflite_options, f.name) != f.default]
    if method != "aflite" and given:  # they were silently ignored
        raise UserError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to "
                        "--method aflite")
    config = ScanConfig(min_count=min_count, seed=seed)
    config.validate()
    aflite_options.validate()
    encoder = load_encoder(model) if model is not None else None  # before the data and its scan
    dataset = source.load()
    check_output_dir(out, dataset.input_paths, OUTPUT_NAMES)
    if dataset.task == Task.MCQ and dataset.n_choices is None:
        raise UserError("filtering needs the same number of choices in every item")
    if method == "aflite":
        aflite_options.check_items(len(fitting_split(dataset)))
    with progress_bar(f"scanning {dataset.name}") as progress:
        before = scan_dataset(dataset, config, features=(), progress=progress)
    with progress_bar(f"filtering ({method})") as progress:
        subset = filter_dataset(dataset, method, config, balance=balance, model=encoder,
                                aflite_options=aflite_options, progress=progress)
    compared: list[dict] = []

    def build(staging: Path) -> None:
        """Every output into ``staging``: the subset, its rescan (of the files just written,
        never of an earlier run's) and the comparison."""
        staged = write_subset(staging, dataset, subset)
        filtered = load_subset(staged, f"{dataset.name} ({method}-filtered)", source.fields)
        with progress_bar("rescanning the subset") as progress:
            after = scan_dataset(filtered, config, features=(), progress=progress)
        compared.append(compare_scans(before.results, after.results, dataset.name,
                                      filtered.name))
        with output_set():
            ScanResult.of(before).save(staging / "scan-before")
            ScanResult.of(after).save(staging / "scan-after")
            render_report(compared[0], staging / "compare.html", inputs=dataset.input_paths)

    replace_directory(out, build)
    result, paths = compared[0], subset_paths(out, dataset)
    n_before, n_kept = len(subset.weight), int((subset.weight > 0).sum())
    copies = int(subset.weight.sum()) - n_kept  # --balance's
    added = f" and added {plural(copies, 'copy', 'copies')} ({n_kept + copies:,} lines)" \
        if copies else ""
    console.print(f"{escape(method)}-filtering kept {n_kept:,} of {plural(n_before, 'item')}{added} "
                  f"→ [bold]{escape(str(paths['train']))}[/]")
    for label, counts in subset.report["per_label"].items():
        added = f", {plural(counts['added'], 'copy', 'copies')} added" if counts["added"] else ""
        console.print(f"  {escape(label)}: {counts['before']} → {counts['after']} "
                      f"({counts['removed']} removed{added})")
    for cue in subset.report.get("cues", [])[:10]:
        added = f", {cue['added']:,} added" if cue["added"] else ""
        console.print(f"  cue {escape(str(cue['token']))}→{escape(str(cue['label']))}: "
                      f"{cue['removed']:,} removed{added}")
    for label, side in (("before", result["before"]), ("after", result["after"])):
        console.print(f"{label:6} D = {d_with_ci(side)} ({escape(side['verdict'])}; "
                      f"{plural(side['n_significant_cues'], 'significant cue')})")
    console.print(f"change in D: {result['delta_D'] * 100:+.1f} points · compare page: "
                  f"[bold]{escape(str(out / 'compare.html'))}[/]")

