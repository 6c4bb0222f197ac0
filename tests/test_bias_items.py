"""Per-item bias probabilities come from the leakage pass's own fold fits (no refit): they
equal the held-out decisions of the headline model refitted fold by fold on the same folds."""

from __future__ import annotations

import numpy as np
import pytest

from cuelens.audit.results import CueRow
from cuelens.api import load_dataset
from cuelens.audit.config import ScanConfig
from cuelens.audit.fitting import ModelBank
from cuelens.audit.leakage import all_models
from cuelens.audit.passes import count_run, held_out_items, keep_model, predict_run
from cuelens.data.synthetic import make_mcq, make_nli
from scan_helpers import held


@pytest.mark.parametrize("records", [make_nli(400, seed=2, vocab_size=200),
                                     make_mcq(200, seed=3)])
@pytest.mark.parametrize("model", [("cp", "lr"), ("pmi", "max")])
def test_pass_decisions_equal_a_refit(records, model):
    config = ScanConfig(folds=3)
    store, folds = held(load_dataset(records), 3)
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


def test_strongest_cue_is_the_first_word_with_the_largest_z_brute_force():
    """Per item (its ``k`` instances' words in order): the listed cue with the largest z, the
    first such word on ties, none when no word is a listed cue — against a plain loop."""
    from cuelens.audit.bias_items import CueNames, cue_ranks, strongest_cues
    from cuelens.audit.counts import TokenSequences, row_starts

    rng = np.random.default_rng(3)
    for _ in range(300):
        k, n, V = int(rng.integers(1, 4)), int(rng.integers(0, 8)), int(rng.integers(1, 6))
        lengths = rng.integers(0, 4, n * k)
        ids = rng.integers(0, V, int(lengths.sum())).astype(np.int32)
        seqs = TokenSequences(indptr=row_starts(lengths), indices=ids,
                              vocab=[f"w{v}" for v in range(V)])
        cues = [CueRow(token=f"w{int(rng.integers(0, V))}", label=f"l{c}", count=1,
                       label_count=1, metrics={"z": float(rng.choice([1.0, 2.0]))},
                       significant=False) for c in range(3)]
        chosen, zs = strongest_cues(seqs, k, cue_ranks(seqs.vocab, cues))
        token_column, label_column = CueNames.of(cues).columns(chosen)
        tokens = [token_column.values[c] for c in token_column.codes]
        labels = [label_column.values[c] for c in label_column.codes]
        for item in range(n):
            words = ids[seqs.indptr[item * k]:seqs.indptr[(item + 1) * k]]
            best = None  # (z, cue index): the first cue reaching the largest z wins
            for word in words:
                for c, cue in enumerate(cues):
                    z = cue.z
                    if cue.token == f"w{word}" and (best is None or z > best[0]):
                        best = (z, c)
            assert tokens[item] == (None if best is None else cues[best[1]].token)
            assert labels[item] == (None if best is None else cues[best[1]].label)
            assert (np.isnan(zs[item]) if best is None else zs[item] == best[0])
