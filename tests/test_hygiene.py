"""Data hygiene (cuelens.audit.hygiene): planted duplicates, overlap, mirrors and label noise
are found exactly; odd labels and --alpha 0 work end to end."""

from __future__ import annotations

import json
import math

import fastjsonschema
import numpy as np
import pytest
from typer.testing import CliRunner

from cuelens.audit.streamed_hygiene import data_hygiene
from cuelens.cli import app
from cuelens.reports.schema import results_schema
from cuelens.jsonio import format_number, json_number, read_number
from cuelens.data.dataset import MCQ_LABELS, Dataset, Split
from scan_helpers import nli_dataset
from tests.conftest import write_jsonl


def unique_hypotheses(n: int, tag: str) -> list[str]:
    """``n`` unrelated 25-word texts (random words from a large vocabulary)."""
    rng = np.random.default_rng(len(tag))
    return [" ".join([tag] + [f"v{j}" for j in rng.integers(0, 5000, 24)]) for _ in range(n)]


def test_planted_train_test_duplicates_are_found_exactly():
    train_h = unique_hypotheses(60, "train")
    test_h = unique_hypotheses(40, "test")
    copied = [3, 11, 17, 29]  # test items that copy a train item (case and punctuation changed)
    for k, i in enumerate(copied):
        test_h[i] = train_h[10 * k].upper() + "!!"
    near = 33  # the last of 25 words changed: bigram Jaccard 25/27 (with the premise) ≥ 0.8
    test_h[near] = train_h[55].rsplit(" ", 1)[0] + " changed"
    labels = lambda n: [["a", "b", "c"][i % 3] for i in range(n)]  # noqa: E731
    # LSH (5 bands of 11 rows) finds a pair of Jaccard 0.93 with probability ~0.95: seed 2 does
    section = data_hygiene(nli_dataset((train_h, labels(60)), (test_h, labels(40))), seed=2).to_json()
    (row,) = section["overlap"]
    assert (row["fit"], row["eval"], row["exact"], row["near"]) == ("train", "test", 4, 1)
    found = {ex["line"] - 1 for ex in section["examples"]["overlap"] if ex["kind"] == "exact"}
    assert found == set(copied)
    (near_row,) = [ex for ex in section["examples"]["overlap"] if ex["kind"] == "near"]
    assert (near_row["line"], near_row["other"]["line"]) == (near + 1, 56)
    assert any("shares 4 exact and 1 near-duplicate" in w for w in section["warnings"])
    assert section["splits"]["test"]["duplicate_items"] == 0


def test_planted_mirrors_duplicates_and_label_noise_are_counted_exactly():
    split = Split(name="all", path="all.jsonl", task="mcq")
    items = []
    for j in range(30):  # 30 mirrored pairs: other premise, same choices, the other one right
        a, b = f"first option {j} is good", f"second option {j} is bad"
        items += [(f"context {j} leads here", [a, b], 0), (f"context {j} turned", [b, a], 0)]
    items += [("same item", ["dup one here", "dup two here"], 0)] * 2  # one item 3 times ...
    items += [("Same item!", ["dup one here", "dup two here"], 1)]  # ... once labelled otherwise
    items += [("swapped", ["right one", "wrong one"], 0), ("swapped", ["wrong one", "right one"], 1)]
    for i, (premise, choices, label) in enumerate(items):
        split.append({"id": str(i), "premise": premise, "choices": choices, "label": label},
                     raw="{}", line=i + 1)
    dataset = Dataset(name="toy", format="jsonl", task="mcq", train=None, test=split,
                      label_names=list(MCQ_LABELS))
    section = data_hygiene(dataset).to_json()
    counts = section["splits"]["all"]
    assert counts["mirrored_pairs"] == 30 + 2  # the planted pairs + (copy 3 vs copies 1, 2)
    # the two copies with the same label are one redundant copy; the relabelled one is a
    # label conflict, not a copy; the item with its choices swapped is a permuted copy
    assert counts["duplicate_items"] == 1 and counts["duplicate_groups"] == 1
    assert counts["label_conflict_groups"] == 1 and counts["label_conflict_items"] == 3
    assert counts["permuted_copies"] == 1
    (permuted,) = section["examples"]["permuted"]
    assert (permuted["line"], permuted["other"]["line"]) == (64, 65)
    assert permuted["other"]["text"] == "swapped → wrong one / right one"
    assert section["overlap"] == []
    pair = section["examples"]["mirrored"][0]
    assert (pair["line"], pair["other"]["line"]) == (1, 2)


def test_json_number_encoding_round_trips():
    assert [json_number(x) for x in (1.23456789, math.inf, -math.inf, math.nan)] == \
        [1.234568, "inf", "-inf", None]
    assert read_number("inf") == math.inf and math.isnan(read_number(None))
    assert [format_number(v) for v in ("inf", "-inf", None, 0.5)] == ["∞", "−∞", "n/a", "0.500"]


