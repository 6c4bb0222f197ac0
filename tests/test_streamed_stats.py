"""The word-cue passes (cuelens.audit.passes) in both memory modes: over chunks spilled to disk
with the exact scan's grouped folds they reproduce the in-memory exact scan's cues, leakage table,
interval and easy/hard split; those folds built from the chunks (chunked_folds) are the exact
scan's; hashed folds follow the fold key and are balanced."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cuelens.audit.config import ScanConfig
from cuelens.audit.folds import HashedFolds
from cuelens.audit.icq import feature_audit_of_parts, run_feature_audit
from cuelens.audit.folds import GroupedFolds
from cuelens.audit.scan import run_word_audit, word_audit
from cuelens.audit.chunked_data import load_chunked
from cuelens.audit.chunk_scan import chunk_parts, chunked_folds
from cuelens.data.schema import FieldMap
from cuelens.data.synthetic import make_mcq, make_nli
from cuelens.engine.streaming import load_streaming
from cuelens.errors import UserError


def ExactFolds(dataset, config: ScanConfig) -> GroupedFolds:
    """The exact scan's folds (grouped, stratified) and sampling order."""
    return GroupedFolds.of(dataset, config.folds, config.seed)


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def _without_groups(leakage: dict) -> dict:
    return {key: value for key, value in leakage.items() if key != "groups"}


def _compare(dataset, data, config):
    exact = run_word_audit(dataset, config)
    streamed = word_audit(data.store, data.label_names, config, ExactFolds(dataset, config), {})
    assert streamed.cues == exact.cues
    assert streamed.cue_stats == exact.cue_stats
    # every baseline too: the BoW columns follow the sample and the predicted items in scan order
    assert _without_groups(streamed.leakage.to_json()) == _without_groups(exact.leakage.to_json())
    assert streamed.easy_hard == exact.easy_hard
    assert np.array_equal(streamed.item_easy, exact.item_easy)
    return exact, streamed


def test_cross_validated_file_matches_exact_scan(tmp_path):
    source = _write(tmp_path / "nli.jsonl", make_nli(1200, seed=3, vocab_size=300))
    config = ScanConfig(max_fit_items=150, iterations=3, min_count=3)  # candidates fill up
    dataset = load_streaming(source)
    data = load_chunked(source, None, None, FieldMap(), False, config, tmp_path, chunk_items=250)
    assert len(data.store.files) == 5
    exact, _ = _compare(dataset, data, config)
    assert exact.leakage.best["D"] > 0.1  # the planted cues are found


@pytest.mark.parametrize("make, sizes, seeds, cap, chunk_items", [
    (make_nli, (900, 400), (1, 2), 200, 128),
    (make_mcq, (500, 200), (6, 7), 300, 64),
])
def test_train_test_split_matches_exact_scan(tmp_path, make, sizes, seeds, cap, chunk_items):
    train = _write(tmp_path / "train.jsonl", make(sizes[0], seed=seeds[0], vocab_size=300))
    test = _write(tmp_path / "test.jsonl", make(sizes[1], seed=seeds[1], vocab_size=300))
    config = ScanConfig(max_fit_items=cap, iterations=2, min_count=3, ngrams=2)
    dataset = load_streaming(None, train=train, test=test)
    data = load_chunked(None, train, test, FieldMap(), False, config, tmp_path,
                        chunk_items=chunk_items)
    _compare(dataset, data, config)


def test_uncapped_fit_matches_exact_scan(tmp_path):
    """Every item a candidate (cap above the data size): the samples are the whole portions."""
    source = _write(tmp_path / "nli.jsonl", make_nli(500, seed=4, vocab_size=200))
    config = ScanConfig(max_fit_items=5000, iterations=1, min_count=2, in_sample_features=True)
    dataset = load_streaming(source)
    data = load_chunked(source, None, None, FieldMap(), False, config, tmp_path, chunk_items=97)
    _compare(dataset, data, config)


@pytest.mark.parametrize("split, features", [("cross-validated", ["word", "negation"]),
                                             ("train/test", ["word"])])
def test_features_counted_chunk_by_chunk_match_the_exact_features(tmp_path, split, features):
    """ICQ cueness from chunks parsed one at a time, counts summed by (feature, value), equals
    the in-memory computation when the chunks carry the exact scan's folds."""
    config = ScanConfig(iterations=1, min_count=3)
    if split == "cross-validated":
        sources = (_write(tmp_path / "nli.jsonl", make_nli(1500, seed=5, vocab_size=200)),
                   None, None)
        dataset = load_streaming(sources[0])
    else:
        sources = (None, _write(tmp_path / "train.jsonl", make_nli(900, seed=6, vocab_size=200)),
                   _write(tmp_path / "test.jsonl", make_nli(600, seed=7, vocab_size=200)))
        dataset = load_streaming(None, train=sources[1], test=sources[2])
    data = load_chunked(*sources, FieldMap(), False, config, tmp_path, chunk_items=400)
    exact = run_feature_audit(dataset, features, folds=config.folds, seed=config.seed)
    streamed = feature_audit_of_parts(
        chunk_parts(data, ExactFolds(dataset, config), config).all(), task=dataset.task,
        label_names=dataset.label_names, features=features,
        cross_validated=dataset.train is None, folds=config.folds)
    assert streamed == exact
    planted = next(r for r in exact["features"] if (r.feature, r.value) == ("WORD", "nobody"))
    assert max(planted.train_dist, key=planted.train_dist.get) == "contradiction"


