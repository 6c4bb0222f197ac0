"""The three-way conclusion (docs/methods.md §17): its rules on hand-built results with known
answers, then pinned on the real datasets of ../shared/data, and every scan output stating the
same conclusion."""

from __future__ import annotations

import html
import json
import math
import random
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cuelens.audit.conclusion import (DEFAULT_MARGIN, INCONCLUSIVE, LEAKAGE, NO_LEAKAGE,
                                      Conclusion, conclude, conclusion_of)
from cuelens.audit.results import CONCLUSION_TEXT as TEXT
from cuelens.audit.findings import findings
from cuelens.cli import app
from tests.conftest import SHARED_DATA, write_jsonl


def _nli(D: float, low: float, high: float, verdict: str, n: int = 1000) -> dict:
    per_label = n // 3
    return {"config": {"folds": 5, "margin": DEFAULT_MARGIN},
            "dataset": {"task": "nli", "cross_validated": True,
                        "label_names": ["a", "b", "c"],
                        "splits": {"all": {"items": n, "label_counts": dict.fromkeys(
                            "abc", per_label)}}, "labels": {"rare": []}},
            "leakage": {"majority": 0.4, "table": [],
                        "best": {"metric": "cp", "aggregator": "lr", "accuracy": 0.4 + D,
                                 "D": D, "ci_low": low, "ci_high": high},
                        "flagged": verdict == "significant", "verdict": verdict,
                        "baselines": [], "baseline": {"name": "majority", "accuracy": 0.4},
                        "selection": {"level": 0.95}}}


def _mcq(rows: list[dict], k: int = 2, n: int = 500) -> dict:
    results = _nli(0.0, -0.01, 0.01, "chance", n)
    results["dataset"].update(task="mcq", label_names=["right", "wrong"], splits={"all": {
        "items": n, "label_counts": {"right": n, "wrong": (k - 1) * n}}})
    results["mcq_baselines"] = {
        "n_items": n, "chance": 1 / k, "choice_counts": {str(k): n}, "ci_level": 0.99,
        "rows": [{"name": name, "accuracy": 1 / k + D, "accuracy_ci": [c + 1 / k for c in ci],
                  "chance": 1 / k, "D": D, "D_ci": ci, "p_value": 0.001 if sig else 0.5,
                  "n_items": n, "significant": sig, **extra}
                 for name, D, ci, sig, extra in rows],
        "gold_position": {}}
    return results


# ------------------------------------------------------------------------------ the rules
def test_a_significant_or_mild_verdict_is_leakage_and_covering_zero_is_not():
    assert conclude(_nli(0.2, 0.15, 0.25, "significant")).status == LEAKAGE
    mild = conclude(_nli(0.04, 0.01, 0.07, "mild"))
    assert mild.status == LEAKAGE and mild.level == 0.95
    assert "+4.0 points (95% CI +1.0 to +7.0)" in mild.reason
    assert (mild.D, mild.ci_low, mild.ci_high) == (0.04, 0.01, 0.07)
    assert conclude(_nli(0.04, -0.01, 0.09, "chance")).status == INCONCLUSIVE


def test_no_meaningful_leakage_needs_the_upper_end_below_the_margin():
    assert conclude(_nli(0.0, -0.02, 0.025, "chance")).status == NO_LEAKAGE
    assert conclude(_nli(0.0, -0.02, 0.031, "chance")).status == INCONCLUSIVE
    assert conclude(_nli(0.0, -0.02, 0.031, "chance"), margin=0.05).status == NO_LEAKAGE
    below = conclude(_nli(-0.05, -0.08, -0.02, "below chance"))
    assert below.status == NO_LEAKAGE and below.items_needed is None


def test_a_significant_cue_word_is_leakage_even_when_no_classifier_beats_the_baseline():
    """The scan's other calibrated finding (docs/methods.md §2, §11): a word above the
    Bonferroni z threshold is leakage on its own; an interval that would otherwise be clean
    does not hide it."""
    results = _nli(0.0, -0.02, 0.025, "chance")
    results["cue_stats"] = {"bonferroni_z": 3.52}
    results["cue_finding"] = {"n_significant": 2, "top": [
        {"token": "outdoors", "label": "a", "z": 11.3}, {"token": "sleeping", "label": "c",
                                                         "z": 4.1}]}
    concluded = conclude(results)
    assert concluded.status == LEAKAGE and concluded.level == 0.95
    assert concluded.reason.startswith("2 words give the label away on their own (z above the "
                                       "corrected 3.52; strongest: “outdoors” → a, z = 11.3)")
    assert [e["subject"] for e in concluded.evidence] == ["outdoors", "sleeping"]
    assert concluded.evidence[0]["unit"] == "z" and concluded.evidence[0]["effect"] == 11.3
    results["cue_finding"] = {"n_significant": 0, "top": []}
    assert conclude(results).status == NO_LEAKAGE


