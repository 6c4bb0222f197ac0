"""Preference pairs: record shapes, planted shortcut rates, per-subset verdicts, Holm, CLI/API."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

import cuelens
from cuelens.audit.preference import shortcut_rows, shortcut_scores, win_row
from cuelens.audit.subsets import holm
from cuelens.cli import app
from planted_preference import SUBSETS, make_preference
from cuelens.data.preference import (NO_POSITION, load_preferences, normalise_preference,
                                     record_shape, split_dialogues)
from cuelens.data.schema import RecordError
from cuelens.errors import UserError
from cuelens.jsonio import write_jsonl
from cuelens.reports.render import subtitle
from cuelens.reports.schema import validate_results

PLANTED = {("length", "longer (characters)"): 0.8, ("length", "longer (tokens)"): 0.8,
           ("format", "markdown list"): 0.75, ("position", "shown first"): 0.9}


@pytest.fixture(scope="module")
def planted_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("pref") / "planted.jsonl"
    write_jsonl(path, make_preference(200, seed=0))
    return path


@pytest.fixture(scope="module")
def planted_scan(planted_file):
    """The planted file's scan, read for its shortcut, subset and schema sections, never for
    SGD's accuracies: tests/conftest.py's small SGD budget."""
    return cuelens.scan(planted_file, folds=3, iterations=1)


def _normalised(record: dict) -> dict:
    return normalise_preference(record, record_shape(record), "x:1")


def test_record_shapes():
    reward_bench = {"prompt": "Say hi", "chosen": "Hi!", "rejected": "No.", "subset": "chat",
                    "id": 7}
    assert _normalised(reward_bench) == {"prompt": "Say hi", "chosen": "Hi!", "rejected": "No.",
                                         "position": NO_POSITION, "id": "7", "subset": "chat"}
    ultrafeedback = {"prompt": "2+2?", "prompt_id": "p1",
                     "chosen": [{"role": "user", "content": "2+2?"},
                                {"role": "assistant", "content": "4"}],
                     "rejected": [{"role": "user", "content": "2+2?"},
                                  {"role": "assistant", "content": "5"}]}
    pair = _normalised(ultrafeedback)
    assert (pair["prompt"], pair["chosen"], pair["rejected"], pair["id"]) == \
        ("2+2?", "4", "5", "p1")
    hh = {"chosen": "\n\nHuman: Hi there\n\nAssistant: Hello! How can I help?",
          "rejected": "\n\nHuman: Hi there\n\nAssistant: Go away."}
    pair = _normalised(hh)
    assert pair["prompt"] == "Human: Hi there\n\nAssistant:"
    assert (pair["chosen"], pair["rejected"]) == ("Hello! How can I help?", "Go away.")
    arena = {"prompt": '["Write a haiku"]', "response_a": '["Leaves fall"]',
             "response_b": '["Snow melts slowly"]', "winner_model_a": 0, "winner_model_b": 1,
             "winner_tie": 0}
    pair = _normalised(arena)
    assert (pair["prompt"], pair["chosen"], pair["rejected"], pair["position"]) == \
        ("Write a haiku", "Snow melts slowly", "Leaves fall", 1)
    tie = _normalised({"conversation_a": [{"role": "user", "content": "q"},
                                          {"role": "assistant", "content": "a"}],
                       "conversation_b": [{"role": "user", "content": "q"},
                                          {"role": "assistant", "content": "b"}],
                       "winner": "tie (bothbad)"})
    assert tie["tie"] and tie["prompt"] == "q"
    assert record_shape({"premise": "p", "hypothesis": "h", "label": "x"}) is None



def test_trl_conversational_prompt_as_messages():
    """TRL's conversational preference form: the prompt is a message list too."""
    trl = {"prompt": [{"role": "system", "content": "Be brief."},
                      {"role": "user", "content": "2+2?"}],
           "chosen": [{"role": "assistant", "content": "4"}],
           "rejected": [{"role": "assistant", "content": "5"}]}
    pair = _normalised(trl)
    assert (pair["prompt"], pair["chosen"], pair["rejected"]) == ("Be brief.\n2+2?", "4", "5")
    with pytest.raises(RecordError, match="must hold messages or texts"):
        _normalised({**trl, "prompt": [["nested"]]})


def test_prompt_as_one_message_object_is_read_as_its_text():
    """A prompt given as one message (not in a list) was read as the Python repr of the object
    ("{'role': 'user', 'content': '2+2?'}"); an object that is no message was read the same way."""
    pair = _normalised({"prompt": {"role": "user", "content": "2+2?"}, "chosen": "4",
                        "rejected": "5"})
    assert pair["prompt"] == "2+2?"
    with pytest.raises(RecordError, match="field 'prompt' must be a text or messages, got an "
                                          "object without 'content', 'value' or 'text'"):
        _normalised({"prompt": {"a": 1}, "chosen": "4", "rejected": "5"})