def test_hashed_folds_keep_copies_together_and_balance():
    folds = HashedFolds(5, 5, seed=7)
    keys = np.arange(100_000, dtype=np.uint64) * np.uint64(2654435761)
    outer = folds.outer(np.arange(len(keys)), keys, 11)
    assert np.array_equal(outer, folds.outer(np.arange(len(keys)), keys.copy(), 11))
    sizes = np.bincount(outer, minlength=5)
    assert sizes.min() > 19_000 and sizes.max() < 21_000
    inner = folds.inner(np.arange(len(keys)), keys)
    # inner and outer folds are independent hash streams
    joint = np.bincount(outer * 5 + inner, minlength=25)
    assert joint.min() > 3_600 and joint.max() < 4_400
    assert not np.array_equal(outer, folds.outer(np.arange(len(keys)), keys, 12))


def test_hashed_folds_over_the_fitting_split_keep_inner_folds_and_priorities():
    """--folds 1 on train/test: the fitting items' out-of-fold folds are the evaluated items'
    hash over 2 folds; inner folds and sampling priorities are unchanged."""
    folds = HashedFolds(5, 1, seed=7)
    fitting = folds.fitting()
    items, keys = np.arange(1000), np.arange(1000, dtype=np.uint64) * np.uint64(2654435761)
    assert fitting.outer_folds == 2 and folds.outer_folds == 1
    assert np.array_equal(fitting.outer(items, keys, 3), HashedFolds(5, 2, 7).outer(items, keys, 3))
    assert set(fitting.outer(items, keys, 3).tolist()) == {0, 1}
    assert np.array_equal(fitting.inner(items, keys), folds.inner(items, keys))
    assert np.array_equal(fitting.priority(items, 3), folds.priority(items, 3))
    assert HashedFolds(5, 5, 7).fitting() == HashedFolds(5, 5, 7)

def test_unseen_test_label_names_file_and_line(tmp_path):
    train = _write(tmp_path / "train.jsonl", make_nli(50, seed=1))
    rows = make_nli(20, seed=2)
    rows[13]["label"] = "surprise"
    test = _write(tmp_path / "test.jsonl", rows)
    with pytest.raises(UserError, match="surprise") as error:
        load_chunked(None, train, test, FieldMap(), False, ScanConfig(), tmp_path, chunk_items=8)
    assert "test.jsonl" in str(error.value) and "14" in str(error.value)


def test_multiple_choice_cross_validated_matches_exact_scan(tmp_path):
    """MCQ: k instances per item, an item's choices in one fold, 1/k baselines, the
    answer-position baseline, tie-credited easy/hard counters."""
    source = _write(tmp_path / "mcq.jsonl", make_mcq(400, seed=5, n_choices=3, vocab_size=300))
    config = ScanConfig(max_fit_items=240, iterations=2, min_count=3)  # candidates fill up
    dataset = load_streaming(source)
    data = load_chunked(source, None, None, FieldMap(), False, config, tmp_path, chunk_items=70)
    assert data.store.k == 3 and len(data.store.files) == 6
    exact, streamed = _compare(dataset, data, config)
    assert [b["name"] for b in exact.leakage.baselines][1:] == ["answer position"]
    assert exact.leakage.majority == pytest.approx(1 / 3, abs=1e-6)


def test_multiple_choice_hashed_folds_find_the_planted_cue(tmp_path):
    """End to end over the chunks with hashed folds: the planted right-answer cue
    ('definitely') is the top cue and the headline beats chance (1/2) by far."""
    source = _write(tmp_path / "mcq.jsonl", make_mcq(800, seed=8, vocab_size=400))
    config = ScanConfig(max_fit_items=300, iterations=2, min_count=3)
    data = load_chunked(source, None, None, FieldMap(), False, config, tmp_path, chunk_items=150)
    audit = word_audit(data.store, data.label_names, config, HashedFolds(5, 5, config.seed), {})
    assert audit.cue_finding.top[0]["token"] == "definitely"
    assert audit.cue_finding.top[0]["label"] == "right"
    assert audit.leakage.majority == 0.5
    assert audit.leakage.best["ci_low"] > 0.1 and audit.leakage.flagged
    assert audit.leakage.best["accuracy"] > 0.6
    assert audit.easy_hard.easy > 400  # at chance a tie (1/2 twice) is not easy


def test_multiple_choice_with_varying_choices_is_refused(tmp_path):
    rows = make_mcq(30, seed=1)
    rows[17]["choices"] = rows[17]["choices"] + ["a third choice"]
    source = _write(tmp_path / "mcq.jsonl", rows)
    with pytest.raises(UserError, match="same number of choices"):
        load_chunked(source, None, None, FieldMap(), False, ScanConfig(), tmp_path)


