"""Large scans' adaptive repetition (docs/methods.md §3 "Large scans", §11 ``fold_seed_D``): a
lower training cap and fewer re-seeded runs once a run evaluates ``LARGE_SCAN_ITEMS`` items."""

from dataclasses import replace

import pytest

import cuelens.audit.config as config_module
import cuelens.audit.scan as scan_module
from cuelens.audit.aggregators import sgd_epochs
from cuelens.audit.config import LARGE_FIT_ITEMS, LARGE_SCAN_ITEMS, MAX_FIT_ITEMS, \
    VERY_LARGE_FIT_ITEMS, VERY_LARGE_SCAN_ITEMS, ScoringOptions, adapted, large_scan
from cuelens.audit.scan import ScanConfig, run_word_audit, settled
from scan_helpers import nli_dataset, planted_nli


def test_only_a_large_runs_cap_is_lowered():
    default = ScoringOptions()
    assert adapted(default, LARGE_SCAN_ITEMS - 1) == default
    assert adapted(default, LARGE_SCAN_ITEMS) == replace(default, max_fit_items=20_000,
                                                         sgd_large=20_000)
    assert LARGE_FIT_ITEMS == 20_000 < MAX_FIT_ITEMS and not large_scan(49_999)
    assert adapted(default, VERY_LARGE_SCAN_ITEMS - 1) == adapted(default, LARGE_SCAN_ITEMS)
    assert adapted(default, VERY_LARGE_SCAN_ITEMS) == adapted(default, 10**6) == replace(
        default, max_fit_items=10_000, sgd_large=10_000)
    assert VERY_LARGE_FIT_ITEMS == 10_000 and VERY_LARGE_SCAN_ITEMS == 100_000
    for cap in (0, 5_000, 10_000):  # no cap, or one already at or below it: kept
        options = ScoringOptions(max_fit_items=cap)
        assert adapted(options, 10**6) == options
    options = ScoringOptions(max_fit_items=20_000)
    assert adapted(options, LARGE_SCAN_ITEMS) == options


@pytest.mark.usefixtures("default_sgd_budget")  # the budget itself
def test_sgd_runs_the_large_budget_from_a_large_scans_cap():
    assert sgd_epochs(20_000) == 15  # 3·10⁵ samples below the default threshold
    assert sgd_epochs(20_000, large=20_000) == 5  # 10⁵ samples on the lowered cap
    assert sgd_epochs(55_000, large=20_000) == sgd_epochs(55_000) == 2
    assert sgd_epochs(10_000, large=10_000) == 10  # 10⁵ samples on the very large cap


def test_reseeding_stops_when_the_spread_is_a_tenth_of_the_half_width():
    # the 100,000-item generated file: D +16.686, +16.661 under the first two fold seeds,
    # simultaneous interval ±0.593 points: a spread of 0.025 < 0.0593
    assert settled([0.16686, 0.16661], 0.005931)
    assert not settled([0.16686, 0.16661], 0.0025)  # 0.025 ≥ a tenth of ±0.25 points
    assert not settled([0.16686], 0.005931)  # one seed: no spread yet


@pytest.fixture
def large(monkeypatch):
    """Thresholds small enough for a 400-item file to be a large scan trained on 200."""
    monkeypatch.setattr(config_module, "LARGE_SCAN_ITEMS", 100)
    monkeypatch.setattr(config_module, "LARGE_FIT_ITEMS", 200)
    return monkeypatch


DATASET = nli_dataset(None, planted_nli(400, seed=3))
CONFIG = ScanConfig(folds=2, iterations=1)


def test_a_large_scan_trains_its_linear_models_on_the_lowered_cap(large):
    audit = run_word_audit(DATASET, CONFIG)
    assert audit.leakage.selection["training_cap"] == 200
    assert audit.leakage.verdict == "significant"  # the planted cues are still found
    # LR, BoW and the untrained aggregators: exactly the fits of an explicit 200 cap (SGD
    # differs only by its epochs: 10⁵ samples on the lowered cap instead of 3·10⁵)
    large.setattr(config_module, "LARGE_SCAN_ITEMS", 10**9)
    capped = run_word_audit(DATASET, replace(CONFIG, max_fit_items=200))
    assert "training_cap" not in capped.leakage.selection
    rows = {(r["metric"], r["aggregator"]): r for r in capped.leakage.table}
    for row in audit.leakage.table:
        if row["aggregator"] != "sgd":
            assert row == rows[row["metric"], row["aggregator"]]
    assert audit.leakage.baselines == capped.leakage.baselines


def test_a_large_scan_stops_reseeding_once_d_is_settled(large):
    large.setattr(scan_module, "NEGLIGIBLE_SPREAD", 0.0)  # never settled: 2 more seeds
    every = run_word_audit(DATASET, CONFIG).leakage.fold_seed_D
    large.setattr(scan_module, "NEGLIGIBLE_SPREAD", 1e9)  # settled after the first
    stopped = run_word_audit(DATASET, CONFIG).leakage.fold_seed_D
    assert every is not None and len(every) == 3 and stopped == every[:2]
