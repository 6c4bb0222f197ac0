"""Compiled reading (issue 55): JSONL blocks parsed by pyarrow give exactly the items, skips,
label rewrites and errors of the line reader."""

from __future__ import annotations

import json
import unicodedata

import numpy as np
import pytest

from cuelens.data import readers
from cuelens.data.readers import RecordTable, jsonl_pieces
from cuelens.data.schema import FieldMap
from cuelens.data.synthetic import make_nli
from cuelens.engine import streaming
from cuelens.engine.chunks import read_chunked
from cuelens.data.readers import iter_records
from cuelens.errors import UserError


def _state(split) -> tuple:
    """Everything a compact split holds."""
    return (list(split.ids), list(split.premises), list(split.hypotheses), list(split.labels),
            split.label_column.values, list(split.shard_of), list(split.line_of), split.groups,
            split.skipped, split.findings.to_dict(), split.task)


def _read(path, monkeypatch, blocks: bool, skip_bad: bool = True, fields=FieldMap()):
    """The compact split of ``path``, with blocks (:func:`jsonl_pieces`) or line by line."""
    with monkeypatch.context() as patch:
        patch.setattr(readers, "TABLE_BYTES", 2048)  # many blocks, some plain, some not
        if not blocks:
            patch.setattr(streaming, "source_pieces", lambda p: iter_records(p, raw=False))
        return streaming.read_compact_split(str(path), "all", fields, None, skip_bad)


def _lines(rows) -> list[str]:
    return [json.dumps(row, ensure_ascii=False) for row in rows]


HOSTILE = {
    "crlf": lambda lines: [line + "\r" for line in lines],
    "bom": lambda lines: ["\ufeff" + lines[0], *lines[1:]],
    "rewritten label": lambda lines: [line.replace('"entailment"', '" Entailment"')
                                      for line in lines],
    "no ids": lambda lines: [json.dumps({k: v for k, v in json.loads(line).items() if k != "id"})
                             for line in lines],
    "missing label": lambda lines: [*lines[:30], lines[30].replace('"label": "', '"label": "-", '
                                                                   '"x": "'), *lines[31:]],
    "malformed, blank, repeated key, surrogate, deep": lambda lines: [
        *lines[:20], "{not json", "", '{"premise": "a", "premise": "b", "hypothesis": "c", '
        '"label": "neutral"}', '{"premise": "\\ud800", "hypothesis": "c", "label": "neutral"}',
        "{" * 5000 + "}" * 5000, *lines[20:]],
    "blank text, NaN, number": lambda lines: [
        *lines[:40], '{"premise": " \\u3000 ", "hypothesis": "c", "label": "neutral"}',
        '{"premise": "a", "hypothesis": "c", "label": "neutral", "score": NaN}',
        '{"premise": 1, "hypothesis": "c", "label": "neutral"}', *lines[40:]],
    "blank ids": lambda lines: [json.dumps({**json.loads(line), "id": ["", " "][i % 2]})
                                if i % 7 < 2 else line for i, line in enumerate(lines)],
    "non-ASCII, NFD": lambda lines: [line.replace("e ", unicodedata.normalize("NFD", "é "))
                                     for line in lines],  # in texts, not keys
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_blocks_read_as_the_line_reader_reads_them(tmp_path, monkeypatch, case):
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(HOSTILE[case](_lines(make_nli(300, seed=1)))) + "\n",
                    encoding="utf-8")
    with monkeypatch.context() as patch:
        patch.setattr(readers, "TABLE_BYTES", 2048)
        pieces = list(jsonl_pieces(path))
    assert any(isinstance(p, RecordTable) for p in pieces)  # some blocks parse whole …
    assert case in ("bom", "crlf", "no ids", "blank ids", "rewritten label", "non-ASCII, NFD") or \
        any(isinstance(p, tuple) for p in pieces)  # … and the others are read line by line
    assert _state(_read(path, monkeypatch, True)) == _state(_read(path, monkeypatch, False))


@pytest.mark.parametrize("case", ["malformed, blank, repeated key, surrogate, deep",
                                  "blank text, NaN, number", "missing label"])
def test_the_first_bad_line_is_the_same_error(tmp_path, monkeypatch, case):
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(HOSTILE[case](_lines(make_nli(300, seed=1)))) + "\n")
    errors = []
    for blocks in (True, False):
        try:
            _read(path, monkeypatch, blocks, skip_bad=False)
            errors.append(None)
        except UserError as exc:
            errors.append(str(exc))
    assert errors[0] == errors[1]
    expected = {"missing label": None, "blank text, NaN, number": "line 41: field 'premise'"}
    assert errors[0] is None if case == "missing label" else \
        expected.get(case, "line 21: malformed JSON") in errors[0]


def test_plain_records_come_as_tables_numbered_by_line(tmp_path, monkeypatch):
    path = tmp_path / "data.jsonl"
    rows = make_nli(500, seed=2)
    path.write_text("\n".join(_lines(rows)))  # no final newline
    monkeypatch.setattr(readers, "TABLE_BYTES", 4096)
    pieces = list(jsonl_pieces(path))
    assert all(isinstance(p, RecordTable) for p in pieces) and len(pieces) > 3
    assert [p.line for p in pieces] == list(np.cumsum([1] + [len(p) for p in pieces[:-1]]))
    assert [r for p in pieces for r in p.table.to_pylist()] == rows


@pytest.mark.parametrize("size", [7, 64, 1000])
def test_chunks_cut_inside_blocks_hold_the_items(tmp_path, monkeypatch, size):
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(HOSTILE["missing label"](_lines(make_nli(400, seed=3)))) + "\n")
    whole = _read(path, monkeypatch, False)
    monkeypatch.setattr(readers, "TABLE_BYTES", 2048)
    found: list = []
    chunks = list(read_chunked(str(path), "all", FieldMap(), None, True, tmp_path, size, found))
    assert [c.split.__len__() for c in chunks] == [size] * (len(whole) // size) + \
        ([len(whole) % size] if len(whole) % size else [])
    for name in ("ids", "premises", "hypotheses", "labels"):
        assert [x for c in chunks for x in getattr(c.split, name)] == list(getattr(whole, name))
    assert [x for c in chunks for x in c.split.line_of] == list(whole.line_of)
    assert found[0].skipped == whole.skipped == {"missing label": 1}
