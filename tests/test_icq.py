"""ICQ cueness (docs/methods.md §5): planted features with hand-computed cueness, MCQ rule, CV, cache."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from cuelens.audit.groups import grouped_folds
from cuelens.audit.icq import cueness, feature_masks, run_feature_audit
from cuelens.audit.parse_cache import ParseCache
from cuelens.data import load_dataset
from cuelens.errors import UserError

PREMISE = "The man is in the kitchen."
PLAIN, NOT, NEVER = "The man is in the kitchen.", "The man is not in the kitchen.", \
    "The man is never in the kitchen."


def write(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def nli_rows(plan: dict[str, list[str]]) -> list[dict]:
    return [{"id": f"{label}{i}", "premise": PREMISE, "hypothesis": h, "label": label}
            for label, hyps in plan.items() for i, h in enumerate(hyps)]


@pytest.fixture(autouse=True)
def fresh_memory():
    ParseCache.clear_memory()
    yield
    ParseCache.clear_memory()


@pytest.fixture
def planted(tmp_path):
    """Negation in 80% of contradiction hypotheses and 10% of the others, in train and test.

    Train mixes "not"/"never" evenly in every label; test uses "not" only in contradictions and
    "never" only elsewhere, so the single words carry over worse than the NEGATION feature.
    """
    train = nli_rows({"contradiction": [NOT, NEVER] * 40 + [PLAIN] * 20,
                      "entailment": [NOT, NEVER] * 5 + [PLAIN] * 90,
                      "neutral": [NOT, NEVER] * 5 + [PLAIN] * 90})
    test = nli_rows({"contradiction": [NOT] * 40 + [PLAIN] * 10,
                     "entailment": [NEVER] * 5 + [PLAIN] * 45,
                     "neutral": [NEVER] * 5 + [PLAIN] * 45})
    return load_dataset(train=write(tmp_path / "train.jsonl", train),
                        test=write(tmp_path / "test.jsonl", test))


def test_cueness_formula_by_hand():
    # R = (0.8, 0.2), S = (0.5, 0.5): MSE = (0.3² + 0.3²)/2 = 0.09; M = (0.65, 0.35)
    jsd = 0.5 * (0.8 * math.log2(0.8 / 0.65) + 0.2 * math.log2(0.2 / 0.35)) + \
        0.5 * (0.5 * math.log2(0.5 / 0.65) + 0.5 * math.log2(0.5 / 0.35))
    got = cueness(np.array([[8.0, 2.0], [5.0, 5.0]]), np.array([[5.0, 5.0], [1.0, 1.0]]))
    assert got == pytest.approx([0.09 / math.exp(jsd), 0.0], abs=1e-12)


def test_planted_negation_tops_the_ranking_with_hand_computed_cueness(planted):
    result = run_feature_audit(planted)
    top = result["features"][0].to_json()
    # Q(R) = Q(S) = (0.8, 0.1, 0.1) → JSD 0; MSE = ((7/15)² + 2 (7/30)²)/3 = 98/900
    assert top == {"feature": "NEGATION", "value": "present", "cueness": round(98 / 900, 6),
                   "train_support": 100, "test_support": 50,
                   "train_dist": {"contradiction": 0.8, "entailment": 0.1, "neutral": 0.1},
                   "test_dist": {"contradiction": 0.8, "entailment": 0.1, "neutral": 0.1}}
    scores = [row.cueness for row in result["features"]]
    assert scores == sorted(scores, reverse=True) and scores[1] < scores[0]
    words = {row.value: row for row in result["features"] if row.feature == "WORD"}
    assert words["the"].cueness == 0.0 and words["the"].train_support == 300
    assert result["features_config"].to_json() == {
        "features": ["word", "negation", "tense", "sentiment", "overlap", "ner", "typo"],
        "min_support": 10, "cv_folds_used": False}


def test_min_support_filters_both_splits(planted):
    rows = run_feature_audit(planted, ["negation", "word"], min_support=11)["features"]
    # "never" has 10 test instances → dropped; "not" has 40 → kept
    assert {r.value for r in rows if r.feature == "WORD"} >= {"not"}
    assert "never" not in {r.value for r in rows}


def test_result_is_deterministic_and_json_ready(planted):
    def as_json(result: dict) -> str:
        return json.dumps({"features": [row.to_json() for row in result["features"]],
                           "features_config": result["features_config"].to_json()})

    a = as_json(run_feature_audit(planted))
    ParseCache.clear_memory()
    assert as_json(run_feature_audit(planted)) == a


def mcq_rows(n_right: int, n_wrong: int, n_both: int, n_none: int) -> list[dict]:
    """Two-choice questions: negation in the right choice only, the wrong only, both, neither."""
    rows, plain, negated = [], "He went home.", "He did not go home."
    kinds = [(negated, plain, 0)] * n_right + [(plain, negated, 0)] * n_wrong + \
        [(negated, negated, 1)] * n_both + [(plain, plain, 1)] * n_none
    for i, (a, b, label) in enumerate(kinds):
        rows.append({"id": str(i), "premise": "It rained.", "choices": [a, b], "label": label})
    return rows


def test_mcq_some_but_not_all_choices(tmp_path):
    ds = load_dataset(train=write(tmp_path / "train.jsonl", mcq_rows(80, 20, 10, 10)),
                      test=write(tmp_path / "test.jsonl", mcq_rows(40, 10, 30, 5)))
    row = run_feature_audit(ds, ["negation"])["features"][0]
    # questions with negation in both choices are ignored: R = (80 right, 20 wrong) → MSE 0.09
    assert row.cueness == 0.09 and row.train_support == 100 and row.test_support == 50
    assert row.train_dist == {"right": 0.8, "wrong": 0.2}
    masks = feature_masks(ds, "test", ["negation", "WORD=did", "WORD=zebra"])
    expected = [True] * 50 + [False] * 35
    assert masks["NEGATION=present"].tolist() == expected
    assert masks["WORD=did"].tolist() == expected
    assert masks["WORD=zebra"].tolist() == [False] * 85
    with pytest.raises(UserError, match="no split 'dev'"):
        feature_masks(ds, "dev", ["negation"])


def test_nli_feature_masks_per_instance(planted):
    masks = feature_masks(planted, "train", ["negation"])
    assert list(masks) == ["NEGATION=present"]
    assert int(masks["NEGATION=present"].sum()) == 100 and len(masks["NEGATION=present"]) == 300


def test_cross_validation_matches_brute_force(tmp_path):
    rng = np.random.default_rng(3)
    labels = np.array(["contradiction", "entailment", "neutral"])[rng.integers(0, 3, 400)]
    negated = rng.random(400) < np.where(labels == "contradiction", 0.7, 0.15)
    # items 2j and 2j+1 share a premise (one group); hypotheses are distinct
    rows = [{"id": str(i), "premise": f"Scene number {i // 2} is here.",
             "hypothesis": (NOT if n else PLAIN)[:-1] + f" {i}.", "label": lab}
            for i, (lab, n) in enumerate(zip(labels, negated))]
    ds = load_dataset(write(tmp_path / "all.jsonl", rows))
    result = run_feature_audit(ds, ["negation"], folds=4, seed=7)
    assert result["features_config"].cv_folds_used is True
    # brute force: the same grouped fold assignment, counts by plain loops, docs/methods.md §5 by hand
    names = ["contradiction", "entailment", "neutral"]
    strata = np.array([names.index(x) for x in labels])
    fold = grouped_folds(np.arange(400) // 2, strata, 4, 7)
    assert (fold[0::2] == fold[1::2]).all()

    def props(select):
        counts = [sum(1 for i in range(400) if select(i) and negated[i] and labels[i] == name)
                  for name in names]
        return [c / sum(counts) for c in counts]

    scores = []
    for j in range(4):
        r, s = props(lambda i: fold[i] != j), props(lambda i: fold[i] == j)
        mse = sum((x - 1 / 3) ** 2 for x in r) / 3
        m = [(a + b) / 2 for a, b in zip(r, s)]
        kl = lambda p: sum(a * math.log2(a / b) for a, b in zip(p, m) if a > 0)  # noqa: E731
        scores.append(mse / math.exp(0.5 * kl(r) + 0.5 * kl(s)))
    row = result["features"][0]
    assert row.cueness == pytest.approx(sum(scores) / 4, abs=1e-6)
    assert row.train_support == row.test_support == int(negated.sum())


def test_word_negation_sentiment_never_load_spacy(planted, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("spaCy loaded for a word-only audit")

    monkeypatch.setattr("cuelens.models.spacy_pipeline.load_spacy", refuse)
    rows = run_feature_audit(planted, ["word", "sentiment", "negation"])["features"]
    assert {r.feature for r in rows} == {"WORD", "NEGATION"}


def test_disk_cache_serves_a_warm_run_and_is_safe_to_delete(planted, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cold = run_feature_audit(planted, cache_dir=cache)
    shards = list(cache.rglob("*.npz"))
    assert shards and {p.parent.name.split("-v")[0] for p in shards} == \
        {"tense", "overlap", "ner", "typo"}  # the parsed ones (NEGATION reads the words)
    for shard in shards:  # plain arrays, no pickle
        with np.load(shard, allow_pickle=False) as data:
            assert set(data.files) == {"keys", "indptr", "indices", "vocab_bytes", "vocab_offsets"}
    ParseCache.clear_memory()
    with monkeypatch.context() as m:
        m.setattr("cuelens.models.spacy_pipeline.load_spacy",
                  lambda *a, **k: (_ for _ in ()).throw(AssertionError("parsed again")))
        assert run_feature_audit(planted, cache_dir=cache) == cold
    shards[0].write_bytes(b"not a zip")  # a corrupt shard is ignored, its texts re-parsed
    ParseCache.clear_memory()
    assert run_feature_audit(planted, cache_dir=cache) == cold
    for path in sorted(cache.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    ParseCache.clear_memory()
    assert run_feature_audit(planted, cache_dir=cache) == cold


def test_cache_compacts_shards(tmp_path):
    from cuelens.audit.features import Annotations
    from cuelens.audit.parse_cache import MAX_SHARDS, text_keys

    cache = ParseCache(tmp_path)
    texts = [f"text {i}" for i in range(MAX_SHARDS + 3)]
    for i, text in enumerate(texts):
        cache.store("pipe/feat", text_keys([text]), Annotations.from_lists([(f"v{i}",)]))
    assert len(list(tmp_path.rglob("shard-*.npz"))) <= MAX_SHARDS
    ParseCache.clear_memory()
    found, ann = ParseCache(tmp_path).lookup("pipe/feat", text_keys(texts[::-1] + ["other"]))
    assert found.tolist() == [True] * len(texts) + [False]
    assert [ann.vocab[ann.matrix[i].indices[0]] for i in range(len(texts))] == \
        [f"v{i}" for i in range(len(texts))][::-1]


def test_progress_names_each_split_and_never_runs_back(planted):
    stages = []
    run_feature_audit(planted, ["tense"], progress=lambda s, f: stages.append((s, f)))
    assert stages[-1] == ("score", 1.0)
    parse = [(s, f) for s, f in stages if s.startswith("parse")]
    train, test = planted.train.name, planted.test.name
    assert [s for s, _ in parse] == sorted((s for s, _ in parse), key=[f"parse {train}",
                                                                      f"parse {test}"].index)
    assert {s for s, _ in parse} == {f"parse {train}", f"parse {test}"}
    fractions = [f for _, f in parse]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    # the train split holds 2/3 of the items: its parse ends 2/3 of the way through the stage
    assert max(f for s, f in parse if s == f"parse {train}") == pytest.approx(
        len(planted.train) / (len(planted.train) + len(planted.test)))



def test_feature_option_parsing():
    from cuelens.audit.icq import parse_feature_option

    assert parse_feature_option("all") is None and parse_feature_option(" none ") == []
    assert parse_feature_option("typo, WORD") == ["word", "typo"]
    with pytest.raises(UserError, match="unknown feature"):
        parse_feature_option("word,sentimnt")


WORD_TEXTS = ["Nobody didn't sleep.", "NOBODY is on vacation", "A man’s dog sleeps; nobody sees.",
              "Two men are outside.", "The women aren't sleeping!", "A dog is on vacation."]


def word_rows(n: int, seed: int) -> list[dict]:
    """NLI items whose hypotheses mix cased words, contractions, typographic apostrophes."""
    rng = np.random.default_rng(seed)
    labels = ["contradiction", "entailment", "neutral"]
    return [{"id": str(i), "premise": f"Scene {i // 2}.", "label": labels[rng.integers(3)],
             "hypothesis": WORD_TEXTS[rng.integers(len(WORD_TEXTS))] + f" {i % 7}"}
            for i in range(n)]


@pytest.mark.parametrize("layout", ["train/test", "cross-validated", "mcq"])
def test_scan_reads_word_values_from_its_cue_words(tmp_path, monkeypatch, layout):
    """A scan's WORD rows come from the words it encoded for the cue table (no second
    tokenising) and equal the feature audit's own tokenising, on planted data."""
    from cuelens.audit.config import ScanConfig
    from cuelens.audit.features.word import Word
    from cuelens.audit.pipeline import scan_dataset

    if layout == "train/test":
        ds = load_dataset(train=write(tmp_path / "train.jsonl", word_rows(240, 0)),
                          test=write(tmp_path / "test.jsonl", word_rows(120, 1)))
    elif layout == "cross-validated":
        ds = load_dataset(write(tmp_path / "all.jsonl", word_rows(150, 2)))
    else:
        ds = load_dataset(train=write(tmp_path / "train.jsonl", mcq_rows(80, 20, 10, 10)),
                          test=write(tmp_path / "test.jsonl", mcq_rows(40, 10, 30, 5)))
    config = ScanConfig(folds=3, iterations=1, seed=4)
    expected = run_feature_audit(ds, ["word"], folds=3, seed=4)
    assert len(expected["features"]) >= 4

    def refuse(self, text):
        raise AssertionError("WORD tokenised again in a scan")

    monkeypatch.setattr(Word, "values", refuse)
    sections = scan_dataset(ds, config, features=["word"]).sections
    assert sections.features == expected["features"]
    assert sections.features_config == expected["features_config"]
