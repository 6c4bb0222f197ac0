"""``audit probe``: measure how much a model relies on a dataset's cues (docs/methods.md §6)."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from cuelens.augment.defaults import DEFAULT_STRESS_OPS
from cuelens.commands.common import (AddressOpt, DataSource, PlotlyOpt, SeedOpt, check_address,
                                     console, data_options, progress_bar, user_errors)
from cuelens.commands.llm_probe import (ApiKeyEnvOpt, BaseUrlOpt, CacheOpt, CalibrateOpt,
                                        ConcurrencyOpt, LengthNormOpt, LLMOpt,
                                        MaxNewTokensOpt, NoCacheOpt, PromptOpt, RetriesOpt,
                                        TimeoutOpt)
from cuelens.commands.model_options import (AllowUntrainedOpt, DeviceOpt, MaxLengthOpt,
                                            ModelOpt, TrustOpt, item_progress, load_model)
from cuelens.data.dataset import Task
from cuelens.errors import UserError, check_at_least_1
from cuelens.probes.config import NORM_UNITS, ProbeConfig, check_log_options, check_norm
from cuelens.reports.options import ReportOptions
from cuelens.wording import plural

DEFAULT = ProbeConfig()


@user_errors
@data_options()
def probe(
    source: DataSource,
    model: ModelOpt = None,
    predictions: Annotated[Optional[Path], typer.Option(
        "--predictions", "-p", help='Predictions file (JSONL {"id", "prediction"[, "probs"]}), '
        "an lm-evaluation-harness samples file or an Inspect log (.json/.eval), instead of "
        "--model.")] = None,
    id_field: Annotated[Optional[str], typer.Option(
        "--id-field", help="Evaluation logs: match items by this field of the logged doc "
        "(lm-eval) or sample metadata (Inspect) instead of by order.")] = None,
    norm: Annotated[bool, typer.Option(
        "--norm", help="lm-eval logs: length-normalised log-likelihoods, like acc_norm.")]
    = False,
    norm_unit: Annotated[Optional[str], typer.Option(
        help="Length for --norm (with --norm only): chars (acc_norm; the default) or bytes "
        "(UTF-8).", show_default=False)] = None,
    require_all_items: Annotated[bool, typer.Option(
        "--require-all-items", help="Evaluation logs: refuse a log that misses test items "
        "(default: probe the logged items, e.g. of lm_eval --limit, and say how many were "
        "left out).")] = False,
    position_bias: Annotated[bool, typer.Option(
        "--position-bias", help="MCQ: score every rotation of the choices with --model "
        "(or with --llm, through each prompt template): accuracy per answer position, "
        "answer-position distribution, consistency.")] = False,
    position_lm: Annotated[Optional[str], typer.Option(
        "--position-lm", help="MCQ position bias scored by a language model instead: "
        "log p(premise + choice), e.g. gpt2 or ngram:DIR.")] = None,
    position_predictions: Annotated[Optional[list[Path]], typer.Option(
        "--position-predictions", help="MCQ position bias from one predictions file or "
        "evaluation log per rotation (in order), made on the files of `audit rotate` with the "
        "same --seed.")] = None,
    scan: Annotated[Optional[Path], typer.Option(
        "--scan", help="Reuse this `audit scan` output directory's cues (results.json) and "
        "easy/hard split (the per-item table items.parquet/items.jsonl, else easy/hard.jsonl, "
        "else easy/hard.ids.txt).")] = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Output directory (default: audit-results/DATASET/probe/).")]
    = None,
    top: Annotated[int, typer.Option(help="Top word cues per label to test.")] = DEFAULT.top,
    rank_by: Annotated[str, typer.Option(
        help="Cue metric ranking the top word cues; z (default) tests only the scan's "
        "significant cues, strongest first; another metric (e.g. lmi) ranks every cue with "
        "--min-support instances.")] = DEFAULT.rank_by,
    plotly: PlotlyOpt = "inline",
    min_support: Annotated[int, typer.Option(
        help="Minimum fitting instances of a tested word cue.")] = DEFAULT.min_support,
    bootstrap: Annotated[int, typer.Option(help="Bootstrap resamples for the ΔAcc CIs.")]
    = DEFAULT.bootstrap,
    min_items: Annotated[int, typer.Option(help="Minimum test items with and without a cue.")]
    = DEFAULT.min_items,
    batch_size: Annotated[Optional[int], typer.Option(
        help="Inference batch size (default: 64 on CPU, 256 on GPU; with --llm, rows of a "
             "prompt and its options: 16 on CPU, 64 on GPU).")] = None,
    max_length: MaxLengthOpt = None,
    backend: Annotated[str, typer.Option(
        help="Inference backend: auto (ONNX Runtime on the CPU when it matches torch within "
             "1e-4, else torch), torch, onnx, torch-int8.")] = "auto",
    int8: Annotated[bool, typer.Option(
        "--int8", help="CPU: dynamic int8 quantisation (= --backend torch-int8; faster, "
                       "approximate: its agreement with float32 is printed).")] = False,
    device: DeviceOpt = "auto",
    trust_remote_code: TrustOpt = False,
    allow_untrained: AllowUntrainedOpt = False,
    seed: SeedOpt = 0,
    short_circuit: Annotated[bool, typer.Option(
        "--short-circuit", help="MCQ: attention test AW and per-operator pass rates "
                                "(docs/methods.md §7).")] = False,
    aw_thresholds: Annotated[str, typer.Option(
        help="AW thresholds: calibrated (per model, 5% rate on unrelated premises) or fixed "
             "(--t1/--t2).")] = "calibrated",
    t1: Annotated[float, typer.Option(help="Fixed AW threshold t1, 0 to 1 (count of scores "
                                           "above it > 0).")] = 0.14,
    t2: Annotated[float, typer.Option(help="Fixed AW threshold t2, 0 to 1 (count of scores "
                                           "above it ≥ 2).")] = 0.13,
    sc_ops: Annotated[str, typer.Option(
        help="Operators of the black-box short-circuit test; one that builds no question "
        "(English-only on other text, or no correctly answered question it can change) is "
        "listed as not applicable.")] = DEFAULT_STRESS_OPS,
    llm: LLMOpt = None,
    prompt: PromptOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = "OPENAI_API_KEY",
    concurrency: ConcurrencyOpt = 4,
    request_timeout: TimeoutOpt = 60.0,
    retries: RetriesOpt = 5,
    cache: CacheOpt = None,
    no_cache: NoCacheOpt = False,
    calibrate: CalibrateOpt = False,
    length_norm: LengthNormOpt = False,
    max_new_tokens: MaxNewTokensOpt = None,
    engine: Annotated[str, typer.Option(
        "--engine", help="--model inference: local (this process) or ray (a Ray Data actor "
        "pool, cuelens\\[ray]); same predictions.")] = "local",
    address: AddressOpt = None,
    actors: Annotated[int, typer.Option(
        help="--engine ray: inference actors (one GPU each when the cluster has GPUs).")] = 2,
) -> None:
    """Probe a model (or a predictions file, or an LLM through prompts) for reliance on the
    dataset's cues.

    Writes results.json with the scan sections plus `probe` (accuracy, ΔAcc per cue with 95%
    bootstrap CIs, distribution test, easy/hard accuracy, data map) and predictions.jsonl.
    With --llm: `llm_probe` (the same statistics per prompt template, side by side, and a
    verdict) and predictions-TEMPLATE.jsonl.

    Example: audit probe data/snli/ --model models/snli-minilm --scan results/snli --out probe/

    Example: audit probe data/mnli/ --llm openai:llama3 --base-url http://127.0.0.1:8000/v1
    --prompt nli-yes-no --prompt nli-yes-no-cot
    """
    from cuelens.probes.pipeline import check_outputs, load_scan, probe_dataset
    from cuelens.probes.scan_source import SCAN_FILES
    from cuelens.probes.short_circuit import ShortCircuitOptions
    from cuelens.results import ProbeResult

    started = time.time()
    if sum(x is not None for x in (model, predictions, llm)) != 1:
        raise UserError("give exactly one of --model, --predictions and --llm")
    config = ProbeConfig(top=top, rank_by=rank_by, min_support=min_support, bootstrap=bootstrap,
                         min_items=min_items, seed=seed)
    config.validate()
    if norm_unit is not None:
        check_norm(norm_unit, "--norm-unit", NORM_UNITS)
        if not norm:  # it was ignored, the log-likelihoods read unnormalised
            raise UserError(f"--norm-unit {norm_unit} sets the length of --norm: add --norm to "
                            "length-normalise the log-likelihoods, or drop --norm-unit")
    check_log_options(id_field, norm, predictions is not None or bool(position_predictions))
    report_options = ReportOptions(plotly=plotly)  # checked here, not after the model's work
    if engine not in ("local", "ray"):
        raise UserError(f"unknown --engine {engine!r}; choose from local, ray")
    check_address(address, engine)
    # a batch size of 0 read as the default, < 0 crashed
    check_at_least_1(batch_size=batch_size, max_length=max_length, actors=actors)
    if int8 and backend not in {"auto", "torch-int8"}:
        raise UserError(f"--int8 is --backend torch-int8; it cannot be combined with --backend "
                        f"{backend}")
    sc_options = (ShortCircuitOptions(aw_thresholds=aw_thresholds, t1=t1, t2=t2, ops=sc_ops)
                  if short_circuit else None)
    if sc_options is not None:
        sc_options.validate()
    dataset = source.load()
    out_dir = out or Path("audit-results") / dataset.name / "probe"
    extra_inputs = [p for p in (predictions, scan and scan / "results.json") if p is not None]
    extra_inputs += list(position_predictions or [])
    scan_files = [scan / name for name in SCAN_FILES] if scan else []
    model_dir = Path(model) if model and Path(model).is_dir() else None
    check_outputs(out_dir, [*dataset.input_paths, *extra_inputs, *scan_files, model_dir])
    if llm is not None:
        from cuelens.commands.llm_probe import probe_llm
        from cuelens.probes.llm.backends import BackendOptions

        if position_lm or position_predictions:
            raise UserError("with --llm use --position-bias: each prompt template answers "
                            "every rotation")
        if short_circuit:
            raise UserError("--short-circuit asks a --model new questions; the --llm probe "
                            "does not run it")

        backend_options = BackendOptions(
            device=device, batch_size=batch_size, base_url=base_url, api_key_env=api_key_env,
            concurrency=concurrency, timeout=request_timeout, retries=retries)
        llm_dir = [Path(llm)] if Path(llm).is_dir() else []
        probe_llm(dataset, llm, prompt or [], backend_options,
                  load_scan(scan, dataset) if scan else None, out_dir, cache_path=cache,
                  no_cache=no_cache, calibrate=calibrate, length_norm=length_norm,
                  max_new_tokens=max_new_tokens, config=config, position_bias=position_bias,
                  inputs=[*extra_inputs, *scan_files, *llm_dir], started=started,
                  report_options=report_options)
        return

    runner = None
    if engine == "ray" and model is not None:
        from cuelens.models.ray_scoring import predict_proba_ray

        runner = partial(predict_proba_ray, concurrency=actors, address=address,
                         trust_remote_code=trust_remote_code)
    norm_name = (norm_unit or NORM_UNITS[0]) if norm else "none"
    # what the probe reads besides the model, read before the model predicts (minutes)
    positions = _position_options(dataset, seed, position_bias, position_lm,
                                  position_predictions, device, id_field, norm_name, model)
    scan_result = load_scan(scan, dataset) if scan else None  # None: the probe scans the data
    preds, clf = _predictions(dataset, model, predictions, batch_size, max_length, device,
                              trust_remote_code, "torch-int8" if int8 else backend,
                              id_field, norm_name, runner, require_all_items,
                              allow_untrained=allow_untrained)
    if position_bias:
        from cuelens.probes.position import PositionBiasOptions, classifier_scorer

        positions = PositionBiasOptions(score_fn=classifier_scorer(clf, batch_size),
                                        source="model")
    with progress_bar(f"probing {dataset.name}") as progress:
        result = probe_dataset(dataset, preds, scan=scan_result, config=config,
                               classifier=clf, short_circuit=sc_options,
                               position_bias=positions, inputs=extra_inputs,
                               progress=progress)
    result.started = started
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    if "short_circuit" in result.results["probe"]:
        print_short_circuit(result.results["probe"]["short_circuit"])
    ProbeResult.of(result).save(out_dir, report_options=report_options)
    console.print(f"report: [bold]{escape(str(out_dir / 'report.html'))}[/]")
    print_probe(result.results["probe"], out_dir)


def _position_options(dataset, seed: int, use_model: bool, lm: str | None,
                      files: list[Path] | None, device: str, id_field: str | None, norm: str,
                      model: str | None):
    """:class:`~cuelens.probes.position.PositionBiasOptions` from the chosen LM or files, or
    None (also for --position-bias, whose scorer is the --model once loaded); the options are
    checked, the LM loaded and the files read here, before the model predicts."""
    from cuelens.probes import position

    if not (use_model or lm or files):
        return None
    if sum(map(bool, (use_model, lm, files))) > 1:
        raise UserError("give one of --position-bias, --position-lm and --position-predictions")
    if dataset.task != Task.MCQ:
        raise UserError("the position-bias probe is for multiple-choice datasets")
    if files:
        return position.options_from_files(dataset, files, seed, id_field, norm)
    if lm:
        from cuelens.lm import load_scorer

        return position.PositionBiasOptions(
            score_fn=position.sentence_scorer(load_scorer(lm, device=device)),
            source=f"language model {lm}")
    if model is None:
        raise UserError("--position-bias scores the --model; with --predictions use "
                        "--position-predictions")
    return None


def _predictions(dataset, model, predictions, batch_size, max_length, device,
                 trust_remote_code, backend, id_field=None, norm="none", runner=None,
                 require_all=False, *, allow_untrained: bool = False):
    """(predictions, loaded classifier or None) from the chosen source
    (:mod:`cuelens.probes.sources`); ``runner(clf, split, batch_size, on_batch)`` replaces the
    local inference (``--engine ray``); a model without a fine-tuned head stops here unless
    ``allow_untrained``."""
    from cuelens.probes.sources import ModelSource, file_source

    if predictions is not None:
        return file_source(predictions, id_field, norm, require_all).predict(dataset), None
    clf = load_model(model, dataset, fresh_head=False, device=device,
                     trust_remote_code=trust_remote_code, max_length=max_length)
    clf.require_trained(allow_untrained)
    clf.use_backend(backend)
    n = len(dataset.test)
    begun = time.perf_counter()
    with item_progress() as progress:
        task = progress.add_task(f"predicting {plural(n, 'test item')}", total=n)
        source = ModelSource(clf, model, batch_size, predict_proba=runner and partial(runner, clf))
        preds = source.predict(dataset, on_items=lambda k: progress.update(task, advance=k))
    seconds = time.perf_counter() - begun
    console.print(f"predicted {plural(n, 'item')} in {seconds:.1f}s ({n / seconds:.0f} items/s, "
                  f"backend {clf.backend_in_use})")
    if backend == "torch-int8":
        from cuelens.models.classifier import backend_agreement

        agree = backend_agreement(clf, dataset.test, batch_size=batch_size)
        console.print(f"int8 vs float32 on a seeded sample of "
                      f"{plural(agree['n'], 'test item')}: "
                      f"{agree['argmax_agreement'] * 100:.1f}% same arg-max, max probability "
                      f"difference {agree['max_abs_difference']:.4f}")
    return preds, clf


def print_short_circuit(section: dict) -> None:
    """Terminal table of the short-circuit section: AW and per-operator pass rates."""
    from rich.table import Table

    aw = "n/a" if section["aw"] is None else f"{section['aw'] * 100:.1f}%"
    if section.get("aw_ci"):
        low, high = section["aw_ci"]
        aw += f" [{low * 100:.1f}, {high * 100:.1f}]"
    table = Table("op", "n", "pass rate", title=f"Short-circuit tests (AW {aw})")
    reasons: dict[str, list[str]] = {}
    for op, row in section["per_op"].items():
        rate = row["pass_rate"]
        table.add_row(op, str(row["n"]), "n/a" if rate is None else f"{rate * 100:.1f}%")
        if "not_applicable" in row:
            reasons.setdefault(row["not_applicable"], []).append(op)
    console.print(table)
    for reason, ops in reasons.items():
        console.print(f"[yellow]not applicable:[/] {escape(', '.join(ops))}: {escape(reason)}")
    if section.get("aw_thresholds"):
        th = section["aw_thresholds"]
        rate = "n/a" if th["null_rate"] is None else f"{th['null_rate'] * 100:.1f}%"
        console.print(f"AW thresholds ({th['mode']}): t1 = {th['t1']:.4f}, t2 = {th['t2']:.4f}; "
                      f"null rate {rate} on {plural(th['n_null'], 'unrelated-premise pair')}")
    if section.get("aw_note"):
        console.print(f"[yellow]{escape(section['aw_note'])}[/]")


def print_probe(section: dict, out_dir: Path) -> None:
    """Terminal summary: accuracy, ΔAcc table, easy/hard accuracy."""
    from rich.table import Column, Table

    from cuelens.probes.sanity import probe_verdict

    acc = section["sanity"]["accuracy"]
    console.print(f"accuracy {acc['accuracy'] * 100:.1f}% [95% CI {acc['ci_low'] * 100:.1f}, "
                  f"{acc['ci_high'] * 100:.1f}] vs chance {acc['chance'] * 100:.1f}%")
    if section.get("cue_selection"):
        console.print(f"word cues tested: {escape(section['cue_selection']['rule'])}")
    test = section["accuracy_test"]
    table = Table(Column("cue", overflow="fold"), "kind", "n with", "acc with", "acc without",
                  "ΔAcc [95% CI]", "q",
                  title=f"Accuracy test (Σ|ΔAcc| = {test['total_abs_delta'] * 100:.1f} points)")
    for row in sorted(test["cues"], key=lambda r: -abs(r["delta"])):
        table.add_row(escape(row["cue"]), row["kind"], str(row["n_with"]),
                      f"{row['acc_with'] * 100:.1f}", f"{row['acc_without'] * 100:.1f}",
                      f"{row['delta'] * 100:+.1f} [{row['ci_low'] * 100:+.1f}, "
                      f"{row['ci_high'] * 100:+.1f}]",
                      f"{row['q_value']:.3f}{'*' if row['significant'] else ''}")
    console.print(table)
    console.print(f"q: {escape(test['correction'])}; * q < 0.05")
    if test.get("skipped"):
        console.print(f"{plural(len(test['skipped']), 'cue')} skipped (too few test items)")
    if "position_bias" in section:
        from cuelens.probes.position import position_verdict

        console.print(escape(position_verdict(section["position_bias"])))
    if "easy_hard" in section:
        eh = section["easy_hard"]
        console.print(f"easy {eh['easy_accuracy'] * 100:.1f}% · hard "
                      f"{eh['hard_accuracy'] * 100:.1f}% · gap {eh['gap'] * 100:+.1f} points")
    level, sentence = probe_verdict(section)
    colour = {"unreliable": "yellow", "relies": "bold red", "clean": "green"}[level]
    console.print(f"[{colour}]verdict:[/] {escape(sentence)}")
    console.print(f"results written to [bold]{escape(str(out_dir))}[/]")
