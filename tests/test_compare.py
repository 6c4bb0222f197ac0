"""`audit compare`: D with CIs and significant cues gained/lost between two scans."""

from __future__ import annotations

import copy
import json

import pytest
from typer.testing import CliRunner

from cuelens.audit.compare import compare_scans
from cuelens.cli import app
from cuelens.reports.schema import validate_results


def scan_like(D: float, low: float, high: float, cues: list[tuple[str, str, bool]],
              train_items: int = 300) -> dict:
    """A schema-valid NLI scan with 300 test items, the headline D with its interval and
    ``cues`` (token, label, significant)."""
    labels = ["contradiction", "entailment", "neutral"]
    split = lambda n: {"items": n, "instances": n, "label_counts": {l: n // 3 for l in labels}}  # noqa: E731
    return {"schema_version": "1.0",
            "dataset": {"name": "toy", "task": "nli", "label_names": labels,
                        "splits": {"train": split(train_items), "test": split(300)}},
            "leakage": {"majority": 0.4, "flagged": low > 0.1, "verdict": "mild",
                        "table": [], "best": {"metric": "cp", "aggregator": "lr",
                                              "accuracy": 0.4 + D, "D": D, "ci_low": low,
                                              "ci_high": high}},
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


def test_a_verdict_change_within_overlapping_intervals_is_no_clear_change():
    """chance → mild with overlapping D intervals was a red 'worse' beside D's 'same' and the
    headline's 'no measured change'."""
    before = scan_like(0.08, -0.01, 0.17, [])
    before["leakage"]["verdict"] = "chance"
    after = scan_like(0.10, 0.02, 0.18, [])
    rows = {row["measure"]: row for row in compare_scans(before, after)["changes"]}
    assert (rows["verdict"]["before"], rows["verdict"]["after"]) == ("chance", "mild")
    assert rows["verdict"]["direction"] == rows["cue leakage D"]["direction"] == "same"
    apart = compare_scans(before, scan_like(0.3, 0.25, 0.35, []))["changes"]
    assert [row["direction"] for row in apart[:2]] == ["worse", "worse"]


def test_compare_command_prints_and_writes_an_escaped_report(tmp_path):
    for name, results in (("before", BEFORE), ("after", AFTER)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(results))
    out = tmp_path / "cmp.html"
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "before"),
                                      str(tmp_path / "after" / "results.json"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Still leaking: the conclusion stays leakage; better: cue "
                                    "leakage D; nothing got")
    assert "better: cue leakage D: +20.0 → +5.0 points" in result.output
    assert "significant cues lost: 1 (nobody→contradiction)" in result.output
    html = out.read_text()
    assert "<script>x</script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html
    # one interval strip drawn in HTML: no plotly.js, so a compare page stays small
    assert "d-strip-row" in html and "plotly.js v" not in html and len(html) < 200_000


def compared_with_itself(tmp_path, results: dict):
    """`audit compare` of two scan folders holding ``results``: its CLI result and compare.html."""
    for name in ("before", "after"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(results))
    out = tmp_path / "cmp.html"
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "before"),
                                      str(tmp_path / "after"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return result, out


def test_a_very_long_cue_word_is_cut_in_the_terminal_and_the_cue_tables(tmp_path):
    """A 3,000-character token printed 40 terminal lines."""
    before = scan_like(0.2, 0.15, 0.25, [("x" * 3000, "neutral", True)])
    result, out = compared_with_itself(tmp_path, before)
    cut = f"{'x' * 30}…{'x' * 29}→neutral"
    assert f"significant cues kept: 1 ({cut})" in " ".join(result.output.split())
    cells = out.read_text().split("Cues kept")[-1]
    assert f">{'x' * 30}…{'x' * 29}</td><td>neutral</td>" in cells


def test_right_to_left_cue_words_take_their_own_direction(tmp_path):
    """An Arabic cue's cell reads right to left (dir="auto"; it was laid out left to right)."""
    before = scan_like(0.2, 0.15, 0.25, [("لا", "contradiction", True)])
    _, out = compared_with_itself(tmp_path, before)
    assert '<td class="mono" dir="auto" title="لا">لا</td>' in out.read_text()


def test_interval_strip_places_d_and_its_interval_on_one_axis_with_zero():
    from cuelens.reports.compare import interval_strip

    strip = interval_strip([{"source": "a", "D": 0.2, "ci_low": 0.1, "ci_high": 0.3},
                            {"source": "b", "D": 0.05, "ci_low": -0.1, "ci_high": 0.1}])
    assert (strip["low"], strip["high"]) == (-10.0, 30.0)  # points; 0 lies inside
    before, after = strip["rows"]
    assert strip["zero"] == 25.0
    assert (before["left"], before["width"], before["point"]) == (50.0, 50.0, 75.0)
    assert (after["left"], after["width"], after["point"]) == (0.0, 50.0, 37.5)


def test_compare_refuses_a_non_scan_file(tmp_path):
    (tmp_path / "x.json").write_text(json.dumps({"kind": "score_pairs"}))
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "x.json"), str(tmp_path / "x.json")])
    assert result.exit_code == 2 and "not an audit scan result" in result.output