def test_items_needed_follows_the_square_root_law():
    # D = +5.5, CI -1.5..+12.5 on 500 items: half-width 7; leakage shows once 7·√(500/n') < 5.5
    c = conclude(_nli(0.055, -0.015, 0.125, "chance", n=500))
    assert c.status == INCONCLUSIVE
    assert c.items_needed == math.ceil(500 * (0.07 / 0.055) ** 2 - 500)  # 310
    assert "about 310 more evaluated items" in c.reason
    # D = 0, CI ±4 on 900 items: equivalence once 4·√(900/n') < 3 → n' = 1600
    assert conclude(_nli(0.0, -0.04, 0.04, "chance", n=900)).items_needed == 700


def test_an_mcq_rule_above_chance_makes_leakage_even_when_the_word_test_does_not():
    c = conclude(_mcq([("choice-only BoW LR", 0.065, [0.002, 0.127], True, {})]))
    assert c.status == LEAKAGE and c.level == 0.99
    assert "“choice-only BoW LR”" in c.reason and "(99% CI +0.2 to +12.7)" in c.reason
    assert [e["subject"] for e in c.evidence] == ["choice-only BoW LR"]


def test_every_sentence_names_the_mcq_leakage_baseline_alike():
    """The conclusion said 'above chance', the finding 'above random guessing' and the report
    'against 50.0% for picking one of the 2 choices at random' for the one baseline."""
    from cuelens.audit.results import LeakageSection
    from cuelens.reports.scan import verdict

    results = _nli(0.2, 0.15, 0.25, "significant")
    results["dataset"].update(task="mcq", n_choices=2, label_names=["right", "wrong"])
    phrase = "above picking one of the 2 choices at random"
    assert phrase in conclude(results).reason
    assert phrase in next(f.title for f in findings(results) if f.kind == "leakage")
    _, sentence = verdict(LeakageSection.required_in(results), 0.1, results)
    assert "for picking one of the 2 choices at random" in sentence
    results["dataset"]["n_choices"] = None   # the number of choices varies
    assert "above picking one of the choices at random" in conclude(results).reason


def test_a_rule_below_chance_is_leakage_with_two_choices_only():
    two = _mcq([("longest choice", -0.06, [-0.1, -0.02], True, {}),
                ("shortest choice", 0.06, [0.02, 0.1], True,
                 {"complement_of": "longest choice"})])
    assert conclude(two).status == LEAKAGE  # pick the shorter one
    five = _mcq([("longest choice", -0.06, [-0.1, -0.02], True, {})], k=5, n=2000)
    c = conclude(five)
    assert c.status != LEAKAGE
    found = [f for f in findings(five) if f.kind == "baseline"]
    assert [(f.code, f.severity) for f in found] == [("below_chance_rule", "low")]
    assert "wrong choices" in found[0].title


def test_rules_weigh_in_at_their_one_sided_95_percent_bound():
    # 250 of 500 right: the 90% Clopper–Pearson interval is 46.2%..53.8%, +3.8 points > 3
    flat = _mcq([("answer position", 0.0, [-0.06, 0.06], False, {})])
    c = conclude(flat)
    assert c.status == INCONCLUSIVE and c.level == 0.9 and "(90% CI -3.8 to +3.8)" in c.reason
    # 5,000 items: ±1.2 points, below the margin
    assert conclude(_mcq([("answer position", 0.0, [-0.02, 0.02], False, {})],
                         n=5000)).status == NO_LEAKAGE


