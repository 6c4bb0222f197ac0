"""Names the user chose (paths, model specs, dataset names) are shown on the terminal as they
are: text like ``[/x]`` in them is not read as rich markup (it was a MarkupError traceback after
the work was done, or a style that swallowed part of the name)."""

from __future__ import annotations

import io

from rich.console import Console
from typer.testing import CliRunner

import cuelens.commands.common as common
from cuelens.cli import app
from cuelens.commands.common import progress_bar

CORPUS = "the cat sat on the mat\nthe dog sat on the log\na cat saw the dog\n"


def _unwrapped(output: str) -> str:
    """The terminal text without the spaces and line breaks of its wrapping."""
    return "".join(output.split())


def test_lm_train_and_score_show_paths_and_model_specs_with_brackets(tmp_path):
    (tmp_path / "corpus.txt").write_text(CORPUS)
    model = tmp_path / "[/x]"
    runner = CliRunner()
    trained = runner.invoke(app, ["lm", "train", "--arch", "ngram", "--order", "2", "--corpus",
                                  str(tmp_path / "corpus.txt"), "--min-count", "1",
                                  "--out", str(model)])
    assert trained.exit_code == 0, trained.output
    assert f"savedto{model}" in _unwrapped(trained.output)
    (tmp_path / "s.txt").write_text("the cat sat\n")
    out = tmp_path / "[bold]scores.jsonl"
    scored = runner.invoke(app, ["score", str(tmp_path / "s.txt"), "--model", f"ngram:{model}",
                                 "--words", "--out", str(out)])
    assert scored.exit_code == 0, scored.output
    assert f"ngram:{model}:" in _unwrapped(scored.output)
    assert f"to{out}" in _unwrapped(scored.output)


def test_contrast_natural_shows_an_out_path_with_brackets(tmp_path):
    """The closing line was a MarkupError traceback after the pairs were written."""
    scores = tmp_path / "scores.jsonl"
    scores.write_text("".join(f'{{"text": "sentence {i}", "a": {-i}, "b": {i - 9}}}\n'
                              for i in range(6)))
    out = tmp_path / "[" / "x]" / "pairs.jsonl"      # …/[/x]/pairs.jsonl
    out.parent.mkdir(parents=True)
    result = CliRunner().invoke(app, ["contrast", "natural", "--scores", str(scores),
                                      "--per-pair", "1", "--threshold", "0", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"→{out}" in _unwrapped(result.output)


def test_cache_clear_shows_a_cache_dir_with_brackets(tmp_path):
    result = CliRunner().invoke(app, ["cache", "clear", "--cache-dir", str(tmp_path / "[/c]")])
    assert result.exit_code == 0, result.output
    assert "[/c]" in result.output


def test_a_progress_bar_on_a_terminal_shows_its_description_as_text(monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(common, "console", Console(file=screen, force_terminal=True, width=120))
    with progress_bar("scanning [/data]") as progress:
        progress("leakage", 0.5)
    assert "scanning [/data]: leakage" in screen.getvalue()


def test_an_error_naming_a_path_with_control_characters_is_one_escaped_line(tmp_path):
    """A newline, ESC or U+202E in a file name was printed raw in the error line: it broke the
    line, restyled the terminal or showed the rest of the line reversed."""
    name = "bad\nname\x1b[31m\u202eevil.jsonl"
    (tmp_path / name).write_text('{"premise": "a", "hypothesis": "b"}\n')   # no label
    result = CliRunner().invoke(app, ["scan", str(tmp_path / name), "--out",
                                      str(tmp_path / "o")])
    assert result.exit_code == 2
    (line,) = [line for line in result.output.splitlines() if line.strip()]
    assert "bad\\nname\\x1b[31m\\u202eevil.jsonl" in line and "\x1b" not in line