def test_compare_refuses_an_output_over_an_input_before_printing(tmp_path):
    for name, results in (("before", BEFORE), ("after", AFTER)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(results))
    target = tmp_path / "after" / "results.json"
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "before"),
                                      str(tmp_path / "after"), "-o", str(target)])
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and "same as an input file" in result.output
    assert "Still leaking" not in result.output  # nothing compared before the refusal
    assert json.loads(target.read_text()) == AFTER


def with_config(results: dict, cross_validated: bool = False, **config) -> dict:
    out = copy.deepcopy(results)
    out["dataset"]["cross_validated"] = cross_validated
    out["config"] = {"metric": "cp", "folds": 5, "iterations": 5, "seed": 0, **config}
    return out


def test_kept_cues_are_named_with_z_before_and_after():
    result = compare_scans(BEFORE, AFTER)
    assert [(c["token"], c["label"], c["z_before"], c["z"]) for c in result["cues_kept"]] == \
        [("outdoors", "entailment", 5.0, 5.0)]


def test_identical_scans_are_unchanged_and_get_no_green_box(tmp_path):
    from cuelens.reports import render_report

    same = with_config(BEFORE)
    result = compare_scans(same, copy.deepcopy(same))
    assert result["status"] == "unchanged" and result["warnings"] == []
    assert all(c["direction"] == "same" for c in result["changes"])
    assert result["headline"].startswith("No measured change")
    html = render_report(result, tmp_path / "cmp.html").read_text()
    assert 'class="verdict verdict-neutral"' in html and 'class="verdict verdict-clean"' not in html


def test_a_shift_of_d_inside_overlapping_intervals_is_no_change():
    after = copy.deepcopy(BEFORE)
    after["leakage"]["best"].update(D=0.18, ci_low=0.13, ci_high=0.23)
    d_row = compare_scans(BEFORE, after)["changes"][0]
    assert (d_row["measure"], d_row["direction"]) == ("cue leakage D", "same")
    assert compare_scans(BEFORE, AFTER)["changes"][0]["direction"] == "better"
    assert compare_scans(AFTER, BEFORE)["changes"][0]["direction"] == "worse"


def test_a_fractional_margin_is_worded_as_the_conclusion_words_it():
    """--margin 0.025 was "the 2-point margin" in the comparison beside the conclusion's
    "2.5-point" (two formats of one number)."""
    before = with_config(scan_like(0.03, 0.01, 0.05, []), margin=0.025)
    after = with_config(scan_like(0.01, -0.005, 0.02, []), margin=0.025)
    d_row = {d["name"]: d for d in compare_scans(before, after)["dimensions"]}["cue leakage D"]
    assert d_row["status"] == "better"
    assert "now lies below the 2.5-point margin" in d_row["text"]


def test_protocol_mismatch_train_test_against_cross_validated_is_warned():
    result = compare_scans(with_config(BEFORE), with_config(AFTER, cross_validated=True, seed=3))
    assert [d["setting"] for d in result["protocol"]["differences"]] == ["evaluation", "seed"]
    (warning,) = result["warnings"]
    assert "evaluation train/test → cross-validated; seed 0 → 3" in warning
    assert "different protocols" in result["headline"]
    validate_results(result)