def test_the_headline_weighs_in_at_the_models_one_sided_bounds():
    """``leakage.best.equivalence_high`` (the largest of the models' one-sided 95% bounds)
    decides equivalence and is quoted as one-sided, never as a two-sided interval; the
    conclusion's D interval and the leakage verdict stay the test's two-sided 95% one."""
    results = _nli(0.0, -0.032, 0.032, "chance")
    assert conclude(results).status == INCONCLUSIVE
    results["leakage"]["best"].update(equivalence_high=0.027, equivalence_level=0.95)
    c = conclude(results)
    assert c.status == NO_LEAKAGE and c.level == 0.95
    assert "+0.0 points; one-sided 95% bounds up to +2.7" in c.reason and "CI" not in c.reason
    assert c.evidence[0]["ci_low"] is None and c.evidence[0]["ci_high"] == 2.7
    assert (c.ci_low, c.ci_high) == (-0.032, 0.032)
    mild = _nli(0.04, 0.01, 0.07, "mild")
    mild["leakage"]["best"].update(equivalence_high=0.065, equivalence_level=0.95)
    assert "(95% CI +1.0 to +7.0)" in conclude(mild).reason


def test_a_rule_with_a_clustered_bound_weighs_in_at_it():
    """A row recording ``D_equivalence_high`` (questions sharing a choice set, CR1) is weighed
    at it, its interval symmetric about D; without it, the exact interval as before."""
    clustered = {"D_equivalence_high": 0.012, "equivalence_clusters": 250}
    c = conclude(_mcq([("longest choice", 0.0, [-0.06, 0.06], False, clustered)]))
    assert c.status == NO_LEAKAGE and "(90% CI -1.2 to +1.2)" in c.reason
    wide = {"D_equivalence_high": 0.035, "equivalence_clusters": 250}
    c = conclude(_mcq([("longest choice", 0.005, [-0.06, 0.06], False, wide)]))
    assert c.status == INCONCLUSIVE and "(90% CI -2.5 to +3.5)" in c.reason
    # a significant rule keeps its corrected interval; no field: the exact interval
    found = conclude(_mcq([("longest choice", 0.1, [0.05, 0.15], True, clustered)]))
    assert found.status == LEAKAGE and "99% CI +5.0 to +15.0" in found.reason
    flat = conclude(_mcq([("longest choice", 0.0, [-0.06, 0.06], False, {})]))
    assert "(90% CI -3.8 to +3.8)" in flat.reason


def test_a_preference_shortcut_below_one_half_is_leakage():
    results = _nli(0.0, -0.01, 0.01, "chance", 4000)
    results["preference"] = {"splits": {"all": {"shortcuts": [
        {"shortcut": "longer (tokens)", "rate": 0.3, "rate_ci": [0.26, 0.34], "decided": 500,
         "significant": True}]}}}
    c = conclude(results)
    assert c.status == LEAKAGE and "opposite" in c.evidence[0]["title"]


def test_too_few_items_is_inconclusive_with_the_numbers():
    results = _nli(0.0, 0.0, 0.0, "chance", n=3)
    results["dataset"]["splits"]["all"]["label_counts"] = {"a": 1, "b": 1, "c": 1}
    c = conclude(results)
    assert c.status == INCONCLUSIVE and "too few items" in c.reason
    assert "the 10 needed (2 per fold × 5 folds)" in c.reason and c.items_needed == 27
    assert not [f for f in findings(results) if f.kind == "leakage"]  # no 100%/0% claims


def test_a_train_split_measured_on_a_dev_split_is_concluded():
    """A file whose evaluated split has another name than test (e.g. written by hand or an
    older tool: train and dev) was a KeyError in the conclusion, so in report and card."""
    results = _nli(0.2, 0.15, 0.25, "significant")
    split = results["dataset"]["splits"].pop("all")
    results["dataset"].update(cross_validated=False, splits={"train": split, "dev": split})
    assert conclude(results).status == LEAKAGE

def test_json_round_trip_and_old_files_are_concluded_on_read():
    results = _nli(0.2, 0.15, 0.25, "significant")
    c = conclude(results)
    assert Conclusion.from_json(json.loads(json.dumps(c.to_json()))) == c
    assert conclusion_of(results) == c  # no recorded conclusion: computed
    recorded = dict(results, conclusion=dict(c.to_json(), reason="as written"))
    assert conclusion_of(recorded).reason == "as written"


# ------------------------------------------------------------------------------ real data
def _shuffled_snli(out: Path) -> Path:
    """SNLI dev → test with the labels shuffled (seed 0) within each split: no cue can leak."""
    for name in ("dev", "test"):
        rows = [json.loads(line) for line in (SHARED_DATA / "snli" / f"{name}.jsonl").open()]
        labels = [row["label"] for row in rows]
        random.Random(0).shuffle(labels)
        write_jsonl(out / f"{name}.jsonl", [dict(r, label=l) for r, l in zip(rows, labels)])
    return out


