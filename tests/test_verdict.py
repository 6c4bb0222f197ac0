"""The calibrated verdict of issue 25 (docs/methods.md §11): each defect the issue lists, reproduced.

Cue-free data → chance (also under a label-share shift); a weak planted cue is a cue finding
even when D stays at chance; ARCT-style items sharing a claim never straddle folds; a templated
train/test scan completes; a probe-sized 10-item test split scans; tied MCQ questions explain
their zero-width interval; exact and streaming statistics give the same verdicts (synthetic
data, and a slice of real SNLI with and without shuffled labels).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from cuelens.audit.fitting import ScoringOptions
from cuelens.audit.folds import GroupedFolds
from cuelens.audit.groups import grouped_folds
from cuelens.audit.leakage import PRIOR, all_models
from cuelens.audit.scan import ScanConfig, binomial_tails, cue_table, run_word_audit
from cuelens.audit.chunk_scan import scan_files
from cuelens.audit.uncertainty import DifferenceMoments, simultaneous_test
from cuelens.data.dataset import Dataset, Split
from scan_helpers import item_correctness, mcq_dataset, nli_dataset

LABELS = ["contradiction", "entailment", "neutral"]
FAST = dict(iterations=1, folds=3)


def random_words(rng, n: int, vocab: int = 300, length: int = 6) -> list[str]:
    return [" ".join(f"w{j}" for j in rng.integers(0, vocab, length)) for _ in range(n)]


def random_labels(rng, n: int, shares=(1 / 3, 1 / 3, 1 / 3)) -> list[str]:
    return [LABELS[i] for i in rng.choice(3, n, p=shares)]


def test_max_t_critical_value_matches_the_known_answers():
    rng = np.random.default_rng(0)
    one = DifferenceMoments(1)
    one.add(rng.standard_normal((4000, 1)))
    # the verdict is one side of a two-sided 95% interval: the 97.5% quantile
    assert simultaneous_test(one).critical == pytest.approx(1.960, abs=0.03)
    # M independent predictors: P(max Z <= c) = Φ(c)^M = 0.975
    independent = DifferenceMoments(10)
    independent.add(rng.standard_normal((20000, 10)))
    assert simultaneous_test(independent).critical == pytest.approx(2.803, abs=0.05)
    # ten copies of one predictor: no multiplicity at all
    copies = DifferenceMoments(10)
    copies.add(np.repeat(rng.standard_normal((4000, 1)), 10, axis=1))
    assert simultaneous_test(copies).critical == pytest.approx(1.960, abs=0.03)


def test_the_equivalence_bound_is_each_models_one_sided_one():
    """Each predictor's own one-sided 95% bound (z = 1.645), with no multiplicity correction
    (intersection-union, docs/methods.md §17), against the two-sided simultaneous interval's
    critical value: 1.960 for one predictor, 2.80 for ten independent ones."""
    rng = np.random.default_rng(0)
    one = DifferenceMoments(1)
    one.add(rng.standard_normal((4000, 1)))
    test = simultaneous_test(one)
    ratio = (test.equivalence_high - test.D) / (test.high - test.D)
    assert ratio[0] == pytest.approx(1.645 / 1.960, abs=0.02)
    independent = DifferenceMoments(10)
    independent.add(rng.standard_normal((20000, 10)))
    test = simultaneous_test(independent)
    ratio = (test.equivalence_high - test.D) / (test.high - test.D)
    assert ratio == pytest.approx(np.full(10, 1.645 / 2.803), abs=0.03)
    zero = DifferenceMoments(2)
    zero.add(np.zeros((50, 2)))
    assert simultaneous_test(zero).equivalence_high.tolist() == [0.0, 0.0]


def test_one_predictor_rejects_where_the_exact_sign_test_does():
    # 100 questions, each ±0.5 (k = 2): 61 right / 39 wrong has exact binomial tail
    # P(X ≥ 61) = 0.018, 60 / 40 has 0.028 (one-sided level 0.025). Corrected score statistic:
    # (Σd − 0.5) / √Σd² = 2.1 and 1.9 against t(99)'s 97.5% quantile 1.984
    for right, rejected in ((61, True), (60, False)):
        moments = DifferenceMoments(1)
        moments.add(np.array([0.5] * right + [-0.5] * (100 - right))[:, None])
        test = simultaneous_test(moments)
        assert test.critical == pytest.approx(stats.t.ppf(0.975, 99), abs=0.03)
        assert test.t[0] == pytest.approx((right - 50 - 0.5) / 5)
        assert (test.low[0] > 0) == rejected and (test.p_value[0] < 0.025) == rejected
        assert (stats.binom.sf(right - 1, 100, 0.5) < 0.025) == rejected
    # all differences 0: a zero-width interval at 0, never significant
    zero = DifferenceMoments(2)
    zero.add(np.zeros((50, 2)))
    test = simultaneous_test(zero)
    assert test.degenerate.all() and test.low.tolist() == [0.0, 0.0] and test.p_value[0] == 1


def test_the_fit_never_depends_on_the_test_labels():
    # flipping every test answer of a two-choice set flips each question's correctness
    # exactly (inner folds dealt jointly over both splits once moved train items with the
    # test's gold positions, so the SGD/LR models changed with the test labels)
    rng = np.random.default_rng(12)

    def mcq(n):
        return ([[f"{a} choice", f"{b} choice"] for a, b in zip(random_words(rng, n),
                                                              random_words(rng, n))],
                [int(x) for x in rng.integers(0, 2, n)])

    train, test = mcq(300), mcq(200)
    runs = []
    for labels in (test[1], [1 - x for x in test[1]]):
        runs.append(item_correctness(mcq_dataset(train, (test[0], labels)), ScoringOptions(), 5,
                                     all_models()))
    for model in all_models():
        assert np.array_equal(runs[0][model] + runs[1][model], np.ones(200)), model


def test_a_rare_word_of_a_rare_label_needs_the_exact_tail():
    # 6 of 6 occurrences with a 30% label: z = 3.74 is above the Bonferroni z of 40 words ×
    # 2 labels (3.23) but the exact tail 0.3⁶ = 7·10⁻⁴ is not below 0.05 / 80 = 6.3·10⁻⁴
    joint = np.zeros((40, 2))
    joint[:, 0], joint[:, 1] = 7, 3  # 39 words at the 70/30 prior
    joint[0] = [0, 6]
    labels = np.array([700.0, 300.0])
    cues, stats_ = cue_table(joint, labels, [f"w{i}" for i in range(40)], ["a", "b"],
                             ScanConfig(min_count=5), "train")
    rare = next(c for c in cues if c.token == "w0" and c.label == "b")
    assert rare.z > stats_.bonferroni_z and not rare.significant
    assert binomial_tails(joint[:1], labels, "empirical")[0, 1] == pytest.approx(0.3 ** 6)
    joint[0] = [0, 7]  # 7 of 7: tail 2.2·10⁻⁴ passes
    cues, _ = cue_table(joint, labels, [f"w{i}" for i in range(40)], ["a", "b"],
                        ScanConfig(min_count=5), "train")
    assert next(c for c in cues if c.token == "w0" and c.label == "b").significant


def test_moments_do_not_depend_on_how_the_items_are_split():
    rng = np.random.default_rng(1)
    differences = rng.integers(-1, 2, (1000, 4)).astype(float)
    whole, pieces = DifferenceMoments(4), DifferenceMoments(4)
    whole.add(differences)
    for start in range(0, 1000, 137):
        pieces.add(differences[start:start + 137])
    assert np.array_equal(whole.total, pieces.total) and np.array_equal(whole.cross,
                                                                         pieces.cross)


@pytest.mark.slow
def test_random_labels_are_chance_and_no_cue_is_significant():
    rng = np.random.default_rng(2)
    train = (random_words(rng, 1500), random_labels(rng, 1500))
    test = (random_words(rng, 1500), random_labels(rng, 1500))
    audit = run_word_audit(nli_dataset(train, test), ScanConfig(**FAST))
    assert audit.leakage.verdict in ("chance", "below chance")
    assert audit.cue_finding.n_significant == 0 and audit.cue_finding.share_items == 0.0


def test_a_label_share_shift_is_not_leakage():
    # the training majority (contradiction) is the rarest test label: a model that predicts a
    # mix beats "always contradiction" by ~8 points, the prior-matched baseline it cannot beat
    rng = np.random.default_rng(3)
    train = (random_words(rng, 1500), random_labels(rng, 1500, (0.45, 0.30, 0.25)))
    test = (random_words(rng, 1500), random_labels(rng, 1500, (0.25, 0.30, 0.45)))
    leakage = run_word_audit(nli_dataset(train, test), ScanConfig(**FAST)).leakage.to_json()
    assert leakage["verdict"] in ("chance", "below chance")
    assert leakage["baseline"]["name"] == PRIOR
    assert leakage["baseline"]["accuracy"] == pytest.approx(np.mean(
        np.array(test[1]) == "neutral"), abs=1e-6)
    # against the training majority the same models look like leakage
    assert max(row["D"] for row in leakage["table"]) > 0.03


def planted(rng, n: int, rate: float) -> tuple[list[str], list[str]]:
    texts, labels = random_words(rng, n), random_labels(rng, n)
    return [f"{t} zorblat" if label == "entailment" and rng.random() < rate else t
            for t, label in zip(texts, labels)], labels


def test_a_weak_planted_cue_is_a_cue_finding_even_when_d_is_at_chance():
    rng = np.random.default_rng(4)
    dataset = nli_dataset(planted(rng, 3000, 0.05), planted(rng, 3000, 0.05))
    audit = run_word_audit(dataset, ScanConfig(**FAST))
    finding = audit.cue_finding
    assert finding.top[0]["token"] == "zorblat" and finding.top[0]["label"] == "entailment"
    assert finding.top[0]["z"] > finding.bonferroni_z
    test_labels = dataset.test.labels
    holders = sum("zorblat" in h for h in dataset.test.hypotheses)
    assert finding.items_covered == holders
    assert finding.share_items == pytest.approx(holders / len(test_labels), abs=1e-6)
    assert audit.leakage.verdict in ("chance", "mild")  # ~1.7 points at most


def arct_like(n_claims: int, per_claim: int, seed: int):
    """Items whose premise is "Reason: … Claim: …"; a claim's items share warrant words."""
    rng = np.random.default_rng(seed)
    choices, labels, premises = [], [], []
    for c in range(n_claims):
        for i in range(per_claim):
            premises.append(f"Reason: reason {c} {i} was given. Claim: claim number {c} holds")
            right, wrong = f"warrant c{c} yes {i}", f"warrant c{c} no {i}"
            label = int(rng.integers(2))
            choices.append([right, wrong] if label == 0 else [wrong, right])
            labels.append(label)
    dataset = mcq_dataset(None, (choices, labels))
    dataset.test.premises[:] = premises
    return dataset


