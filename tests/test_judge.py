"""Judge logs judged in both orders: planted consistency/flip rates, FastChat's own output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats
from typer.testing import CliRunner

from cuelens.audit.judge import judge_section
from cuelens.cli import app
from planted_preference import make_judge_log
from cuelens.errors import UserError
from cuelens.jsonio import write_jsonl
from cuelens.reports.schema import validate_results

# written by FastChat's play_a_match_pair (benchmarks/fastchat_judgments.py)
FASTCHAT = Path(__file__).resolve().parent.parent / "docs" / "examples" / \
    "fastchat-gpt-4_pair.jsonl"


def _check(section: dict, n: int) -> None:
    assert section["n_pairs"] == n
    assert (section["consistent"]["rate"], section["flips"]["rate"],
            section["tie_inconsistent"]["rate"]) == (0.7, 0.2, 0.1)
    low, high = stats.binomtest(int(0.2 * n), n).proportion_ci(method="wilson")
    assert section["flips"]["ci"] == pytest.approx([low, high], abs=1e-6)
    first = section["flips_to_first"]
    assert first["rate"] == 1.0 and first["significant"]
    assert first["p_value"] == pytest.approx(stats.binomtest(int(0.2 * n), int(0.2 * n)).pvalue,
                                             rel=1e-5)
    validate_results(section)


def test_planted_two_record_log(tmp_path):
    path = tmp_path / "judge.jsonl"
    write_jsonl(path, make_judge_log(100))
    section = judge_section(path, "category")
    assert section["shape"] == "two records"
    _check(section, 100)
    rows = {r["subset"]: r for r in section["by_subset"]["rows"]}
    assert rows["even"]["flips"]["count"] == rows["odd"]["flips"]["count"] == 10
    assert rows["even"]["flips_to_first"]["p_holm"] == pytest.approx(2 * 0.5 ** 9, rel=1e-5)


def test_fastchat_pairwise_judgments():
    section = judge_section(FASTCHAT)
    assert section["shape"] == "fastchat" and section["skipped"] == 0
    _check(section, 40)


def test_one_order_only_and_bad_verdicts(tmp_path):
    path = tmp_path / "judge.jsonl"
    write_jsonl(path, [{"pair_id": 1, "order": "ab", "winner": "A"}])
    with pytest.raises(UserError, match="both orders"):
        judge_section(path)
    write_jsonl(path, [{"pair_id": 1, "order": "ab", "winner": "maybe"}])
    with pytest.raises(UserError) as error:
        judge_section(path)
    assert error.value.line == 1



def test_a_pair_in_two_subsets_is_refused(tmp_path):
    """The two orders of one pair naming different subsets: the pair was counted silently in
    the subset of whichever record came last."""
    path = tmp_path / "judge.jsonl"
    write_jsonl(path, [{"pair_id": 1, "swapped": False, "winner": "A", "domain": "x"},
                       {"pair_id": 1, "swapped": True, "winner": "B", "domain": "y"}])
    with pytest.raises(UserError, match="pair '1' is in domain 'x' on line 1 and 'y' here"):
        judge_section(path, "domain")
    assert judge_section(path)["n_pairs"] == 1  # without --subset-field the field is unread

def test_judge_command_writes_results_and_report(tmp_path):
    out = tmp_path / "out"
    run = CliRunner().invoke(app, ["judge", str(FASTCHAT), "--out", str(out)])
    assert run.exit_code == 0, run.output
    assert "position bias" in run.output
    assert json.loads((out / "results.json").read_text())["flips"]["count"] == 8
    assert "Judge position consistency" in (out / "report.html").read_text()


def test_judge_report_summary_gives_the_verdict(tmp_path):
    """The page's first block says what the judge did (it was an empty 'Summary' box)."""
    from cuelens.reports.pages import build_sections

    summary = build_sections(judge_section(FASTCHAT))[0]
    assert summary.key == "summary"
    [verdict] = summary.context["verdicts"]
    assert (verdict.level, verdict.section) == ("flagged", "judge_log")
    assert verdict.text.endswith("a position bias.")



def test_judge_command_says_what_it_skipped(tmp_path):
    path = tmp_path / "judge.jsonl"
    write_jsonl(path, [{"pair_id": 1, "swapped": False, "winner": "A"},
                       {"pair_id": 1, "swapped": True, "winner": "B"},
                       {"pair_id": 2, "swapped": False, "winner": "A"}])
    run = CliRunner().invoke(app, ["judge", str(path), "--out", str(tmp_path / "out")])
    assert run.exit_code == 0, run.output
    assert "1 skipped (judge errors, or pairs judged in one order only)" in run.output


def test_subset_values_are_read_in_their_normal_form(tmp_path):
    """A subset written composed (NFC) in one order and decomposed (NFD) in the other was
    refused as two subsets ("is in domain 'café' on line 1 and 'café' here"); NFC and NFD
    spellings of different pairs were two rows of the same name."""
    import unicodedata
    path = tmp_path / "judge.jsonl"
    write_jsonl(path, [{"pair_id": i, "swapped": flipped, "winner": "A",
                        "domain": unicodedata.normalize("NFD" if flipped or i else "NFC", "café")}
                       for i in range(3) for flipped in (False, True)])
    section = judge_section(path, "domain")
    assert [row["subset"] for row in section["by_subset"]["rows"]] == ["café"]
    assert section["by_subset"]["rows"][0]["n_pairs"] == 3


def test_pair_ids_are_matched_in_their_normal_form(tmp_path):
    """A pair id written composed (NFC) in one order and decomposed (NFD) in the other is one
    pair (it was two pairs judged in one order each: 'no pair was judged in both orders'), and
    the two spellings in one order are one pair judged twice."""
    import unicodedata
    ids = ["café-1", "ใช่-2", "कि-3", "日本-4"]
    path = tmp_path / "judge.jsonl"
    write_jsonl(path, [{"pair_id": unicodedata.normalize("NFD" if flipped else "NFC", pair),
                        "swapped": flipped, "winner": "A"}
                       for pair in ids for flipped in (False, True)])
    section = judge_section(path)
    assert section["n_pairs"] == 4 and section["skipped"] == 0
    twice = tmp_path / "twice.jsonl"
    write_jsonl(twice, [{"pair_id": unicodedata.normalize(form, "café"), "swapped": False,
                         "winner": "A"} for form in ("NFC", "NFD")])
    with pytest.raises(UserError, match="judged twice in the original order"):
        judge_section(twice)


@pytest.mark.parametrize("value, said", [(None, "holds null"), ({"x": 1}, 'holds {"x": 1}'),
                                         (True, "holds true"), ("  ", "holds a blank text")])
def test_a_pair_id_that_is_no_text_or_number_is_one_error(tmp_path, value, said):
    """Every null pair id was the one pair 'None' (two of them: 'judged twice'; one in each
    order: a pair), an object id its Python text."""
    path = tmp_path / "judge.jsonl"
    write_jsonl(path, [{"pair_id": value, "swapped": flipped, "winner": "A"}
                       for flipped in (False, True)])
    run = CliRunner().invoke(app, ["judge", str(path), "--out", str(tmp_path / "out")])
    assert run.exit_code == 2 and "line 1: pair id field 'pair_id' " + said in run.output
    assert "Traceback" not in run.output
