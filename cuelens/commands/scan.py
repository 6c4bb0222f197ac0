"""``audit scan``: word cues, cue leakage and the easy/hard split of a dataset (docs/methods.md
§1–4)."""

from __future__ import annotations

import math
import time
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.markup import escape

from cuelens.commands.common import (AddressOpt, CacheDirOpt, ChoicesFieldOpt, DataArg,
                                     GroupFieldOpt, HfOpt, HypothesisFieldOpt, LabelFieldOpt,
                                     PremiseFieldOpt, SeedOpt, PlotlyOpt, SkipBadOpt, TestOpt,
                                     TrainOpt, check_address, console, field_map, progress_bar,
                                     terminal_text, user_errors, warn_skipped)
from cuelens.commands.preference import SubsetFieldOpt
from cuelens.audit.config import ScanConfig
from cuelens.audit.metrics import METRICS, Z_PRIORS
from cuelens.audit.results import (ConfigSection, CueFinding, CueRow, CueStats, DatasetSummary,
                                   EasyHardSection, FeatureRow, FeaturesSection, HygieneSection,
                                   LeakageSection, McqBaselinesSection, SegmentationSection,
                                   typed_reads)
from cuelens.audit.scan_outputs import RECORDS_MAX_ITEMS
from cuelens.audit.segmenters import SEGMENTERS
from cuelens.errors import UserError, check_at_least_1
from cuelens.reports.options import ReportOptions
from cuelens.wording import plural

if TYPE_CHECKING:
    from cuelens.audit.pipeline import Scan
    from cuelens.audit.ray_passes import RayPasses

DEFAULT = ScanConfig()  # the one place holding the scan's defaults


