"""``audit probe``: measure how much a model relies on a dataset's cues (SPEC §6)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from cuelens.commands.common import (ChoicesFieldOpt, DataArg, HfOpt, HypothesisFieldOpt,
                                     LabelFieldOpt, PremiseFieldOpt, SeedOpt, SkipBadOpt, TestOpt,
                                     TrainOpt, console, load_data, user_errors)
from cuelens.commands.model_options import (DeviceOpt, MaxLengthOpt, ModelOpt, TrustOpt,
                                            item_progress, load_model)
from cuelens.errors import UserError


@user_errors
def probe(
    data: DataArg = None,
    model: ModelOpt = None,
    predictions: Annotated[Optional[Path], typer.Option(
        "--predictions", "-p", help='Predictions file (JSONL {"id", "prediction"[, "probs"]}) '
                                    "instead of --model.")] = None,
    scan: Annotated[Optional[Path], typer.Option(
        "--scan", help="Reuse this `audit scan` output directory's cues and easy/hard split.")]
    = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Output directory (default: audit-results/DATASET/probe/).")]
    = None,
    top: Annotated[int, typer.Option(help="Top word cues per label to test.")] = 5,
    rank_by: Annotated[str, typer.Option(help="Cue metric ranking the top word cues.")] = "lmi",
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples for the ΔAcc CIs.")] = 1000,
    min_items: Annotated[int, typer.Option(help="Minimum test items with and without a cue.")]
    = 10,
    batch_size: Annotated[Optional[int], typer.Option(
        help="Inference batch size (default: 64 on CPU, 256 on GPU).")] = None,
    max_length: MaxLengthOpt = 128,
    int8: Annotated[bool, typer.Option(
        "--int8", help="CPU: dynamic int8 quantisation for inference (~3x faster; "
                       "probabilities differ slightly from float32).")] = False,
    device: DeviceOpt = "auto",
    trust_remote_code: TrustOpt = False,
    seed: SeedOpt = 0,
    short_circuit: Annotated[bool, typer.Option(
        "--short-circuit", help="MCQ: attention test AW and per-operator pass rates (SPEC §7).")]
    = False,
    t1: Annotated[float, typer.Option(help="AW threshold t1 (count of scores above it > 0).")]
    = 0.14,
    t2: Annotated[float, typer.Option(help="AW threshold t2 (count of scores above it ≥ 2).")]
    = 0.13,
    sc_ops: Annotated[str, typer.Option(help="Operators of the black-box short-circuit test.")]
    = "co,mt,neg+,neg-,ner,pr,pi,adv,syn,voice",
    train: TrainOpt = None,
    test: TestOpt = None,
    hf: HfOpt = None,
    premise_field: PremiseFieldOpt = None,
    hypothesis_field: HypothesisFieldOpt = None,
    label_field: LabelFieldOpt = None,
    choices_field: ChoicesFieldOpt = None,
    skip_bad: SkipBadOpt = False,
) -> None:
    """Probe a model (or a predictions file) for reliance on the dataset's cues.

    Writes results.json with the scan sections plus `probe` (accuracy, ΔAcc per cue with 95%
    bootstrap CIs, distribution test, easy/hard accuracy, data map) and predictions.jsonl.

    Example: audit probe data/snli/ --model models/snli-minilm --scan results/snli --out probe/
    """
    from cuelens.audit.metrics import METRICS
    from cuelens.io import ensure_not_input

    started = time.time()
    if (model is None) == (predictions is None):
        raise UserError("give exactly one of --model and --predictions")
    if rank_by not in METRICS:
        raise UserError(f"unknown --rank-by metric '{rank_by}' (choose from {', '.join(METRICS)})")
    for name, value in (("top", top), ("bootstrap", bootstrap), ("min-items", min_items)):
        if value < 1:
            raise UserError(f"--{name} must be at least 1")
    dataset = load_data(data, train, test, hf, premise_field, hypothesis_field, label_field,
                        choices_field, skip_bad)
    out_dir = out or Path("audit-results") / dataset.name / "probe"
    inputs = dataset.input_paths
    inputs += [p for p in (predictions, scan and scan / "results.json") if p is not None]
    for name in ("results.json", "predictions.jsonl", "run.json"):
        ensure_not_input(out_dir / name, inputs)
    from cuelens.probes.sections import ProbeContext, run_sections

    preds, info, clf = _predictions(dataset, model, predictions, batch_size, max_length, device,
                                    trust_remote_code, int8)
    results, item_easy = _scan_results(dataset, scan, seed)
    model_dir = Path(clf.resolved) if clf is not None and Path(clf.resolved).is_dir() else None
    ctx = ProbeContext(dataset=dataset, predictions=preds, cues=_cues(dataset, results, top,
                                                                      rank_by),
                       model_info=info, item_easy=item_easy, model_dir=model_dir, classifier=clf,
                       seed=seed, n_boot=bootstrap, min_items=min_items)

    if short_circuit:
        from cuelens.probes.short_circuit import enable

        enable(ctx, t1=t1, t2=t2, ops=sc_ops)

    results["probe"] = run_sections(ctx)
    _write(out_dir, dataset, results, ctx, started)
    print_probe(results["probe"], out_dir)


def _scan_results(dataset, scan: Path | None, seed: int):
    if scan is not None:
        from cuelens.probes.scan_source import load_scan_dir

        return load_scan_dir(scan, dataset)
    from cuelens.commands.scan import scan_dataset

    return scan_dataset(dataset, seed=seed)


def _cues(dataset, results: dict, top: int, rank_by: str):
    from cuelens.audit.examples import top_cue_tokens
    from cuelens.probes.cues import feature_cues, word_cues

    tokens = top_cue_tokens(results["cues"], rank_by, top)
    cues = word_cues(dataset, tokens, results["config"]["ngrams"])
    try:
        cues += feature_cues(dataset, results.get("features", []))
    except ImportError:
        console.print("[yellow]warning:[/] ICQ features unavailable; testing word cues only")
    return cues


def _predictions(dataset, model, predictions, batch_size, max_length, device,
                 trust_remote_code, int8):
    """(predictions, results ``probe.model``, loaded classifier or None)."""
    if predictions is not None:
        from cuelens.probes.predictions import read_predictions

        info = {"name": predictions.name, "resolved": str(predictions), "source": "predictions"}
        return read_predictions(predictions, dataset), info, None
    clf = load_model(model, dataset, fresh_head=False, device=device,
                     trust_remote_code=trust_remote_code, max_length=max_length)
    if int8:
        clf.quantize_int8()
    info = {"name": model, "resolved": clf.resolved, "source": "model"}
    return _predict(clf, dataset, batch_size), info, clf


def _predict(clf, dataset, batch_size):
    from cuelens.probes.predictions import classifier_predictions

    n = len(dataset.test)
    begun = time.perf_counter()
    with item_progress() as progress:
        task = progress.add_task(f"predicting {n} test items", total=n)
        preds = classifier_predictions(clf, dataset, batch_size,
                                       on_batch=lambda k: progress.update(task, advance=k))
    seconds = time.perf_counter() - begun
    console.print(f"predicted {n} items in {seconds:.1f}s ({n / seconds:.0f} items/s)")
    return preds


def _write(out_dir: Path, dataset, results: dict, ctx, started: float) -> None:
    from cuelens.audit.results import run_info
    from cuelens.io import write_json, write_jsonl

    write_jsonl(out_dir / "predictions.jsonl", ctx.predictions.rows(dataset))
    write_json(out_dir / "results.json", results)
    write_json(out_dir / "run.json", run_info(started, inputs=dataset.input_paths))
    from cuelens.commands.scan import write_report

    write_report(results, out_dir / "report.html", dataset)


def print_probe(section: dict, out_dir: Path) -> None:
    """Terminal summary: accuracy, ΔAcc table, easy/hard accuracy."""
    from rich.markup import escape
    from rich.table import Table

    console.print(f"accuracy {section['accuracy'] * 100:.1f}%")
    test = section["accuracy_test"]
    table = Table("cue", "kind", "n with", "acc with", "acc without", "ΔAcc [95% CI]",
                  title=f"Accuracy test (Σ|ΔAcc| = {test['total_abs_delta'] * 100:.1f} points)")
    for row in sorted(test["cues"], key=lambda r: -abs(r["delta"])):
        table.add_row(escape(row["cue"]), row["kind"], str(row["n_with"]),
                      f"{row['acc_with'] * 100:.1f}", f"{row['acc_without'] * 100:.1f}",
                      f"{row['delta'] * 100:+.1f} [{row['ci_low'] * 100:+.1f}, "
                      f"{row['ci_high'] * 100:+.1f}]")
    console.print(table)
    if test.get("skipped"):
        console.print(f"{len(test['skipped'])} cue(s) skipped (too few test items)")
    if "easy_hard" in section:
        eh = section["easy_hard"]
        console.print(f"easy {eh['easy_accuracy'] * 100:.1f}% · hard "
                      f"{eh['hard_accuracy'] * 100:.1f}% · gap {eh['gap'] * 100:+.1f} points")
    console.print(f"results written to [bold]{escape(str(out_dir))}[/]")
