"""Grouped folds (cuelens.audit.groups): items sharing a premise or text never straddle folds."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import numpy as np
import pytest

from cuelens.audit.folds import GroupedFolds
from cuelens.audit.groups import Grouping, break_giant, connected_groups, grouped_folds, \
    grouping, n_groups, premise_parts, split_grouping, split_links
import cuelens.audit.groups as groups_module
from cuelens.audit.text_keys import as_keys, normal_form, text_key
from cuelens.audit.scan import ScanConfig, run_word_audit
from cuelens.data import load_dataset
from cuelens.data.dataset import Split
from cuelens.data.schema import FieldMap
from cuelens.errors import UserError
from scan_helpers import mcq_dataset

DATA = next((p / "shared" / "data" for p in Path(__file__).resolve().parents
             if (p / "shared" / "data").is_dir()), Path("shared") / "data")


def test_normal_form_ignores_case_punctuation_and_spacing():
    assert normal_form("The  Sun, was RISING!") == normal_form("the sun was rising") == \
        "the sun was rising"


def links(keys: list[list[str]], kind: str = "t") -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each item's keys (strings) as one kind of :func:`connected_groups` links."""
    items = np.repeat(np.arange(len(keys)), [len(k) for k in keys])
    return {kind: (items, as_keys(b"".join(text_key(key) for item in keys for key in item)))}


def test_union_find_is_transitive_and_numbered_by_first_item():
    keys = [["a"], ["b"], ["a", "c"], ["d"], ["c"], ["b"]]
    # 0–2 share a, 2–4 share c; 1–5 share b; 3 alone
    np.testing.assert_array_equal(connected_groups(6, links(keys)), [0, 1, 0, 2, 0, 1])


def test_keys_of_different_kinds_never_link():
    premises, texts = links([["x"], ["y"]], "p"), links([["y"], ["x"]], "t")
    np.testing.assert_array_equal(connected_groups(2, premises | texts), [0, 1])
    np.testing.assert_array_equal(connected_groups(2, links([["x"], ["x"]], "t")), [0, 0])


def mirrored(n_pairs: int, seed: int = 0):
    """Balanced-COPA-like: each pair of questions has the same two choices, right in turn."""
    rng = np.random.default_rng(seed)
    choices, labels = [], []
    for j in range(n_pairs):
        a = f"alpha{j} word{rng.integers(50)} thing{rng.integers(50)}"
        b = f"beta{j} word{rng.integers(50)} thing{rng.integers(50)}"
        choices += [[a, b], [a, b] if rng.random() < 0.5 else [b, a]]
        labels += [0, 1 if choices[-1][0] == a else 0]
    return choices, labels


