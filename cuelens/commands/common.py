"""Shared pieces of the sub-commands: error handling, console, data-argument options."""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from rich.console import Console
from rich.markup import escape

from cuelens.errors import UserError
from cuelens.wording import plural

if TYPE_CHECKING:
    from cuelens.data.dataset import Dataset
    from cuelens.data.schema import FieldMap

console = Console(stderr=True)


def _error_line(exc: UserError) -> None:
    """The error as one line: the path or text it quotes shown as :func:`terminal_text` (a
    newline, ESC or U+202E in a file name broke the line, restyled or reordered it)."""
    console.print(f"[bold red]error:[/] {terminal_text(str(exc))}", highlight=False, markup=True,
                  soft_wrap=True)


def user_errors(func):
    """Turn :class:`UserError` into one red line on stderr and its exit code (no traceback)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except UserError as exc:
            _error_line(exc)
            raise typer.Exit(exc.exit_code) from None
        except OSError as exc:  # a full disk where no caller knew the path: still one line
            from cuelens.atomic import NO_SPACE, disk_full_error

            if exc.errno not in NO_SPACE:
                raise
            error = disk_full_error(exc.filename or ".")
            _error_line(error)
            raise typer.Exit(error.exit_code) from None
        except KeyboardInterrupt:
            console.print("interrupted")
            raise typer.Exit(130) from None

    return wrapper


def visible(text: str) -> str:
    """Dataset text for one terminal line or TSV cell (:func:`~cuelens.data.display.one_line`):
    a tab, a newline, an escape sequence's ESC, the other control characters and the
    bidirectional controls (U+202E) are shown as escapes (``\\t``, ``\\n``, ``\\x1b``,
    ``\\u202e``); written files keep the text as it is."""
    from cuelens.data.display import one_line

    return one_line(text)


def terminal_text(text: str) -> str:
    """Dataset text in a rich line of the terminal (a name, a label, a sentence quoting them):
    its control and bidirectional characters as escapes (:func:`visible`), its brackets as
    text, not markup."""
    return escape(visible(text))


# Data arguments shared by scan / probe / train (docs/methods.md §1).
DataArg = Annotated[Optional[str], typer.Argument(
    help="A dataset file (.jsonl/.csv/.tsv[.gz]; cross-validated), or a directory with "
         "train/dev/test files.", show_default=False)]
PlotlyOpt = Annotated[str, typer.Option(
    "--plotly", help="How the HTML report gets plotly.js: inline (embedded, one offline file), "
    "cdn (linked from cdn.plot.ly: a small page that needs the network) or directory "
    "(plotly-<version>.min.js written next to the page, shared by the pages of a folder).")]
TrainOpt = Annotated[Optional[Path], typer.Option("--train", help="Training split file.")]
TestOpt = Annotated[Optional[Path], typer.Option("--test", help="Test split file.")]


def _dataset_name(value: str | None) -> str | None:
    """``--hf``'s value, refused when blank (it read as no ``--hf`` at all)."""
    if value is not None and not value.strip():
        raise typer.BadParameter("give a dataset name or path, e.g. 'snli'")
    return value


HfOpt = Annotated[Optional[str], typer.Option(
    "--hf", help="Hugging Face dataset, e.g. 'snli' or 'super_glue:copa' (needs `datasets`).",
    callback=_dataset_name)]
PremiseFieldOpt = Annotated[Optional[str], typer.Option(
    "--premise-field", help="Field holding the premise/context.")]
HypothesisFieldOpt = Annotated[Optional[str], typer.Option(
    "--hypothesis-field", help="Field holding the hypothesis (pair tasks).")]
LabelFieldOpt = Annotated[Optional[str], typer.Option(
    "--label-field", help="Field holding the label.")]
ChoicesFieldOpt = Annotated[Optional[str], typer.Option(
    "--choices-field", help="Field holding the list of choices (multiple choice).")]
GroupFieldOpt = Annotated[Optional[str], typer.Option(
    "--group-field", help="Field holding a group id: items sharing it are kept in one "
    "cross-validation fold (added to the automatic grouping by shared premise/text).")]