def test_message_content_in_parts_is_read_as_its_text():
    parts = {"prompt": "q",
             "chosen": [{"role": "assistant", "content": [
                 {"type": "text", "text": "Hello"}, {"type": "text", "text": "there"}]}],
             "rejected": [{"role": "assistant", "content": [{"type": "text", "text": "No"}]}]}
    pair = _normalised(parts)
    assert (pair["chosen"], pair["rejected"]) == ("Hello\nthere", "No")  # not the parts' repr

def test_dialogues_without_assistant_marker_have_no_prompt():
    assert split_dialogues("same start then A", "same start then B") == \
        ("", "same start then A", "same start then B")


def test_bad_records_name_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    write_jsonl(path, [{"response_a": "x", "response_b": "y", "winner": "model_a"},
                       {"response_a": "x", "response_b": "y", "winner": "maybe"}])
    with pytest.raises(UserError) as error:
        load_preferences(path)
    assert error.value.line == 2 and "maybe" in str(error.value)
    assert len(load_preferences(path, skip_bad=True).splits["all"]) == 1


def test_planted_rates_are_exact(planted_file):
    pairs = load_preferences(planted_file).splits["all"]
    assert len(pairs) == 800 and pairs.ties == {"clean": 20}
    subsets, scores = np.asarray(pairs.subsets), shortcut_scores(pairs)
    for subset in SUBSETS:
        rows = {r["shortcut"]: r for r in shortcut_rows(scores, np.flatnonzero(subsets == subset))}
        for name, row in rows.items():
            rate = PLANTED.get((subset, name))
            if rate is not None:
                assert row["rate"] == rate and row["decided"] == 200
                wins = round(rate * 200)
                assert row["p_value"] == pytest.approx(stats.binomtest(wins, 200).pvalue,
                                                       rel=1e-5)
                low, high = stats.binomtest(wins, 200).proportion_ci(method="wilson")
                assert row["rate_ci"] == pytest.approx([low, high], abs=1e-6)
                assert row["significant"]
            elif name == "shown first" or (subset == "clean" and name.startswith("longer")):
                assert row["rate"] == 0.5 and not row["significant"]
            else:
                assert row["decided"] == 0 and row["rate"] is None


@pytest.mark.slow
def test_per_subset_verdicts_are_the_planted_ones(planted_scan):
    table = planted_scan.results["subsets"]
    significant = {(row["subset"], name) for row in table["rows"]
                   for name, cell in row["cells"].items() if cell["significant"]}
    assert significant == set(PLANTED)
    assert table["n_tests"] == 4 * len(table["shortcuts"])
    cells = [(row["subset"], name) for row in table["rows"] for name in row["cells"]]
    p = [next(r for r in table["rows"] if r["subset"] == s)["cells"][n]["p_value"]
         for s, n in cells]
    adjusted = holm(p)
    for (s, n), expected in zip(cells, adjusted):
        cell = next(r for r in table["rows"] if r["subset"] == s)["cells"][n]
        assert cell["p_adjusted"] == pytest.approx(expected, rel=1e-5)
    assert table["overall"]["longer (characters)"]["value"] == 0.65  # (160 + 100) / 400
    assert table["overall"]["shown first"]["value"] == pytest.approx(0.6)  # (3·100 + 180) / 800
    for row in table["rows"]:
        assert row["leakage"] is not None and row["leakage"]["verdict"]


@pytest.mark.slow
def test_large_subsets_get_a_sampled_scan_of_whole_pairs(planted_file, monkeypatch):
    import cuelens.audit.subsets as subsets

    monkeypatch.setattr(subsets, "MAX_SUBSET_ITEMS", 100)
    table = cuelens.scan(planted_file, folds=3, iterations=1).results["subsets"]
    for row in table["rows"]:  # 200 pairs = 400 responses per subset; 50 whole pairs read
        assert row["n_items"] == 200 and row["leakage"]["items_scanned"] == 100
    assert {(row["subset"], name) for row in table["rows"] for name, cell in row["cells"].items()
            if cell["significant"]} == set(PLANTED)  # the shortcut cells read every pair