def test_protocol_differences_in_margin_segmenter_and_statistics_are_warned():
    """A --margin, a segmenter or streamed statistics change the conclusion, the words and D
    of the same data: warned, and an exact scan (no ``statistics`` recorded) is "exact"."""
    before = with_config(BEFORE, margin=0.03)
    before["segmentation"] = {"requested": "auto", "name": "chinese", "reason": "r",
                              "scripts": {"han": 1.0}}
    after = with_config(AFTER, margin=0.1, statistics="streaming")
    after["segmentation"] = {**before["segmentation"], "name": "unicode"}
    result = compare_scans(before, after)
    assert [d["setting"] for d in result["protocol"]["differences"]] == \
        ["margin", "statistics", "segmenter"]
    (warning,) = result["warnings"]
    assert "margin 0.03 → 0.1; statistics exact → streaming; segmenter chinese → unicode" \
        in warning and "None" not in warning
    validate_results(result)
    same = compare_scans(before, copy.deepcopy(before))
    assert same["protocol"]["differences"] == [] and same["warnings"] == []


def test_scans_with_other_labels_are_warned():
    """The same cue words under other label names (0/1/2 against entailment/…) are no cue
    "lost" and "gained" without a warning."""
    after = copy.deepcopy(AFTER)
    after["dataset"]["label_names"] = [str(i) for i in range(len(BEFORE["dataset"]["label_names"]))]
    result = compare_scans(BEFORE, after)
    assert [d["setting"] for d in result["protocol"]["differences"]] == ["labels"]
    (warning,) = result["warnings"]
    assert "labels " + ", ".join(BEFORE["dataset"]["label_names"]) + " → 0, 1, 2" in warning


def mcq_like(longest_significant: bool, duplicates: int, position_significant: bool) -> dict:
    out = with_config(BEFORE)
    out["dataset"]["task"] = "mcq"
    position = {"counts": [70, 30], "expected": [50.0, 50.0], "chi2": 16.0, "df": 1,
                "p_value": 0.0001 if position_significant else 0.5,
                "significant": position_significant,
                "most_common": {"position": 0, "share": 0.7 if position_significant else 0.5,
                                "expected_share": 0.5}}
    def rule(name: str, D: float, significant: bool) -> dict:
        return {"name": name, "accuracy": 0.5 + D, "accuracy_ci": [0.45 + D, 0.55 + D],
                "chance": 0.5, "D": D, "D_ci": [D - 0.05, D + 0.05],
                "p_value": 0.001 if significant else 0.5, "n_items": 300,
                "significant": significant}

    out["mcq_baselines"] = {"n_items": 300, "chance": 0.5, "rows": [
        rule("longest choice", 0.2 if longest_significant else 0.01, longest_significant),
        rule("answer position", 0.0, False)], "gold_position": {"test": position}}
    out["hygiene"] = {"splits": {"test": {"items": 100, "duplicate_items": duplicates,
                                          "duplicate_groups": min(duplicates, 1),
                                          "near_duplicate_pairs": 0, "label_conflict_groups": 0,
                                          "label_conflict_items": 0}},
                      "overlap": [], "examples": {}, "warnings": []}
    return out


def test_mcq_rules_hygiene_and_positions_are_compared_by_direction():
    result = compare_scans(mcq_like(True, 30, False), mcq_like(False, 0, True))
    changes = {c["measure"]: c for c in result["changes"]}
    assert changes["rule “longest choice” D"]["direction"] == "better"
    assert changes["rule “longest choice” D"]["significant"] == [True, False]
    assert changes["rule “answer position” D"]["direction"] == "same"
    assert changes["duplicate items"]["direction"] == "better"
    assert changes["answer positions (test): most common share"]["direction"] == "worse"
    assert result["status"] == "mixed"
    validate_results(result)