@user_errors
def scan(
    data: DataArg = None,
    train: TrainOpt = None,
    test: TestOpt = None,
    hf: HfOpt = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Output directory (default: audit-results/<dataset-name>/).")] = None,
    metric: Annotated[str, typer.Option(help=(
        f"Cue metric ({', '.join(METRICS)}) that orders each label's cues (cues.csv, results.json) "
        "and wins ties of the headline model, which is the best of every metric × aggregator "
        "(results.json leakage.best; docs/methods.md §11)."))]
    = DEFAULT.metric,
    min_count: Annotated[int, typer.Option(help="Minimum support #(w) for listed cues.")]
    = DEFAULT.min_count,
    ngrams: Annotated[int, typer.Option(help="1 = words; 2 = words and bigrams.")] = DEFAULT.ngrams,
    alpha: Annotated[float, typer.Option(help="Additive smoothing for PMI/LMI/RD.")]
    = DEFAULT.alpha,
    folds: Annotated[int, typer.Option(help="Folds of the easy/hard split and of CV.")]
    = DEFAULT.folds,
    iterations: Annotated[int, typer.Option(help="Iterations of the easy/hard split.")]
    = DEFAULT.iterations,
    seed: SeedOpt = DEFAULT.seed,
    in_sample_features: Annotated[bool, typer.Option(
        "--in-sample-features", help="Train SGD/LR on in-sample cue scores (the original paper's "
        "procedure) instead of cross-fitted ones.")] = DEFAULT.in_sample_features,
    z_prior: Annotated[str, typer.Option(
        help=f"Prior p0 of the z statistic: {'|'.join(Z_PRIORS)}.")]
    = DEFAULT.z_prior,
    include_premise: Annotated[bool, typer.Option(
        "--include-premise", help="Count premise words too (default: hypothesis/choice only).")]
    = DEFAULT.include_premise,
    max_fit_items: Annotated[int, typer.Option(
        "--max-fit-items", help="Train the SGD/LR aggregators and the BoW baseline on a seeded, "
        "label-stratified subsample of at most this many fitting instances (cue scores always "
        "use all of them); 0 = no cap.")] = DEFAULT.max_fit_items,
    flag_threshold: Annotated[float, typer.Option(
        help="Flag 'significant cue leakage' when the headline D exceeds this many points.")]
    = round(DEFAULT.flag_threshold * 100, 6),
    margin: Annotated[float, typer.Option(
        help="Conclude 'no meaningful leakage' only when the upper end of D's interval and of "
        "every rule's is below this many points (docs/methods.md §17).")]
    = round(DEFAULT.margin * 100, 6),
    segmenter: Annotated[str, typer.Option(
        help="How texts are cut into words: auto (from the scripts of the data), "
        f"{', '.join(SEGMENTERS)}, or hf:PATH (a Hugging Face tokenizer); "
        "docs/languages.md.")] = DEFAULT.segmenter,
    min_label_items: Annotated[int, typer.Option(
        "--min-label-items", help="Labels with fewer items than this in the fitting split are "
        "rare: warned about, their cues never called significant nor named in the next steps; "
        "0 keeps them (docs/robustness.md).")] = DEFAULT.min_label_items,
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
    group_field: GroupFieldOpt = None,
    subset_field: SubsetFieldOpt = None,
    features: Annotated[Optional[str], typer.Option(
        "--features", help="ICQ feature cues to score, comma-separated: word, negation, tense, "
        "sentiment, overlap, ner, typo; 'all' or 'none' (default: word, negation, tense, "
        "sentiment; none with --stats streaming; overlap, ner and typo cost several times more "
        "and run when named or with 'all').")] = None,
    cache_dir: CacheDirOpt = None,
    engine: Annotated[str, typer.Option(
        "--engine", help="local: stream the input into compact columns; memory: read whole "
        "files; ray: read and tokenise shards on a Ray cluster (cuelens\\[ray]; with --stats "
        "streaming: the chunks are read and tokenised and the statistics' passes run there). "
        "Same results.")]
    = "local",
    address: AddressOpt = None,
    item_files: Annotated[str, typer.Option(
        "--item-files", help="easy/hard item files: records (easy.jsonl/hard.jsonl, the input "
        "lines), ids (easy.ids.txt/hard.ids.txt), none; auto = records up to "
        f"{RECORDS_MAX_ITEMS:,} evaluated items, else ids.")] = "auto",
    stats: Annotated[str, typer.Option(
        "--stats", help="exact: cross-validation with grouped folds over items held in memory; "
        "streaming: passes over chunks (spilled to disk once they pass 64 MiB) with the exact "
        "scan's grouped folds up to a million instances (NLI items, MCQ choices) and hashed "
        "folds above, memory bounded by the vocabulary and --max-fit-items (tens of millions "
        "of NLI items; docs/large-datasets.md).")] = "exact",
    work_dir: Annotated[Optional[Path], typer.Option(
        "--work-dir", help="--stats streaming: where the chunk files go (about 2× the input's "
        "text size; created when missing; deleted at the end, or by the next run after a "
        "killed one; default: the system's temporary directory); --engine ray: where the "
        "workers' shard files go (a shared filesystem on a multi-node cluster).")] = None,
    plotly: PlotlyOpt = "inline",
) -> None:
    """Scan a dataset for word cues, measure cue leakage D and split it into easy/hard.

    Example: audit scan data/snli/ --out results/snli --fail-above 10

    Example: audit scan shards/ --stats streaming --out results/big

    Example: audit scan reward-bench.jsonl --subset-field subset (preference pairs: chosen/rejected
    or response_a/response_b/winner records are detected; docs/preference.md)
    """
    from cuelens.audit.features import DEFAULT_FEATURES
    from cuelens.audit.icq import parse_feature_option
    from cuelens.audit.engines import load_for_scan
    from cuelens.audit.pipeline import check_scan_outputs, scan_dataset
    from cuelens.audit.scan_outputs import item_files_mode
    from cuelens.commands.preference import print_preference, print_subsets, \
        scan_preference_data
    from cuelens.audit.scan_modes import check_features, scan_mode
    from cuelens.engine.options import EngineOptions

    started = time.time()
    check_address(address, engine)
    mode = scan_mode(data, train, test=test, stats=stats, engine=engine, hf=hf,
                     subset_field=subset_field)
    default = "none" if stats == "streaming" else ",".join(DEFAULT_FEATURES)
    feature_names = parse_feature_option(default if features is None else features)
    if features is not None:
        check_features(mode, feature_names)
    config = ScanConfig(metric=metric, min_count=min_count, ngrams=ngrams, alpha=alpha,
                        folds=folds, iterations=iterations, seed=seed,
                        in_sample_features=in_sample_features, z_prior=z_prior,
                        include_premise=include_premise, max_fit_items=max_fit_items,
                        flag_threshold=flag_threshold / 100.0, margin=margin / 100.0,
                        min_label_items=min_label_items, segmenter=segmenter)
    config.validate()  # before any data is read (an hf: segmenter's tokenizer loads here)
    report_options = ReportOptions(plotly=plotly)  # checked here, not after the scan's work
    check_fail_above_option(fail_above)
    check_at_least_1(top=top)  # 0 printed "no word points to it" beside every label
    item_files_mode(item_files, 0)
    fields = field_map(premise_field, hypothesis_field, label_field, choices_field, group_field)
    if mode.preference:
        result, out_dir = scan_preference_data(data, train, test, subset_field, skip_bad, config,
                                               out, report, item_files)
    elif mode.streaming:
        from cuelens.audit.ray_passes import RayPasses

        scan_streamed(data, train, test, fields, skip_bad, config, out,
                      (report, report_options), top, item_files, work_dir, started,
                      fail_above, features=(feature_names, cache_dir),
                      passes=RayPasses(address) if engine == "ray" else None)
        return
    else:
        with progress_bar(f"reading ({engine} engine)") as progress:
            loaded = load_for_scan(engine, data, train=str(train) if train else None,
                                   test=str(test) if test else None, hf=hf, fields=fields,
                                   skip_bad=skip_bad, options=EngineOptions(
                                       ngrams=ngrams, include_premise=include_premise,
                                       address=address, progress=progress,
                                       work_dir=work_dir))
        dataset = loaded.dataset
        warn_skipped(dataset)
        if sum(len(split) for split in dataset.splits.values()) > STREAMING_HINT_ITEMS:
            console.print("[yellow]note:[/] exact statistics hold every item in memory (about "
                          "0.5 GB per million); --stats streaming keeps memory flat "
                          "(docs/large-datasets.md)")
        out_dir = out or Path("audit-results") / dataset.name
        check_scan_outputs(dataset.input_paths, len(dataset.test), out_dir, report,
                           cache_dir=cache_dir,
                           uses_cache=feature_names != [], item_files=item_files)
        with progress_bar(f"scanning {dataset.name}") as progress:
            result = scan_dataset(dataset, config, features=feature_names, cache_dir=cache_dir,
                                  progress=staged_progress(progress, feature_names != []),
                                  tokens=loaded.tokens, subset_field=subset_field or None)
    result.started = started
    save_scan(result, out_dir, (report, report_options), top, item_files)
    print_preference(result.results.get("preference"))  # None but for preference pairs
    print_subsets(result.results.get("subsets"))
    check_fail_above(result.results, fail_above)


