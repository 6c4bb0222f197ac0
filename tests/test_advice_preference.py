"""Findings and next steps of a preference scan speak of chosen/rejected responses, shortcuts
(longer wins, formatting, position) and the response-only baseline — never of hypotheses or
premises — and name exactly the planted shortcuts and subsets (tests/planted_preference.py)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from cuelens.audit.results import LeakageSection
from cuelens.audit.advice import next_steps
from cuelens.audit.findings import findings
from cuelens.audit.preference import preference_section, shortcut_rows, shortcut_scores
from cuelens.audit.subsets import preference_cells, subset_table
from planted_preference import make_preference
from cuelens.data.preference import PREFERENCE_TASK, load_preferences
from cuelens.jsonio import write_jsonl
from cuelens.reports.scan import _text_name, verdict

NLI_WORDS = ("hypothes", "premise", "label conflict")


@pytest.fixture(scope="module")
def planted_results(tmp_path_factory) -> dict:
    """The preference and subsets sections of the planted pairs (no word-cue scan), with a
    significant response-only leakage and cues as a scan of such data writes them."""
    path = tmp_path_factory.mktemp("advice") / "planted.jsonl"
    write_jsonl(path, make_preference(200, seed=0))
    split = load_preferences(path).splits["all"]
    subsets, scores = np.asarray(split.subsets, dtype=object), shortcut_scores(split)
    groups = {s: np.flatnonzero(subsets == s) for s in sorted(set(split.subsets))}
    table = subset_table("subset", "win rate", {s: len(i) for s, i in groups.items()},
                         {s: preference_cells(shortcut_rows(scores, i)) for s, i in groups.items()},
                         preference_cells(shortcut_rows(scores)))
    cues = [{"token": "-", "label": "chosen", "count": 200, "label_count": 150,
             "metrics": {"z": 7.1}, "significant": True}]
    return {"dataset": {"name": "planted", "task": PREFERENCE_TASK,
                        "label_names": ["chosen", "rejected"], "splits": {"all": {"items": 1600}}},
            "cues": cues, "cue_stats": {"bonferroni_z": 4.5},
            "leakage": {"majority": 0.5, "verdict": "significant", "flagged": True,
                        "best": {"metric": "cp", "aggregator": "lr", "accuracy": 0.58, "D": 0.08,
                                 "ci_low": 0.05, "ci_high": 0.11}, "baselines": []},
            "easy_hard": {"easy": 900, "hard": 700, "split": "all", "chance_level": False},
            "hygiene": {"splits": {"all": {"items": 1600, "label_conflict_groups": 3,
                                           "label_conflict_items": 6}}, "overlap": []},
            "preference": preference_section({"all": split}, split.shape).to_json(),
            "subsets": table.to_json()}


def _texts(results: dict) -> list[str]:
    return [f.title for f in findings(results)] + \
        [s["action"] + " " + s["why"] for s in next_steps(results)]


def test_preference_findings_are_the_planted_shortcuts(planted_results):
    fs = findings(planted_results)
    overall = {f.subject for f in fs if f.code in ("preference_shortcut", "position_effect")}
    assert overall == {"longer (characters)", "longer (tokens)", "markdown list", "shown first"}
    per_subset = {f.subject: f for f in fs if f.code == "subset_shortcut"}
    assert set(per_subset) == overall
    assert "length (80.0%)" in per_subset["longer (characters)"].title
    assert "position (90.0%)" in per_subset["shown first"].title
    assert "clean" not in " ".join(f.title for f in per_subset.values())
    position = next(f for f in fs if f.code == "position_effect")
    # (3·100 + 180) / 800 pairs shown first are chosen: +10 points over a coin flip
    assert position.effect == 10.0 and position.items == 800
    assert position.ci_low < 10.0 < position.ci_high


def test_preference_steps_speak_of_responses_and_shortcuts(planted_results):
    steps = next_steps(planted_results)
    text = " ".join(_texts(planted_results)).lower()
    for word in NLI_WORDS:
        assert word not in text
    actions = [s["action"] for s in steps]
    assert any("length-controlled win rate" in a for a in actions)
    assert any("chosen response first in half of the pairs" in a for a in actions)
    assert any("“markdown list” as common in rejected responses" in a for a in actions)
    assert any(a.endswith("first in subset length") for a in actions)
    assert len(actions) == len(set(actions))  # longer (characters) and (tokens): one step
    leakage = next(s for s in steps if s["section"] == "leakage")
    assert "response-only classifier" in leakage["why"] and "chosen: -" in leakage["action"]
    assert any("both chosen and rejected" in a for a in actions)
    assert any("contrastive pairs" in a for a in actions)
    hard = next(s for s in steps if s.get("output") == "hard")
    assert "700 hard responses" in hard["action"]


def test_shorter_wins_is_advised_in_the_opposite_direction(planted_results):
    results = copy.deepcopy(planted_results)
    for row in results["preference"]["splits"]["all"]["shortcuts"]:
        if row["shortcut"] == "longer (tokens)":
            row["rate"], row["rate_ci"] = 1 - row["rate"], [1 - row["rate_ci"][1],
                                                            1 - row["rate_ci"][0]]
    f = next(f for f in findings(results) if f.subject == "longer (tokens)"
             and f.code == "preference_shortcut")
    assert f.effect == -15.0 and "the opposite pick wins" in f.title


def test_a_shortcut_of_one_subset_only_gets_a_step_naming_it(planted_results):
    results = copy.deepcopy(planted_results)
    for row in results["preference"]["splits"]["all"]["shortcuts"]:
        if row["shortcut"] == "markdown list":
            row["significant"] = False
    steps = [s for s in next_steps(results) if "markdown list" in s["action"]]
    assert len(steps) == 1 and steps[0]["section"] == "subsets"
    assert steps[0]["action"].endswith("first in subset format")
    assert "+25.0 points" in steps[0]["why"]


def test_clean_preference_scan_closes_with_a_judge_step(planted_results):
    clean = copy.deepcopy(planted_results)
    clean.update(cues=[], subsets=None, hygiene={"splits": {}, "overlap": []})
    clean["leakage"].update(verdict="chance", best=dict(clean["leakage"]["best"], D=0.0,
                                                         ci_low=-0.01, ci_high=0.01))
    for row in clean["preference"]["splits"]["all"]["shortcuts"]:  # even, on many pairs
        row.update(significant=False, rate=0.5, rate_ci=[0.49, 0.51], decided=40_000)
    steps = next_steps(clean)
    assert len(steps) == 1 and "audit judge" in steps[0]["action"]
    assert steps[0]["action"].startswith("no change needed")
    # the same data measured on the planted 200 pairs cannot rule leakage out: no clean bill
    for row in clean["preference"]["splits"]["all"]["shortcuts"]:
        row.update(rate_ci=[0.43, 0.57], decided=200)
    steps = next_steps(clean)
    assert steps[0]["action"].startswith("add about ") and "no change needed" not in str(steps)


def test_report_headline_names_responses_and_prompt(planted_results):
    assert _text_name(planted_results) == ("responses", "prompt")
    level, sentence = verdict(LeakageSection.in_results(planted_results), 0.05,
                              planted_results)
    assert level == "flagged" and "words of the responses" in sentence
    assert "understanding the prompt" in sentence and "premise" not in sentence