SkipBadOpt = Annotated[bool, typer.Option(
    "--skip-bad", help="Skip malformed lines/records with a counted warning instead of stopping.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Random seed (results are deterministic).")]
OutFileOpt = Annotated[Path, typer.Option("--out", "-o", help="Output file.")]
CacheDirOpt = Annotated[Optional[Path], typer.Option(
    "--cache-dir", help="Parse cache of the ICQ features (safe to delete; default: "
    "$CUELENS_CACHE_DIR or ~/.cache/cuelens/parse; docs/cache.md).")]
ScanPath = Annotated[Path, typer.Argument(
    help="A scan output directory or its results.json.", show_default=False)]
AddressOpt = Annotated[Optional[str], typer.Option(
    "--address", help="Ray cluster for --engine ray: auto, ray://host:port (default: start a "
    "local one).")]


def check_address(address: str | None, engine: str) -> None:
    """Refuse ``--address`` without ``--engine ray`` (it was ignored: the work ran here)."""
    if address is not None and engine != "ray":
        raise UserError(f"--address applies to --engine ray, not --engine {engine}")


def field_map(premise_field, hypothesis_field, label_field, choices_field, group_field=None):
    from cuelens.data.schema import FieldMap

    return FieldMap(premise=premise_field, hypothesis=hypothesis_field, label=label_field,
                    choices=choices_field, group=group_field)


@dataclass(frozen=True)
class DataSource:
    """The data arguments of a dataset command, as :func:`data_options` collects them."""

    data: str | None = None
    train: Path | None = None
    test: Path | None = None
    hf: str | None = None
    premise_field: str | None = None
    hypothesis_field: str | None = None
    label_field: str | None = None
    choices_field: str | None = None
    skip_bad: bool = False

    @property
    def fields(self) -> FieldMap:
        """The field names the data arguments give."""
        return field_map(self.premise_field, self.hypothesis_field, self.label_field,
                         self.choices_field)

    def load(self, alone: str | None = None) -> Dataset:
        """The dataset named by the data arguments, warning about skipped items; ``alone``
        ("train" or "test"): the split a command reads by itself (stress: test, augment:
        train), whose file given alone (``--test FILE``) is read as DATA."""
        from cuelens.data import load_dataset

        data, train, test = self.data, self.train, self.test
        lone = {"train": train, "test": test}.get(alone or "")
        if lone is not None and data is None and (train is None or test is None):
            data, train, test = str(lone), None, None
        dataset = load_dataset(data, train=str(train) if train else None,
                               test=str(test) if test else None, hf=self.hf,
                               fields=self.fields, skip_bad=self.skip_bad)
        warn_skipped(dataset)
        return dataset


# DataSource field → (its typer annotation, default), in the order --help lists them
DATA_OPTIONS: dict[str, tuple[Any, Any]] = {
    "train": (TrainOpt, None), "test": (TestOpt, None), "hf": (HfOpt, None),
    "premise_field": (PremiseFieldOpt, None), "hypothesis_field": (HypothesisFieldOpt, None),
    "label_field": (LabelFieldOpt, None), "choices_field": (ChoicesFieldOpt, None),
    "skip_bad": (SkipBadOpt, False)}


