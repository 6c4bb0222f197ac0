"""Leakage table (docs/methods.md §3): no label leakage, planted cues, MCQ scoring, determinism."""

import numpy as np
import pytest

from cuelens.audit.aggregators import AGGREGATORS
from cuelens.audit.metrics import METRICS
from cuelens.audit.scan import ScanConfig, run_word_audit
from scan_helpers import CONTRA_CUE, CUE_RATE, ENTAIL_CUE, mcq_dataset, nli_dataset, planted_nli


def audit_of(dataset):
    return run_word_audit(dataset, ScanConfig(metric="cp", folds=5, iterations=1))


def table_of(dataset):
    return audit_of(dataset).leakage.to_json()


@pytest.mark.slow
def test_unique_random_words_with_random_labels_leak_nothing_under_cross_validation():
    rng = np.random.default_rng(1)
    n = 1500
    hypotheses = [f"a person is w{i} here" for i in rng.permutation(n)]
    labels = [["contradiction", "entailment", "neutral"][i] for i in rng.integers(0, 3, n)]
    table = table_of(nli_dataset(None, (hypotheses, labels)))
    # scoring each unique word on data that includes its own item would give ~100%
    assert len(table["table"]) == len(METRICS) * len(AGGREGATORS)
    for row in table["table"]:
        assert abs(row["D"]) < 0.05, row
    assert abs(table["baselines"][0]["D"]) < 0.05


def test_planted_cue_ranks_top_and_d_matches_the_design():
    dataset = nli_dataset(planted_nli(2000, seed=0), planted_nli(1200, seed=1))
    audit = audit_of(dataset)
    top = {}
    for cue in audit.cues:
        top.setdefault(cue.label, cue.token)
    assert top["contradiction"] == CONTRA_CUE and top["entailment"] == ENTAIL_CUE
    table = audit.leakage.to_json()
    # Bayes-optimal use of the cues: a cue gives its label away; without one the posterior
    # of neutral is (1/3) / (1/3 + 2/3 * (1 - rate)) > 1/2, so predict neutral.
    expected_accuracy = (1 / 3) * CUE_RATE + (1 / 3) * CUE_RATE + 1 / 3
    assert table["best"]["accuracy"] == pytest.approx(expected_accuracy, abs=0.04)
    assert table["best"]["D"] == pytest.approx(expected_accuracy - table["majority"], abs=0.04)
    assert table["flagged"] is True
    by_name = {b["name"]: b for b in table["baselines"]}
    # the bag of words sees the same cues among 200 noise words (and their bigrams)
    assert expected_accuracy - 0.08 < by_name["hypothesis-only BoW LR"]["accuracy"] \
        <= expected_accuracy + 0.04


def mcq_questions(n: int, seed: int, position_bias: float):
    """Two choices; the right one contains ``good`` (rate 0.5); its position is 0 with
    probability ``position_bias``."""
    rng = np.random.default_rng(seed)
    choices, labels = [], []
    for _ in range(n):
        right = f"x{rng.integers(50)} " + ("good" if rng.random() < 0.5 else f"y{rng.integers(50)}")
        wrong = f"x{rng.integers(50)} y{rng.integers(50)}"
        label = 0 if rng.random() < position_bias else 1
        choices.append([right, wrong] if label == 0 else [wrong, right])
        labels.append(label)
    return choices, labels


def test_mcq_is_scored_per_question_with_majority_one_over_k_and_answer_position():
    train, test = mcq_questions(800, 0, 0.8), mcq_questions(400, 1, 0.3)
    table = table_of(mcq_dataset(train, test))
    assert table["majority"] == 0.5
    by_name = {b["name"]: b for b in table["baselines"]}
    # most frequent training position is 0; test answers sit there 30% of the time
    assert by_name["answer position"]["accuracy"] == pytest.approx(np.mean(np.array(test[1]) == 0))
    # "good" marks the right choice in half the questions; the other half is a coin flip
    # (ties count 1/2), so the cue-based accuracy is 0.5 + 0.5 * 0.5 = 0.75.
    cp_average = next(r for r in table["table"] if r["metric"] == "cp"
                      and r["aggregator"] == "max")
    assert cp_average["accuracy"] == pytest.approx(0.75, abs=0.05)
    assert "choice-only BoW LR" in by_name


@pytest.mark.slow
def test_same_seed_gives_identical_results():
    dataset = nli_dataset(None, planted_nli(240, seed=3))
    config = ScanConfig(seed=7, folds=3, iterations=2)
    first = run_word_audit(dataset, config)
    second = run_word_audit(dataset, config)
    assert first.leakage == second.leakage and first.cues == second.cues
    assert first.easy_hard == second.easy_hard
    np.testing.assert_array_equal(first.item_easy, second.item_easy)
    assert first.cue_stats.fitted_on == "all"