def _tiny(out: Path) -> Path:
    rows = [json.loads(line) for line in (SHARED_DATA / "snli" / "dev.jsonl").open()][:3]
    return write_jsonl(out / "tiny.jsonl", rows)


#: dataset → (its path builder, extra scan options, the conclusion it must reach)
REAL = {
    "copa": (lambda tmp: SHARED_DATA / "copa", [], INCONCLUSIVE),
    "balanced_copa": (lambda tmp: SHARED_DATA / "balanced_copa", [], INCONCLUSIVE),
    "arct": (lambda tmp: SHARED_DATA / "arct", [], LEAKAGE),
    "snli": (lambda tmp: SHARED_DATA / "snli", [], LEAKAGE),
    "snli_random_labels": (_shuffled_snli, [], NO_LEAKAGE),
    "tiny": (_tiny, ["--folds", "3"], INCONCLUSIVE),
}


class RealScans:
    """Each real dataset scanned once, when a test first asks for it (``--features none
    --iterations 1``: the conclusion depends on neither): its terminal text and output
    directory."""

    def __init__(self, base: Callable[[str], Path]) -> None:
        self.base, self.done = base, {}

    def __getitem__(self, name: str) -> tuple[str, Path]:
        if name not in self.done:
            path, extra, _ = REAL[name]
            base = self.base(name)
            result = CliRunner().invoke(app, ["scan", str(path(base / "data")), "--out",
                                              str(base / "out"), "--features", "none",
                                              "--iterations", "1", *extra],
                                        env={"COLUMNS": "200"})
            assert result.exit_code == 0, result.output
            self.done[name] = (result.output, base / "out")
        return self.done[name]


@pytest.fixture(scope="session")
def real_scans(tmp_path_factory) -> RealScans:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return RealScans(tmp_path_factory.mktemp)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _terminal(output: str, out_dir: Path) -> str:
    return _flat(output)


def _results_json(output: str, out_dir: Path) -> str:
    c = json.loads((out_dir / "results.json").read_text())["conclusion"]
    return f"{TEXT[c['status']]}: {c['reason']}"


def _page_text(page: str) -> str:
    """The text of an HTML page: ``<bdi>`` isolates (inline, around quoted dataset text) go
    without a trace, every other tag is a space."""
    return _flat(html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"</?bdi>", "", page))))


def _report(output: str, out_dir: Path) -> str:
    return _page_text((out_dir / "report.html").read_text())


def _notebook(output: str, out_dir: Path) -> str:
    from cuelens.frames import summary_html, summary_text

    results = json.loads((out_dir / "results.json").read_text())
    return summary_text(results) + " " + _flat(html.unescape(
        re.sub(r"<[^>]+>", " ", summary_html(results))))


def _rendered_markdown(text: str) -> str:
    from markdown_it import MarkdownIt

    return _flat(html.unescape(re.sub(r"<[^>]+>", " ", MarkdownIt("commonmark").render(text))))


def _card(output: str, out_dir: Path) -> str:
    """card.md as a dataset card shows it, and croissant-rai.json's sentences."""
    card = out_dir.parent / "card"
    result = CliRunner().invoke(app, ["card", str(out_dir), "--out", str(card)])
    assert result.exit_code == 0, result.output
    rai = json.loads((card / "croissant-rai.json").read_text())
    return (_rendered_markdown((card / "card.md").read_text()) + " "
            + _flat(" ".join(rai["rai:dataBiases"])))


def _compare(output: str, out_dir: Path) -> str:
    """`audit compare` of the scan with itself: its terminal text and compare.html."""
    page = out_dir.parent / "compare.html"
    result = CliRunner().invoke(app, ["compare", str(out_dir), str(out_dir), "-o", str(page)],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return _flat(result.output) + " " + _page_text(page.read_text())


#: every output that states the conclusion
OUTPUT_READERS: dict[str, Callable[[str, Path], str]] = {
    "terminal": _terminal, "results.json": _results_json, "report": _report,
    "notebook": _notebook, "card": _card, "compare": _compare}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(REAL))
def test_real_data_reaches_its_conclusion(real_scans, name):
    results = json.loads((real_scans[name][1] / "results.json").read_text())
    assert list(results)[:5] == ["schema_version", "tool", "config", "dataset", "conclusion"]
    c = Conclusion.from_json(results["conclusion"])
    assert c.status == REAL[name][2], c.reason
    steps = " ".join(step["action"] for step in results["next_steps"])
    if "no change needed" in steps:  # only under no meaningful leakage (hygiene steps aside)
        assert c.status == NO_LEAKAGE
    if c.status == INCONCLUSIVE:
        assert c.items_needed and f"add about {c.items_needed:,} more" in steps


