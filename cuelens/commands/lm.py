"""``audit lm``: train word-level language models for scoring (docs/methods.md §9)."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.markup import escape

from cuelens.commands.common import SeedOpt, console, progress_bar, user_errors
from cuelens.commands.model_options import DeviceOpt
from cuelens.wording import plural

if TYPE_CHECKING:
    from cuelens.lm.rnn import RNNModel

app = typer.Typer(help="Train word-level language models (n-gram, LSTM, RNN) for `audit score`."
                       "\n\nExample: audit lm train --arch ngram --order 3 --corpus ptb.train.txt "
                       "--out models/tri", no_args_is_help=True)


@app.command("train")
@user_errors
def train(
    corpus: Annotated[Path, typer.Option("--corpus", help="Training text, one sentence per line.")],
    out: Annotated[Path, typer.Option("--out", help="Directory to write the model to.")],
    arch: Annotated[str, typer.Option("--arch", help="ngram, lstm or rnn.")] = "ngram",
    order: Annotated[int, typer.Option("--order", help="n-gram order.")] = 3,
    discount: Annotated[float, typer.Option("--discount", help="Kneser-Ney discount.")] = 0.75,
    valid: Annotated[Optional[Path], typer.Option(
        "--valid", help="Validation text (perplexity printed per epoch / after training).")] = None,
    min_count: Annotated[int, typer.Option(
        "--min-count", help="Words seen fewer times become <unk>.")] = 2,
    max_vocab: Annotated[Optional[int], typer.Option(
        "--max-vocab", help="LSTM/RNN vocabulary cap.")] = None,
    embedding: Annotated[int, typer.Option(
        "--embedding-size", help="LSTM/RNN embedding size.")] = 128,
    hidden: Annotated[int, typer.Option("--hidden-size", help="LSTM/RNN hidden size.")] = 256,
    layers: Annotated[int, typer.Option("--layers", help="LSTM/RNN layers.")] = 1,
    dropout: Annotated[float, typer.Option("--dropout", help="LSTM/RNN dropout.")] = 0.0,
    epochs: Annotated[int, typer.Option("--epochs", help="LSTM/RNN training epochs.")] = 5,
    batch_size: Annotated[int, typer.Option("--batch-size", help="LSTM/RNN batch size.")] = 32,
    lr: Annotated[float, typer.Option("--lr", help="LSTM/RNN Adam learning rate.")] = 2e-3,
    lowercase: Annotated[bool, typer.Option(help="Lower-case the text.")] = True,
    detach_punct: Annotated[bool, typer.Option(
        help="Split punctuation off the start/end of words.")] = True,
    segmenter: Annotated[str, typer.Option(
        "--segmenter", help="How runs of scripts written without spaces (Chinese, Japanese, "
                            "Thai, …) are cut into words: auto (from the corpus's scripts), "
                            "unicode (a run stays one word), chars, chinese, japanese or thai "
                            "(docs/languages.md).")] = "auto",
    device: DeviceOpt = "auto",
    seed: SeedOpt = 0,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace an existing non-empty --out directory.")] = False,
) -> None:
    """Train an n-gram (interpolated Kneser-Ney) or LSTM/RNN word language model.

    Example: audit lm train --arch lstm --corpus ptb.train.txt --valid ptb.valid.txt
    --out models/lstm
    """
    from cuelens.errors import UserError
    from cuelens.atomic import replace_directory
    from cuelens.outputs import check_model_dir
    from cuelens.errors import check_seed
    from cuelens.models.hub import check_device
    from cuelens.lm.text import choose_splitter, corpus_lines, read_corpus

    if arch not in ("ngram", "lstm", "rnn"):
        raise UserError(f"unknown --arch '{arch}' (use ngram, lstm or rnn)")
    _check_numbers(order=order, discount=discount, min_count=min_count, max_vocab=max_vocab,
                   embedding_size=embedding, hidden_size=hidden, layers=layers, dropout=dropout,
                   epochs=epochs, batch_size=batch_size, lr=lr)
    check_seed(seed)
    check_device(device)
    _check_arch_options(arch, order=order, discount=discount, max_vocab=max_vocab,
                        embedding_size=embedding, hidden_size=hidden, layers=layers,
                        dropout=dropout, epochs=epochs, batch_size=batch_size, lr=lr,
                        device=device)
    check_model_dir(out, [corpus, valid], overwrite)
    lines = corpus_lines(corpus)
    splitter, choice = choose_splitter(lines, lowercase, detach_punct, segmenter)
    console.print(f"segmenter: {choice.name} ({choice.reason})", highlight=False)
    if choice.warning:
        console.print(f"[yellow]warning:[/] {escape(choice.warning)}")
    sentences = [splitter(line) for line in lines]
    valid_sentences = read_corpus(valid, splitter) if valid else None
    start = time.perf_counter()
    if arch == "ngram":
        from cuelens.lm.ngram import NgramModel

        with console.status(f"counting {order}-grams of {plural(len(sentences), 'sentence')}"):
            model: NgramModel | RNNModel = NgramModel.train(
                sentences, order=order, discount=discount, min_count=min_count, splitter=splitter)
        model.name = f"ngram:{out}"
        if valid_sentences:
            console.print(f"validation perplexity {model.perplexity(valid_sentences):.1f}")
    else:
        from cuelens.models.hub import pick_device
        from cuelens.lm.rnn import RNNConfig, train_rnn

        config = RNNConfig(arch=arch, embedding_size=embedding, hidden_size=hidden,
                           layers=layers, dropout=dropout)
        with progress_bar(f"training {arch}") as progress:
            model = train_rnn(sentences, valid_sentences, config, splitter, epochs=epochs,
                              batch_size=batch_size, lr=lr, min_count=min_count,
                              max_vocab=max_vocab, seed=seed, device=pick_device(device),
                              log=console.print, progress=progress)
    replace_directory(out, model.save_pretrained)
    console.print(f"{arch} model ({plural(len(model.vocab), 'word')}) trained in "
                  f"{time.perf_counter() - start:.1f}s, saved to {escape(str(out))}")



#: The least value of each whole-number option of ``audit lm train`` (``--max-vocab`` counts
#: ``<unk>``, ``<s>`` and ``</s>``).
AT_LEAST = {"order": 2, "min_count": 1, "max_vocab": 4, "embedding_size": 1, "hidden_size": 1,
            "layers": 1, "epochs": 1, "batch_size": 1}


def _check_numbers(*, discount: float, dropout: float, lr: float, **whole: int | None) -> None:
    """Refuse an out-of-range option before any work (it was a torch traceback, or a model
    saved that ``audit score`` then refused)."""
    from cuelens.errors import UserError

    for name, value in whole.items():
        if value is not None and value < AT_LEAST[name]:
            raise UserError(f"--{name.replace('_', '-')} must be at least {AT_LEAST[name]}, "
                            f"got {value}")
    if not 0 <= discount <= 1:  # also refuses nan
        raise UserError(f"--discount must be between 0 and 1, got {discount}")
    if not 0 <= dropout < 1:
        raise UserError(f"--dropout must be at least 0 and below 1, got {dropout}")
    if not (math.isfinite(lr) and lr > 0):
        raise UserError(f"--lr must be a positive number, got {lr}")


def _check_arch_options(arch: str, **options: object) -> None:
    """Refuse an option of the other kind of model (``--arch ngram --max-vocab 10000`` was
    silently ignored); given = different from the trainer's own default."""
    import inspect
    from dataclasses import asdict

    from cuelens.errors import UserError
    from cuelens.lm.ngram import NgramModel
    from cuelens.lm.rnn import RNNConfig, train_rnn

    defaults = {**{name: parameter.default for name, parameter
                   in inspect.signature(NgramModel.train).parameters.items()},
                **asdict(RNNConfig()), **(train_rnn.__kwdefaults__ or {}), "device": "auto"}
    other = ("lstm", "rnn") if arch == "ngram" else ("ngram",)
    given = [f"--{name.replace('_', '-')}" for name, value in options.items()
             if value != defaults[name] and ((name in ("order", "discount")) == (arch != "ngram"))]
    if given:
        raise UserError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to "
                        f"--arch {' and '.join(other)}, not {arch}")