#: The in-memory scan's stages (the first word of the library's stage names) → the share of
#: the bar each fills, in the order they run; the ICQ features (``features: parse <split>``,
#: ``features: score``) take the rest when they are audited. Other stages (``bias items``)
#: leave the bar where it is.
WORD_STAGES = {"tokenise": 0.05, "leakage": 0.55, "easy_hard": 0.3, "hygiene": 0.1}
FEATURES_SHARE = 0.6  # of the whole bar: parsing dominates a default scan


def staged_progress(progress: Callable[[str, float], None],
                    with_features: bool) -> Callable[[str, float], None]:
    """The bar's completion from the library's per-stage fractions: each stage fills its own
    span (:data:`WORD_STAGES`, then the features), so the bar never runs back at a new stage
    (nor jumps ahead: a stage without a span keeps the bar where it is); the description names
    the stage (and the split being parsed)."""
    scale = 1.0 - FEATURES_SHARE if with_features else 1.0
    spans, start = {}, 0.0
    for name, share in WORD_STAGES.items():
        spans[name] = (start, share * scale)
        start += share * scale
    spans["features:"] = (start, 1.0 - start)
    reached = [0.0]

    def update(stage: str, fraction: float) -> None:
        span = spans.get(stage.split(" ", 1)[0])
        if span is not None:
            reached[0] = max(reached[0], span[0] + span[1] * fraction)
        progress(stage, reached[0])
    return update


