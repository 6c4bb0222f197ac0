"""Label hygiene (docs/robustness.md, "Labels"): normal forms, kinds, rare labels, repeated JSON
keys and the findings' trip through compact columns, against hand-written answers."""

from __future__ import annotations

from collections import Counter

import pytest

from cuelens.data.labels import (LabelFindings, check_label_count, label_kind, label_report,
                                 normalise_label, rare_labels)
from cuelens.data.readers import RepeatedKeys, parse_json
from cuelens.data.schema import FieldMap, RecordError, normalise_nli
from cuelens.errors import UserError


@pytest.mark.parametrize("raw, normal", [
    ("entailment", "entailment"),
    ("  neutral\t", "neutral"),
    ("entail\u200dment", "entailment"),            # zero-width joiner (Cf)
    ("\ufeffcontradiction\u200b", "contradiction"),  # BOM, zero-width space
    ("cafe\u0301", "caf\u00e9"),                    # NFD → NFC
    ("soft\u00adhyphen", "softhyphen"),
    ("neu\x1b[41mtral", "neu[41mtral"),             # ESC (Cc): it was kept, and restyled terminals
    ("entail\tment\x7f", "entailment"),             # tab and DEL inside a label (Cc)
])
def test_normal_form(raw, normal):
    assert normalise_label(raw) == normal


@pytest.mark.parametrize("value, label, original", [
    (1, "1", None), (1.0, "1", "1.0"), (1.5, "1.5", None), (" a ", "a", " a "),
    ("entail\u200dment", "entailment", "entail\u200dment"),
])
def test_records_keep_the_original_only_when_rewritten(value, label, original):
    item = normalise_nli({"premise": "p", "hypothesis": "h", "label": value}, FieldMap(), "x")
    assert item is not None and item["label"] == label
    assert item.get("label_from") == original


def test_a_label_of_invisible_characters_is_a_record_error():
    with pytest.raises(RecordError, match="invisible characters only"):
        normalise_nli({"premise": "p", "hypothesis": "h", "label": "\u200d "}, FieldMap(), "x")


@pytest.mark.parametrize("label, kind", [("0", "integer"), ("-3", "integer"), ("1.5", "number"),
                                         ("1e3", "number"), ("entailment", "text"),
                                         ("nan", "number")])
def test_label_kind(label, kind):
    assert label_kind(label) == kind


def test_rare_labels_and_mcq():
    assert rare_labels({"a": 50, "b": 9, "c": 10, "d": 1}, 10) == ["b", "d"]
    assert rare_labels({"a": 50, "b": 1}, 0) == []
    assert rare_labels({"right": 3, "wrong": 6}, 10) == []


def test_one_label_is_an_error():
    with pytest.raises(UserError, match="all 7 items have the label 'x'"):
        check_label_count({"x": 7}, "d.jsonl")
    check_label_count({"x": 7, "y": 1}, "d.jsonl")


def test_repeated_keys_keep_the_last_value_and_are_named():
    record = parse_json('{"label": "a", "premise": "p: q", "label": "b"}')
    assert isinstance(record, RepeatedKeys) and record == {"label": "b", "premise": "p: q"}
    assert record.repeated == ["label"]
    plain = parse_json('{"label": "a", "premise": "p: q"}')
    assert not isinstance(plain, RepeatedKeys)


def test_label_report_collects_every_finding():
    findings = LabelFindings()
    findings.rewrite("entail\u200dment", "entailment")
    findings.rewrite("entail\u200dment", "entailment")
    findings.duplicate(["label"], 31)
    findings.duplicate(["label"], 40)
    counts = Counter({"entailment": 20, "neutral": 20, "1.5": 1})
    report = label_report({"all": ("d.jsonl", counts, findings)}, "all", 10)
    assert report["rare"] == ["1.5"]
    assert report["rewritten"] == [{"split": "all", "from": "entail\u200dment",
                                    "to": "entailment", "items": 2}]
    text = "\n".join(report["warnings"])
    assert "'entail\\u200dment' → 'entailment' (2)" in text
    assert "d.jsonl, line 31: 2 records repeat the key 'label'" in text
    assert "labels of mixed kinds (number: '1.5'; text: 'entailment', 'neutral')" in text
    assert "rare label '1.5' with fewer than 10 items in d.jsonl" in text
    once = label_report({"all": ("d.jsonl", counts, LabelFindings())}, "all", 0)
    assert once["rare"] == [] and "label '1.5' occurs only once in d.jsonl" in once["warnings"]


def test_a_decomposed_label_is_said_to_be_not_nfc():
    """An NFD label looks the same as its normal form: the warning read 'é' → 'é'."""
    from cuelens.data.labels import rewrites_text

    text = rewrites_text([{"from": "ne\u0301gatif", "to": "n\u00e9gatif", "items": 3},
                          {"from": "pos ", "to": "pos", "items": 1}])
    assert text == "'ne\u0301gatif' (not NFC) → 'n\u00e9gatif' (3); 'pos ' → 'pos' (1)"


def test_findings_survive_the_compact_columns(tmp_path):
    """A shard packed by a worker (to_arrays/from_arrays) and appended (extend) keeps them."""
    from cuelens.data.compact import CompactSplit
    from cuelens.data.loading import build_split
    from cuelens.data.readers import iter_records

    path = tmp_path / "d.jsonl"
    path.write_text('{"premise": "p", "hypothesis": "h", "label": " a"}\n'
                    '{"premise": "p", "hypothesis": "h", "label": "b", "label": "a"}\n')
    shard = CompactSplit("all", str(path), "nli", [path], iter_records)
    build_split(iter_records(path), path, "all", FieldMap(), "nli", False, into=shard)
    unpacked = CompactSplit.from_arrays(shard.to_arrays(), "all", str(path), [path],
                                        iter_records)
    whole = CompactSplit("all", str(path), "nli", [path], iter_records)
    whole.extend(unpacked, 0)
    whole.extend(unpacked, 0)
    assert whole.findings.rewrites == {"a": {" a": 2}}
    assert whole.findings.duplicate_keys == {"label": [2, 2]}


def test_source_records_are_the_readers_raw_records(tmp_path):
    """Re-read from the shard (JSONL without parsing): a BOM, blank and CRLF lines kept as read."""
    from array import array

    from cuelens.data.compact import SourceRecords
    from cuelens.data.readers import iter_records

    path = tmp_path / "d.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a"}\n\n{"id": "\xc3\xa9"}\r\n  \n{"id": "c"}')
    raw = {line: text for line, text, _ in iter_records(path)}
    wanted = [1, 3, 5]
    records = SourceRecords([path], array("i", [0, 0, 0]), array("q", wanted),
                            iter_records)
    assert list(records) == [raw[line] for line in wanted]
    assert records[1] == raw[3]
