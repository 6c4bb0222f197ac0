"""The cap on SGD/LR/BoW training instances (``ScanConfig.max_fit_items``, docs/word-cues.md)."""

from dataclasses import replace

import numpy as np
import pytest

from cuelens.audit.fitting import ModelBank, ScoringOptions
from cuelens.audit.scan import ScanConfig, run_word_audit
from cuelens.audit.passes import count_run, fit_fold, training_sample
from scan_helpers import held, mcq_dataset, nli_dataset, planted_nli


@pytest.fixture(scope="module")
def nli_data():
    dataset = nli_dataset(planted_nli(1000, seed=0), planted_nli(300, seed=1))
    return dataset, held(dataset)


def _counts(data, cap, seed):
    store, folds = data
    return store, folds, count_run(store, folds, 5, seed, seed, False, cap)


def fitting_sample(data, cap, seed):
    """The scan-wide instance rows of the fitting split's training sample."""
    store, folds, counts = _counts(data, cap, seed)
    _, rows = training_sample(counts, folds, None, seed, cap, counts.portion(None)[1])
    k = store.k
    return counts.candidates.item[rows // k] * k + rows % k


def test_subsample_is_seeded_label_stratified_and_in_row_order(nli_data):
    _, data = nli_data
    (train,) = data[0].chunks(fitting=True)
    rows = np.arange(len(train.labels))  # the fitting items come first
    first = fitting_sample(data, 300, seed=4)
    assert np.array_equal(first, fitting_sample(data, 300, seed=4))
    assert not np.array_equal(first, fitting_sample(data, 300, seed=5))
    assert len(first) == 300 and len(np.unique(first)) == 300
    assert np.all(np.diff(first) > 0) and np.isin(first, rows).all()
    full = np.bincount(train.labels, minlength=3) / len(rows)
    sampled = np.bincount(train.labels[first], minlength=3) / len(first)
    assert np.abs(full - sampled).max() < 1 / 300 + 1e-9  # stratified to within one item


def test_no_cap_or_a_cap_above_the_size_keeps_every_row(nli_data):
    _, data = nli_data
    rows = np.arange(data[0].n_fitting)
    for cap in (0, len(rows), len(rows) + 1):
        assert np.array_equal(fitting_sample(data, cap, seed=0), rows)


def test_mcq_subsample_keeps_whole_questions():
    rng = np.random.default_rng(0)
    choices = [[f"c{rng.integers(50)} x", f"c{rng.integers(50)} y", "z"] for _ in range(200)]
    dataset = mcq_dataset((choices, rng.integers(0, 3, 200).tolist()),
                          (choices[:30], [0] * 30))
    sample = fitting_sample(held(dataset), 90, seed=0)
    assert len(sample) == 90
    assert np.array_equal(sample.reshape(-1, 3) % 3, np.tile(np.arange(3), (30, 1)))
    assert len(np.unique(sample // 3)) == 30


def test_capped_fit_trains_on_the_sample_but_scores_cues_on_everything(nli_data):
    _, data = nli_data
    fits = []
    for cap in (0, 250):
        store, folds, counts = _counts(data, cap, 0)
        fits.append(fit_fold(store, counts, folds, None, 0, ScoringOptions(max_fit_items=cap),
                             ModelBank(0), [("cp", "lr")]).fit)
    full, capped = fits
    assert len(full.train_labels) == data[0].n_fitting and len(capped.train_labels) == 250
    assert np.array_equal(full.scores("cp"), capped.scores("cp"))


@pytest.mark.slow
def test_cap_at_or_above_the_dataset_size_gives_the_uncapped_results(nli_data):
    dataset, _ = nli_data
    uncapped = run_word_audit(dataset, ScanConfig(max_fit_items=0))
    for cap in (1300, 10_000):
        capped = run_word_audit(dataset, ScanConfig(max_fit_items=cap))
        assert capped.leakage == uncapped.leakage
        assert capped.easy_hard == uncapped.easy_hard
        assert np.array_equal(capped.item_easy, uncapped.item_easy)


@pytest.mark.slow
def test_a_binding_cap_is_deterministic_and_still_finds_the_planted_cue(nli_data):
    dataset, _ = nli_data
    config = ScanConfig(max_fit_items=400)
    first, second = run_word_audit(dataset, config), run_word_audit(dataset, replace(config))
    assert first.leakage == second.leakage and first.easy_hard == second.easy_hard
    uncapped = run_word_audit(dataset, ScanConfig(max_fit_items=0))
    rows = {(r["metric"], r["aggregator"]): r["accuracy"] for r in uncapped.leakage.table}
    for row in first.leakage.table:
        if row["aggregator"] in ("average", "max"):  # cue scores use every fitting item
            assert row["accuracy"] == rows[(row["metric"], row["aggregator"])]
    assert first.leakage.best["D"] > 0.15


def test_negative_cap_is_a_user_error():
    from cuelens.errors import UserError

    with pytest.raises(UserError, match="max_fit_items"):
        ScanConfig(max_fit_items=-1).validate()


def test_cli_max_fit_items_reaches_the_results_and_rejects_negatives(tmp_path):
    import json

    from typer.testing import CliRunner

    from cuelens.cli import app
    from cuelens.data.synthetic import make_mcq
    from tests.conftest import write_jsonl

    records = make_mcq(300, seed=1, vocab_size=200)
    write_jsonl(tmp_path / "data" / "train.jsonl", records[:250])
    write_jsonl(tmp_path / "data" / "test.jsonl", records[250:])

    def scan(cap, out):
        return CliRunner().invoke(app, ["scan", str(tmp_path / "data"), "--out", str(out),
                                        "--iterations", "1", "--features", "none",
                                        "--max-fit-items", str(cap)])

    capped = scan(120, tmp_path / "capped")
    assert capped.exit_code == 0, capped.output
    results = json.loads((tmp_path / "capped" / "results.json").read_text())
    assert results["config"]["max_fit_items"] == 120
    bad = scan(-1, tmp_path / "bad")
    assert bad.exit_code == 2 and "--max-fit-items" in bad.output
    assert not (tmp_path / "bad").exists()


def test_chunked_prediction_gives_the_same_results(monkeypatch, nli_data):
    # each item's prediction depends on that item alone: scoring the evaluation items in chunks
    # of 7 must reproduce one pass exactly (NLI with a train split, cross-validated MCQ)
    import cuelens.audit.fitting as fitting

    rng = np.random.default_rng(0)
    choices = [[f"w{rng.integers(40)} x{rng.integers(9)} end", f"w{rng.integers(40)} y"]
               for _ in range(200)]
    datasets = [nli_data[0], mcq_dataset(None, (choices, list(rng.integers(0, 2, 200))))]
    config = ScanConfig(iterations=2)
    whole = [run_word_audit(d, config) for d in datasets]
    monkeypatch.setattr(fitting, "PREDICT_CHUNK", 7)
    for dataset, reference in zip(datasets, whole):
        chunked = run_word_audit(dataset, config)
        assert chunked.leakage == reference.leakage
        np.testing.assert_array_equal(chunked.item_easy, reference.item_easy)


@pytest.mark.usefixtures("default_sgd_budget")  # the budget itself
def test_sgd_sees_3e5_samples_below_the_large_size_and_1e5_from_there_on():
    from cuelens.audit.aggregators import SGD_LARGE, sgd_epochs
    from cuelens.audit.config import MAX_FIT_ITEMS

    assert [sgd_epochs(n) for n in (0, 1_000, 9_842, 53_595)] == [300_000, 300, 31, 6]
    assert SGD_LARGE == MAX_FIT_ITEMS > 53_595  # every fidelity dataset keeps its epochs
    assert sgd_epochs(SGD_LARGE - 1) == 6 and sgd_epochs(SGD_LARGE) == 2
    assert sgd_epochs(100_000) == 1 and sgd_epochs(10**7) == 1