STREAMING_HINT_ITEMS = 5_000_000  # above this, the exact statistics suggest streaming ones


def check_fail_above_option(fail_above: float | None) -> None:
    """Refuse a ``--fail-above`` no D can exceed or stay below (nan): the gate would never
    fail."""
    if fail_above is not None and math.isnan(fail_above):
        raise UserError("--fail-above must be a number of points, not nan")


def check_fail_above(results: dict, fail_above: float | None) -> None:
    """Exit 1 when the headline D exceeds ``--fail-above`` (points); a scan without one (no
    word-cue leakage table) is a :class:`UserError`: the gate would pass whatever the data."""
    if fail_above is None:
        return
    leak = LeakageSection.in_results(results)
    if leak is None:
        status = results.get("conclusion", {}).get("status", "none")
        raise UserError("--fail-above gates on the headline D of the word-cue leakage table, "
                        "which this scan has not (e.g. MCQ items with different numbers of "
                        f"choices); its conclusion is {status!r} (results.json 'conclusion')")
    best = leak.best["D"]
    if best * 100 > fail_above:
        console.print(f"[bold red]FAIL:[/] headline D = {best * 100:.1f} points > {fail_above:g}")
        raise typer.Exit(1)


def scan_streamed(data, train, test, fields, skip_bad: bool, config: ScanConfig,
                  out: Path | None, report: tuple[Path | None, ReportOptions], top: int,
                  item_files: str, work_dir: Path | None, started: float,
                  fail_above: float | None, *,
                  features: tuple[list[str] | None, Path | None] = ([], None),
                  passes: RayPasses | None = None) -> None:
    """``--stats streaming`` (docs/large-datasets.md; the work directory and a full disk:
    docs/robustness.md): the passes run on ``passes`` (e.g. Ray workers; default: here);
    ``features``: the ICQ feature names (``None``: all) and the parse cache directory."""
    from cuelens.audit.pipeline import check_scan_outputs
    from cuelens.audit.chunked_data import ChunkedData, read_local
    from cuelens.audit.chunk_scan import scan_files

    def out_dir(chunked: ChunkedData) -> Path:
        return out or Path("audit-results") / chunked.name

    def loaded(chunked: ChunkedData) -> None:
        warn_skipped(chunked)
        check_scan_outputs(chunked.input_paths, chunked.store.n_eval, out_dir(chunked),
                           report[0], cache_dir=features[1], uses_cache=features[0] != [],
                           item_files=item_files)

    with progress_bar("scanning (streaming)") as progress:
        result = scan_files(str(data) if data else None, train=str(train) if train else None,
                            test=str(test) if test else None, config=config, fields=fields,
                            skip_bad=skip_bad, work_dir=work_dir, features=features[0],
                            cache_dir=features[1], progress=progress,
                            reader=passes.read if passes else read_local, passes=passes,
                            loaded=loaded)
    assert isinstance(result.dataset, ChunkedData)
    try:
        result.started = started
        save_scan(result, out_dir(result.dataset), report, top, item_files)
    finally:
        result.dataset.close()
    check_fail_above(result.results, fail_above)


@typed_reads()  # the sections of results.json, written here, read as themselves: never parsed
def save_scan(scan: Scan, out_dir: Path, report: tuple[Path | None, ReportOptions], top: int,
              item_files: str = "auto") -> None:
    """Write the scan's files and report (``report``: its path, default in ``out_dir``, and
    rendering options), then print the terminal summary."""
    from cuelens.atomic import output_set
    from cuelens.results import ScanResult

    result = ScanResult.of(scan)
    with output_set():  # results, tables and report appear together or not at all
        path, options = report
        files = result.save(out_dir, report=path is None, item_files=item_files,
                            report_options=options)
        written = result.to_html(path, options) if path is not None else out_dir / "report.html"
    print_summary(result.results, top, out_dir, files)
    if getattr(result, "bias", None) is not None:
        from cuelens.audit.bias_items import PARQUET_MISSING, parquet_available

        if not parquet_available():
            console.print(f"[yellow]note:[/] {escape(PARQUET_MISSING)}")
    console.print(f"report: [bold]{escape(str(written))}[/]")