def test_fold_keys_follow_the_premise_or_the_group(tmp_path):
    from cuelens.audit.chunked_data import fold_keys
    from cuelens.engine.chunks import read_chunked

    rows = [{"id": str(i), "premise": premise, "hypothesis": f"h {i}", "label": "a",
             "topic": topic} for i, (premise, topic) in
            enumerate([("A dog runs.", "x"), ("a DOG runs", "y"), ("A cat naps.", "x")])]
    source = _write(tmp_path / "g.jsonl", rows)
    (chunk,) = read_chunked(source, "all", FieldMap(), None, False, tmp_path)
    by_premise = fold_keys(chunk.split)
    assert by_premise[0] == by_premise[1] != by_premise[2]  # normalised premises
    (chunk,) = read_chunked(source, "all", FieldMap(group="topic"), None, False, tmp_path)
    by_group = fold_keys(chunk.split)
    assert by_group[0] == by_group[2] != by_group[1]
    questions = [{"id": str(i), "premise": "A dog runs.", "question": question,
                  "choices": ["yes", "no"], "label": 0}
                 for i, question in enumerate(["why?", "Why", "how?"])]
    (chunk,) = read_chunked(_write(tmp_path / "q.jsonl", questions), "all", FieldMap(), None,
                            False, tmp_path)
    by_question = fold_keys(chunk.split)  # MCQ: the premise with its question
    assert by_question[0] == by_question[1] != by_question[2]


def _linked(rows: list[dict]) -> list[dict]:
    """``rows`` with the links of the exact scan's groups that a premise's fingerprint misses:
    a hypothesis (an option) copied under other premises, siblings whose premise is written
    differently (case, punctuation), labelled premise parts ("Reason: … Claim: …") shared by
    several items."""
    rows = [dict(row) for row in rows]
    text = "hypothesis" if "hypothesis" in rows[0] else "choices"
    for i in range(5, len(rows), 40):  # copies under other premises
        rows[i][text] = rows[i - 3][text]
    for i in range(7, len(rows), 50):  # a sibling: the same premise, written differently
        rows[i]["premise"] = rows[i - 1]["premise"].upper().rstrip(".") + " !"
    for i in range(9, len(rows), 30):  # structured premises sharing a claim
        rows[i]["premise"] = f"Reason: {rows[i]['premise']} Claim: the claim number {i % 4} " \
                             "is made here"
    return rows


def _templated(rows: list[dict]) -> list[dict]:
    """Half the items under one fixed premise: a giant group, broken up as templates (the
    grouping's warning)."""
    return [dict(row, premise="one fixed context shared by many items") if i % 2 else row
            for i, row in enumerate(rows)]


@pytest.mark.parametrize("layout, fields", [("nli", {}), ("nli", {"group": "topic"}),
                                            ("mcq train/test", {})])
def test_folds_built_from_the_chunks_are_the_exact_scans(tmp_path, layout, fields):
    """chunked_folds (the grouping read chunk by chunk from the saved text keys, the strata
    from the chunks' labels) gives GroupedFolds.of's groups, summary, inner folds, outer folds
    and priorities of every seed, the fitting split's folds included."""
    config = ScanConfig(folds=3, seed=4)
    if layout == "nli":
        rows = _linked(make_nli(700, seed=2, vocab_size=200))
        for i, row in enumerate(rows):
            row["topic"] = f"topic {i % 60}"
        sources = (_write(tmp_path / "nli.jsonl", rows), None, None)
    else:
        rows = _linked(make_mcq(600, seed=3, n_choices=3, vocab_size=200))
        sources = (None, _write(tmp_path / "train.jsonl", rows[:400]),
                   _write(tmp_path / "test.jsonl", _templated(rows[400:])))
    dataset = load_streaming(*sources[:1], train=sources[1], test=sources[2],
                             fields=FieldMap(**fields))
    data = load_chunked(*sources, FieldMap(**fields), False, config, tmp_path, chunk_items=97)
    exact, streamed = ExactFolds(dataset, config), chunked_folds(data, config)
    assert streamed.summary == exact.summary and exact.summary["grouped_items"] > 0
    if layout != "nli":
        assert "test: shared texts join" in exact.summary["warning"]
    for ours, theirs in zip(streamed.groupings, exact.groupings, strict=True):
        assert np.array_equal(ours.groups, theirs.groups)
        assert (ours.unit, ours.template_limit) == (theirs.unit, theirs.template_limit)
    items = np.arange(data.store.n_items)
    evaluated = items[data.store.n_fitting:]
    assert np.array_equal(streamed.inner(items, None), exact.inner(items, None))
    for seed in (0, 11):
        assert np.array_equal(streamed.outer(evaluated, None, seed),
                              exact.outer(evaluated, None, seed))
        assert np.array_equal(streamed.priority(items, seed), exact.priority(items, seed))
    if data.fitting is not None:
        fitting = items[:data.store.n_fitting]
        assert np.array_equal(streamed.fitting().outer(fitting, None, 5),
                              exact.fitting().outer(fitting, None, 5))
