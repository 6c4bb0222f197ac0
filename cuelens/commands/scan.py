"""``audit scan``: word cues, cue leakage and the easy/hard split of a dataset (SPEC §1–4)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from cuelens.commands.common import (AddressOpt, ChoicesFieldOpt, DataArg, HfOpt,
                                     HypothesisFieldOpt,
                                     LabelFieldOpt, PremiseFieldOpt, SeedOpt, SkipBadOpt, TestOpt,
                                     TrainOpt, console, field_map, progress_bar, user_errors,
                                     warn_skipped)

METRIC_NAMES = "freq, cp, pmi, lmi, rd, ad, cos, wp, z, npmi"


@user_errors
def scan(
    data: DataArg = None,
    train: TrainOpt = None,
    test: TestOpt = None,
    hf: HfOpt = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Output directory (default: audit-results/<dataset-name>/).")] = None,
    metric: Annotated[str, typer.Option(help=f"Headline cue metric ({METRIC_NAMES}).")] = "cp",
    min_count: Annotated[int, typer.Option(help="Minimum support #(w) for listed cues.")] = 5,
    ngrams: Annotated[int, typer.Option(help="1 = words; 2 = words and bigrams.")] = 1,
    alpha: Annotated[float, typer.Option(help="Additive smoothing for PMI/LMI/RD.")] = 1.0,
    folds: Annotated[int, typer.Option(help="Folds of the easy/hard split and of CV.")] = 5,
    iterations: Annotated[int, typer.Option(help="Iterations of the easy/hard split.")] = 5,
    seed: SeedOpt = 0,
    in_sample_features: Annotated[bool, typer.Option(
        "--in-sample-features", help="Train SGD/LR on in-sample cue scores (the original paper's "
        "procedure) instead of cross-fitted ones.")] = False,
    z_prior: Annotated[str, typer.Option(help="Prior p0 of the z statistic: empirical|uniform.")]
    = "empirical",
    include_premise: Annotated[bool, typer.Option(
        "--include-premise", help="Count premise words too (default: hypothesis/choice only).")]
    = False,
    max_fit_items: Annotated[int, typer.Option(
        "--max-fit-items", help="Train the SGD/LR aggregators and the BoW baseline on a seeded, "
        "label-stratified subsample of at most this many fitting instances (cue scores always "
        "use all of them); 0 = no cap.")] = 100_000,
    flag_threshold: Annotated[float, typer.Option(
        help="Flag 'significant cue leakage' when the headline D exceeds this many points.")] = 10.0,
    fail_above: Annotated[Optional[float], typer.Option(
        help="Exit with code 1 when the headline D exceeds this many points (dataset CI).")] = None,
    top: Annotated[int, typer.Option(help="Cues per label printed to the terminal.")] = 5,
    report: Annotated[Optional[Path], typer.Option(
        "--report", help="HTML report to write (default: report.html in the output directory).")]
    = None,
    premise_field: PremiseFieldOpt = None,
    hypothesis_field: HypothesisFieldOpt = None,
    label_field: LabelFieldOpt = None,
    choices_field: ChoicesFieldOpt = None,
    skip_bad: SkipBadOpt = False,
    features: Annotated[str, typer.Option(
        "--features", help="ICQ feature cues to score, comma-separated: word, negation, tense, "
        "sentiment, overlap, ner, typo; 'all' or 'none'.")] = "all",
    cache_dir: Annotated[Optional[Path], typer.Option(
        "--cache-dir", help="Parse cache of the ICQ features (safe to delete; default: "
        "$CUELENS_CACHE_DIR or ~/.cache/cuelens/parse).")] = None,
    engine: Annotated[str, typer.Option(
        "--engine", help="local: stream the input into compact columns; memory: read whole "
        "files; ray: read and tokenise shards on a Ray cluster (cuelens[ray]). Same results.")]
    = "local",
    address: AddressOpt = None,
    item_files: Annotated[str, typer.Option(
        "--item-files", help="easy/hard item files: records (easy.jsonl/hard.jsonl, the input "
        "lines), ids (easy.ids.txt/hard.ids.txt), none; auto = records up to 1,000,000 "
        "evaluated items, else ids.")] = "auto",
) -> None:
    """Scan a dataset for word cues, measure cue leakage D and split it into easy/hard.

    Example: audit scan data/snli/ --out results/snli --fail-above 10
    """
    from cuelens.audit.icq import parse_feature_option
    from cuelens.audit.pipeline import check_scan_outputs, scan_dataset
    from cuelens.audit.results import item_files_mode
    from cuelens.audit.scan import ScanConfig
    from cuelens.engine import EngineOptions, load_for_scan

    started = time.time()
    feature_names = parse_feature_option(features)  # fail fast on unknown names
    config = ScanConfig(metric=metric, min_count=min_count, ngrams=ngrams, alpha=alpha,
                        folds=folds, iterations=iterations, seed=seed,
                        in_sample_features=in_sample_features, z_prior=z_prior,
                        include_premise=include_premise, max_fit_items=max_fit_items,
                        flag_threshold=flag_threshold / 100.0)
    config.validate()  # before any data is read
    item_files_mode(item_files, 0)
    with progress_bar(f"reading ({engine} engine)") as progress:
        loaded = load_for_scan(engine, data, train=str(train) if train else None,
                               test=str(test) if test else None, hf=hf,
                               fields=field_map(premise_field, hypothesis_field, label_field,
                                                choices_field), skip_bad=skip_bad,
                               options=EngineOptions(ngrams=ngrams,
                                                     include_premise=include_premise,
                                                     address=address, progress=progress))
    dataset = loaded.dataset
    warn_skipped(dataset)
    out_dir = out or Path("audit-results") / dataset.name
    check_scan_outputs(dataset, out_dir, report, cache_dir=cache_dir,
                       uses_cache=feature_names != [], item_files=item_files)
    with progress_bar(f"scanning {dataset.name}") as progress:
        result = scan_dataset(dataset, config, features=feature_names, cache_dir=cache_dir,
                              progress=progress, tokens=loaded.tokens)
    result.started = started
    save_scan(result, out_dir, report, top, item_files)
    best = result.results["leakage"]["best"]["D"]
    if fail_above is not None and best * 100 > fail_above:
        console.print(f"[bold red]FAIL:[/] headline D = {best * 100:.1f} points > {fail_above:g}")
        raise typer.Exit(1)


def save_scan(result, out_dir: Path, report: Path | None, top: int,
              item_files: str = "auto") -> None:
    """Write the scan's files and report, then print the terminal summary."""
    from rich.markup import escape

    from cuelens.io import output_set

    with output_set():  # results, tables and report appear together or not at all
        result.save(out_dir, report=report is None, item_files=item_files)
        written = result.to_html(report) if report is not None else out_dir / "report.html"
    print_summary(result.results, top, out_dir)
    console.print(f"report: [bold]{escape(str(written))}[/]")