def test_mirrored_items_are_detected_as_pairs_and_kept_in_one_fold():
    choices, labels = mirrored(60)
    dataset = mcq_dataset(None, (choices, labels))
    groups = grouping([dataset.test]).groups
    np.testing.assert_array_equal(groups, np.arange(120) // 2)  # exactly the planted pairs
    folds = grouped_folds(groups, np.asarray(labels), 5, seed=3)
    assert (folds[0::2] == folds[1::2]).all()
    assert sorted(np.bincount(folds)) == [24] * 5
    np.testing.assert_array_equal(folds, grouped_folds(groups, np.asarray(labels), 5, seed=3))


def test_mirrored_dataset_has_no_leakage_when_cross_validated():
    # with plain k-fold the mirror in the fitting folds makes every held-out choice look wrong
    # (anti-predictive cues learnt back by LR/SGD); grouped folds give D ≈ 0
    choices, labels = mirrored(150, seed=1)
    audit = run_word_audit(mcq_dataset(None, (choices, labels)), ScanConfig(iterations=2))
    assert abs(audit.leakage.best["D"]) <= 0.05
    assert all(abs(row["D"]) <= 0.1 for row in audit.leakage.table)


def test_shared_premise_and_user_group_field(tmp_path):
    rows = [{"id": str(i), "premise": f"Premise number {i // 3} here.", "hypothesis": f"h {i}",
             "label": "a" if i % 2 else "b", "topic": f"t{i // 6}"} for i in range(120)]
    path = tmp_path / "all.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    plain = load_dataset(str(path))
    np.testing.assert_array_equal(grouping([plain.test]).groups, np.arange(120) // 3)
    grouped = load_dataset(str(path), fields=FieldMap(group="topic"))
    np.testing.assert_array_equal(grouping([grouped.test]).groups, np.arange(120) // 6)
    items, keys = split_links(grouped.test)["g"]
    assert items[0] == 0 and keys[0] == as_keys(text_key("t0"))[0]


def test_missing_group_field_names_file_and_line(tmp_path):
    path = tmp_path / "all.jsonl"
    path.write_text(json.dumps({"premise": "p", "hypothesis": "h", "label": "a"}) + "\n")
    with pytest.raises(UserError, match="line 1: no group id in field 'topic'"):
        load_dataset(str(path), fields=FieldMap(group="topic"))


def test_a_text_shared_by_many_items_is_a_template_and_links_nothing():
    texts = [[f"item {i} text"] for i in range(100)]
    texts[7].append("item 8 text")  # one real link
    fixed = links([["fixed instruction for all"]] * 100, "p")
    assert len(np.unique(connected_groups(100, fixed | links(texts)))) == 1  # one giant group
    found = break_giant(100, fixed | links(texts), "premise")
    assert len(np.unique(found.groups)) == 99 and found.groups[7] == found.groups[8]
    assert found.template_limit == 2 and "100 of the 100 items" in found.warning


def test_a_giant_group_falls_back_to_the_largest_template_limit_that_breaks_it():
    # templated NLI: 10 premises × 6 hypotheses, every combination once: premises (6 items
    # each) and hypotheses (10 each) link everything; dropping the hypotheses (shared by more
    # than 6) leaves the premise groups
    premises = [[f"premise number {i // 6}"] for i in range(60)]
    hypotheses = [[f"hypothesis number {i % 6}"] for i in range(60)]
    found = break_giant(60, links(premises, "p") | links(hypotheses), "premise")
    assert found.template_limit == 6
    assert np.array_equal(found.groups, np.arange(60) // 6)


def test_arct_items_sharing_a_claim_share_a_group():
    premises = ["Reason: the sky is blue today. Claim: we need more libraries now",
                "Reason: books are cheap enough. Claim: We need more libraries now!",
                "Reason: the sky is blue today. Claim: cats should stay indoors always",
                "A premise without any labelled parts at all: none"]
    items, keys = premise_parts(premises)
    assert items.tolist() == [0, 0, 1, 1, 2, 2]
    assert keys[1] == keys[3] and keys[0] == keys[4]  # the claim, then the reason
    groups = connected_groups(4, {"s": (items, keys)})
    assert groups[0] == groups[1] == groups[2] != groups[3]


def test_too_few_groups_is_one_clear_error():
    with pytest.raises(UserError, match="cannot make 5 folds: the 8 items form only 2 group"):
        grouped_folds(np.array([0, 0, 0, 0, 1, 1, 1, 1]), np.zeros(8, int), 5, 0)


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "balanced_copa").is_dir(), reason="shared data not available")
def test_balanced_copa_one_file_has_no_leakage():
    audit = run_word_audit(load_dataset(str(DATA / "balanced_copa")), ScanConfig(iterations=2))
    assert abs(audit.leakage.best["D"]) <= 0.05


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_grouped_folds_keep_groups_whole_and_balance_every_stratum(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    groups = rng.integers(0, 1800, n)  # singletons, pairs, triples ... (Poisson sizes)
    strata = rng.integers(0, 3, n)
    folds = grouped_folds(groups, strata, 5, seed)
    for g in np.unique(groups):  # brute force: one fold per group
        assert len(set(folds[groups == g])) == 1
    largest = np.bincount(groups).max()
    for s in range(3):  # each stratum spread evenly, up to about one large group
        per_fold = np.bincount(folds[strata == s], minlength=5)
        assert per_fold.max() - per_fold.min() <= largest
    assert np.bincount(folds, minlength=5).min() > 0
    np.testing.assert_array_equal(folds, grouped_folds(groups, strata, 5, seed))
    assert (folds != grouped_folds(groups, strata, 5, seed + 10)).any()


def test_singletons_are_dealt_like_stratified_k_fold():
    strata = np.repeat([0, 1, 2], [50, 37, 13])
    folds = grouped_folds(np.arange(100), strata, 5, 4)
    for s, size in enumerate([50, 37, 13]):
        per_fold = np.bincount(folds[strata == s], minlength=5)
        assert per_fold.max() - per_fold.min() <= 1 and per_fold.sum() == size
    assert sorted(np.bincount(folds)) == [20] * 5


def test_fast_ranks_and_row_types_equal_numpy_unique():
    """The O(n) relabelling and the 1-D row sort give exactly ``np.unique``'s results."""
    from cuelens.audit.groups import _ranks, _unique_rows

    rng = np.random.default_rng(3)
    for trial in range(300):
        n = int(rng.integers(1, 200))
        values = rng.integers(0, max(1, n // int(rng.integers(1, 4))), n)
        if trial % 3 == 0:  # sparse ids: the sorting path
            values = values * 1000 + 7
        ranks = _ranks(values)
        assert (ranks == np.unique(values, return_inverse=True)[1].ravel()).all()
        counts = np.bincount(ranks * 4 + rng.integers(0, 4, n),
                             minlength=(ranks.max() + 1) * 4).reshape(-1, 4)
        types, inverse = _unique_rows(counts)
        expected_types, expected_inverse = np.unique(counts, axis=0, return_inverse=True)
        assert (types == expected_types).all()
        assert (inverse == expected_inverse.ravel()).all()


def test_a_split_is_grouped_once_and_its_grouping_forgotten_with_it():
    split = Split("toy", "toy.jsonl", "nli", ids=["a", "b", "c"],
                  premises=["a man sleeps here", "a man sleeps here",
                                                       "two dogs run fast"],
                  hypotheses=["he is awake", "he rests", "dogs move"],
                  labels=["contradiction", "entailment", "entailment"])
    cached = split_grouping(split)
    assert split_grouping(split) is cached
    np.testing.assert_array_equal(cached.groups, [0, 0, 1])
    key = id(split)
    del split
    gc.collect()
    assert key not in groups_module._GROUPINGS._values


@pytest.mark.parametrize("ids", [[], [7], [3, 3, 3], [0, 5, 5, 2], [-4, 9, -4], [2**40, 1]])
def test_n_groups_counts_distinct_ids(ids):
    assert n_groups(np.asarray(ids, dtype=np.int64)) == len(set(ids))


def test_grouped_folds_found_once_per_split_deal_each_seed_as_a_fresh_call():
    """GroupedFolds finds a split's group types once (the seed-free part) and deals every seed
    from them: each seed's outer folds, in any order of calls, are grouped_folds' own, and the
    fitting split's folds (over_fitting) use types of their own split."""
    rng = np.random.default_rng(11)
    train_groups, test_groups = rng.integers(0, 90, 400), rng.integers(0, 120, 500)
    train_strata, test_strata = rng.integers(0, 3, 400), rng.integers(0, 3, 500)
    folds = GroupedFolds([Grouping(train_groups, "premise"), Grouping(test_groups, "premise")],
                         [train_strata, test_strata], np.zeros(900, np.int64), 5, {})
    items = np.arange(400, 900)
    for seed in (3, 7, 3, 2**40 + 1):
        np.testing.assert_array_equal(folds.outer(items, items, seed),
                                      grouped_folds(test_groups, test_strata, 5, seed))
    fitting = folds.fitting()
    np.testing.assert_array_equal(fitting.outer(np.arange(400), np.arange(400), 7),
                                  grouped_folds(train_groups, train_strata, 5, 7))
    assert (folds.outer(items, items, 3) != folds.outer(items, items, 7)).any()
