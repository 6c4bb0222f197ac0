"""Probe statistics against hand-computed values: a rule "model" that exploits a planted cue,
given as a predictions file (docs/methods.md §6)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from cuelens.data import load_dataset
from cuelens.errors import UserError
from cuelens.probes.accuracy import accuracy_test, delta_accuracy, easy_hard_gap
from cuelens.probes.cues import word_cues
from cuelens.probes.distribution import distribution_test
from cuelens.probes.sources import read_predictions
from tests.conftest import write_jsonl
from tests.tiny_models import mcq_planted, nli_planted


def _dataset(tmp_path: Path, train: list[dict], test: list[dict]):
    write_jsonl(tmp_path / "data" / "train.jsonl", train)
    write_jsonl(tmp_path / "data" / "test.jsonl", test)
    return load_dataset(str(tmp_path / "data"))


def nli_rule(row: dict) -> str:
    """Predict contradiction whenever "nobody" is present; else the gold label, except that
    every plain entailment item is called neutral."""
    if "nobody" in row["hypothesis"]:
        return "contradiction"
    return "neutral" if row["label"] == "entailment" else row["label"]


@pytest.fixture
def nli(tmp_path):
    train, test = nli_planted()
    dataset = _dataset(tmp_path, train, test)
    preds = write_jsonl(tmp_path / "preds.jsonl",
                        [{"id": r["id"], "prediction": nli_rule(r)} for r in test])
    return dataset, read_predictions(preds, dataset)


def test_nli_accuracy_test_matches_hand_counts(nli):
    dataset, preds = nli
    gold = dataset.test.item_labels(dataset.label_names)
    correct = (preds.pred == gold).astype(float)
    cues = word_cues(dataset, ["nobody", "cat"])
    assert cues[0].test_mask.sum() == 32 and cues[1].test_mask.sum() == 4
    section = accuracy_test(correct, cues, n_boot=2000, seed=3)
    (row,) = section["cues"]
    assert row["cue"] == "nobody" and row["kind"] == "word"
    assert (row["n_with"], row["n_without"]) == (32, 30)
    assert row["acc_with"] == round(12 / 32, 6) and row["acc_without"] == round(20 / 30, 6)
    assert row["delta"] == pytest.approx(12 / 32 - 20 / 30, abs=1e-6)
    assert section["total_abs_delta"] == pytest.approx(abs(12 / 32 - 20 / 30), abs=1e-6)
    # "cat" is in only 4 test items: skipped, not reported as ΔAcc = 0
    (skipped,) = section["skipped"]
    assert skipped["cue"] == "cat" and skipped["n_with"] == 4 and "delta" not in skipped


def test_bootstrap_ci_agrees_with_brute_force_resampling(nli):
    dataset, preds = nli
    correct = (preds.pred == dataset.test.item_labels(dataset.label_names)).astype(float)
    mask = word_cues(dataset, ["nobody"])[0].test_mask
    row = delta_accuracy(correct, mask, n_boot=4000, seed=1)
    rng = np.random.default_rng(12345)
    a, b = correct[mask], correct[~mask]
    boots = [rng.choice(a, len(a)).mean() - rng.choice(b, len(b)).mean() for _ in range(4000)]
    low, high = np.percentile(boots, [2.5, 97.5])
    assert row["ci_low"] == pytest.approx(low, abs=0.03)
    assert row["ci_high"] == pytest.approx(high, abs=0.03)
    assert row["ci_low"] < row["delta"] < row["ci_high"]
    # seeded: the same seed gives the same interval
    assert delta_accuracy(correct, mask, n_boot=4000, seed=1) == row


def test_nli_distribution_test_skew(nli):
    dataset, preds = nli
    gold = dataset.test.item_labels(dataset.label_names)
    section = distribution_test(word_cues(dataset, ["nobody", "cat"]), preds.pred, gold, "nli",
                                dataset.label_names, seed=0)
    (row,) = section["cues"]
    assert row["train_dist"] == {"contradiction": 0.8, "entailment": 0.1, "neutral": 0.1}
    # flattened: 10 of each label (the 12 contradictions down-sampled), all called contradiction
    assert row["n"] == 30
    assert row["predicted_dist"] == {"contradiction": 1.0, "entailment": 0.0, "neutral": 0.0}
    # JSD([1,0,0], uniform) with M = [2/3, 1/6, 1/6]: ½·log2(3/2) + ½·(−⅓ + ⅔)
    assert row["score"] == pytest.approx(0.5 * math.log2(1.5) + 0.5 * (1 / 3), abs=1e-6)
    assert "cat" not in {r["cue"] for r in section.get("skipped", [])}  # no training distribution


def test_mcq_statistics_match_hand_counts(tmp_path):
    train, test = mcq_planted()
    dataset = _dataset(tmp_path, train, test)
    # the rule picks the "never" choice when one has it, else the correct choice
    rows = [{"id": r["id"], "prediction": next((j for j, c in enumerate(r["choices"])
                                                if "never" in c), r["label"])} for r in test]
    preds = read_predictions(write_jsonl(tmp_path / "p.jsonl", rows), dataset)
    gold = dataset.test.item_labels(dataset.label_names)
    correct = (preds.pred == gold).astype(float)
    cues = word_cues(dataset, ["never"])
    row = accuracy_test(correct, cues, n_boot=500)["cues"][0]
    assert (row["n_with"], row["n_without"]) == (24, 16)
    assert row["delta"] == pytest.approx(14 / 24 - 1.0, abs=1e-6)
    (dist,) = distribution_test(cues, preds.pred, gold, "mcq", dataset.label_names)["cues"]
    assert dist["train_dist"] == {"cue choice": 0.75, "other choice": 0.25}
    assert dist["n"] == 20  # 10 questions where the cue choice is right, 10 where it is wrong
    assert dist["predicted_dist"] == {"cue choice": 1.0, "other choice": 0.0}
    # JSD([1, 0], [½, ½]) with M = [¾, ¼]; signed + (training favours the cue choice, 0.75)
    expected = 0.5 * math.log2(1 / 0.75) + 0.5 * (0.5 * math.log2(0.5 / 0.75)
                                                 + 0.5 * math.log2(0.5 / 0.25))
    assert dist["score"] == pytest.approx(expected, abs=1e-6)


def test_unanswered_mcq_questions_are_left_out_of_the_distribution_test(tmp_path):
    """An MCQ question without an answer (an evaluation log's no-answer) is left out, as an
    unparseable LLM reply is: not counted as a pick of the choice without the cue."""
    train, test = mcq_planted()
    dataset = _dataset(tmp_path, train, test)
    bears = [any("never" in c for c in r["choices"]) for r in test]
    cue_wrong = [i for i, r in enumerate(test)
                 if bears[i] and "never" not in r["choices"][r["label"]]]
    silent = set(cue_wrong[:4])
    rows = [{"id": r["id"], "prediction": None if i in silent else next(
        (j for j, c in enumerate(r["choices"]) if "never" in c), r["label"])}
        for i, r in enumerate(test)]
    preds = read_predictions(write_jsonl(tmp_path / "p.jsonl", rows), dataset)
    gold = dataset.test.item_labels(dataset.label_names)
    (dist,) = distribution_test(word_cues(dataset, ["never"]), preds.pred, gold, "mcq",
                                dataset.label_names)["cues"]
    cue_right = sum(bears) - len(cue_wrong)
    assert dist["n"] == 2 * min(cue_right, len(cue_wrong) - 4)
    assert dist["predicted_dist"] == {"cue choice": 1.0, "other choice": 0.0}


def test_distribution_score_is_negative_against_training_skew(tmp_path):
    train, test = mcq_planted()
    dataset = _dataset(tmp_path, train, test)
    rows = [{"id": r["id"], "prediction": next((1 - j for j, c in enumerate(r["choices"])
                                                if "never" in c), r["label"])} for r in test]
    preds = read_predictions(write_jsonl(tmp_path / "p.jsonl", rows), dataset)
    gold = dataset.test.item_labels(dataset.label_names)
    (dist,) = distribution_test(word_cues(dataset, ["never"]), preds.pred, gold, "mcq",
                                dataset.label_names)["cues"]
    assert dist["predicted_dist"]["cue choice"] == 0.0 and dist["score"] < 0


def test_easy_hard_gap():
    correct = np.array([1, 1, 0, 1, 0, 0, 1, 0], dtype=float)
    easy = np.array([1, 1, 1, 1, 0, 0, 0, 0], dtype=bool)
    gap = easy_hard_gap(correct, easy)
    assert {k: gap[k] for k in ("easy_accuracy", "hard_accuracy", "gap")} == {
        "easy_accuracy": 0.75, "hard_accuracy": 0.25, "gap": 0.5}
    assert gap["ci_low"] <= 0 < 0.5 < gap["ci_high"]  # 4 items a side: no gap beyond the noise
    assert easy_hard_gap(correct, np.ones(8, dtype=bool)) is None
    wide = easy_hard_gap(np.tile(correct, 50), np.tile(easy, 50))  # the same rates, 400 items
    assert wide["gap"] == 0.5 and 0.3 < wide["ci_low"] < 0.5 < wide["ci_high"] < 0.7


def test_an_easy_hard_gap_within_the_noise_is_no_finding():
    """A gap of +25 points on 40 items is no finding (it was: 'm is 25.0 points more accurate on
    easy items', with the step to report its hard accuracy); +50 on 400 items is."""
    from cuelens.audit.findings import findings

    def probe_results(gap: dict) -> dict:
        return {"probe": {"model": {"name": "m"}, "accuracy": 0.6,
                          "sanity": {"interpretable": True, "accuracy": {"accuracy": 0.6}},
                          "accuracy_test": {"cues": []}, "easy_hard": gap}}

    rng = np.random.default_rng(0)
    noise = easy_hard_gap(rng.integers(0, 2, 40).astype(float), np.arange(40) < 20)
    clear = easy_hard_gap(np.tile([1.0, 1, 0, 1, 0, 0, 1, 0], 50), np.tile(
        np.arange(8) < 4, 50))
    assert noise["ci_low"] < 0 < noise["ci_high"]
    codes = lambda gap: [f.code for f in findings(probe_results(gap))]  # noqa: E731
    assert "easy_hard_gap" not in codes(noise)
    assert "easy_hard_gap" in codes(clear)


@pytest.mark.parametrize("rows, message", [
    (lambda test: [{"id": r["id"], "prediction": "contradiction"} for r in test[:-3]],
     r"3 test items have no prediction \(e.g. .te59."),
    (lambda test: [{"id": r["id"], "prediction": "maybe"} for r in test],
     "line 1: unknown label 'maybe'"),
    (lambda test: [{"id": "zzz", "prediction": "neutral"}], "line 1: id 'zzz' is not in"),
    (lambda test: [{"id": test[0]["id"], "prediction": "neutral"}] * 2, "line 2: duplicate"),
    (lambda test: [{"id": r["id"], "prediction": "neutral", "probs": [1, 0]} for r in test],
     "line 1: probs must be a list of 3 numbers"),
    (lambda test: [], r"bad.jsonl: no predictions \(an empty file\); it needs one line per "
                      r"test item \(62\)"),
])
def test_bad_predictions_files(tmp_path, rows, message):
    train, test = nli_planted()
    dataset = _dataset(tmp_path, train, test)
    path = write_jsonl(tmp_path / "bad.jsonl", rows(test))
    with pytest.raises(UserError, match=message):
        read_predictions(path, dataset)


def test_predictions_probs_object_and_malformed_json(tmp_path):
    train, test = nli_planted()
    dataset = _dataset(tmp_path, train, test)
    rows = [{"id": r["id"], "prediction": "entailment",
             "probs": {"contradiction": 0.1, "entailment": 0.7, "neutral": 0.2}} for r in test]
    preds = read_predictions(write_jsonl(tmp_path / "ok.jsonl", rows), dataset)
    assert preds.probs.shape == (len(test), 3) and preds.probs[0, 1] == 0.7
    (tmp_path / "broken.jsonl").write_text(json.dumps(rows[0]) + "\n{not json\n")
    with pytest.raises(UserError, match="broken.jsonl, line 2"):
        read_predictions(tmp_path / "broken.jsonl", dataset)


def test_probs_that_favour_another_answer_than_the_prediction_are_one_warning(tmp_path):
    """probs in the model's label order (entailment, neutral, contradiction) instead of the
    dataset's sorted one were read silently; the probe scores prediction and now says so on
    the lines where probs disagree (ties and agreeing lines are fine)."""
    train, test = nli_planted()
    dataset = _dataset(tmp_path, train, test)
    model_order = ["entailment", "neutral", "contradiction"]
    rows = [{"id": r["id"], "prediction": r["label"],
             "probs": [0.8 if label == r["label"] else 0.1 for label in model_order]}
            for r in test]
    rows[0]["probs"] = {"contradiction": 0.4, "entailment": 0.4, "neutral": 0.2}  # a tie
    preds = read_predictions(write_jsonl(tmp_path / "p.jsonl", rows), dataset)
    gold = [dataset.label_names.index(r["label"]) for r in test]
    assert preds.pred.tolist() == gold  # prediction, not probs, is scored
    assert test[1]["label"] == "contradiction"  # its 0.8 is read as neutral's
    assert preds.notes == [
        f"{tmp_path / 'p.jsonl'}: on {len(test) - 1} of {len(test)} lines \"probs\" favour "
        "another answer than \"prediction\" (e.g. line 2: 'contradiction' predicted, 'neutral' "
        "most probable); the probe scores \"prediction\"; probs are read in the dataset's label "
        "order (contradiction, entailment, neutral)"]
    agreeing = [{**r, "probs": [0.8 if label == r["prediction"] else 0.1
                                for label in dataset.label_names]} for r in rows]
    assert read_predictions(write_jsonl(tmp_path / "q.jsonl", agreeing), dataset).notes == []


def test_numeric_nli_labels_take_numeric_predictions(tmp_path):
    """A dataset whose labels are the numbers 0/1/2 takes the same numbers as predictions (and
    2.0 as 2), as the dataset's own labels were read (it was 'unknown label 1 (labels: 0, 1,
    2)')."""
    names = {"contradiction": 0, "entailment": 1, "neutral": 2}
    train, test = nli_planted()
    train, test = ([dict(r, label=names[r["label"]]) for r in rows] for rows in (train, test))
    dataset = _dataset(tmp_path, train, test)
    rows = [{"id": r["id"], "prediction": float(r["label"]) if i % 2 else r["label"]}
            for i, r in enumerate(test)]
    preds = read_predictions(write_jsonl(tmp_path / "p.jsonl", rows), dataset)
    gold = dataset.test.item_labels(dataset.label_names)
    assert dataset.label_names == ["0", "1", "2"] and (preds.pred == gold).all()
    rows[3] = {"id": test[3]["id"], "prediction": 7}
    with pytest.raises(UserError, match=r"line 4: unknown label 7 \(labels: 0, 1, 2\)"):
        read_predictions(write_jsonl(tmp_path / "bad.jsonl", rows), dataset)


def test_an_id_in_another_unicode_form_is_said_to_be_so(tmp_path):
    """A predictions file whose ids are the test ids decomposed (NFD, e.g. written on macOS) is
    refused with the reason (it read "id 'café-0' is not in the test split", the id shown
    looking exactly like the dataset's)."""
    import unicodedata

    train, test = nli_planted()
    test = [dict(r, id=f"café-{i}") for i, r in enumerate(test)]
    dataset = _dataset(tmp_path, train, test)
    rows = [{"id": unicodedata.normalize("NFD", r["id"]), "prediction": r["label"]} for r in test]
    with pytest.raises(UserError, match=r"line 1: id 'cafe\u0301-0' is not in the test split, "
                       r"which has it in another Unicode form \(NFC; this file: NFD\)"):
        read_predictions(write_jsonl(tmp_path / "p.jsonl", rows), dataset)


@pytest.mark.parametrize("name", ["p.csv", "p.tsv.gz"])
def test_a_table_given_as_predictions_says_what_to_write(tmp_path, name):
    """A CSV of id,prediction was 'line 1: malformed JSON (Expecting value at column 1)'."""
    train, test = nli_planted()
    dataset = _dataset(tmp_path, train, test)
    import gzip

    path = tmp_path / name
    text = "id,prediction\n" + "".join(f"{r['id']},neutral\n" for r in test)
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    with pytest.raises(UserError, match=r"a predictions file is JSON Lines, one \{\"id\", "
                       r"\"prediction\"\} object per line \(docs/api.md\), not (CSV|TSV)$"):
        read_predictions(path, dataset)


def test_unanswered_nli_items_are_left_out_of_the_distribution_test(nli, tmp_path):
    """A predictions file's ``null`` (no answer) reads as −1 for NLI too; the distribution test
    leaves those items out before the minimum-size check and the balancing (docs/methods.md §6),
    so ``n`` is a balanced set of answered items."""
    dataset, preds = nli
    gold = dataset.test.item_labels(dataset.label_names)
    cues = word_cues(dataset, ["nobody"])
    nobody = np.flatnonzero(cues[0].test_mask)
    rows = [{"id": item_id, "prediction": None if i in set(nobody[::2])
             else dataset.label_names[p]}
            for i, (item_id, p) in enumerate(zip(dataset.test.ids, preds.pred))]
    read = read_predictions(write_jsonl(tmp_path / "p.jsonl", rows), dataset)
    assert (read.pred[nobody[::2]] == -1).all() and (read.pred[nobody[1::2]] >= 0).all()
    (row,) = distribution_test(cues, read.pred, gold, "nli", dataset.label_names,
                               seed=0)["cues"]
    shares = np.bincount(gold[nobody[1::2]], minlength=len(dataset.label_names))
    assert row["n"] == len(dataset.label_names) * shares.min() > 0  # answered, balanced
    assert row["predicted_dist"] == {"contradiction": 1.0, "entailment": 0.0, "neutral": 0.0}
    silent = np.full_like(read.pred, -1)
    (skipped,) = distribution_test(cues, silent, gold, "nli", dataset.label_names)["skipped"]
    assert skipped["skipped"] == "fewer than 10 test items with the cue"


def test_chinese_word_cues_are_found_in_the_test_items(tmp_path):
    """The probe cuts the test items with the scan's segmenter (docs/languages.md): every cue of
    a Chinese scan had 'n with 0' (cut with unicode, a Han run was one word), so none was
    tested and the verdict read 'no tested cue changes the model's accuracy'."""
    import cuelens

    fillers = ["男人在公园里散步", "女人在厨房做饭", "孩子们在操场上玩", "老人在看报纸",
               "一只狗在草地上跑"]

    def rows(prefix: str, n: int) -> list[dict]:
        labels = ["contradiction", "entailment", "neutral"]
        return [{"id": f"{prefix}{i}", "premise": "有人在外面", "label": labels[i % 3],
                 "hypothesis": fillers[i % 5] + ("没有人" if i % 6 == 0 else "")}
                for i in range(n)]

    dataset_dir = tmp_path / "data"
    test = rows("te", 60)
    write_jsonl(dataset_dir / "train.jsonl", rows("tr", 120))
    write_jsonl(dataset_dir / "test.jsonl", test)
    path = write_jsonl(tmp_path / "p.jsonl", [
        {"id": r["id"], "prediction": "contradiction" if "没有人" in r["hypothesis"] else "neutral"}
        for r in test])
    result = cuelens.probe(str(dataset_dir), predictions=str(path), rank_by="lmi", min_support=1,
                           min_items=1, bootstrap=50)
    effects = result.cue_effects.set_index("cue")
    assert result.to_dict()["segmentation"]["name"] == "chinese"
    assert effects.loc["没有", "n_with"] == 10 and effects.loc["没有", "acc_with"] == 1.0
