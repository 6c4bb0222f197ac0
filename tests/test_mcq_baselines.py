"""MCQ artifact baselines on planted datasets with exact expected numbers."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from cuelens.audit.chance import chance_p_value, exact_interval, null_pmf, position_chi_square
from cuelens.audit.mcq_baselines import baseline_verdict, baselines_headline, mcq_baselines
from cuelens.audit.results import McqBaselinesSection
from scan_helpers import mcq_dataset


def planted(n: int, k: int = 4, gold_a: float = 0.7, longest: float = 0.8, offset: int = 0):
    """Gold at position 0 in ``gold_a`` of the items (the rest spread evenly); the gold choice is
    the strictly longest in the first ``longest`` share of items and the strictly shortest in
    the rest. Choices are distinct words so nothing else ties."""
    n_a = round(gold_a * n)
    labels = [0] * n_a + [1 + i % (k - 1) for i in range(n - n_a)]
    order = np.random.default_rng(1).permutation(n)  # decouple position from length
    labels = [labels[i] for i in order]
    choices = []
    for i, gold in enumerate(labels):
        sizes = list(range(2, 2 + k))  # choice j of length sizes[...] characters
        gold_size = sizes[-1] if i < round(longest * n) else sizes[0]
        rest = [s for s in sizes if s != gold_size]
        row, r = [], 0
        for j in range(k):
            size = gold_size if j == gold else rest[r]
            r += j != gold
            row.append(chr(ord("a") + (i + j + offset) % 26) * size)
        choices.append(row)
    return choices, labels


def by_name(section):
    return {row.name: row for row in section.rows}


def test_planted_position_and_length_detected_with_exact_numbers():
    train = planted(400, offset=3)
    test = planted(200)
    section = mcq_baselines(mcq_dataset(train, test))
    rows = by_name(section)
    assert section.chance == 0.25 and section.n_items == 200
    longest = rows["longest choice"]
    assert longest.accuracy == 0.8 and longest.D == pytest.approx(0.55)
    expected_p = stats.binomtest(160, 200, 0.25).pvalue  # exact binomial, two-sided
    assert longest.p_value == pytest.approx(expected_p, rel=1e-3)
    assert longest.significant
    # six rules: the test and the interval are both Bonferroni-corrected over 6
    assert section.bonferroni_alpha == pytest.approx(0.05 / 6, abs=1e-6)
    assert section.ci_level == pytest.approx(1 - 0.05 / 6, abs=1e-6)
    low, high = stats.binomtest(160, 200).proportion_ci(1 - 0.05 / 6, method="exact")
    assert longest.accuracy_ci == pytest.approx([low, high], abs=1e-6)
    assert longest.D_ci == pytest.approx([low - 0.25, high - 0.25], abs=1e-6)
    assert rows["shortest choice"].accuracy == 0.2
    assert rows["longest in words"].accuracy == 0.25  # one word each: all tie → 1/k
    assert rows["longest in words"].p_value == 1.0
    # the training split puts 70% of answers at A, so the answer-position baseline picks A
    position = rows["answer position"]
    assert position.accuracy == 0.7 and position.D == pytest.approx(0.45)
    assert position.fitted and position.significant
    gold = section.gold_position
    assert gold["test"].counts == [140, 20, 20, 20]
    assert gold["test"].expected == [50, 50, 50, 50]
    assert gold["test"].chi2 == pytest.approx((90 ** 2 + 3 * 30 ** 2) / 50)
    assert gold["test"].df == 3
    assert gold["test"].p_value == pytest.approx(stats.chi2.sf(216, 3), rel=1e-3)
    assert gold["test"].most_common == {"position": 0, "share": 0.7, "expected_share": 0.25}
    assert gold["train"].counts[0] == 280


def test_unbiased_dataset_is_not_significant():
    test = planted(300, k=3, gold_a=1 / 3, longest=1 / 3)
    rows = by_name(mcq_baselines(mcq_dataset(None, test)))
    assert rows["longest choice"].accuracy == pytest.approx(1 / 3, abs=1e-6)
    assert not rows["longest choice"].significant
    assert rows["longest choice"].p_value > 0.5


def test_varying_choice_counts_use_per_item_chance():
    # k = 2, 3, 5 (two items each); gold always the longest choice
    choices = [["aa", "b"], ["c", "dd"], ["eee", "f", "g"], ["h", "i", "jjj"],
               ["kkkkk", "l", "m", "n", "o"], ["p", "q", "r", "s", "ttttt"]]
    labels = [0, 1, 0, 2, 0, 4]
    section = mcq_baselines(mcq_dataset(None, (choices, labels)), folds=2)
    rows = by_name(section)
    chance = (2 / 2 + 2 / 3 + 2 / 5) / 6
    assert section.chance == pytest.approx(chance, abs=1e-6)
    assert section.choice_counts == {"2": 2, "3": 2, "5": 2}
    assert rows["longest choice"].accuracy == 1.0
    # all six right: P = (1/2)^2 (1/3)^2 (1/5)^2, doubled (two-sided)
    assert rows["longest choice"].p_value == pytest.approx(2 / (4 * 9 * 25), rel=1e-4)
    gold = section.gold_position["all"]
    assert gold.counts == [3, 1, 1, 0, 1]
    assert gold.expected == pytest.approx([1 + 2 / 3 + 2 / 5, 1 + 2 / 3 + 2 / 5, 2 / 3 + 2 / 5,
                                              2 / 5, 2 / 5], abs=1e-6)
    assert gold.df == 1 + 2 + 4
    assert gold.warning


def test_overlap_and_question_only():
    # premise words recur in the gold choice; the same question repeats with the same answer
    choices = [["red apple pie", "blue sky"], ["green grass", "red apple cake"]] * 10
    labels = [0, 1] * 10
    ds = mcq_dataset(None, (choices, labels))
    for i in range(len(ds.test)):
        ds.test.premises[i] = f"question {i % 2}: which red apple dish"
    rows = by_name(mcq_baselines(ds, folds=5, seed=0))
    assert rows["overlap with question"].accuracy == 1.0
    assert rows["question only"].accuracy == 1.0
    assert rows["question only"].coverage == 1.0


def test_question_only_reads_decomposed_text_as_composed():
    """A test question and answer written decomposed (NFD) are the training items' composed
    ones (they were other texts: 'question only' knew none of them)."""
    import unicodedata

    def split(form):
        choices = [[form("crème brûlée"), "thé"] if i % 2 else ["thé", form("café crème")]
                   for i in range(20)]
        return choices, [0 if i % 2 else 1 for i in range(20)]

    ds = mcq_dataset(split(str), split(lambda t: unicodedata.normalize("NFD", t)))
    for i in range(20):
        question = f"question {i % 2}: quel dessert préférez-vous"
        ds.train.premises[i] = question
        ds.test.premises[i] = unicodedata.normalize("NFD", question)
    row = by_name(mcq_baselines(ds))["question only"]
    assert row.coverage == 1.0 and row.accuracy == 1.0


def test_question_only_without_repeats_is_chance():
    choices = [[f"x{i}", f"y{i}", f"z{i}"] for i in range(30)]
    ds = mcq_dataset(None, (choices, [i % 3 for i in range(30)]))
    for i in range(30):
        ds.test.premises[i] = f"question {i}"
    row = by_name(mcq_baselines(ds))["question only"]
    assert row.coverage == 0.0 and row.accuracy == pytest.approx(1 / 3, abs=1e-6)


def test_null_pmf_matches_brute_force():
    k = np.array([2, 3, 3, 5])
    pmf = null_pmf(k)
    brute = np.zeros(5)
    for bits in range(16):
        right = [(bits >> i) & 1 for i in range(4)]
        brute[sum(right)] += np.prod([1 / ki if r else 1 - 1 / ki for r, ki in zip(right, k)])
    assert pmf == pytest.approx(brute)
    assert chance_p_value(0, k) == pytest.approx(min(1, 2 * brute[0]))


def test_exact_interval_and_chi_square_edges():
    assert exact_interval(0.5, 0) == (0.0, 1.0)
    low, high = exact_interval(1.0, 10)
    assert high == 1.0 and low == pytest.approx(stats.binomtest(10, 10).proportion_ci(
        method="exact").low)
    assert exact_interval(0.0, 10)[0] == 0.0
    flat = position_chi_square(np.array([0, 1, 0, 1]), np.array([2, 2, 2, 2]))
    assert flat["chi2"] == 0.0 and flat["p_value"] == 1.0 and not flat["significant"]


def test_scan_cli_reports_planted_artifacts(tmp_path):
    import json

    from typer.testing import CliRunner

    from cuelens.cli import app
    from cuelens.reports.schema import validate_results
    from tests.conftest import write_jsonl

    for name, (choices, labels), offset in (("train", planted(200, offset=3), 3),
                                            ("test", planted(100), 0)):
        write_jsonl(tmp_path / "data" / f"{name}.jsonl",
                    [{"id": f"{name}{i}", "premise": f"<b>question {i + offset}</b>",
                      "choices": c, "label": g} for i, (c, g) in enumerate(zip(choices, labels))])
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["scan", str(tmp_path / "data"), "--out", str(out),
                                      "--iterations", "1", "--features", "none"])
    assert result.exit_code == 0, result.output
    assert "longest choice: right 80.0% of the time against 25.0%" in result.output
    results = json.loads((out / "results.json").read_text())
    validate_results(results)
    rows = by_name(McqBaselinesSection.from_json(results["mcq_baselines"]))
    assert rows["longest choice"].accuracy == 0.8 and rows["answer position"].accuracy == 0.7
    leak = {b["name"]: b["accuracy"] for b in results["leakage"]["baselines"]}
    assert leak["answer position"] == rows["answer position"].accuracy  # one definition
    assert rows["choice-only BoW LR"].accuracy == leak["choice-only BoW LR"]
    html = (out / "report.html").read_text()
    assert 'id="mcq_baselines"' in html and "the positions are unbalanced" in html


def test_varying_choice_counts_load_scan_and_probe(tmp_path):
    import json

    from typer.testing import CliRunner

    from cuelens.cli import app
    from cuelens.data.loading import load_dataset
    from cuelens.reports.schema import validate_results
    from tests.conftest import write_jsonl

    rows, lines = [], []
    for i in range(30):
        k = 2 + i % 4  # 2..5 choices
        choices = [f"opt{j} of {i}" + " long" * (j == i % k) for j in range(k)]
        rows.append({"id": f"v{i}", "premise": f"question {i}", "choices": choices,
                     "label": i % k})
        lls = [-1.0 if j == 0 else -2.0 for j in range(k)]  # always answers A
        lines.append({"doc_id": i, "doc": {}, "target": i % k,
                      "filtered_resps": [[x, False] for x in lls]})
    data = write_jsonl(tmp_path / "vary.jsonl", rows)
    dataset = load_dataset(str(data))
    assert dataset.n_choices is None and dataset.test.choice_counts[:4] == [2, 3, 4, 5]
    runner = CliRunner()
    done = runner.invoke(app, ["scan", str(data), "--out", str(tmp_path / "scan")])
    assert done.exit_code == 0, done.output
    results = json.loads((tmp_path / "scan" / "results.json").read_text())
    validate_results(results)
    assert results["dataset"]["splits"]["all"]["instances"] == sum(2 + i % 4 for i in range(30))
    rows = by_name(McqBaselinesSection.from_json(results["mcq_baselines"]))
    assert rows["longest choice"].accuracy == 1.0
    assert "leakage" not in results and "different numbers of choices" in done.output
    assert sorted(p.name for p in (tmp_path / "scan").iterdir()) == [
        "report.html", "results.json", "run.json"]
    log = write_jsonl(tmp_path / "samples.jsonl", lines)
    done = runner.invoke(app, ["probe", str(data), "-p", str(log), "--out",
                               str(tmp_path / "probe")])
    assert done.exit_code == 0, done.output
    probe = json.loads((tmp_path / "probe" / "results.json").read_text())["probe"]
    assert probe["accuracy"] == pytest.approx(np.mean([i % (2 + i % 4) == 0 for i in range(30)]),
                                              abs=1e-6)
    # its own scan is reused as the probe's (--scan refused it: 'not a scan results file')
    done = runner.invoke(app, ["probe", str(data), "-p", str(log), "--scan",
                               str(tmp_path / "scan"), "--out", str(tmp_path / "probe2")])
    assert done.exit_code == 0, done.output
    again = json.loads((tmp_path / "probe2" / "results.json").read_text())["probe"]
    assert again["accuracy"] == probe["accuracy"] and again["sanity"] == probe["sanity"]


@pytest.mark.parametrize("k, gold_a, longest", [(4, 0.3, 0.33), (4, 0.25, 0.3), (3, 0.4, 0.42),
                                                (5, 0.26, 0.27), (2, 0.56, 0.57)])
def test_significance_and_the_interval_agree(k, gold_a, longest):
    """One k and no ties: the corrected interval excludes chance exactly when the corrected
    test is significant (the wording can never say "not significant" beside an interval that
    excludes chance)."""
    for n in (150, 300, 600):
        section = mcq_baselines(mcq_dataset(planted(2 * n, k, gold_a, longest, offset=3),
                                            planted(n, k, gold_a, longest)))
        for row in section.rows:
            low, high = row.accuracy_ci
            assert row.significant == (not low <= row.chance <= high), row


def test_two_choices_count_shortest_as_the_complement_of_longest():
    section = mcq_baselines(mcq_dataset(None, planted(300, k=2, gold_a=0.5, longest=0.7)))
    rows = by_name(section)
    assert rows["shortest choice"].complement_of == "longest choice"
    assert rows["shortest choice"].accuracy == pytest.approx(1 - rows["longest choice"].accuracy)
    assert rows["shortest choice"].p_value == rows["longest choice"].p_value
    assert section.bonferroni_alpha == pytest.approx(0.05 / 5, abs=1e-6)  # 6 rows, 5 tests
    level, headline = baselines_headline(section)
    assert level == "flagged" and " of 5 rules " in headline  # 6 rows, 5 tests
    assert "complement" in baseline_verdict(rows["shortest choice"], section)
    assert rows["longest choice"].complement_of is None


def test_below_chance_wording_depends_on_the_number_of_choices():
    two = mcq_baselines(mcq_dataset(None, planted(300, k=2, gold_a=0.5, longest=0.5)))
    five = mcq_baselines(mcq_dataset(None, planted(300, k=5, gold_a=0.2, longest=0.0)))
    below = by_name(five)["longest choice"]
    assert below.significant and below.D < 0
    text = baseline_verdict(below, five)
    assert "opposite" not in text and "rarely the choice this rule picks" in text
    assert "99.2% CI" in text  # 1 - 0.05/6
    row = replace(by_name(two)["longest choice"], significant=True, D=-0.2, accuracy=0.3)
    assert "picking the other one is right 70.0% of the time" in baseline_verdict(row, two)


def test_copa_choice_only_bow_is_not_significant_and_its_interval_covers_chance(shared_data):
    """COPA dev → test: the choice-only BoW's 54.9% (its scan's accuracy) has p = 0.028, above
    the corrected α; the old uncorrected 95% interval excluded chance beside "not significant"."""
    from cuelens.data import load_dataset

    dataset = load_dataset(str(shared_data / "copa"))
    section = mcq_baselines(dataset, extra={"choice-only BoW LR": 0.549})
    row = by_name(section)["choice-only BoW LR"]
    assert not row.significant and row.D_ci[0] < 0 < row.D_ci[1]
    assert "not significantly different from guessing" in baseline_verdict(row, section)


def test_varying_choice_counts_result_views_say_no_leakage(tmp_path):
    """An MCQ scan with different numbers of choices has no leakage section: its views are
    empty / NaN instead of raising KeyError (issue 24), and its summaries still render."""
    import math

    import cuelens
    from tests.conftest import write_jsonl

    rows = [{"id": f"v{i}", "premise": f"question {i}",
             "choices": [f"opt{j} of {i}" for j in range(2 + i % 3)], "label": i % 2}
            for i in range(24)]
    result = cuelens.scan(str(write_jsonl(tmp_path / "vary.jsonl", rows)))
    assert "leakage" not in result.results and result.sections.leakage is None
    assert list(result.results) == ["schema_version", "tool", "config", "dataset", "conclusion",
                                    "segmentation", "mcq_baselines", "notes", "next_steps"]
    conclusion = result.results["conclusion"]  # stated from the rules alone: 24 questions
    assert conclusion["status"] == "inconclusive" and conclusion["D"] is None
    assert conclusion["reason"].startswith("24 evaluated questions cannot rule out leakage")
    assert math.isnan(result.D)
    assert result.leakage.empty and list(result.leakage.columns)[:2] == ["metric", "aggregator"]
    assert result.cues.empty and result.easy.empty and result.hard.empty
    assert "vary" in repr(result) and "cuelens-summary" in result._repr_html_()


def test_clustered_equivalence_bound_over_shared_choice_sets_by_hand():
    """Seven questions, four choice sets (the order of the choices does not matter): a mirrored
    pair (longest choice: one right, one wrong), a pair right twice, a pair wrong twice and a
    single question. d_i = credit − ½: (+½, −½), (+½, +½), (−½, −½), +½; D = ½ / 7 = 1/14;
    cluster sums of d − D: −1/7, 6/7, −8/7, 3/7; SE² = 4/3 · (1 + 36 + 64 + 9)/49 / 7²."""
    test = ([["aa", "bbbb"], ["aa", "bbbb"], ["cccc", "dd"], ["dd", "cccc"], ["ee", "ffff"],
             ["ffff", "ee"], ["ggg", "h"]], [1, 0, 0, 1, 0, 1, 0])
    train = ([["x", "yy"], ["zz", "w"]], [0, 0])
    rows = by_name(mcq_baselines(mcq_dataset(train, test)))
    longest = rows["longest choice"]
    assert longest.D == pytest.approx(1 / 14, abs=1e-6)
    se = np.sqrt(4 / 3 * 110 / 49) / 7
    assert longest.D_equivalence_high == pytest.approx(
        1 / 14 + stats.t.ppf(0.95, 3) * se, abs=1e-6)
    assert longest.equivalence_clusters == 4
    # answer position (A, fitted on train): credits 0, 1 | 1, 0 | 1, 0 | 1 → each pair one
    # right, one wrong; D = ½/7 = 1/14 again, cluster sums of d − D: −1/7 three times, 3/7
    position = rows["answer position"]
    se = np.sqrt(4 / 3 * (3 + 9) / 49) / 7
    assert position.D_equivalence_high == pytest.approx(
        1 / 14 + stats.t.ppf(0.95, 3) * se, abs=1e-6)


def test_no_clustered_bound_when_every_choice_set_is_one_question():
    test = ([["aa", "bbbb"], ["cccc", "dd"], ["ee", "ffff"], ["ggg", "h"]], [1, 0, 0, 0])
    train = ([["x", "yy"], ["zz", "w"]], [0, 0])
    section = mcq_baselines(mcq_dataset(train, test))
    assert not any(k.startswith(("D_equivalence", "equivalence")) for row in section.rows
                   for k in row.to_json())


def test_longest_choice_counts_the_characters_of_decomposed_text_once():
    """A decomposed (NFD) accent is a second code point: "été" (3 characters, 5 code points)
    was longer than "etes" in NFD text and shorter in NFC, so the same data got two results."""
    import unicodedata

    choices = [["été", "etes"], ["zzzz", "éé"], ["café", "cafés"]] * 4
    labels = [1, 0, 1] * 4  # the longest choice is always right, counted in characters
    for form in ("NFC", "NFD"):
        data = [[unicodedata.normalize(form, c) for c in row] for row in choices]
        rows = by_name(mcq_baselines(mcq_dataset(None, (data, labels)), folds=2))
        assert rows["longest choice"].accuracy == 1.0, form
