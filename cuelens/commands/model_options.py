"""Options and helpers shared by the commands that run a classifier (``train``, ``probe``)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.markup import escape

from cuelens.commands.common import console, live_progress
from cuelens.data.dataset import Task

ModelOpt = Annotated[Optional[str], typer.Option(
    "--model", "-m", help="Model: alias (minilm, bert, roberta, …), local directory or hub id.")]
DeviceOpt = Annotated[str, typer.Option("--device", help="auto | cpu | cuda.")]
TrustOpt = Annotated[bool, typer.Option(
    "--trust-remote-code", help="Allow a hub model's own Python code (off by default: unsafe).")]
AllowUntrainedOpt = Annotated[bool, typer.Option(
    "--allow-untrained", help="Probe a model whose classification head is not in its checkpoint "
    "(random weights; e.g. a base encoder): by default that stops with a pointer to `audit "
    "train`; with this the probe runs and says so.")]
MaxLengthOpt = Annotated[Optional[int], typer.Option(
    help="Truncate each (premise, text) pair to this many tokens (default: 128, or what the "
    "model reads when less); at most what it reads: its tokenizer's model_max_length, else its "
    "position embeddings.")]


def load_model(name: str, dataset, *, fresh_head: bool, device: str, trust_remote_code: bool,
               max_length: int | None):
    """Load the task's classifier for ``dataset`` and print the resolved model id."""
    from cuelens.models.classifier import load_classifier

    labels = dataset.label_names if fresh_head and dataset.task == Task.NLI else None
    with console.status(f"loading {escape(name)}"):
        clf = load_classifier(name, dataset.task, label_names=labels, device=device,
                              trust_remote_code=trust_remote_code, max_length=max_length)
    console.print(f"model [bold]{escape(name)}[/] → {escape(clf.resolved)} "
                  f"({type(clf.model).__name__}, {clf.device})")
    return clf


def item_progress(*extra_fields: str):
    """A transient rich progress bar over items with the time left; ``extra_fields`` are
    shown after the bar (e.g. ``loss``; pass them to ``add_task``/``update``). Plain progress
    lines when stderr is not a terminal (:func:`~cuelens.commands.common.live_progress`)."""
    from rich.progress import (BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    columns = [TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn(),
               *(TextColumn(f"{name} {{task.fields[{name}]}}") for name in extra_fields)]
    return live_progress(*columns)
