"""Feedback on long jobs: progress lines with the time left when stderr is not a terminal (rich
draws nothing there), ``audit --version`` and the command list of ``audit --help``."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import cuelens.commands.common as common
from cuelens import __version__
from cuelens.cli import COMMANDS, GROUPS, app
from cuelens.commands.common import progress_bar
from cuelens.commands.model_options import item_progress


def test_version():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"cuelens {__version__}"


def test_help_lists_each_command_on_one_line_when_the_terminal_is_wide_enough():
    output = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "400"}).output
    lines = output[output.index("Commands"):].splitlines()
    panel = lines[1:next(i for i, line in enumerate(lines) if line.startswith("╰"))]
    rows = {line.split()[1]: line for line in panel}
    assert len(panel) == len(rows) == len(COMMANDS) + len(GROUPS)  # no continuation lines
    assert "for reliance on the dataset's cues." in rows["probe"]  # the docstring's 2nd line
    assert "NAME.summary.json" not in rows["stress"]  # the first paragraph only


@pytest.mark.parametrize(("command", "sentence"), [
    (["probe"], "ΔAcc per cue with 95% bootstrap CIs"),
    (["probe"], "http://127.0.0.1:8000/v1 --prompt nli-yes-no --prompt nli-yes-no-cot"),
    (["contrast", "synthetic"], "log p(n|m2)); s2 the reverse. Each output line"),
])
def test_a_commands_help_keeps_each_paragraph_whole(command, sentence):
    """Later paragraphs too (typer's rich mode cut them at the source's line breaks, and an
    example over two source lines read as two commands)."""
    output = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "400"}).output
    assert any(sentence in line for line in output.splitlines())


def test_item_progress_prints_lines_with_counts_and_time_left_without_a_terminal(
        monkeypatch, capsys):
    assert not common.console.is_terminal  # pytest captures stderr
    monkeypatch.setattr(common, "LOG_EVERY", 0.0)
    with item_progress("loss") as progress:
        task = progress.add_task("training on 10 items", total=10, loss="-")
        for _ in range(10):
            progress.update(task, advance=1, loss="0.5")
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("training on 10 items · 10% (1 of 10) · 0:00:00 elapsed")
    assert "about" in lines[1] and "left" in lines[1]
    assert lines[-1].endswith("100% (10 of 10) · 0:00:00 elapsed · done")


def test_stage_progress_is_quiet_for_short_jobs(capsys):
    with progress_bar("scanning toy") as bar:
        bar("leakage", 0.5)
        bar("easy/hard", 1.0)
    assert capsys.readouterr().err == ""  # under LOG_EVERY seconds: no line at all


def test_stage_progress_lines_name_the_stage(monkeypatch, capsys):
    monkeypatch.setattr(common, "LOG_EVERY", 0.0)
    with progress_bar("scanning toy") as bar:
        bar("leakage", 0.25)
    (first, last) = capsys.readouterr().err.splitlines()
    assert first.startswith("scanning toy: leakage · 25% · ")
    assert last.startswith("scanning toy: leakage · 25%")


def test_score_pairs_reports_progress_in_a_log(tmp_path, monkeypatch):
    """score-pairs on 600 pairs (1,200 sentences): a line per 256 sentences scored."""
    import json

    monkeypatch.setattr(common, "LOG_EVERY", 0.0)
    (tmp_path / "corpus.txt").write_text("the cat sat on the mat\nthe dog sat on the log\n")
    runner = CliRunner()
    trained = runner.invoke(app, ["lm", "train", "--arch", "ngram", "--order", "2", "--corpus",
                                  str(tmp_path / "corpus.txt"), "--min-count", "1",
                                  "--out", str(tmp_path / "bi")])
    assert trained.exit_code == 0, trained.output
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"sentence_good": "the cat sat",
                                         "sentence_bad": "cat the sat"}) + "\n"
                             for _ in range(600)))
    result = runner.invoke(app, ["score-pairs", str(pairs), "-m", f"ngram:{tmp_path / 'bi'}"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("scoring with")]
    assert [line.split(" · ")[1] for line in lines] == [
        "21% (256 of 1,200)", "43% (512 of 1,200)", "64% (768 of 1,200)",
        "85% (1,024 of 1,200)", "100% (1,200 of 1,200)", "100% (1,200 of 1,200)"]
    assert lines[-1].endswith("done")
