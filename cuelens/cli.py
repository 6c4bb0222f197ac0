"""The ``audit`` command line (Typer). Each sub-command lives in ``cuelens/commands/``.

Sub-commands are listed in :data:`COMMANDS` (name → "module:function"); add new ones there.
"""

from __future__ import annotations

import importlib
import inspect
import os
import signal
import sys
from collections.abc import Callable

import typer

app = typer.Typer(
    name="audit",
    help="cuelens: audit NLP datasets for annotation artifacts (cues) and test whether models "
         "exploit them.\n\nExample: audit demo --out demo-output",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)

def _version(value: bool) -> None:
    if value:
        from cuelens import __version__

        typer.echo(f"cuelens {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True,
        help="Print the cuelens version and exit.")) -> None:
    pass  # the app's own help text describes it; this callback only adds --version


# name -> "module:function". Sub-apps (groups such as `lm`) are "module:app".
COMMANDS: dict[str, str] = {
    "demo": "cuelens.commands.demo:demo",
    "scan": "cuelens.commands.scan:scan",
    "train": "cuelens.commands.train:train",
    "probe": "cuelens.commands.probe:probe",
    "prompts": "cuelens.commands.llm_probe:prompts",
    "rotate": "cuelens.commands.rotate:rotate",
    "stress": "cuelens.commands.stress:stress",
    "augment": "cuelens.commands.augment:augment",
    "score": "cuelens.commands.score:score",
    "score-pairs": "cuelens.commands.score:score_pairs",
    "report": "cuelens.commands.report:report",
    "compare": "cuelens.commands.compare:compare",
    "judge": "cuelens.commands.preference:judge",
    "filter": "cuelens.commands.filter:filter",
    "card": "cuelens.commands.card:card",
}
GROUPS: dict[str, str] = {
    "lm": "cuelens.commands.lm:app",
    "contrast": "cuelens.commands.contrast:app",
    "cache": "cuelens.commands.cache:app",
}


def _resolve(target: str):
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def help_text(command: Callable) -> str:
    """``command``'s docstring with each paragraph on one line: typer's rich mode keeps a
    paragraph's line breaks, so the source's width cut the help mid-sentence (and an example
    written over two lines read as two commands)."""
    paragraphs = inspect.cleandoc(command.__doc__ or "").split("\n\n")
    return "\n\n".join(" ".join(paragraph.split()) for paragraph in paragraphs)


for _name, _target in COMMANDS.items():
    _command = _resolve(_target)
    _help = help_text(_command)
    app.command(_name, help=_help, short_help=_help.split("\n\n")[0])(_command)
for _name, _target in GROUPS.items():
    _group = _resolve(_target)
    for _info in _group.registered_commands:
        _info.help = _info.help or help_text(_info.callback)
    app.add_typer(_group, name=_name)


# Commands whose worker threads fit models, not tokenise: they share one glibc arena
# (cuelens/commands/allocator.py says why the others do not).
ONE_ARENA = frozenset({"scan"})


def _on_terminate(main_pid: int):
    """SIGTERM unwinds like Ctrl-C in the command's own process: every ``finally`` and exit
    handler runs, so a streaming scan's chunk directory and an output set's temporaries are
    removed (docs/robustness.md). A forked worker (a multiprocessing pool, which terminates its
    workers with SIGTERM) dies as it would without the handler."""
    def terminated(signum: int, frame: object) -> None:
        if os.getpid() != main_pid:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise KeyboardInterrupt

    return terminated


def main() -> None:
    from cuelens.commands.allocator import release_memory_promptly, share_one_arena

    signal.signal(signal.SIGTERM, _on_terminate(os.getpid()))
    release_memory_promptly()
    if sys.argv[1:2] and sys.argv[1] in ONE_ARENA:
        share_one_arena()
    app()


if __name__ == "__main__":
    main()
