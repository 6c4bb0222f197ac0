"""Per-item bias probabilities come from the leakage pass's own fold fits (no refit): they
equal the held-out decisions of the headline model refitted fold by fold on the same folds."""

from __future__ import annotations

import numpy as np
import pytest

from cuelens.api import load_dataset
from cuelens.audit.config import ScanConfig
from cuelens.audit.fitting import ModelBank, scan_data
from cuelens.audit.in_memory import GroupedFolds, token_store
from cuelens.audit.leakage import all_models
from cuelens.audit.streamed import count_run, held_out_items, keep_model, predict_run
from cuelens.data.synthetic import make_mcq, make_nli


@pytest.mark.parametrize("records", [make_nli(400, seed=2, vocab_size=200),
                                     make_mcq(200, seed=3)])
@pytest.mark.parametrize("model", [("cp", "lr"), ("pmi", "max")])
def test_pass_decisions_equal_a_refit(records, model):
    config = ScanConfig(folds=3)
    data = scan_data(load_dataset(records), 1, False, 3, 0)
    store, folds = token_store(data), GroupedFolds(data, 3)
    counts = count_run(store, folds, 3, 0, 0, True, config.max_fit_items)
    kept, refit = [], []
    predict_run(store, counts, folds, 3, 0, config.scoring, ModelBank(0), all_models(), None,
                kept=kept)
    assert len(kept) == 3
    predict_run(store, counts, folds, 3, 0, config.scoring, ModelBank(0), [model], None,
                kept=refit)
    (chunk,) = store.chunks(fitting=False)
    probs = held_out_items(store, keep_model(kept, model), folds, 0, model, chunk)
    assert np.array_equal(probs, held_out_items(store, refit, folds, 0, model, chunk))
    assert np.allclose(probs.sum(axis=1), 1.0)