# ----------------------------------------------------------- which cues changed beyond their noise
def counted_scan(n: int, cues: list[tuple[str, int, int, bool]]) -> dict:
    """A train/test scan with ``n`` train items in three equal labels and counted cues
    ``(token, #w, #(w, contradiction), significant)``, minimum count 5."""
    results = scan_like(0.2, 0.15, 0.25, [], train_items=n)
    results["cue_stats"] = {"bonferroni_z": 4.0, "min_count": 5, "fitted_on": "train"}
    results["cues"] = [{"token": t, "label": "contradiction", "count": w, "label_count": wl,
                        "metrics": {"z": 5.0 if s else 1.0}, "significant": s}
                       for t, w, wl, s in cues]
    return results


def cue_dimension(result: dict) -> dict:
    return next(d for d in result["dimensions"] if d["name"] == "significant cues")


def test_a_cue_lost_with_half_the_items_is_not_a_better_dataset():
    """A random half: the same share of items (60 of 300, 30 of 150, all contradictions) but
    too few to pass the threshold. Counting significant cues called it better."""
    result = compare_scans(counted_scan(300, [("nobody", 60, 60, True)]),
                           counted_scan(150, [("nobody", 30, 30, False)]))
    validate_results(result)
    assert [c["token"] for c in result["cues_lost"]] == ["nobody"]
    assert cue_dimension(result)["status"] == "same"
    assert result["cue_changes"]["weakened"] == [] and result["cue_changes"]["n_tested"] == 1
    assert "stays leakage" in result["headline"] and "significant cues" not in result["headline"]


def test_a_cue_whose_excess_share_fell_is_weakened_with_a_hand_computed_z():
    """Before: 60 of 300 items hold the word, all contradictions (prior 1/3): share (60 − 20)/300,
    variance (60·(2/3)²/300 − share²)/300. After: 30 items, 10 contradictions: share 0, variance
    ((10·(2/3)² + 20·(1/3)²)/300)/300. z = −0.13333/√(2.3704e-4 + 7.4074e-5) = −7.5593."""
    result = compare_scans(counted_scan(300, [("nobody", 60, 60, True)]),
                           counted_scan(300, [("nobody", 30, 10, False)]))
    (cue,) = result["cue_changes"]["weakened"]
    assert cue["share_before"] == pytest.approx(40 / 300, abs=1e-6) and cue["share_after"] == 0
    assert cue["z"] == pytest.approx(-7.5593, abs=1e-4) and cue["q"] < 1e-12
    assert cue_dimension(result)["status"] == "better"
    assert "1 weakened, 0 strengthened" in cue_dimension(result)["text"]
    stronger = compare_scans(counted_scan(300, [("nobody", 30, 10, False)]),
                             counted_scan(300, [("nobody", 60, 60, True)]))
    assert cue_dimension(stronger)["status"] == "worse"
    assert [c["token"] for c in stronger["cue_changes"]["strengthened"]] == ["nobody"]


def test_a_word_below_the_minimum_count_is_tested_at_its_largest_share():
    """Gone from the after scan's table: at most 4 occurrences (minimum count 5), taken as 4
    contradictions; 8 of 300 before is no change beyond that bound (z −1.17), 60 of 300 is."""
    gone = counted_scan(300, [])
    small = compare_scans(counted_scan(300, [("nobody", 8, 8, True)]), gone)
    assert small["cue_changes"]["weakened"] == [] and cue_dimension(small)["status"] == "same"
    large = compare_scans(counted_scan(300, [("nobody", 60, 60, True)]), gone)
    (cue,) = large["cue_changes"]["weakened"]
    assert cue["share_after"] == pytest.approx((4 - 4 / 3) / 300, abs=1e-6)


def test_the_cue_changes_are_computed_once_per_comparison(monkeypatch):
    """The significant-cues dimension and the result's ``cue_changes`` read one computation (it
    ran twice: in the dimension and for the gained/lost/kept lists)."""
    import cuelens.audit.compare as compare
    import cuelens.audit.compare_status as compare_status
    from cuelens.audit import cue_change

    calls = []

    def counted(before: dict, after: dict) -> dict | None:
        calls.append(1)
        return cue_change.cue_changes(before, after)

    for module in (compare, compare_status):  # wherever a comparison may call it
        monkeypatch.setattr(module, "cue_changes", counted, raising=False)
    result = compare.compare_scans(counted_scan(300, [("nobody", 60, 60, True)]),
                                   counted_scan(300, [("nobody", 30, 10, False)]))
    assert len(calls) == 1
    assert cue_dimension(result)["status"] == "better" and result["cue_changes"]["weakened"]


