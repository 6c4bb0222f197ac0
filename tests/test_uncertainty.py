"""Confidence intervals and verdicts (cuelens.audit.uncertainty, cuelens.probes.sanity)."""

from __future__ import annotations

import numpy as np
import pytest

from cuelens.audit.results import CueRow
from cuelens.audit.uncertainty import accuracy_vs_chance, bootstrap_means, leakage_verdict
from cuelens.probes.accuracy import accuracy_test, bootstrap_p
from cuelens.probes.cues import Cue
from cuelens.probes.sanity import chance_level, probe_sanity, probe_verdict, select_word_cues


@pytest.mark.parametrize("low, high, expected", [
    (0.12, 0.2, "significant"), (0.05, 0.15, "mild"), (0.01, 0.05, "mild"),
    (-0.02, 0.3, "chance"), (-0.05, -0.01, "below chance")])
def test_verdict_claims_only_what_the_interval_supports(low, high, expected):
    assert leakage_verdict(low, high, 0.10) == expected


def test_accuracy_vs_chance_and_probe_sanity():
    coin = np.tile([1.0, 0.0], 250)  # 50% on a two-way task
    assert accuracy_vs_chance(coin, 0.5, seed=0)["covers_chance"] is True
    good = np.r_[np.ones(400), np.zeros(100)]
    assert accuracy_vs_chance(good, 0.5, seed=0)["covers_chance"] is False
    sane = probe_sanity(coin, 0.5, epochs=1, has_data_map=True, n_boot=300, seed=0)
    assert sane["interpretable"] is False and len(sane["notes"]) == 2
    assert "not interpretable" in sane["notes"][0] and "single training epoch" in sane["notes"][1]
    assert probe_verdict({"sanity": sane})[0] == "unreliable"
    assert chance_level(np.array([0, 0, 1, 2]), "nli") == 0.5
    assert chance_level(np.array([0, 1]), "mcq", [4, 4]) == 0.25
    assert chance_level(np.array([0, 1]), "mcq", [2, 4]) == 0.375  # mean(1/k_i)


def test_bootstrap_p_and_benjamini_hochberg():
    assert bootstrap_p(np.array([0.1, 0.2, 0.3])) == 2 * 1 / 4  # none ≤ 0: (0 + 1) / (n + 1)
    assert bootstrap_p(np.array([-1.0, 1.0, 2.0, 3.0])) == 2 * 2 / 5
    rng = np.random.default_rng(0)
    correct = (rng.random(600) < 0.5).astype(float)
    strong = np.zeros(600, dtype=bool)
    strong[:200] = True
    correct[:200] = 1.0  # the model is always right with the cue
    noise = [Cue(f"noise{j}", "word", rng.random(600) < 0.3) for j in range(4)]
    section = accuracy_test(correct, [Cue("strong", "word", strong)] + noise, n_boot=400)
    rows = {c["cue"]: c for c in section["cues"]}
    ps = np.array([rows[c]["p_value"] for c in ["strong"] + [f"noise{j}" for j in range(4)]])
    order = np.argsort(ps)
    bh = np.minimum.accumulate((ps[order] * 5 / np.arange(1, 6))[::-1])[::-1]
    expected = np.empty(5)
    expected[order] = np.minimum(bh, 1)
    got = [rows[c]["q_value"] for c in ["strong"] + [f"noise{j}" for j in range(4)]]
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert rows["strong"]["significant"] and section["correction"].startswith("Benjamini")
    level, sentence = probe_verdict({"accuracy_test": section})
    assert level == "relies" and "“strong”: +" in sentence and "Benjamini" in sentence


def test_default_cue_selection_skips_stopwords_and_weak_cues():
    def cue(token, label, count, z, lmi, significant):
        return CueRow(token=token, label=label, count=count, label_count=count,
                      metrics={"z": z, "lmi": lmi}, significant=significant)

    cues = [cue("the", "a", 5000, 1.0, 0.09, False), cue("his", "b", 900, 2.0, 0.05, False),
            cue("nobody", "a", 60, 9.0, 0.01, True), cue("tall", "b", 40, 6.0, 0.004, True),
            cue("rare", "b", 8, 12.0, 0.001, True)]
    tokens, selection = select_word_cues(cues)
    assert tokens == ["nobody", "tall"]  # significant, support ≥ 20, by z
    assert selection["significant_only"] and "by z" in selection["rule"]
    by_lmi, _ = select_word_cues(cues, rank_by="lmi", top=1)
    assert by_lmi == ["the", "his"]  # what the old default tested


def test_bootstrap_of_few_valued_scores_is_the_item_resampling_distribution():
    # 0/1 scores: a resample's mean is Binomial(n, p) / n, whatever way it is drawn
    values = np.repeat([0.0, 1.0], [280, 120])
    replicates = bootstrap_means(values, 20_000, np.random.default_rng(0))
    assert abs(replicates.mean() - 0.3) < 0.001
    assert abs(replicates.std() - np.sqrt(0.3 * 0.7 / 400)) < 0.001
    assert set(np.round(replicates * 400, 6)) <= set(range(401))  # whole items drawn
    # many distinct values: item indices are resampled (mean and spread of the mean)
    spread = np.random.default_rng(1).normal(size=500)
    replicates = bootstrap_means(spread, 5_000, np.random.default_rng(2))
    assert abs(replicates.std() - spread.std() / np.sqrt(500)) < 0.005
