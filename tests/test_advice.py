"""Findings (cuelens.audit.findings) and the next steps derived from them (cuelens.audit.advice):
ranked by effect size, never contradicting a finding on the same page, deliberate constructions
and label conflicts named as such, model-specific after a probe, output paths only when written.
Real data where the defect was found (skipped when absent)."""

from __future__ import annotations

import copy
import json
from dataclasses import asdict

import pytest

from cuelens.audit.advice import next_steps
from cuelens.audit.findings import SEVERITIES, Finding, findings
from cuelens.audit.streamed_hygiene import data_hygiene
from cuelens.data import load_dataset


def scan_results(task: str = "nli", verdict: str = "significant", D: float = 0.23,
                 hygiene: dict | None = None, **extra) -> dict:
    """A results dict with the structure a scan writes (numbers from SNLI dev → test)."""
    labels = ["contradiction", "entailment", "neutral"] if task == "nli" else ["right", "wrong"]
    cues = [{"token": token, "label": label, "count": 60, "label_count": 55,
             "metrics": {"cp": 0.9, "z": z}, "significant": z > 4.8}
            for token, label, z in (("nobody", "contradiction", 10.3),
                                    ("outside", "entailment", 12.7), ("cow", "neutral", 1.2))]
    return {"dataset": {"name": "snli", "task": task, "label_names": labels,
                        "splits": {"train": {"items": 9842}, "test": {"items": 9824}}},
            "cues": cues, "cue_stats": {"bonferroni_z": 4.8},
            "leakage": {"majority": 0.34, "verdict": verdict, "flagged": verdict == "significant",
                        "best": {"metric": "cp", "aggregator": "lr", "accuracy": 0.34 + D,
                                 "D": D, "ci_low": D - 0.013, "ci_high": D + 0.012},
                        "baselines": []},
            "easy_hard": {"easy": 5773, "hard": 4051, "hard_fraction": 0.412, "split": "test",
                          "chance_level": verdict == "chance"},
            "hygiene": hygiene if hygiene is not None else {
                "splits": {"train": {"items": 9842, "duplicate_items": 2, "duplicate_groups": 2,
                                     "near_duplicate_pairs": 6, "label_conflict_groups": 0,
                                     "label_conflict_items": 0, "contrastive_pairs": 67,
                                     "permuted_copies": 0, "shared_premise_items": 9831}},
                "overlap": [], "examples": {}, "warnings": []},
            **extra}


def actions(results: dict) -> list[str]:
    return [s["action"] for s in next_steps(results)]


def test_findings_are_ranked_by_severity_then_effect_and_serialise():
    fs = findings(scan_results())
    assert [f.kind for f in fs][:3] == ["leakage", "cues", "easy_hard"]
    keys = [(SEVERITIES.index(f.severity), -abs(f.effect or 0)) for f in fs]
    assert [k[0] for k in keys] == sorted(k[0] for k in keys)
    leak = asdict(fs[0])
    assert leak == {"kind": "leakage", "title": leak["title"], "effect": 23.0, "ci_low": 21.7,
                    "ci_high": 24.2, "unit": "points", "items": 9824, "section": "leakage",
                    "severity": "high", "code": "significant", "subject": None, "level": 0.95}
    json.dumps([asdict(f) for f in fs])  # plain JSON
    with pytest.raises(AttributeError):
        fs[0].title = "changed"  # type: ignore[misc]


def test_cue_finding_of_the_scan_is_read_when_present_else_derived():
    derived = next(f for f in findings(scan_results()) if f.kind == "cues")
    assert "2 words point" in derived.title and "“outside” → entailment" in derived.title
    assert derived.items is None
    results = scan_results(cue_finding={
        "n_significant": 87, "items_covered": 6100, "share_items": 0.62, "bonferroni_z": 4.8,
        "top": [{"token": "outside", "label": "entailment", "z": 12.7}]})
    given = next(f for f in findings(results) if f.kind == "cues")
    assert "87 words point" in given.title and "62% of the items" in given.title
    assert (given.effect, given.items) == (62.0, 6100)


def test_snli_cue_leakage_outranks_two_redundant_duplicates():
    steps = actions(scan_results())
    cue_step = next(i for i, a in enumerate(steps) if "cue words" in a)
    copies = next(i for i, a in enumerate(steps) if "redundant exact copies" in a)
    hard = next(i for i, a in enumerate(steps) if "hard items" in a)
    assert cue_step == 0 and hard < copies
    assert "nobody" in steps[0] and "cow" not in steps[0]  # significant cues only


def no_significant_cues(results: dict) -> dict:
    for cue in results["cues"]:
        cue["significant"] = False
    return results


