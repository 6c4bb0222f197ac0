"""Per-item bias probabilities come from the leakage pass's own fold fits (no refit): they
equal the held-out decisions of the headline model refitted fold by fold on the same folds."""

from __future__ import annotations

import numpy as np
import pytest

from cuelens.api import load_dataset
from cuelens.audit.bias_items import bias_probabilities, item_probabilities
from cuelens.audit.config import ScanConfig
from cuelens.audit.fitting import Fit, HeldOut, ModelBank, PassFits, over_folds, scan_data, \
    signed_decisions, train_models
from cuelens.audit.leakage import evaluation_folds, leakage_table
from cuelens.data.synthetic import make_mcq, make_nli


def _refit(data, options, model, n_folds):
    """The evaluated items' probabilities of ``model`` refitted over the leakage folds."""
    pool, bank = data.pool, ModelBank(options.seed)

    def fold_fn(fit_rows, eval_rows, inner):
        fit = Fit.of_rows(pool, fit_rows, inner, options)
        trained = train_models(fit, [model], bank, pool.n_labels)
        return {"p": item_probabilities(HeldOut(fit, eval_rows, trained).decisions(pool, model),
                                        pool.task, pool.k, signed_decisions(trained, model))}

    return over_folds(pool, data.eval_items, data.train_items,
                      evaluation_folds(data, n_folds, options.seed), fold_fn)["p"]


@pytest.mark.parametrize("records", [make_nli(400, seed=2, vocab_size=200),
                                     make_mcq(200, seed=3)])
@pytest.mark.parametrize("model", [("cp", "lr"), ("pmi", "max")])
def test_pass_decisions_equal_a_refit(records, model):
    config = ScanConfig(folds=3)
    data = scan_data(load_dataset(records), 1, False, 3, 0)
    fits = PassFits()
    leakage_table(data, config.scoring, "cp", 3, 0.10, fits=fits)
    assert len(fits.folds) == 3
    probs = bias_probabilities(data, config.scoring, model, 3, fits)
    refit = _refit(data, config.scoring, model, 3)
    assert np.array_equal(probs, refit)
    assert np.allclose(probs.sum(axis=1), 1.0)