def print_summary(results: dict, top: int, out_dir: Path) -> None:
    """A short terminal summary: sizes, headline D, top cues per label, hard fraction."""
    from rich.markup import escape
    from rich.table import Table

    from cuelens.audit.examples import top_cues_by_label

    data, leak, config = results["dataset"], results["leakage"], results["config"]
    sizes = ", ".join(f"{role} {s['items']}" for role, s in data["splits"].items())
    console.print(f"[bold]{escape(data['name'])}[/] ({data['task'].upper()}; {escape(sizes)})")
    best = leak["best"]
    verdict = "[bold red]significant cue leakage[/]" if leak["flagged"] else "[green]below the flag[/]"
    console.print(f"majority {leak['majority'] * 100:.1f}% · best cue-only accuracy "
                  f"{best['accuracy'] * 100:.1f}% ({best['metric']}/{best['aggregator']}) · "
                  f"D = {best['D'] * 100:+.1f} points → {verdict}")
    for baseline in leak.get("baselines", []):
        console.print(f"  baseline {escape(baseline['name'])}: {baseline['accuracy'] * 100:.1f}% "
                      f"(D {baseline['D'] * 100:+.1f})")
    table = Table("label", f"top cues by {config['metric']} (count ≥ {config['min_count']})",
                  title="Top cue words")
    for label, group in top_cues_by_label(results["cues"], config["metric"], top).items():
        table.add_row(escape(label), escape(", ".join(
            f"{c['token']} (n={c['count']}, z={c['metrics']['z']:.1f}"
            f"{'*' if c['significant'] else ''})" for c in group)))
    console.print(table)
    console.print(f"* significant: z > {results['cue_stats']['bonferroni_z']:.2f} "
                  "(Bonferroni-corrected, 5% level)")
    if results.get("features"):
        top_features = ", ".join(f"{escape(f['feature'])}={escape(str(f['value']))} "
                                 f"({f['cueness'] * 100:.1f}%)" for f in results["features"][:5])
        console.print(f"top feature cues by cueness: {top_features}")
    eh = results["easy_hard"]
    console.print(f"easy/hard: {eh['easy']} easy, {eh['hard']} hard "
                  f"(hard fraction {eh['hard_fraction'] * 100:.1f}%; higher is healthier)")
    console.print(f"results written to [bold]{escape(str(out_dir))}[/]")

