"""`audit compare`: D with CIs and significant cues gained/lost between two scans."""

from __future__ import annotations

import copy
import json

from typer.testing import CliRunner

from cuelens.audit.compare import compare_scans
from cuelens.cli import app
from cuelens.reports.schema import validate_results


def scan_like(D: float, low: float, high: float, cues: list[tuple[str, str, bool]]) -> dict:
    return {"schema_version": "1.0", "dataset": {"name": "toy", "task": "nli"},
            "leakage": {"majority": 0.4, "flagged": low > 0.1, "verdict": "mild",
                        "best": {"metric": "cp", "aggregator": "lr", "accuracy": 0.4 + D,
                                 "D": D, "ci_low": low, "ci_high": high}},
            "easy_hard": {"easy": 5, "hard": 5, "hard_fraction": 0.5},
            "cues": [{"token": t, "label": l, "count": 9, "label_count": 8,
                      "metrics": {"z": 5.0 if s else 1.0}, "significant": s}
                     for t, l, s in cues]}


BEFORE = scan_like(0.2, 0.15, 0.25, [("nobody", "contradiction", True),
                                     ("outdoors", "entailment", True), ("a", "neutral", False)])
AFTER = scan_like(0.05, 0.01, 0.09, [("outdoors", "entailment", True),
                                     ("<script>x</script>", "neutral", True)])


def test_cues_gained_lost_and_change_in_d():
    result = compare_scans(BEFORE, AFTER)
    validate_results(result)
    assert result["delta_D"] == -0.15 and result["cis_overlap"] is False
    assert [c["token"] for c in result["cues_lost"]] == ["nobody"]
    assert [c["token"] for c in result["cues_gained"]] == ["<script>x</script>"]
    assert result["n_cues_kept"] == 1
    overlapping = copy.deepcopy(AFTER)
    overlapping["leakage"]["best"].update(ci_low=0.12, ci_high=0.3)
    assert compare_scans(BEFORE, overlapping)["cis_overlap"] is True


def test_compare_command_prints_and_writes_an_escaped_report(tmp_path):
    for name, results in (("before", BEFORE), ("after", AFTER)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(results))
    out = tmp_path / "cmp.html"
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "before"),
                                      str(tmp_path / "after" / "results.json"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "change in D: -15.0 points" in result.output
    assert "significant cues lost: 1 (nobody→contradiction)" in result.output
    html = out.read_text()
    assert "<script>x</script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html


def test_compare_refuses_a_non_scan_file(tmp_path):
    (tmp_path / "x.json").write_text(json.dumps({"kind": "score_pairs"}))
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "x.json"), str(tmp_path / "x.json")])
    assert result.exit_code == 2 and "not an audit scan result" in result.output