@pytest.mark.slow
def test_preference_scan_speaks_of_responses_and_prompts(planted_scan):
    results = planted_scan.results
    steps = " ".join(f"{s['action']} {s['why']}" for s in results["next_steps"]).lower()
    assert "hypothes" not in steps and "premise" not in steps
    assert "length-controlled win rate" in steps and "first in subset length" in steps
    assert "chosen response first in half of the pairs" in steps
    assert results["lengths"]["unit"] == "words per response"
    assert results["lengths"]["baseline"]["name"] == "response length only"
    assert results["leakage"]["groups"]["unit"].startswith("prompt")
    # the page's header said "pair classification (NLI)"
    assert subtitle(results)[0] == "preference pairs (a prompt, a chosen and a rejected response)"


@pytest.mark.slow
def test_preference_results_follow_the_schema(planted_scan):
    results = planted_scan.results
    validate_results(results)
    assert results["dataset"]["task"] == "preference"
    assert results["dataset"]["label_names"] == ["chosen", "rejected"]
    assert results["leakage"]["majority"] == 0.5  # every fold holds both responses of a pair
    assert any(b["name"] == "response-only BoW LR" for b in results["leakage"]["baselines"])
    split = results["preference"]["splits"]["all"]
    assert (split["pairs"], split["ties"], split["positions_recorded"]) == (800, 20, 800)
    assert split["repeated_pairs"] == 0 and split["identical_responses"] == 0


def test_holm_matches_brute_force():
    rng = np.random.default_rng(0)
    for m in (1, 2, 5, 9):
        p = rng.random(m) ** 3
        order = np.argsort(p)
        brute = np.empty(m)
        for rank, i in enumerate(order):
            brute[i] = min(1.0, max((m - j) * p[order[j]] for j in range(rank + 1)))
        assert holm(p) == pytest.approx(brute)


def test_shortcut_test_is_calibrated_on_null_pairs():
    """Lengths unrelated to the preference: the longer-wins test rejects at most ~5%."""
    rng = np.random.default_rng(1)
    rejections = sum(win_row("x", rng.integers(1, 50, 80).astype(float),
                             rng.integers(1, 50, 80).astype(float))["p_value"] < 0.05
                     for _ in range(400))
    assert rejections / 400 <= 0.06


def test_holm_table_controls_family_wise_error_on_null_subsets():
    """Eight null subsets × the shortcuts: some significant cell in at most ~5% of tables."""
    from cuelens.audit.subsets import preference_cells, subset_table

    rng = np.random.default_rng(2)
    any_hit = 0
    for _ in range(100):
        cells = {}
        for s in range(8):
            rows = [win_row(name, rng.integers(1, 40, 60).astype(float),
                            rng.integers(1, 40, 60).astype(float)) for name in ("a", "b", "c")]
            cells[str(s)] = preference_cells(rows)
        table = subset_table("f", "win rate", {str(s): 60 for s in range(8)}, cells, {})
        any_hit += any(c["significant"] for r in table.rows for c in r["cells"].values())
    assert any_hit / 100 <= 0.08


# public-domain text (Aesop's fables, 6th c. BC; English wording of the 1912 Jones translation)
FABLES = [
    "A Fox one day spied a beautiful bunch of ripe grapes hanging from a vine.",
    "The Hare was once boasting of his speed before the other animals.",
    "A Lion lay asleep in the forest, his great head resting on his paws.",
    "A Crow, half-dead with thirst, came upon a Pitcher which had once been full of water.",
    "An Ant went to the bank of a river to quench its thirst.",
    "A Wolf found great difficulty in getting at the sheep owing to the vigilance of the shepherd.",
    "The Tortoise plodded along without stopping, and never for a moment stopped to rest.",
    "The Mouse gnawed the ropes until the Lion was free.",
    "Slow and steady wins the race.",
    "Little friends may prove great friends.",
    "It is easy to despise what you cannot get.",
    "Appearances are deceptive.",
]