def test_arct_items_sharing_a_claim_never_straddle_folds():
    dataset = arct_like(20, 12, 5)
    grouped = GroupedFolds.of(dataset, 5, 0)
    folds = grouped.outer(np.arange(len(dataset.test)), np.zeros(0), 0)
    claim = np.repeat(np.arange(20), 12)
    for c in range(20):
        assert len(set(folds[claim == c].tolist())) == 1
    assert "claim" in grouped.summary["unit"]


def templated(n_premises: int, n_hypotheses: int, name: str, rng) -> Split:
    split = Split(name=name, path=f"{name}.jsonl", task="nli")
    for p in range(n_premises):
        for h in rng.permutation(n_hypotheses)[:n_hypotheses // 2 + 1]:
            split.append({"id": f"{name}{p}-{h}", "premise": f"the premise number {p} is here",
                          "hypothesis": f"a hypothesis number {h} is there",
                          "label": LABELS[int(h) % 3]}, raw="{}", line=len(split) + 1)
    return split


def test_a_templated_train_test_scan_completes():
    # 30 premises × 40 hypotheses recombined: under the old 5% template cap the file was one
    # group and the scan stopped with "cannot make 5 folds"
    rng = np.random.default_rng(6)
    dataset = Dataset(name="templated", format="jsonl", task="nli",
                      train=templated(30, 40, "train", rng), test=templated(30, 40, "test", rng),
                      label_names=LABELS)
    audit = run_word_audit(dataset, ScanConfig(iterations=1))
    groups = audit.leakage.groups
    assert "warning" in groups and groups["largest"] <= len(dataset.train) // 3
    assert audit.leakage.verdict == "significant"  # the hypothesis id decides the label


def test_a_ten_item_test_split_and_folds_1_scan(tmp_path):
    rng = np.random.default_rng(7)
    train = (random_words(rng, 300), random_labels(rng, 300))
    test = (["same words here"] * 10, random_labels(rng, 10))
    dataset = nli_dataset(train, test)
    dataset.test.premises[:] = ["one premise for all of them"] * 10  # one group
    for folds in (5, 1):
        audit = run_word_audit(dataset, ScanConfig(iterations=2, folds=folds))
        assert audit.easy_hard.easy + audit.easy_hard.hard == 10


def test_tied_mcq_questions_explain_their_zero_width_interval():
    # mirrored questions: each choice once right and once wrong, so every cue score ties
    choices, labels = [], []
    for i in range(60):
        pair = [f"option alpha {i} text", f"option beta {i} text"]
        choices += [pair, pair]
        labels += [0, 1]
    leakage = run_word_audit(mcq_dataset(None, (choices, labels)),
                             ScanConfig(iterations=1)).leakage.to_json()
    assert leakage["best"]["D"] == 0.0 and leakage["best"]["ci_low"] == 0.0
    assert leakage["verdict"] == "chance" and "tie" in leakage["interval_note"]


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


@pytest.mark.slow
@pytest.mark.parametrize("rate", [0.0, 0.6])
def test_exact_and_streaming_statistics_give_the_same_verdict(tmp_path, rate):
    rng = np.random.default_rng(8)
    records = []
    for split, n in (("train", 1200), ("test", 1200)):
        texts, labels = planted(rng, n, rate)
        records.append([{"id": f"{split}{i}", "premise": f"premise {i} of {split}",
                         "hypothesis": t, "label": label}
                        for i, (t, label) in enumerate(zip(texts, labels))])
    train, test = _write(tmp_path / "train.jsonl", records[0]), \
        _write(tmp_path / "test.jsonl", records[1])
    from cuelens.data import load_dataset

    config = ScanConfig(**FAST)
    exact = run_word_audit(load_dataset(train=train, test=test), config)
    streamed = scan_files(train=train, test=test, config=config, work_dir=tmp_path).results
    assert streamed["leakage"]["verdict"] == exact.leakage.verdict
    assert streamed["cue_finding"] == exact.cue_finding.to_json()
    assert streamed["leakage"]["best"]["D"] == pytest.approx(exact.leakage.best["D"],
                                                             abs=0.02)


SNLI = next((p / "shared" / "data" / "snli" for p in Path(__file__).resolve().parents
             if (p / "shared" / "data" / "snli").is_dir()), None)


@pytest.mark.slow
@pytest.mark.skipif(SNLI is None, reason="the shared SNLI data is absent")
@pytest.mark.parametrize("shuffled", [False, True])
def test_exact_and_streaming_scans_of_snli_agree_on_the_verdict(tmp_path, shuffled):
    # real text (the first 1,500 items of SNLI dev → test); shuffled: each split's labels
    # permuted, a cue-free null whose verdict must be chance in both memory modes
    assert SNLI is not None
    rng = np.random.default_rng(11)
    paths = {}
    for split in ("dev", "test"):
        with open(SNLI / f"{split}.jsonl", encoding="utf-8") as handle:
            records = [json.loads(line) for _, line in zip(range(1500), handle)]
        if shuffled:
            for record, label in zip(records, rng.permutation([r["label"] for r in records])):
                record["label"] = label
        paths[split] = _write(tmp_path / f"{split}.jsonl", records)
    from cuelens.data import load_dataset

    config = ScanConfig(**FAST)
    exact = run_word_audit(load_dataset(train=paths["dev"], test=paths["test"]), config)
    streamed = scan_files(train=paths["dev"], test=paths["test"], config=config,
                          work_dir=tmp_path).results
    assert streamed["leakage"]["verdict"] == exact.leakage.verdict
    assert streamed["cue_finding"] == exact.cue_finding.to_json()
    if shuffled:
        assert exact.leakage.verdict in ("chance", "below chance")
        assert exact.cue_finding.n_significant == 0
    else:
        assert exact.leakage.verdict == "significant"
        assert exact.cue_finding.n_significant > 0


def test_cross_validating_with_one_fold_is_one_clear_error():
    rng = np.random.default_rng(9)
    dataset = nli_dataset(None, (random_words(rng, 50), random_labels(rng, 50)))
    from cuelens.errors import UserError

    with pytest.raises(UserError, match=r"folds \(--folds\) of 2 or more"):
        run_word_audit(dataset, ScanConfig(folds=1))
    with pytest.raises(UserError, match=r"lower folds \(--folds\)\)$"):
        grouped_folds(np.zeros(8, int), np.zeros(8, int), 5, 0)


def test_audit_probe_on_a_ten_item_test_split_with_separate_train(tmp_path):
    from typer.testing import CliRunner

    from cuelens.cli import app

    rng = np.random.default_rng(10)
    train = [{"id": f"t{i}", "premise": f"premise {i % 40} here", "hypothesis": h,
              "label": label} for i, (h, label) in enumerate(zip(random_words(rng, 300),
                                                                  random_labels(rng, 300)))]
    test = [{"id": f"s{i}", "premise": "one shared premise for all", "hypothesis": h,
             "label": label} for i, (h, label) in enumerate(zip(random_words(rng, 10),
                                                                 random_labels(rng, 10)))]
    predictions = [{"id": r["id"], "prediction": r["label"]} for r in test]
    paths = {name: _write(tmp_path / f"{name}.jsonl", rows)
             for name, rows in (("train", train), ("test", test), ("preds", predictions))}
    result = CliRunner().invoke(app, ["probe", "--train", paths["train"], "--test",
                                      paths["test"], "--predictions", paths["preds"],
                                      "--out", str(tmp_path / "probe")])
    assert result.exit_code == 0, result.output
    assert "--folds" not in result.output