# ---------------------------------------------- hygiene counts: their rates tested, not compared
def hygienic(items: int, duplicates: int = 0, near: int = 0, conflicts: int = 0,
             overlap: tuple[int, int] | None = None, near_sample: int | None = None) -> dict:
    """:func:`scan_like` with one hygiene split of ``items`` items and its counts; ``overlap``:
    (copied, evaluated) items of a fitting/evaluated overlap row."""
    results = with_config(BEFORE)
    split = {"items": items, "duplicate_items": duplicates,
             "duplicate_groups": min(duplicates, 1),
             "near_duplicate_pairs": near, "label_conflict_groups": min(conflicts, 1),
             "label_conflict_items": conflicts}
    rows = [{"fit": "train", "eval": "test", "eval_items": overlap[1], "exact": overlap[0],
             "near": 0, "shared_premise": 0, "fraction": overlap[0] / overlap[1]}] \
        if overlap else []
    results["hygiene"] = {"splits": {"train": split}, "overlap": rows, "examples": {},
                          "warnings": [], **({"near_sample": {"train": near_sample}}
                                             if near_sample else {})}
    return results


def hygiene_dimension(result: dict) -> dict:
    return next(d for d in result["dimensions"] if d["name"] == "data hygiene")


def hygiene_row(result: dict, count: str) -> dict:
    return next(r for r in result["hygiene_changes"]["counts"] if r["count"] == count)


def test_one_more_duplicate_of_a_thousand_items_is_within_the_noise():
    """Two random halves of one file: 1 → 2 exact copies of 1,000 items was 'worse: data
    hygiene' and the overall status 'worsened' (the counts were compared, not their rates)."""
    result = compare_scans(hygienic(1000, duplicates=1), hygienic(1000, duplicates=2))
    validate_results(result)
    assert hygiene_dimension(result)["status"] == "same"
    assert hygiene_dimension(result)["text"] == "duplicate items 1 → 2 (within the noise)"
    assert hygiene_row(result, "duplicate_items")["change"] == "same"
    assert "data hygiene" not in result["headline"] and result["status"] != "worsened"
    changes = {c["measure"]: c for c in result["changes"]}
    assert changes["duplicate items"]["direction"] == "same"


def test_forty_new_duplicates_of_a_thousand_items_are_worse_and_their_removal_better():
    worse = compare_scans(hygienic(1000), hygienic(1000, duplicates=40))
    assert hygiene_dimension(worse)["status"] == "worse"
    assert "duplicate items 0 → 40 (its rate grew beyond the noise, p " in \
        hygiene_dimension(worse)["text"]
    assert "worse: data hygiene" in worse["headline"]
    assert {c["measure"]: c for c in worse["changes"]}["duplicate items"]["direction"] == "worse"
    better = compare_scans(hygienic(1000, duplicates=40), hygienic(1000))
    assert hygiene_dimension(better)["status"] == "better"
    same_count = compare_scans(hygienic(1000, duplicates=10), hygienic(100, duplicates=10))
    assert hygiene_dimension(same_count)["status"] == "worse"  # 1% of the items → 10%
    assert hygiene_dimension(same_count)["text"].startswith(
        "duplicate items 10 → 10 (its rate grew beyond the noise")
    mixed = compare_scans(hygienic(1000, duplicates=40),
                          hygienic(1000, duplicates=0, conflicts=40))
    assert hygiene_dimension(mixed)["status"] == "worse"  # one grew: never better