def realistic_pairs(n: int, seed: int, offset: int) -> list[dict]:
    """HH-RLHF-shaped dialogues from the fables: the chosen answer is the longer in 75%."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        question = f"What happens in fable number {i + offset}?"
        long = " ".join(rng.choice(FABLES, size=3, replace=False))
        short = str(rng.choice(FABLES))
        chosen, rejected = (long, short) if i % 4 else (short, long)
        prefix = f"\n\nHuman: {question}\n\nAssistant: "
        rows.append({"chosen": prefix + chosen, "rejected": prefix + rejected})
    return rows


@pytest.mark.slow
def test_realistic_file_through_cli_and_api(tmp_path):
    data = tmp_path / "hh"
    data.mkdir()
    write_jsonl(data / "train.jsonl", realistic_pairs(160, 0, 0))
    write_jsonl(data / "test.jsonl", realistic_pairs(80, 1, 1000))
    out = tmp_path / "out"
    run = CliRunner().invoke(app, ["scan", str(data), "--out", str(out), "--iterations", "1",
                                   "--folds", "3"])
    assert run.exit_code == 0, run.output
    assert "preference shortcuts" in run.output
    written = json.loads((out / "results.json").read_text())
    assert (out / "report.html").exists() and (out / "cues.csv").exists()
    longer = {r["shortcut"]: r for r in written["preference"]["splits"]["test"]["shortcuts"]}
    assert longer["longer (characters)"]["rate"] == 0.75
    assert written["hygiene"]["overlap"][0]["shared_premise"] == 0  # distinct questions
    api = cuelens.scan(data, iterations=1, folds=3)
    assert json.dumps(api.results, sort_keys=True) == json.dumps(written, sort_keys=True)


@pytest.mark.slow
def test_report_sections_escape_subset_names(planted_scan):
    import copy

    from cuelens.reports.render import render_html

    results = copy.deepcopy(planted_scan.results)
    results["subsets"]["rows"][0]["subset"] = "<script>alert(1)</script>"
    html = render_html(results)
    assert "<script>alert(1)</script>" not in html
    assert "Preference shortcuts" in html and "Subsets by subset" in html
    assert "sort: strongest effect" in html


def test_typed_sections_of_a_preference_scan_read_back_to_the_same_bytes(planted_scan):
    """results.json → typed sections (preference, subsets, easy/hard, leakage) → the same
    bytes: what a report of a loaded file reads is what the scan built (issue 54)."""
    from cuelens.audit.results import PreferenceSection, ScanSections, SubsetsSection

    results = planted_scan.results
    loaded = ScanSections.from_json(json.loads(json.dumps(results)))
    assert loaded == planted_scan.sections
    assert json.dumps(loaded.to_json()) == json.dumps(results)
    assert isinstance(loaded.preference, PreferenceSection)
    assert isinstance(loaded.subsets, SubsetsSection)
    assert SubsetsSection.in_results(results) == planted_scan.sections.subsets


def test_longer_in_characters_counts_decomposed_letters_once(tmp_path):
    """A chosen response written decomposed (NFD) counted each accent as a character: "été
    café 0" (10 characters, 13 code points in NFD) was longer than "bonsoir!!! 0" (12), a
    length shortcut made by the encoding."""
    import unicodedata
    rows = [{"prompt": f"q{i}", "chosen": unicodedata.normalize("NFD", f"été café {i}"),
             "rejected": f"bonsoir!!! {i}"} for i in range(30)]
    write_jsonl(tmp_path / "p.jsonl", rows)
    pairs = load_preferences(tmp_path / "p.jsonl").splits["all"]
    rows = {r["shortcut"]: r for r in shortcut_rows(shortcut_scores(pairs), np.arange(30))}
    assert rows["longer (characters)"]["rate"] == 0.0  # the rejected one is longer
    row = rows["longer (characters)"]
    assert row["chosen_mean"] < row["rejected_mean"]


def test_same_response_composed_and_decomposed_is_the_same_text(tmp_path):
    """'café' (NFC) against 'café' (NFD) was not a pair of identical responses, and a pair
    repeated in the other normal form was not a repeat."""
    import unicodedata
    from cuelens.audit.preference import pair_checks
    nfd = unicodedata.normalize("NFD", "Un café, s'il vous plaît")
    rows = [{"prompt": "q", "chosen": "Un café, s'il vous plaît", "rejected": nfd},
            {"prompt": "r", "chosen": "été", "rejected": "hiver"},
            {"prompt": "r", "chosen": unicodedata.normalize("NFD", "été"), "rejected": "hiver"}]
    write_jsonl(tmp_path / "p.jsonl", rows)
    pairs = load_preferences(tmp_path / "p.jsonl", skip_bad=True).splits["all"]
    assert pair_checks(pairs) == {"repeated_pairs": 1, "identical_responses": 1}


@pytest.mark.parametrize("features", ["all", "negation"])
def test_features_asked_for_on_preference_pairs_are_one_error(planted_file, tmp_path, features):
    """They were ignored silently: the scan ran and scored no feature. 'none' still runs."""
    run = CliRunner().invoke(app, ["scan", str(planted_file), "--out", str(tmp_path / "out"),
                                   "--features", features])
    assert run.exit_code == 2, run.output
    assert "--features" in run.output and "preference pairs" in run.output
    assert not (tmp_path / "out").exists()
    with pytest.raises(UserError, match=r"features \(--features\): preference pairs"):
        cuelens.scan(planted_file, features=features)