def test_no_change_needed_only_when_nothing_is_flagged():
    cues_only = scan_results(verdict="chance", D=0.01, hygiene={
        "splits": {}, "overlap": [], "examples": {}, "warnings": []})
    # significant cue words are leakage on their own (the scan's other calibrated finding,
    # docs/methods.md §17), even when no cue-only classifier beats the baseline
    assert actions(cues_only) == ["remove or rebalance the significant cue words "
                                  "(contradiction: nobody; entailment: outside)"]
    clean = no_significant_cues(cues_only)
    assert actions(clean)[0].startswith("no change needed")
    # ARCT: cue leakage at chance, but the choice-only BoW baseline (57.0%) is flagged
    arct = copy.deepcopy(clean)
    arct["dataset"]["task"] = "mcq"
    arct["mcq_baselines"] = {"n_items": 444, "chance": 0.5, "rows": [
        {"name": "choice-only BoW LR", "accuracy": 0.57, "accuracy_ci": [0.52, 0.62],
         "chance": 0.5, "D": 0.0698, "D_ci": [0.02, 0.12], "p_value": 0.0028,
         "significant": True, "n_items": 444}], "gold_position": {}}
    steps = actions(arct)
    assert not any("no change" in a for a in steps)
    assert steps[0].startswith("rewrite the choices")
    f = findings(arct)[0]
    assert (f.kind, f.code, f.subject, f.section) == ("baseline", "rule", "choice-only BoW LR",
                                                      "mcq_baselines")


def test_a_very_long_cue_word_is_named_cut_in_every_sentence():
    """A 3,000-character 'word' (an unsegmented run, a hostile token) filled the summary's
    first finding, the next steps, the conclusion and the card; sentences name it cut to 60
    characters, as the report's cue lists show it."""
    from cuelens.audit.conclusion import conclusion_of
    from cuelens.mitigate.card import card_markdown, croissant_rai

    long_word, long_label = "x" * 3000, "l" * 500
    results = scan_results(verdict="chance", D=0.01)
    results["cues"][0].update(token=long_word, label=long_label, metrics={"cp": 0.9, "z": 20.0})
    results["dataset"]["label_names"][0] = long_label
    cut_word, cut_label = "x" * 30 + "…" + "x" * 29, "l" * 30 + "…" + "l" * 29
    cues = next(f for f in findings(results) if f.kind == "cues")
    assert f"“{cut_word}” → {cut_label}" in cues.title
    assert any(f"{cut_label}: {cut_word}" in action for action in actions(results))
    assert f"“{cut_word}” → {cut_label}" in conclusion_of(results).reason
    card = card_markdown(results, "audit scan data") + json.dumps(croissant_rai(results))
    assert long_word not in card and long_label not in card and cut_word in card


def test_complement_rules_and_nonsignificant_rows_give_no_finding():
    results = scan_results(task="mcq", verdict="chance", D=0.0)
    rows = [{"name": name, "accuracy": 0.5 + D, "accuracy_ci": [0.5 + low, 0.5 + high],
             "chance": 0.5, "D": D, "D_ci": [low, high], "p_value": 0.001 if sig else 0.3,
             "n_items": 500, "significant": sig, **extra}
            for name, D, (low, high), sig, extra in (
                ("longest choice", 0.1, (0.05, 0.15), True, {}),
                ("shortest choice", -0.1, (-0.15, -0.05), True,
                 {"complement_of": "longest choice"}),
                ("answer position", 0.02, (-0.01, 0.05), False, {}))]
    results["mcq_baselines"] = {"n_items": 500, "chance": 0.5, "rows": rows,
                                "gold_position": {}}
    rules = [f.subject for f in findings(results) if f.code == "rule"]
    assert rules == ["longest choice"]


def _real(shared_data, name: str) -> dict:
    path = shared_data / name
    if not path.exists():
        pytest.skip(f"{path} absent")
    return data_hygiene(load_dataset(str(path))).to_json()


def test_arct_adv_choice_swapped_copies_are_a_construction_not_redundant(shared_data):
    hygiene = _real(shared_data, "arct_adv")
    train = hygiene["splits"]["train"]
    assert (train["duplicate_items"], train["permuted_copies"]) == (0, 1210)
    results = scan_results(task="mcq", verdict="chance", D=0.0, hygiene=hygiene)
    steps = actions(results)
    assert not any("redundant" in a or "1,210" in a for a in steps)
    construction = next(f for f in findings(results) if f.code == "permuted_copies")
    assert construction.severity == "info" and "deliberate construction" in construction.title
    # the 28 adversarial copies whose claim negation left the text unchanged: real conflicts
    assert hygiene["splits"]["test"]["label_conflict_groups"] == 28
    assert any("label conflicts in the test split" in a for a in steps)