def _nli_rows(n: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    names = ["contradiction", "entailment", "neutral"]
    rows = []
    for i in range(n):
        label = names[i % 3]
        words = " ".join(f"w{j}" for j in rng.integers(0, 60, 5))
        cue = {"contradiction": "nobody ", "entailment": "outdoors "}.get(label, "")
        rows.append({"id": str(i), "premise": f"premise {i} is here", "hypothesis": cue + words,
                     "label": label})
    return rows


def _scan(path, out, *extra):
    return CliRunner().invoke(app, ["scan", str(path), "--out", str(out), "--iterations", "1",
                                    "--features", "none", *extra])


def test_rare_label_is_kept_and_scan_succeeds(tmp_path):
    rows = _nli_rows(150)
    rows[7]["label"] = "entailmnt"  # a typo: a label that occurs once
    write_jsonl(tmp_path / "all.jsonl", rows)
    result = _scan(tmp_path / "all.jsonl", tmp_path / "out")
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert "entailmnt" in results["dataset"]["label_names"]
    assert results["dataset"]["splits"]["all"]["label_counts"]["entailmnt"] == 1


def test_single_class_test_split_works(tmp_path):
    rows = _nli_rows(120)
    write_jsonl(tmp_path / "d" / "train.jsonl", rows[:90])
    write_jsonl(tmp_path / "d" / "test.jsonl", [r for r in rows[90:] if r["label"] == "neutral"])
    result = _scan(tmp_path / "d", tmp_path / "out")
    assert result.exit_code == 0, result.output


def test_too_tiny_file_is_one_clear_error(tmp_path):
    write_jsonl(tmp_path / "all.jsonl", _nli_rows(3))
    result = _scan(tmp_path / "all.jsonl", tmp_path / "out")
    assert result.exit_code == 2
    assert "cannot make 5 folds: the 3 evaluation items form only 3 groups" in result.output
    assert "Traceback" not in result.output


def test_alpha_zero_works_end_to_end_with_infinities_encoded(tmp_path):
    write_jsonl(tmp_path / "all.jsonl", _nli_rows(150))
    result = _scan(tmp_path / "all.jsonl", tmp_path / "out", "--alpha", "0")
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    values = [v for cue in results["cues"] for v in cue["metrics"].values()]
    assert "-inf" in values  # PMI of a word never seen with a label: log 0
    nobody = next(c for c in results["cues"]
                  if c["token"] == "nobody" and c["label"] == "contradiction")
    assert nobody["metrics"]["rd"] == "inf"  # #(w, other labels) = 0: division by zero
    html = (tmp_path / "out" / "report.html").read_text()
    assert "\\u221e" in html or "∞" in html  # the table renders "inf" as ∞


def _planted_nli_split(name: str, n: int, seed: int) -> Split:
    """NLI items from a small vocabulary, with many copies (relabelled or not) and shared texts."""
    rng = np.random.default_rng(seed)
    split = Split(name=name, path=f"{name}.jsonl", task="nli")
    made: list[dict] = []
    for i in range(n):
        if made and rng.random() < 0.3:  # a copy of an earlier item, case changed, maybe relabelled
            rec = dict(made[rng.integers(len(made))], hypothesis=made[-1]["hypothesis"].upper())
            rec["label"] = rec["label"] if rng.random() < 0.5 else "abc"[rng.integers(3)]
        else:
            words = lambda k: " ".join(f"w{j}" for j in rng.integers(0, 6, k))  # noqa: E731
            rec = {"premise": f"p {words(2)}", "hypothesis": words(int(rng.integers(1, 5))),
                   "label": "abc"[rng.integers(3)]}
        made.append(rec)
        split.append({**rec, "id": str(i)}, raw="{}", line=i + 1)
    return split


def _brute_force_counts(split: Split) -> dict:
    """Exact-duplicate, label-conflict and contrastive counts with dicts of normalised strings."""
    from collections import defaultdict

    from cuelens.audit.text_keys import normal_form
    by_input, by_hypothesis = defaultdict(list), defaultdict(list)
    for i in range(len(split)):
        hypothesis = normal_form(split.hypotheses[i])
        by_input[(normal_form(split.premises[i]), hypothesis)].append(split.labels[i])
        if len(hypothesis.split()) >= 3:
            by_hypothesis[hypothesis].append(split.labels[i])
    copies = [labels for labels in by_input.values() if len(labels) > len(set(labels))]
    conflicts = [labels for labels in by_input.values() if len(set(labels)) > 1]
    contrastive = sum(a != b for labels in by_hypothesis.values()
                      for k, a in enumerate(labels) for b in labels[k + 1:])
    return {"duplicate_items": sum(len(c) - len(set(c)) for c in copies),
            "duplicate_groups": len(copies),
            "label_conflict_groups": len(conflicts),
            "label_conflict_items": sum(len(c) for c in conflicts),
            "contrastive_pairs": contrastive}


def test_hashed_exact_counts_equal_a_brute_force_count():
    train, test = _planted_nli_split("train", 400, 1), _planted_nli_split("test", 300, 2)
    dataset = Dataset(name="toy", format="jsonl", task="nli", train=train, test=test,
                      label_names=["a", "b", "c"])
    section = data_hygiene(dataset).to_json()
    for role, split in (("train", train), ("test", test)):
        expected = _brute_force_counts(split)
        assert expected["duplicate_items"] >= 10 and expected["label_conflict_groups"] > 10
        assert expected["contrastive_pairs"] > 20
        assert {k: section["splits"][role][k] for k in expected} == expected
    from cuelens.audit.text_keys import normal_form
    train_inputs = {(normal_form(p), normal_form(h))
                    for p, h in zip(train.premises, train.hypotheses)}
    train_premises = {normal_form(p) for p in train.premises}
    exact = [(normal_form(p), normal_form(h)) in train_inputs
             for p, h in zip(test.premises, test.hypotheses)]
    shared = [normal_form(p) in train_premises for p in test.premises]
    (row,) = section["overlap"]
    assert row["exact"] == sum(exact) > 0
    assert row["shared_premise"] == sum(e or s for e, s in zip(exact, shared))
    assert "near_sample" not in section


def test_large_splits_count_near_duplicates_on_a_seeded_sample(monkeypatch):
    import cuelens.audit.near_duplicates as near_duplicates

    train_h, test_h = unique_hypotheses(60, "train"), unique_hypotheses(40, "test")
    for i in range(0, 40, 2):  # 20 test items are near copies of train items
        test_h[i] = train_h[i].rsplit(" ", 1)[0] + " changed"
    labels = lambda n: ["abc"[i % 3] for i in range(n)]  # noqa: E731
    dataset = nli_dataset((train_h, labels(60)), (test_h, labels(40)))
    full = data_hygiene(dataset, seed=2).to_json()  # a MinHash seed with which LSH misses none
    assert full["overlap"][0]["near"] == 20
    monkeypatch.setattr(near_duplicates, "NEAR_MAX_ITEMS", 30)
    runs = [data_hygiene(dataset, seed=s).to_json() for s in (2, 2, 3)]
    assert runs[0] == runs[1] and runs[0] != runs[2]  # deterministic for a seed
    section = runs[0]
    assert section["near_sample"] == {"train": 30, "test": 30}
    sample = {role: near_duplicates.near_items(n, 2) for role, n in (("train", 60), ("test", 40))}
    assert list(sample["train"]) == sorted(sample["train"]) and len(set(sample["test"])) == 30
    # near hits are the sampled test items whose (sampled) train original is in the sample too
    expected = sum(i in sample["train"] for i in sample["test"] if i % 2 == 0)
    assert 0 < expected < 20 and section["overlap"][0]["near"] == expected
    near_lines = [ex["line"] - 1 for ex in section["examples"]["overlap"] if ex["kind"] == "near"]
    assert set(near_lines) <= set(sample["test"])
    assert section["overlap"][0]["exact"] == 0 and section["splits"]["test"]["items"] == 40
    notes = [w for w in section["warnings"] if "random sample" in w]
    assert notes == [f"{role}: near-duplicate counts come from a random sample of 30 of its "
                     f"{n} items (near overlap: sampled evaluation items against sampled fitting "
                     "items); exact counts cover every item"
                     for role, n in (("train", 60), ("test", 40))]
    schema = results_schema()
    check = fastjsonschema.compile({key: schema[key] for key in ("$schema", "$id", "$defs")}
                                   | {"$ref": "#/$defs/hygiene"})
    check(section)
    with pytest.raises(fastjsonschema.JsonSchemaValueException):
        check({**section, "near_sample": {"train": "30"}})


def test_snli_sibling_hypotheses_of_one_premise_are_not_near_duplicates(shared_data):
    """SNLI dev: compared as one text, 1,159 pairs of different hypotheses of one long premise
    were "near duplicates"; compared as premise and hypothesis, 6 same-label pairs remain."""
    from cuelens.data import load_dataset
    from cuelens.audit.text_keys import normal_form

    section = data_hygiene(load_dataset(str(shared_data / "snli/dev.jsonl"))).to_json()
    counts = section["splits"]["all"]
    assert counts["near_duplicate_pairs"] == 6 and counts["shared_premise_items"] == 9831
    rows = {json.loads(line)["id"]: json.loads(line)
            for line in (shared_data / "snli/dev.jsonl").read_text().splitlines()}
    for example in section["examples"]["near_duplicates"]:
        a, b = rows[example["id"]], rows[example["other"]["id"]]
        assert a["label"] == b["label"]
        assert normal_form(a["hypothesis"]) != normal_form(b["hypothesis"])
        for row, shown in ((a, example["text"]), (b, example["other"]["text"])):
            assert shown == f"{row['premise']} → {row['hypothesis']}"[:len(shown)] or \
                shown.endswith("…")


def test_near_pairs_need_premise_and_hypothesis_near_and_siblings_are_constructions():
    base = " ".join(f"w{j}" for j in range(30))  # a long premise shared by all items
    rows = [(base, "a dog runs on the grass today", "entailment"),
            (base, "a cat sleeps in the house now", "contradiction"),  # sibling: not near
            (base, "a dog runs on the grass today !", "entailment"),  # same text: a copy
            (base, "a dog runs on the green grass today", "neutral"),  # edited sibling
            (base.replace("w29", "x29"), "a dog runs on the green grass today", "neutral")]
    split = Split(name="all", path="all.jsonl", task="nli")
    for i, (premise, hypothesis, label) in enumerate(rows):
        split.append({"id": str(i), "premise": premise, "hypothesis": hypothesis,
                      "label": label}, raw="{}", line=i + 1)
    dataset = Dataset(name="toy", format="jsonl", task="nli", train=None, test=split,
                      label_names=["contradiction", "entailment", "neutral"])
    section = data_hygiene(dataset).to_json()
    counts = section["splits"]["all"]
    # 0/1 differ in the hypothesis; 0/3 are near but relabelled siblings of one premise;
    # 3/4 have the same hypothesis and label, premises near (one word changed): a near pair
    assert counts["duplicate_items"] == 1 and counts["near_duplicate_pairs"] == 1
    (pair,) = section["examples"]["near_duplicates"]
    assert (pair["line"], pair["other"]["line"]) == (4, 5)
    assert counts["shared_premise_items"] == 4


def test_example_texts_are_cut_at_a_word_boundary():
    from cuelens.audit.hygiene import clip

    text = "alpha " * 60
    cut = clip(text, 100)
    assert len(cut) <= 100 and cut.endswith("alpha…") and cut.count("alpha") == 16
    assert clip("short text", 100) == "short text"
    assert clip("x" * 300, 50) == "x" * 49 + "…"  # one word longer than the limit
    assert clip("one two three", 8) == "one two…"
    # a run without spaces (Thai) is cut between characters, never before a combining mark:
    # ไม่ is ไ, ม and the tone mark ่ (it kept ม and dropped its tone mark: another word)
    thai = clip("\u0e44\u0e21\u0e48" * 100, 240)
    assert thai == "\u0e44\u0e21\u0e48" * 79 + "\u0e44…"


def test_example_texts_are_cut_between_whole_grapheme_clusters():
    """A run without spaces is cut between grapheme clusters, as the report cuts a long cue: an
    emoji ZWJ sequence or a flag stays whole or goes (the cut fell between code points: 👨 of
    👨‍👩‍👧, or a lone regional indicator showing another flag), a decomposed letter keeps its
    marks."""
    import unicodedata

    from cuelens.audit.hygiene import clip

    family, flags = "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f1eb\U0001f1f7" * 2
    assert clip("中" * 238 + family + "中" * 10) == "中" * 238 + "…"
    assert clip("中" * 234 + family + "中" * 10) == "中" * 234 + family + "…"
    assert clip("中" * 237 + flags + "中" * 10) == "中" * 237 + flags[:2] + "…"
    decomposed = unicodedata.normalize("NFD", "\u1ec7" * 100)  # ệ: e and two marks
    assert clip(decomposed, 50) == decomposed[:48] + "…"


def test_label_keys_of_a_compact_label_column_equal_those_of_its_values():
    """NLI answer keys read off a compact split's label codes are the keys of the labels
    themselves: equal labels, equal keys; different labels, different keys."""
    from cuelens.audit.hygiene_keys import label_keys
    from cuelens.data.compact import LabelColumn

    labels = ["entailment", "neutral", "entailment", "contradiction", "neutral", "entailment"]
    column = LabelColumn()
    for label in labels:
        column.append(label)
    keys = label_keys(column)
    np.testing.assert_array_equal(keys, label_keys(labels))
    assert keys.dtype == np.uint64 and len(set(keys.tolist())) == 3
    assert keys[0] == keys[2] == keys[5] and keys[1] == keys[4] != keys[3]
    assert len(label_keys(LabelColumn())) == 0