def data_options(*, without: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """Give a command the shared data arguments, declared once here: its parameter
    ``source: DataSource`` becomes the DATA argument (in its place) and the options of
    :data:`DATA_OPTIONS` less ``without`` (at the end of the signature); the command receives
    them as one :class:`DataSource` (fields it goes ``without`` keep their defaults).

    >>> @data_options(without=("hf",))
    ... def command(source: DataSource, top: int = 5) -> tuple:
    ...     return source.data, source.train, top
    >>> list(inspect.signature(command).parameters)[:3]
    ['data', 'top', 'train']
    >>> command(data="d.jsonl", top=3, train=None, test=None, premise_field=None,
    ...         hypothesis_field=None, label_field=None, choices_field=None, skip_bad=False)
    ('d.jsonl', None, 3)
    """
    names = [name for name in DATA_OPTIONS if name not in without]

    def decorate(command: Callable) -> Callable:
        signature = inspect.signature(command, eval_str=True)
        parameters = [inspect.Parameter("data", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        annotation=DataArg, default=None)
                      if p.name == "source" else p for p in signature.parameters.values()]
        parameters += [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                         annotation=DATA_OPTIONS[name][0],
                                         default=DATA_OPTIONS[name][1]) for name in names]

        @functools.wraps(command)
        def wrapper(**kwargs):
            source = DataSource(**{name: kwargs.pop(name) for name in ["data", *names]})
            return command(source=source, **kwargs)

        wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore
        wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
        return wrapper

    return decorate


def warn_skipped(dataset) -> None:
    for split in dataset.splits.values():
        for reason, count in split.skipped.items():
            skipped = f"{split.path}: skipped {plural(count, 'item')}: {reason}"
            console.print(f"[yellow]warning:[/] {escape(skipped)}")


LOG_EVERY = 15.0  # seconds between progress lines when stderr is not a terminal


def live_progress(*columns):
    """A transient rich progress display with ``columns`` on the console; when stderr is not
    a terminal (a log file, CI, a pipe), where rich draws nothing, it prints a plain line with
    the share done, the elapsed time and the time left every :data:`LOG_EVERY` seconds instead
    (and a last line when it printed any)."""
    import time

    from rich.progress import Progress

    class LoggedProgress(Progress):
        def __init__(self) -> None:
            super().__init__(*columns, console=console, transient=True,
                             disable=not console.is_terminal)
            self._logged: dict = {}
            self._closed: set = set()  # tasks whose last line is printed

        def update(self, task_id, **kwargs) -> None:
            super().update(task_id, **kwargs)
            self._log(task_id)

        def advance(self, task_id, advance: float = 1) -> None:
            super().advance(task_id, advance)
            self._log(task_id)

        def _log(self, task_id, final: bool = False) -> None:
            if not self.disable:
                return
            now = time.monotonic()
            last = self._logged.get(task_id)
            if final and (last is None or task_id in self._closed):
                return
            if not final and now - (last or self._tasks[task_id].start_time or now) < LOG_EVERY:
                return
            self._logged[task_id] = now
            if final:
                self._closed.add(task_id)
            console.print(progress_line(self._tasks[task_id]), highlight=False, markup=False,
                          soft_wrap=True)

        def stop(self) -> None:
            for task_id in list(self._tasks):
                self._log(task_id, final=True)
            super().stop()

    return LoggedProgress()


def progress_line(task) -> str:
    """``scanning snli: leakage · 42% · 1:02 elapsed · about 1:25 left`` for a rich task."""
    from datetime import timedelta

    def clock(seconds: float | None) -> str:
        return str(timedelta(seconds=int(seconds or 0)))

    parts = [task.description]
    if task.total:
        done = f"{100 * task.completed / task.total:.0f}%"
        if task.total > 1:
            done += f" ({int(task.completed):,} of {int(task.total):,})"
        parts.append(done)
    parts.append(f"{clock(task.elapsed)} elapsed")
    if task.finished:
        parts.append("done")
    elif task.time_remaining is not None:
        parts.append(f"about {clock(task.time_remaining)} left")
    return " · ".join(parts)


@contextlib.contextmanager
def progress_bar(description: str) -> Iterator[Callable[[str, float], None]]:
    """A rich progress bar fed by the library's ``progress(stage, fraction)`` callbacks
    (:func:`live_progress`: plain lines when stderr is not a terminal)."""
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    with live_progress(TextColumn("{task.description}", markup=False), BarColumn(),
                       TimeElapsedColumn(), TimeRemainingColumn()) as bar:
        task = bar.add_task(description, total=1.0)
        yield lambda stage, fraction: bar.update(task, completed=fraction,
                                                 description=f"{description}: {stage}")
