"""``audit probe --llm``'s options, output files and summary, and ``audit prompts``
(the library side is :mod:`cuelens.probes.llm`; docs/llm-probe.md)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.markup import escape

from cuelens.commands.common import console, progress_bar, user_errors
from cuelens.data.dataset import Task
from cuelens.probes.config import ProbeConfig
from cuelens.reports.options import ReportOptions

if TYPE_CHECKING:
    from cuelens.probes.llm.backends import BackendOptions

_option = partial(typer.Option, rich_help_panel="LLM probe")
LLMOpt = Annotated[Optional[str], _option(
    "--llm", help="Probe a language model through prompts: a local causal LM (directory, alias "
                  "or hub id) or openai:MODEL with --base-url.")]
PromptOpt = Annotated[Optional[list[str]], _option(
    "--prompt", help="Prompt template: a built-in name (see `audit prompts`) or a template "
                     "file; repeat to compare templates (default: every built-in of the task).")]
BaseUrlOpt = Annotated[Optional[str], _option(
    "--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")]
ApiKeyEnvOpt = Annotated[str, _option(
    "--api-key-env", help="Environment variable holding the endpoint's API key (never written "
                          "to outputs).")]
ConcurrencyOpt = Annotated[int, _option(help="Endpoint requests in flight at once.")]
TimeoutOpt = Annotated[float, _option(help="Seconds before one endpoint request times out.")]
RetriesOpt = Annotated[int, _option(help="Retries of a request after HTTP 429/5xx or a network "
                                         "error (exponential backoff).")]
CacheOpt = Annotated[Optional[Path], _option(
    "--cache", help="SQLite response cache (default for openai: llm-responses.sqlite in the "
                    "user cache directory; local models: none).")]
NoCacheOpt = Annotated[bool, _option("--no-cache", help="Do not read or write the response cache.")]
CalibrateOpt = Annotated[bool, _option(
    "--calibrate", help="Score templates: divide by p(answer | content-free 'N/A' input).")]
LengthNormOpt = Annotated[bool, _option(
    "--length-norm", help="Score templates: mean log-probability per answer token.")]
MaxNewTokensOpt = Annotated[Optional[int], _option(
    help="Generate templates: token budget (default: the template's).")]


def _cache(path: Path | None, no_cache: bool, backend_name: str):
    from cuelens.audit.parse_cache import default_cache_dir
    from cuelens.probes.llm.cache import ResponseCache

    if no_cache:
        return None
    if path is not None:
        return ResponseCache(path)
    return ResponseCache(default_cache_dir() / "llm-responses.sqlite") \
        if backend_name == "openai" else None


def probe_llm(dataset, llm: str, prompts: list[str], backend_options: BackendOptions, scan,
              out_dir: Path, *, cache_path: Path | None, no_cache: bool, calibrate: bool,
              length_norm: bool, max_new_tokens: int | None, config: ProbeConfig,
              inputs: list, started: float, position_bias: bool = False,
              report_options: ReportOptions | None = None) -> None:
    """Run the LLM prompt probe of ``llm`` through ``prompts`` (library:
    :func:`cuelens.probes.llm.pipeline.probe_llm_dataset`), save its files and print the
    side-by-side summary; ``cache_path``, ``no_cache``, …: the options of `audit probe --llm`."""
    from cuelens.errors import check_at_least_1
    from cuelens.probes.llm.backends import load_backend
    from cuelens.probes.llm.pipeline import check_templates, probe_llm_dataset
    from cuelens.probes.llm.templates import (default_templates, resolve_template,
                                              with_max_new_tokens)
    from cuelens.results import LLMProbeResult

    check_at_least_1(max_new_tokens=max_new_tokens)
    templates = [resolve_template(p) for p in prompts] or default_templates(dataset.task)
    templates = [with_max_new_tokens(t, max_new_tokens) for t in templates]
    check_templates(dataset, templates, position_bias)  # before the model is loaded
    backend = load_backend(llm, backend_options)
    cache = _cache(cache_path, no_cache, backend.name)
    console.print(f"LLM [bold]{escape(llm)}[/] ({backend.name}); prompts: "
                  f"{escape(', '.join(t.name for t in templates))}"
                  + (f"; cache {escape(str(cache.path))}" if cache is not None else ""))
    try:
        with progress_bar(f"probing {dataset.name}") as bar:
            result = probe_llm_dataset(dataset, backend, templates, scan=scan, config=config,
                                       cache=cache, calibrate=calibrate, normalize=length_norm,
                                       position_bias=position_bias, inputs=inputs,
                                       progress=bar)
    finally:
        if cache is not None:
            cache.close()
    result.started = started
    for warning in (cache.warnings if cache is not None else []) + result.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    files = LLMProbeResult.of(result).save(out_dir, report_options=report_options)
    console.print(f"report: [bold]{escape(str(files['report']))}[/]")
    print_llm_probe(result.section, out_dir)


def print_llm_probe(section: dict, out_dir: Path) -> None:
    """Terminal summary: one row per template, then the verdict."""
    from rich.table import Column, Table

    table = Table(Column("prompt", no_wrap=True), "mode", "accuracy", "unparseable", "Σ|ΔAcc|",
                  "top cue ΔAcc", "tokens", title="LLM probe: templates side by side")
    for t in section["templates"]:
        cues = sorted(t["accuracy_test"]["cues"], key=lambda c: (-abs(c["delta"]), c["cue"]))
        top = f"{escape(cues[0]['cue'])} {cues[0]['delta'] * 100:+.1f}" if cues else "–"
        table.add_row(escape(t["name"]), f"{t['mode']} ({escape(t['style'])})",
                      f"{t['accuracy'] * 100:.1f}%", f"{t['unparseable']['rate'] * 100:.1f}%",
                      f"{t['accuracy_test']['total_abs_delta'] * 100:.1f}", top,
                      f"{t['tokens']['total']:,}")
    console.print(table)
    for t in section["templates"]:
        if "position_bias" in t:
            from cuelens.probes.position import position_verdict

            console.print(f"[bold]{escape(t['name'])}[/] position bias: "
                          f"{escape(position_verdict(t['position_bias']))}")
    best = section["verdict"].get("least_cue_reliant")
    console.print(f"least cue-reliant prompt: [bold]{escape(best)}[/]" if best else
                  f"verdict: {escape(section['verdict'].get('reason', 'none'))}")
    console.print(f"results written to [bold]{escape(str(out_dir))}[/]")


@user_errors
def prompts(
    task: Annotated[Optional[str], typer.Option(help="Only templates of this task (nli|mcq).")]
    = None,
    show: Annotated[Optional[str], typer.Option(
        help="Print this template (a built-in name or a file) in full.")] = None,
) -> None:
    """List the built-in prompt templates of `audit probe --llm` (or show one).

    Example: audit prompts --task nli
    """
    from rich.table import Column, Table

    from cuelens.errors import UserError
    from cuelens.probes.llm.templates import TEMPLATES, resolve_template

    tasks = list(dict.fromkeys(t.task for t in TEMPLATES.values()))
    if task is not None and task not in tasks:
        raise UserError(f"unknown --task {task!r}; choose from {', '.join(tasks)}")
    if show is not None:
        t = resolve_template(show)
        answers = ", ".join(f"{k}={v}" for k, v in t.answers.items()) or f"options: {t.options}"
        typer.echo(f"# {t.name}: {t.task} · {t.mode} · {t.style} · {answers}\n{t.text}")
        return
    table = Table(Column("name", no_wrap=True), "task", "mode", "style", "answers",
                  Column("description", overflow="fold"))
    for t in TEMPLATES.values():
        if task is None or t.task == task:
            answers = ", ".join(t.answers.values()) if t.task == Task.NLI else t.options
            table.add_row(t.name, t.task, t.mode, t.style, escape(answers),
                          escape(t.description))
    console.print(table)
