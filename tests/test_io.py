"""Streamed JSON and CSV outputs (cuelens.jsonio.write_json, cuelens.audit.scan_outputs.write_cues_csv)
are byte for byte what the one-string writers produced, and stay atomic."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest

from cuelens.audit.metrics import METRICS
from cuelens.audit.results import CueRow
from cuelens.audit.scan_outputs import write_cues_csv
from cuelens.atomic import output_set
from cuelens.jsonio import write_json

# Non-ASCII, U+2028, escapes, empty containers, nesting, floats; the list makes the text far
# longer than the text wrapper's buffer, so it is flushed many times.
TRICKY = {"name": "café ∞ \u2028 \"q\" \\ \n\t", "empty": [[], {}], "x": 1e-7, "big": 1e300,
          "none": None, "flag": True,
          "rows": [{"token": f"t{i}é", "n": i, "v": i / 7, "l": [i, "ü"]} for i in range(5000)]}


def test_write_json_equals_json_dumps(tmp_path):
    path = tmp_path / "out" / "results.json"
    write_json(path, TRICKY)
    expected = json.dumps(TRICKY, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    assert len(expected) > 100_000
    assert path.read_bytes() == expected.encode("utf-8")
    write_json(path, "é")  # a bare string, replacing the file
    assert path.read_bytes() == '"é"\n'.encode("utf-8")


def _random_value(rng, depth):
    kind = rng.choice(["str", "int", "float", "bool", "none", "record", "record"] if depth < 2 else
                      ["str", "int", "float", "bool", "none"])
    if kind == "record":
        return {f"k{j}é": _random_value(rng, depth + 1) for j in range(rng.randint(1, 3))}
    return {"str": lambda: rng.choice(["a", "é ∞", "\u2028\"\\\n", ""]),
            "int": lambda: rng.randint(-10**20, 10**20),
            "float": lambda: rng.choice([0.1, -2.5e-300, 1e300, 3.0, rng.random()]),
            "bool": lambda: rng.random() < 0.5, "none": lambda: None}[kind]()


def _shaped_like(rng, layout):
    """A record of ``layout``'s keys and nesting with fresh leaf values (types may mix)."""
    if type(layout) is dict:
        return {key: _shaped_like(rng, value) for key, value in layout.items()}
    return _random_value(rng, 2)


@pytest.mark.parametrize("seed", range(12))
def test_record_lists_are_encoded_like_json_dumps(seed):
    """Long lists of records (cues) take the column-wise path: byte-identical to json.dumps
    for random layouts, mixed-type columns, nesting, and near-records that must fall back (a
    key order changed, a key missing, an empty or list value, a non-dict row)."""
    import random

    from cuelens.jsonio import RECORDS_BATCH, RECORDS_MIN, _record_rows, dumps_json

    rng = random.Random(seed)
    layout = {f"c{j}": _random_value(rng, 0) for j in range(rng.randint(1, 6))}
    n = rng.choice([RECORDS_MIN - 1, RECORDS_MIN, 300, RECORDS_BATCH + 1])
    rows = [_shaped_like(rng, layout) for _ in range(n)]
    spoil = rng.choice(["none", "order", "missing", "empty", "list", "row"])
    if spoil != "none":
        at = rng.randrange(n)
        spoil = "missing" if spoil == "order" and len(layout) == 1 else spoil
        key = next(iter(rows[at]))
        if spoil == "order":
            rows[at] = dict(reversed(list(rows[at].items())))
        elif spoil == "missing":
            del rows[at][key]
        elif spoil in ("empty", "list"):
            rows[at][key] = {} if spoil == "empty" else [1, {"a": None}]
        else:
            rows[at] = 7
    obj = {"head": {"x": [1, 2]}, "cues": rows, "nested": {"deep": rows[:RECORDS_MIN]},
           "tail": 1.5}
    assert dumps_json(obj) == json.dumps(obj, ensure_ascii=False, indent=2,
                                         allow_nan=False) + "\n"
    assert dumps_json(rows) == json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
    assert (_record_rows(rows, 1) is not None) == (spoil == "none")  # the path was taken


def test_a_later_batch_of_another_layout_is_encoded_item_by_item():
    from cuelens.jsonio import RECORDS_BATCH, dumps_json

    rows = [{"t": f"w{i}", "m": {"z": i / 3, "ok": i % 2 == 0}} for i in range(2 * RECORDS_BATCH)]
    rows[RECORDS_BATCH + 5] = {"t": "odd", "m": {"z": [1, 2]}}
    rows[-1] = "not a record"
    assert dumps_json({"cues": rows}) == json.dumps({"cues": rows}, ensure_ascii=False,
                                                    indent=2) + "\n"


def test_a_non_finite_float_in_records_is_refused_like_json_dumps():
    from cuelens.jsonio import RECORDS_MIN, dumps_json

    rows = [{"v": float(i)} for i in range(RECORDS_MIN)] + [{"v": math.inf}]
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        dumps_json({"cues": rows})


@pytest.mark.parametrize("bad", [math.nan, math.inf, "\ud800"])
def test_a_failed_json_write_leaves_the_old_file(tmp_path, bad):
    """NaN/∞ (not JSON) and a lone surrogate (not UTF-8) fail half way: no partial file, no
    temporary, the previous file intact; inside an output set the other files are dropped."""
    path = tmp_path / "results.json"
    path.write_text("old")
    with pytest.raises((ValueError, UnicodeEncodeError)):
        with output_set():
            write_json(tmp_path / "run.json", {"ok": 1})
            write_json(path, {"rows": TRICKY["rows"], "bad": bad})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]
    assert path.read_text() == "old"