def print_mcq_baselines(section: McqBaselinesSection | None) -> None:
    """One plain-English line per MCQ artifact baseline and per split's gold positions."""
    from cuelens.audit.chance import positions_verdict
    from cuelens.audit.mcq_baselines import baseline_verdict

    if section is None:
        return
    console.print(f"[bold]MCQ artifact baselines[/] (chance {section.chance * 100:.1f}%):")
    for row in section.rows:
        mark = "[bold red]![/] " if row.significant else "  "
        console.print(f"{mark}{terminal_text(baseline_verdict(row, section))}")
    for role, test in section.gold_position.items():
        mark = "[bold red]![/] " if test.significant else "  "
        verdict = positions_verdict(test.to_json(), f"gold answers ({role})")
        console.print(f"{mark}{terminal_text(verdict)}")


def print_segmentation(results: dict) -> None:
    """The segmenter line (its name and why), the ICQ features skipped for the text's language
    and the scan's warnings (docs/languages.md)."""
    chosen = SegmentationSection.in_results(results)
    if chosen is not None:
        console.print(f"segmenter: {escape(chosen.name)} ({escape(chosen.reason)})")
    features = FeaturesSection.in_results(results)
    skipped = features.skipped if features is not None else None
    if skipped:
        console.print(f"features skipped ({escape(skipped[0]['reason'])}): "
                      f"{escape(', '.join(row['feature'] for row in skipped))}")
    for warning in results.get("warnings", []):
        console.print(f"[yellow]warning:[/] {terminal_text(warning)}")


def print_summary(results: dict, top: int, out_dir: Path, files: dict | None = None) -> None:
    """A short terminal summary: sizes, headline D, top cues per label, hard fraction; a next
    step that uses an output file names it when it was written (``files``: key → path)."""
    from rich.table import Table

    from cuelens.audit.conclusion import measurable
    from cuelens.audit.examples import top_cues_by_label
    from cuelens.audit.findings import d_with_ci
    from cuelens.jsonio import format_number

    data, config = DatasetSummary.required_in(results), ConfigSection.of(results)
    mcq = McqBaselinesSection.in_results(results)
    sizes = ", ".join(f"{role} {s.items}" for role, s in data.splits.items())
    console.print(f"[bold]{terminal_text(data.name or '')}[/] ({data.task.upper()}; "
                  f"{terminal_text(sizes)})")
    print_conclusion(results)
    if data.split_roles:
        from cuelens.data.dataset import roles_note

        console.print(f"[yellow]note:[/] {escape(roles_note(data.split_roles))}")
    for warning in (data.labels or {}).get("warnings", []):
        console.print(f"[yellow]warning:[/] {terminal_text(warning)}")
    print_segmentation(results)
    leak = LeakageSection.in_results(results)
    if leak is None or not measurable(results):  # nothing to show beside the rules
        print_mcq_baselines(mcq)
        for note in results.get("notes", []):
            console.print(f"[yellow]note:[/] {terminal_text(note)}")
        print_next_steps(results, files)
        console.print(f"results written to [bold]{escape(str(out_dir))}[/]")
        return
    best, base = leak.best, leak.reference
    console.print(f"{base['name']} {base['accuracy'] * 100:.1f}% · cue-only model "
                  f"{best['accuracy'] * 100:.1f}% ({best['metric']}/{best['aggregator']}) · "
                  f"D = {d_with_ci(best)} → {VERDICTS.get(leak.verdict or '', '')}")
    if leak.interval_note is not None:
        console.print(f"  [dim]{terminal_text(leak.interval_note)}[/]")
    finding = CueFinding.in_results(results)
    if finding is not None:
        console.print(f"significant cue words: {finding.n_significant}, in "
                      f"{(finding.share_items or 0) * 100:.1f}% of the evaluated items")
    for baseline in leak.baselines or []:  # D against the verdict's baseline, like the headline
        console.print(f"  baseline {escape(baseline['name'])}: {baseline['accuracy'] * 100:.1f}% "
                      f"(D {(baseline['accuracy'] - base['accuracy']) * 100:+.1f})")
    print_mcq_baselines(mcq)
    table = Table("label", f"strongest cues by z (count ≥ {config.min_count})",
                  title="Top cue words")
    strongest = top_cues_by_label(CueRow.rows_in(results), top)
    for label in data.label_names if data.task != "mcq" else strongest:
        group = strongest.get(label, [])
        table.add_row(terminal_text(label), terminal_text(", ".join(
            f"{c.token} (n={c.count}, z={format_number(c.metrics['z'], 1)}"
            f"{'*' if c.significant else ''})" for c in group) or "no word points to it"))
    console.print(table)
    stats = CueStats.in_results(results)
    if stats is not None:
        console.print(f"* significant: z > {stats.bonferroni_z:.2f} "
                      "(Bonferroni-corrected, 5% level)")
    features = FeatureRow.rows_in(results)
    if features:
        top_features = ", ".join(f"{escape(f.feature)}={escape(str(f.value))} "
                                 f"({f.cueness * 100:.1f}%)" for f in features[:5])
        console.print(f"top feature cues by cueness: {escape(top_features)}")
    eh = EasyHardSection.required_in(results)
    if eh.chance_level:
        console.print(f"easy/hard: {eh.easy} easy, {eh.hard} hard — indistinguishable "
                      "from chance (the cue-only accuracy CI covers the baseline): not a finding")
    else:
        console.print(f"easy/hard: {eh.easy} easy, {eh.hard} hard "
                      f"(hard fraction {(eh.hard_fraction or 0) * 100:.1f}%; higher is "
                      "healthier)")
    print_hygiene(HygieneSection.in_results(results), data.split_roles)
    print_next_steps(results, files)
    console.print(f"results written to [bold]{escape(str(out_dir))}[/]")


