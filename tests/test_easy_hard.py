"""Easy/hard split (docs/methods.md §4): cue-bearing items are easy, MCQ at question level, seeded."""

from types import SimpleNamespace

import numpy as np
import pytest

from cuelens.audit.scan import ScanConfig, easy_counters, easy_masks, run_word_audit
from cuelens.audit.passes import EasyCounters, TokenStore
from cuelens.data.dataset import Task
from scan_helpers import CONTRA_CUE, ENTAIL_CUE, held, mcq_dataset, nli_dataset, planted_nli


def split_of(dataset, metric="cp", aggregator="max", seed=0, iterations=3):
    """The easy mask and ``C[q]/k`` of the evaluated items (the counters of easy_masks)."""
    config = ScanConfig(seed=seed, iterations=iterations)
    store, folds = held(dataset, 5, seed)
    found = easy_counters(store, folds, config, (metric, aggregator))
    counters = np.concatenate([found.counter(first) for fitting, first, _ in store.sizes()
                               if not fitting])
    return SimpleNamespace(easy=counters > iterations / 2, score=counters / iterations)


def test_items_with_a_planted_cue_are_easy():
    hypotheses, labels = planted_nli(600, seed=4)
    split = split_of(nli_dataset(None, (hypotheses, labels)))
    has_cue = np.array([h.split()[0] in (CONTRA_CUE, ENTAIL_CUE) for h in hypotheses])
    assert split.easy[has_cue].mean() > 0.95
    # easy means correct in more than half of the iterations
    np.testing.assert_array_equal(split.easy, split.score > 0.5)
    assert set(np.unique(split.score * 3).round(6)) <= {0.0, 1.0, 2.0, 3.0}


def test_train_split_joins_every_fitting_portion():
    # the test split alone has too few cue examples to learn from; the train split supplies them
    train = planted_nli(900, seed=5)
    test_h = [f"{CONTRA_CUE} w{i}" for i in range(10)] + [f"{ENTAIL_CUE} w{i}" for i in range(10)]
    test_l = ["contradiction"] * 10 + ["entailment"] * 10
    split = split_of(nli_dataset(train, (test_h, test_l)))
    assert split.easy.all()


def test_mcq_is_split_per_question_and_ties_count_fractionally():
    # every question is a two-way tie (distinct questions, so that they can be cross-validated)
    choices = [[f"same words {i}", f"same words {i}"] for i in range(40)]
    labels = [0, 1] * 20
    split = split_of(mcq_dataset(None, (choices, labels)), iterations=2)
    assert len(split.easy) == 40  # questions, not choices
    np.testing.assert_allclose(split.score, 0.5)  # 1/2 correct in each iteration
    assert not split.easy.any()


def test_run_word_audit_reports_the_split_of_the_headline_model():
    dataset = nli_dataset(planted_nli(500, seed=6), planted_nli(150, seed=7))
    audit = run_word_audit(dataset, ScanConfig(folds=3, iterations=3))
    section = audit.easy_hard
    assert (section.metric, section.aggregator) == \
        (audit.leakage.best["metric"], audit.leakage.best["aggregator"])
    assert section.easy + section.hard == 150 == len(audit.item_easy)
    assert section.hard_fraction == round(1 - audit.item_easy.mean(), 6)
    assert section.split == "test" and audit.cue_stats.fitted_on == "train"


def test_easy_counters_and_mask_of_a_spilled_store_are_files(tmp_path):
    """An item is easy when its counter exceeds half the iterations; a spilled store's counters
    (one file per evaluated chunk, added to where the chunk is predicted) and mask are files of
    its work directory, read per chunk: flat driver memory at any item count."""
    model = ("cp", "max")
    expected = [False, True, False, True, False]
    for directory in (None, tmp_path):
        store = TokenStore(directory, Task.NLI, 1, 2)
        for fitting, items in ((True, 4), (False, 3), (False, 2)):
            store.add_file(fitting, items, 1, {})
        counters = EasyCounters.zeros(store, np.uint8, model)
        for first, positions, values in ((4, [1, 2], [3, 2]), (7, [0, 1], [5, 1])):
            counters.add(first, "call", np.asarray(positions),
                         {model: np.asarray(values, np.uint8)})
        mask, n_easy = easy_masks(store, counters, 2.0)
        assert mask.whole().tolist() == expected and n_easy == 2
        assert mask.of(3, 2).tolist() == expected[3:]
        assert isinstance(mask.whole(), np.memmap) == (directory is not None)
    (easy,) = tmp_path.iterdir()
    assert sorted(path.name for path in easy.iterdir()) == ["4.1.call.bin", "7.1.call.bin",
                                                            "mask.bin"]


@pytest.mark.parametrize("spilled", [False, True])
def test_easy_counters_add_once_per_call_however_often_a_task_reruns(tmp_path, spilled):
    """A Ray task rerun after its worker died repeats its adds: a spilled store's counters take
    each call's add once (the newest file names its call), the next call's add counts again, and
    a file left by a worker that died between writing the sum and removing the old file is
    ignored."""
    model = ("cp", "max")
    store = TokenStore(tmp_path if spilled else None, Task.NLI, 1, 2)
    store.add_file(False, 4, 1, {})
    counters = EasyCounters.zeros(store, np.uint8, model)

    def add(call, positions, values):
        counters.add(0, call, np.asarray(positions), {model: np.asarray(values, np.uint8)})

    add("0-0-1", [0, 2], [1, 1])
    add("0-0-1", [0, 2], [1, 1])  # the same call's task, rerun
    add("0-2", [], [])  # a call predicting none of the chunk's items
    add("7-0-1", [0, 1, 3], [1, 1, 1])
    expected = [3, 1, 2, 1] if not spilled else [2, 1, 1, 1]  # in memory: nothing is rerun
    assert counters.counter(0).tolist() == expected
    if spilled:
        (directory,) = [path for path in tmp_path.iterdir() if path.name.startswith("easy-")]
        (newest,) = directory.iterdir()
        assert newest.name == "0.3.7-0-1.bin"
        stale = directory / "0.2.0-2.bin"  # the worker died before removing its input
        stale.write_bytes(bytes([9, 9, 9, 9]))
        add("7-0-1", [1], [1])
        assert counters.counter(0).tolist() == [2, 1, 1, 1]
        add("9-0", [1], [1])
        assert counters.counter(0).tolist() == [2, 2, 1, 1]
        assert [path.name for path in directory.iterdir()] == ["0.4.9-0.bin"]