def test_cues_csv_equals_the_csv_writer(tmp_path):
    cues = [CueRow(token=token, label=label, count=count, label_count=count // 2,
                   metrics={name: k / 3 for k, name in enumerate(METRICS)}, significant=False)
            for token, label, count in [("not", "contradiction", 10), ('a "b", c', "é", 3),
                                        ("line\nbreak", "x", 1)]]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["token", "label", "count", "label_count", *METRICS])
    for cue in cues:
        writer.writerow([cue.token, cue.label, cue.count, cue.label_count,
                         *cue.metrics.values()])
    write_cues_csv(tmp_path / "cues.csv", cues, list(METRICS))
    assert (tmp_path / "cues.csv").read_bytes() == buffer.getvalue().encode("utf-8")
    assert (tmp_path / "cues.csv").read_bytes().count(b"\n") == 5  # header, 3 rows, 1 in a cell


def test_jsonl_rows_equal_jsonl_line_per_row():
    """Column-wise JSONL (codes into values, float arrays, strings) is json.dumps's text row by
    row: floats on the 6-decimal grid from digit tables, every other float by its repr."""
    from cuelens.jsonio import Coded, jsonl_line, jsonl_rows

    rng = np.random.default_rng(1)
    n = 3000
    edge = [0.0, -0.0, 1.0, -1.0, 1e-4, 9.99999e-05, 1e-05, 0.1, 0.30000000000000004, 0.5,
            999999999.999999, 1e9, 1e16, 3e20, 123.456, -5e-324, 2.5e-07, 0.000123,
            np.nextafter(0.1, 1.0), math.nan]
    numbers = {}
    for scale in (1.0, 1e3, 1e9, 1e-3):
        x = np.round(rng.random(n) * scale * rng.choice([-1, 1], n), int(rng.integers(0, 8)))
        x[::7] = rng.random(n)[::7]  # not on the grid: the repr of each
        x[:len(edge)] = edge
        numbers[f"p {scale:g}"] = x
    columns = {"id": [f'i{i}é\u2028"\\' if i % 5 == 0 else f"i{i}" for i in range(n)],
               **numbers, "label": Coded(rng.integers(0, 3, n), ["a", "b\n", None]),
               "flag": Coded(rng.integers(0, 2, n), [False, True]),
               "choice": Coded(rng.integers(0, 4, n), [0, 1, 2, 10**30]),
               "cue": Coded(rng.integers(0, 900, n), [f"w{i}" for i in range(899)] + [None]),
               "%s key": Coded(np.zeros(n, dtype=np.int16), ["x"])}

    def value(column, i):
        if isinstance(column, Coded):
            return column.values[column.codes[i]]
        v = column[i]
        return v if isinstance(v, str) else None if v != v else float(v)

    rows = [{name: value(column, i) for name, column in columns.items()} for i in range(n)]
    assert jsonl_rows(columns, nan_as_null=True) == "".join(map(jsonl_line, rows))
    assert jsonl_rows({}) == "" and jsonl_rows({"x": np.zeros(0)}) == ""
    with pytest.raises(ValueError):
        jsonl_rows({"z": np.array([math.nan])})
    with pytest.raises(ValueError):
        jsonl_rows({"z": np.array([math.inf, math.nan])}, nan_as_null=True)


@pytest.mark.parametrize("linkable", [True, False])
def test_atomic_copy_links_or_copies_and_waits_for_its_output_set(tmp_path, monkeypatch,
                                                                   linkable):
    import os

    from cuelens.atomic import atomic_copy

    source = tmp_path / "spill" / "items.parquet"
    source.parent.mkdir()
    source.write_bytes(b"\x00table" * 1000)
    if not linkable:  # e.g. the work directory on another file system
        def refuse(*_):
            raise OSError(18, "Invalid cross-device link")
        monkeypatch.setattr(os, "link", refuse)
    out = tmp_path / "out" / "items.parquet"
    with output_set():
        atomic_copy(source, out)
        assert not out.exists()  # renamed when the whole set is written
    assert out.read_bytes() == source.read_bytes()
    assert (out.stat().st_ino == source.stat().st_ino) is linkable
    assert [p.name for p in out.parent.iterdir()] == ["items.parquet"]  # no temporaries left


class _FullDisk(io.BytesIO):
    """A file on a full disk: every write fails whole, the position stays where it was."""

    def write(self, data) -> int:
        import errno

        raise OSError(errno.ENOSPC, "No space left on device")


def test_a_write_that_fails_whole_names_the_space_it_needed(tmp_path, monkeypatch):
    import cuelens.atomic as atomic
    from cuelens.errors import UserError

    monkeypatch.setattr(atomic, "open", lambda *args, **kwargs: _FullDisk(), raising=False)
    with pytest.raises(UserError, match=r"no space left on the device \(at least 3\.0 kB needed"):
        atomic.atomic_write_bytes(tmp_path / "out.bin", b"x" * 3000)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name, ok", [("out.jsonl", True), ("OUT.JSONL.GZ", True),
                                      (".jsonl", False), ("d/.jsonl.gz", False),
                                      ("out.jsonl/", False), ("out.jsonl.gz.gz", False),
                                      ("out.csv", False)])
def test_an_output_name_is_a_name_with_its_ending(name, ok):
    """The ending alone (a hidden ``.jsonl`` no reader takes) or a folder's trailing slash is
    refused; the ending is matched in any case."""
    from cuelens.errors import UserError
    from cuelens.outputs import check_output_name

    endings = (".jsonl", ".jsonl.gz")
    if ok:
        check_output_name(name, endings, "give .jsonl")
    else:
        with pytest.raises(UserError, match="give .jsonl"):
            check_output_name(name, endings, "give .jsonl")