def test_a_hygiene_p_value_is_fishers_computed_by_hand_and_holm_corrected():
    """0 of 10 items before, 5 of 10 after: the tables with 5 copies among 20 items, 0 or 5 of
    them before, are the two as unlikely as this one, each C(10, 5)/C(20, 5) = 252/15,504: p =
    504/15,504 = 0.0325077, significant alone but not after Holm over the four counts (4p)."""
    result = compare_scans(hygienic(10), hygienic(10, duplicates=5))
    row = hygiene_row(result, "duplicate_items")
    assert row["p_value"] == pytest.approx(504 / 15504, rel=1e-5)
    assert row["p_holm"] == pytest.approx(4 * 504 / 15504, rel=1e-5)
    assert row["change"] == "same" and hygiene_dimension(result)["status"] == "same"


def test_a_hygiene_p_value_matches_brute_force_enumeration():
    """3 of 40 items before, 11 of 50 after: Fisher's two-sided p, the sum over every table with
    the same margins as unlikely as the observed one or less, enumerated exactly."""
    from fractions import Fraction
    from math import comb

    def chance(k: int) -> Fraction:
        return Fraction(comb(40, k) * comb(50, 14 - k), comb(90, 14))

    p = float(sum(chance(k) for k in range(15) if chance(k) <= chance(3)))
    result = compare_scans(hygienic(40, conflicts=3), hygienic(50, conflicts=11))
    assert hygiene_row(result, "label_conflict_items")["p_value"] == pytest.approx(p, rel=1e-5)


def test_near_duplicate_pairs_are_a_rate_over_pairs_of_items_or_of_the_sample():
    """A random half of a file holds about a quarter of its near-duplicate pairs (pairs of
    items, not items): 400 pairs among 2,000 items → 100 among 1,000 is no change; a sampled
    split's pairs are counted over the pairs of its sample."""
    half = compare_scans(hygienic(2000, near=400), hygienic(1000, near=100))
    row = hygiene_row(half, "near_duplicate_pairs")
    assert (row["over_before"], row["over_after"]) == (1999000, 499500)
    assert row["change"] == "same" and hygiene_dimension(half)["status"] == "same"
    sampled = compare_scans(hygienic(2000, near=400), hygienic(9000, near=100, near_sample=1000))
    assert hygiene_row(sampled, "near_duplicate_pairs")["over_after"] == 499500


def test_an_overlap_only_one_scan_can_count_is_not_tested():
    """A train/test scan with 5 of 100 test items copied against a cross-validated one (no
    evaluated split): nothing to compare the rate with."""
    result = compare_scans(hygienic(1000, overlap=(5, 100)), hygienic(1000))
    assert hygiene_row(result, "overlap_items")["tested"] is False
    assert hygiene_dimension(result)["text"] == \
        "overlap items 5 → 0 (not tested: one scan counts it over no items)"
    assert hygiene_dimension(result)["status"] == "same"


def test_a_hygiene_count_beyond_its_items_is_one_error_line(tmp_path):
    """An edited results file with 12 duplicates among 10 items: one error naming the scan and
    the count (Fisher's test of a negative cell was a traceback)."""
    for name, results in (("before", hygienic(10, duplicates=12)), ("after", hygienic(10))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(results))
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "before"), str(tmp_path / "after"),
                                      "-o", str(tmp_path / "c.html")])
    assert result.exit_code == 2 and result.output.startswith("error: "), result.output
    assert "before scan's hygiene counts 12 duplicate items among 10" in result.output
    assert not (tmp_path / "c.html").exists()


def test_a_hygiene_test_of_a_sampled_large_split_takes_no_time():
    """0 → 3 near-duplicate pairs, each among the 2·10¹⁰ pairs of a 200,000-item sample: given 3
    pairs in all, each is before or after by a fair coin, p = P(0) + P(3) = 1/4 (scipy's
    fisher_exact ran for over ten minutes on this table)."""
    import time

    start = time.perf_counter()
    result = compare_scans(hygienic(300_000, near_sample=200_000),
                           hygienic(300_000, near=3, near_sample=200_000))
    row = hygiene_row(result, "near_duplicate_pairs")
    assert row["over_before"] == row["over_after"] == 200_000 * 199_999 // 2
    assert row["p_value"] == pytest.approx(0.25, rel=1e-6) and row["change"] == "same"
    assert time.perf_counter() - start < 10