def print_next_steps(results: dict, files: dict | None) -> None:
    """The numbered next steps; one that uses an output file names it when it was written."""
    for i, step in enumerate(results.get("next_steps", []), 1):
        path = (files or {}).get(step.get("output", ""))
        where = f" (listed in {path})" if path else ""
        console.print(f"{'next steps:' if i == 1 else '':11} {i}. "
                      f"{terminal_text(step['action'] + where)} "
                      f"[dim]({terminal_text(step['why'])})[/]")


CONCLUSION_STYLES = {"leakage": "bold red", "no_meaningful_leakage": "bold green",
                     "inconclusive": "bold yellow"}


def print_conclusion(results: dict) -> None:
    """The dataset's conclusion (docs/methods.md §17), the first statement of the summary."""
    from cuelens.audit.conclusion import conclusion_of
    from cuelens.audit.results import CONCLUSION_TEXT

    conclusion = conclusion_of(results)
    console.print(f"[{CONCLUSION_STYLES[conclusion.status]}]"
                  f"{CONCLUSION_TEXT[conclusion.status]}[/]: "
                  f"{terminal_text(conclusion.reason)}")


VERDICTS = {"significant": "[bold red]significant cue leakage[/] (CI above the threshold)",
            "mild": "[yellow]cue leakage[/] (CI above chance, not surely above the threshold)",
            "chance": "no cue-only model beats the baseline",
            "below chance": "below chance"}


def print_hygiene(section: HygieneSection | None, split_roles: dict | None = None) -> None:
    """Duplicates / overlap counts per split and the hygiene warnings (a split whose role was
    inferred, ``split_roles``, named by its file)."""
    from cuelens.data.dataset import role_names

    if section is None:
        return
    names = role_names(split_roles)
    for role, c in section.splits.items():
        role = names.get(role, role)
        kind, pairs = c.constructed_pairs
        console.print(f"hygiene {escape(role)}: {plural(c.duplicate_items, 'duplicate')}, "
                      f"{plural(c.near_duplicate_pairs, 'near-duplicate pair')}, "
                      f"{plural(pairs, kind.removesuffix('_pairs') + ' pair')}, "
                      f"{plural(c.label_conflict_items, 'label-noise candidate')}")
    for row in section.overlap:
        fit, evaluated = names.get(row.fit, row.fit), names.get(row.eval, row.eval)
        console.print(f"overlap {escape(fit)} → {escape(evaluated)}: {row.exact} "
                      f"exact, {row.near} near, {row.shared_premise} sharing a premise")
    for warning in section.warnings:
        console.print(f"[yellow]warning:[/] {terminal_text(warning)}")

