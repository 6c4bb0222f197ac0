"""Counts in sentences: one helper (cuelens.wording.plural) for every terminal message, error,
report and card sentence — "1 pair", never "1 pairs" or "1 pair(s)"."""

from __future__ import annotations

from typer.testing import CliRunner

from cuelens.cli import app
from cuelens.wording import plural
from tests.test_hostile_inputs import jsonl, nli_rows


def test_plural_helper():
    assert plural(0, "pair") == "0 pairs"
    assert plural(1, "pair") == "1 pair"
    assert plural(1234, "pair") == "1,234 pairs"
    assert plural(1, "copy", "copies") == "1 copy" and plural(3, "copy", "copies") == "3 copies"
    assert plural(1, "item is", "items are") == "1 item is"


def _flat(output: str) -> str:
    return " ".join(output.split())


def test_judge_of_one_pair_says_one_pair(tmp_path):
    """It said 'for 0.0% of 1 pairs' and the report 'Among the 1 flips'."""
    log = tmp_path / "log.jsonl"
    log.write_text(jsonl([{"pair_id": "p", "swapped": flipped, "winner": "A"}
                          for flipped in (False, True)]))
    result = CliRunner().invoke(app, ["judge", str(log), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "of 1 pair (95% CI" in _flat(result.output)
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Among the 1 flip," in html and "1 flips" not in html


def test_scan_hygiene_line_counts_one_duplicate(tmp_path):
    """It printed '1 duplicate(s), 0 near-duplicate pair(s), …'."""
    rows = nli_rows(30)
    rows.append({**rows[0], "id": "copy"})
    data = tmp_path / "d.jsonl"
    data.write_text(jsonl(rows))
    result = CliRunner().invoke(app, ["scan", str(data), "--out", str(tmp_path / "out"),
                                      "--features", "none"])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("hygiene"))
    assert "1 duplicate, " in line and "(s)" not in _flat(result.output)


def test_filter_lines_count_without_parentheses(tmp_path):
    """'(…; 0 significant cue(s))' in audit filter's D lines."""
    rows = []
    for i in range(90):  # one planted cue; 2 labels of 45
        label = "A" if i % 2 else "B"
        cue = " nobody" if label == "A" and i < 60 else ""
        rows.append({"id": str(i), "premise": "p", "hypothesis": f"w{i % 7} w{i % 5}{cue}",
                     "label": label})
    data = tmp_path / "d.jsonl"
    data.write_text(jsonl(rows))
    result = CliRunner().invoke(app, ["filter", str(data), "--method", "z", "--min-count", "1",
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "significant cue" in result.output and "(s)" not in result.output


def test_one_label_conflict_is_one_group_that_carries(tmp_path):
    """'1 group(s) of identical inputs carry different labels' (warnings) and '1 group of
    identical inputs carry …' (findings)."""
    rows = nli_rows(30)
    rows.append({**rows[0], "id": "conflict", "label": "neutral"})
    data = tmp_path / "d.jsonl"
    data.write_text(jsonl(rows))
    result = CliRunner().invoke(app, ["scan", str(data), "--out", str(tmp_path / "out"),
                                      "--features", "none"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "out" / "results.json").read_text()
    assert "1 group of identical inputs carries different labels (2 items" in text
    assert "(s)" not in text
    html = (tmp_path / "out" / "report.html").read_text()
    assert "1 group of identical inputs carries different labels (2 items)." in html