@pytest.mark.slow
@pytest.mark.parametrize("reader", list(OUTPUT_READERS))
@pytest.mark.parametrize("name", list(REAL))
def test_every_output_states_the_same_conclusion(real_scans, name, reader):
    output, out_dir = real_scans[name]
    c = Conclusion.from_json(json.loads((out_dir / "results.json").read_text())["conclusion"])
    assert _flat(c.headline) in OUTPUT_READERS[reader](output, out_dir)
    others = set(TEXT.values()) - {TEXT[c.status]}
    if reader != "report":  # the report's glossary may explain all three
        assert not any(f"{text}:" in OUTPUT_READERS[reader](output, out_dir) for text in others)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(REAL))
def test_report_headline_colour_follows_the_conclusion(real_scans, name):
    colour = {LEAKAGE: "flagged", INCONCLUSIVE: "mild", NO_LEAKAGE: "clean"}
    out_dir = real_scans[name][1]
    page = (out_dir / "report.html").read_text()
    status = json.loads((out_dir / "results.json").read_text())["conclusion"]["status"]
    boxes = re.findall(r'class="verdict verdict-(\w+) summary-verdict( conclusion-verdict)?',
                       page)
    assert boxes[0] == (colour[status], " conclusion-verdict")
    green = 'class="verdict verdict-clean' in page  # no green box unless no meaningful leakage
    assert green == (status == NO_LEAKAGE)


@pytest.mark.slow
def test_arct_rule_step_quotes_the_rules_own_interval(real_scans):
    results = json.loads((real_scans["arct"][1] / "results.json").read_text())
    step = results["next_steps"][0]
    assert "99.2% CI +0.2 to +12.7" in step["why"] and "95% CI" not in step["why"]
    assert "99.2% CI +0.2 to +12.7" in real_scans["arct"][0]
    bow = next(b for b in results["leakage"]["baselines"] if b["name"] == "choice-only BoW LR")
    assert bow["D"] == pytest.approx(bow["accuracy"] - results["leakage"]["baseline"]["accuracy"])


@pytest.mark.slow
def test_balanced_copa_is_settled_at_a_wider_margin(real_scans):
    """D is exactly 0 by construction and the rules reading the choice texts are fixed by the
    mirrored pairs (clustered bound 0.0 over 500 choice sets), but the answer-position rule's
    is not: 242 of the 500 pairs show the alternatives swapped, so both answers sit in the same
    position. Its CR1 bound stays at +3.2 points: inconclusive at 3 points, no meaningful
    leakage at 5."""
    results = json.loads((real_scans["balanced_copa"][1] / "results.json").read_text())
    assert results["leakage"]["best"]["ci_high"] == 0.0
    rows = {r["name"]: r for r in results["mcq_baselines"]["rows"]}
    assert rows["longest choice"]["D_equivalence_high"] == 0.0
    assert rows["longest choice"]["equivalence_clusters"] == 500
    assert rows["answer position"]["D_equivalence_high"] == pytest.approx(0.031657, abs=1e-6)
    assert "D_equivalence_high" not in rows["choice-only BoW LR"]
    c = conclude(results)
    assert "“answer position”" in c.reason and "(90% CI -2.0 to +3.2)" in c.reason
    assert conclude(results, margin=0.05).status == NO_LEAKAGE


@pytest.mark.slow
def test_copa_has_no_shared_choice_sets_and_keeps_the_exact_interval(real_scans):
    results = json.loads((real_scans["copa"][1] / "results.json").read_text())
    assert not any("D_equivalence_high" in r for r in results["mcq_baselines"]["rows"])


def test_margin_option_is_checked_before_reading_data(tmp_path):
    result = CliRunner().invoke(app, ["scan", str(tmp_path / "missing.jsonl"), "--margin", "0"])
    assert result.exit_code != 0 and "--margin" in result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_tiny_file_shows_no_baseline_accuracies(real_scans):
    output, out_dir = real_scans["tiny"]
    assert "too few items" in output and "100.0%" not in output and "D -100" not in output
    page = _report(output, out_dir)
    assert "100.0%" not in page and "no change needed" not in page