def test_balanced_copa_label_conflict_is_named_a_label_conflict(shared_data):
    hygiene = _real(shared_data, "balanced_copa/dev.jsonl")
    counts = hygiene["splits"]["all"]
    assert (counts["duplicate_items"], counts["label_conflict_groups"],
            counts["label_conflict_items"]) == (0, 1, 2)
    steps = actions(no_significant_cues(scan_results(task="mcq", verdict="chance", D=0.0,
                                                     hygiene=hygiene)))
    assert steps == ["fix the 2 items with label conflicts"]


def test_hard_items_step_names_no_file_and_points_at_the_output_key():
    step = next(s for s in next_steps(scan_results()) if "hard items" in s["action"])
    assert step["output"] == "hard" and ".jsonl" not in step["action"] + step["why"]


def test_item_files_ids_prints_the_id_list_not_a_missing_hard_jsonl(tmp_path):
    from typer.testing import CliRunner

    from cuelens.cli import app
    from scan_helpers import planted_nli
    from tests.conftest import write_jsonl

    hypotheses, labels = planted_nli(600, seed=0)
    write_jsonl(tmp_path / "data.jsonl", [{"id": str(i), "premise": "p", "hypothesis": h,
                                           "label": l} for i, (h, l) in
                                          enumerate(zip(hypotheses, labels))])
    out = tmp_path / "out"
    run = CliRunner().invoke(app, ["scan", str(tmp_path / "data.jsonl"), "--out", str(out),
                                   "--item-files", "ids", "--iterations", "1"])
    assert run.exit_code == 0, run.output
    text = " ".join(run.output.split())
    assert "hard.jsonl" not in text and not (out / "hard.jsonl").exists()
    assert "hard.ids.txt" in text.replace(" ", "") and (out / "hard.ids.txt").exists()


def probe_results(relies: bool) -> dict:
    results = scan_results()
    cue = {"cue": "nobody", "kind": "word", "n_with": 40, "n_without": 900, "acc_with": 0.9,
           "acc_without": 0.7, "delta": 0.2, "ci_low": 0.1, "ci_high": 0.3, "p_value": 0.002,
           "q_value": 0.01, "significant": relies}
    results["probe"] = {"model": {"name": "roberta-snli"}, "accuracy": 0.71,
                        "sanity": {"accuracy": {"accuracy": 0.71, "ci_low": 0.68,
                                                "ci_high": 0.74}, "interpretable": True},
                        "accuracy_test": {"cues": [cue]},
                        "easy_hard": {"easy_accuracy": 0.9, "hard_accuracy": 0.5, "gap": 0.4}}
    return results


def test_probe_steps_are_about_the_model_not_probe_your_model():
    steps = next_steps(probe_results(relies=True))
    text = " ".join(s["action"] for s in steps)
    assert "audit probe" not in text and "cue words" not in text  # not the scan's steps
    assert steps[0]["action"].startswith("retrain roberta-snli") and "“nobody”" in text
    assert "hard items (50.0%)" in text
    assert all(s["section"] == "probe" for s in steps)
    clean = next_steps(probe_results(relies=False))
    assert "audit probe" not in clean[-1]["action"]
    finding = next(f for f in findings(probe_results(relies=True)) if f.code == "relies_on_cue")
    assert (finding.effect, finding.ci_low, finding.ci_high, finding.subject) == \
        (20.0, 10.0, 30.0, "nobody")


def test_an_uninterpretable_probe_says_so_first():
    results = probe_results(relies=True)
    results["probe"]["sanity"]["interpretable"] = False
    (step,) = next_steps(results)
    assert step["action"].startswith("check roberta-snli before reading its cue tests")


def test_every_finding_field_is_typed():
    for f in findings(probe_results(relies=True)):
        assert isinstance(f, Finding) and f.severity in SEVERITIES and f.section
        assert f.title.endswith(".") and "\n" not in f.title


@pytest.mark.parametrize("verdict, D", [("significant", 0.23), ("mild", 0.05), ("chance", -0.01)])
def test_a_file_written_before_verdicts_reads_as_its_flag_and_d_everywhere(verdict, D):
    """Without ``leakage.verdict`` the leakage finding and the conclusion read the flag, but the
    cue finding and the next steps read no verdict: a flagged file's cue finding dropped to low
    severity, a cue step came beside the leakage step and the easy/hard step was skipped."""
    new = scan_results(verdict=verdict, D=D)
    old = copy.deepcopy(new)
    del old["leakage"]["verdict"]
    assert [asdict(f) for f in findings(old)] == [asdict(f) for f in findings(new)]
    assert next_steps(old) == next_steps(new)
