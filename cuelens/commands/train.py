"""``audit train``: fine-tune a classifier on a dataset's training split (docs/methods.md §6)."""

from __future__ import annotations

import math
import time
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from cuelens.commands.common import (DataSource, SeedOpt, console, data_options, user_errors)
from cuelens.commands.model_options import (DeviceOpt, MaxLengthOpt, ModelOpt, TrustOpt,
                                            item_progress, load_model)
from cuelens.errors import UserError, check_at_least_1, check_seed
from cuelens.mitigate import LOSS_NAMES
from cuelens.wording import plural


@user_errors
@data_options()
def train(
    source: DataSource,
    out: Annotated[Path, typer.Option("--out", "-o", help="New directory for the fine-tuned "
                                                           "model (must not exist or be empty).")]
    = Path("audit-model"),
    model: ModelOpt = "minilm",
    epochs: Annotated[int, typer.Option(help="Training epochs.")] = 3,
    lr: Annotated[float, typer.Option(help="Peak learning rate (AdamW, linear schedule).")] = 2e-5,
    batch_size: Annotated[int, typer.Option(help="Training batch size (items).")] = 16,
    max_length: MaxLengthOpt = None,
    seed: SeedOpt = 0,
    device: DeviceOpt = "auto",
    trust_remote_code: TrustOpt = False,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace an existing non-empty --out directory.")] = False,
    debias: Annotated[str, typer.Option(
        "--debias", help=f"Training loss: {' | '.join(LOSS_NAMES)} (docs/mitigation.md); "
        "the debiasing ones are fed by the bias-only probabilities of --bias.")] = "none",
    bias: Annotated[Optional[Path], typer.Option(
        "--bias", help="Bias-only probabilities per training item: a scan's items.jsonl/"
        ".parquet (or its directory) or a JSONL of {id, probs}; default with --debias: a "
        "word-cue scan of the data (out-of-fold).")] = None,
) -> None:
    """Fine-tune a model on the training split; save it with its training-dynamics data map.

    The output is a standard Hugging Face directory (safetensors, tokenizer, label mapping in
    config.json) plus data_map.jsonl and training_dynamics/ (Dataset Cartography format).

    Example: audit train data/copa/ --model minilm --epochs 3 --out models/copa-minilm

    Example: audit train data/snli/ --debias poe --bias results/snli --out models/snli-poe
    """
    import numpy as np
    import torch

    from cuelens.audit.scan_outputs import run_info
    from cuelens.atomic import replace_directory
    from cuelens.jsonio import write_json
    from cuelens.outputs import check_model_dir, check_replaceable_dir
    from cuelens.mitigate.losses import training_loss
    from cuelens.models.finetune import TrainConfig, finetune
    from cuelens.probes.data_map import dataset_map, regions, write_dynamics

    started = time.time()
    check_at_least_1(epochs=epochs, batch_size=batch_size, max_length=max_length)
    if not (math.isfinite(lr) and lr >= 0):
        raise UserError(f"--lr must be a finite number ≥ 0, got {lr}")
    check_seed(seed)  # -1 was a numpy ValueError traceback after the model had loaded
    check_replaceable_dir(out, overwrite)
    if debias not in LOSS_NAMES:
        raise UserError(f"unknown --debias {debias!r}; choose from {', '.join(LOSS_NAMES)}")
    dataset = source.load()
    if dataset.train is None:
        raise UserError("training needs a training split: a directory with train (or dev and "
                        "test) files, or --train FILE")
    model_dir = Path(model) if model and Path(model).is_dir() else None  # replaced as a whole
    check_model_dir(out, [*dataset.input_paths, model_dir, bias], overwrite)
    torch.manual_seed(seed)
    if model is None:
        raise UserError("--model is required")
    clf = load_model(model, dataset, fresh_head=True, device=device,
                     trust_remote_code=trust_remote_code, max_length=max_length)
    split = dataset.train
    gold = split.item_labels(dataset.label_names)
    bias_probs, bias_info = training_bias(debias, bias, dataset, seed, gold)
    config = TrainConfig(epochs=epochs, lr=lr, batch_size=batch_size, seed=seed, debias=debias)
    criterion = training_loss(debias, clf.model.config.hidden_size, split)
    with item_progress("loss") as progress:
        task = progress.add_task(f"training on {plural(len(split), 'item')}",
                                 total=len(split) * epochs, loss="   -  ")

        def on_step(n: int, loss: float, epoch: int) -> None:
            progress.update(task, advance=n, loss=f"{loss:.4f}",
                            description=f"epoch {epoch + 1}/{epochs}")

        dynamics = finetune(clf, split, gold, config, criterion, on_step, bias=bias_probs)
    training = {"loss": dynamics.loss, "bias": bias_info, "config": asdict(config)}
    print_loss(training)
    clf.model.config.update({"cuelens": {"task": dataset.task, "label_names": dataset.label_names,
                                         "max_length": clf.max_length, "training": training}})

    def save(staging: Path) -> None:
        clf.model.save_pretrained(staging, safe_serialization=True)
        clf.tokenizer.save_pretrained(staging)
        write_dynamics(staging, dynamics)
        write_json(staging / "run.json", run_info(started, training=training))

    replace_directory(out, save)
    points = dataset_map(dynamics)
    names, counts = np.unique(regions(points), return_counts=True)
    last = float(dynamics.correct[-1].mean())
    console.print(f"trained {plural(epochs, 'epoch')} on {plural(len(split), 'item')} in "
                  f"{time.time() - started:.0f}s · last-epoch training accuracy {last * 100:.1f}%")
    console.print("data map: " + ", ".join(f"{n} {c}" for n, c in zip(names, counts)))
    console.print(f"model saved to [bold]{escape(str(out))}[/] (load it with from_pretrained)")


def training_bias(debias: str, bias: Path | None, dataset, seed: int, gold):
    """The bias-only probabilities of the training items for ``--debias`` and what they are
    (:func:`~cuelens.mitigate.bias_source.bias_record`); (None, None) without it."""
    from cuelens.commands.common import progress_bar
    from cuelens.mitigate.bias_source import bias_record, read_bias, scanned_bias

    if debias == "none":
        if bias is not None:
            raise UserError("--bias feeds a debiasing loss: give --debias too")
        return None, None
    source: dict
    if bias is not None:
        probs, source = read_bias(bias, dataset, dataset.train), {"source": "file",
                                                                  "path": str(bias)}
    else:
        with progress_bar("bias-only model (word-cue scan)") as progress:
            probs = scanned_bias(dataset, seed, progress)
        source = {"source": "scan", "seed": seed}
    return probs, bias_record(source, probs, gold)


def print_loss(training: dict) -> None:
    """The loss that ran, its settings and (debiasing) its bias source, as recorded."""
    from cuelens.mitigate.losses import LOSS_TITLES

    loss = dict(training["loss"])
    name = loss.pop("name")
    settings = ", ".join(f"{key} {value:g}" for key, value in loss.items())
    line = f"loss: {name} ({LOSS_TITLES[name]}{'; ' + settings if settings else ''})"
    bias = training["bias"]
    if bias is not None:
        where = (f"--bias {bias['path']}" if bias["source"] == "file" else
                 f"an out-of-fold word-cue scan of the training split (seed {bias['seed']})")
        line += (f" · bias-only probabilities from {where}: alone they give the gold answer "
                 f"{bias['gold_probability']:.3f} on average, accuracy "
                 f"{bias['accuracy'] * 100:.1f}% on {plural(bias['items'], 'training item')}")
    console.print(escape(line))
