"""Chunked splits (cuelens.engine.chunks): the same items, records, skips and text keys as the
compact in-memory split, whatever the chunk size and shard boundaries."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from cuelens.audit.text_keys import TextKeys, text_keys
from cuelens.data.compact import CompactSplit
from cuelens.data.schema import FieldMap
from cuelens.data.synthetic import make_mcq, make_nli
from cuelens.engine.chunks import load_mapped, read_chunked, save_mapped
from cuelens.engine.streaming import read_compact_split
from cuelens.errors import UserError


def _shards(directory):
    rows = make_nli(23, seed=4)
    directory.mkdir()
    (directory / "a.jsonl").write_text("not json\n{\"broken\n")  # only bad lines
    (directory / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:8]))
    bad = dict(rows[8], label=None)
    (directory / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in
                                               [*rows[9:12], bad, *rows[12:]]))
    return directory


@pytest.mark.parametrize("size", [1, 4, 8, 11, 100])
def test_chunks_hold_the_compact_split(tmp_path, size):
    source = str(_shards(tmp_path / "data"))
    whole = read_compact_split(source, "all", FieldMap(), None, True)
    found = []
    yielded = list(read_chunked(source, "all", FieldMap(), None, True, tmp_path, size, found))
    (chunked,) = found
    assert len(chunked) == len(whole) == 22 and chunked.sizes == [c.split.__len__()
                                                                 for c in yielded]
    assert max(chunked.sizes) <= size
    assert chunked.skipped == whole.skipped == {"malformed line": 2, "missing label": 1}
    assert dict(chunked.label_counts) == {label: list(whole.labels).count(label)
                                          for label in set(whole.labels)}
    assert chunked.choice_counts == {}  # NLI
    loaded = list(chunked)
    assert [c.first for c in loaded] == [c.first for c in yielded]
    for name in ("ids", "premises", "hypotheses", "labels"):
        assert [x for c in loaded for x in getattr(c.split, name)] == list(getattr(whole, name))
    assert [x for c in loaded for x in c.split.raw] == list(whole.raw)  # re-read records
    keys = [text_keys(c.split) for c in loaded]  # stored with the chunk, not recomputed
    full = TextKeys.of(whole)
    assert np.array_equal(np.concatenate([k.premise for k in keys]), full.premise)
    assert np.array_equal(np.concatenate([k.text for k in keys]), full.text)


def test_only_bad_lines_is_an_error(tmp_path):
    (tmp_path / "x.jsonl").write_text("nope\n")
    with pytest.raises(UserError):
        list(read_chunked(str(tmp_path / "x.jsonl"), "all", FieldMap(), None, False, tmp_path))
    with pytest.raises(UserError, match="no"):
        list(read_chunked(str(tmp_path / "x.jsonl"), "all", FieldMap(), None, True, tmp_path))


def _mcq(path):
    rows = make_mcq(9, seed=1, n_choices=3) + make_mcq(5, seed=2, n_choices=4, id_prefix="b")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@pytest.mark.parametrize("size", [1, 4, 100])
def test_chunks_count_their_choices_when_saved(tmp_path, size):
    source = _mcq(tmp_path / "mcq.jsonl")
    found = []
    list(read_chunked(source, "all", FieldMap(), None, False, tmp_path, size, found))
    assert found[0].choice_counts == Counter({3: 9, 4: 5})


@pytest.mark.parametrize("make", [make_nli, make_mcq])
def test_a_slice_of_packed_items_is_those_items_packed(tmp_path, make):
    """CompactSplit.slice_arrays: items start … stop − 1 as if read alone (label values in
    order of first appearance; their lines those of the whole file)."""
    rows = make(20, seed=3)
    whole = tmp_path / "whole.jsonl"
    whole.write_text("".join(json.dumps(r) + "\n" for r in rows))
    packed = read_compact_split(str(whole), "all", FieldMap(), None, False).to_arrays()
    for start, stop in [(0, 20), (0, 1), (5, 12), (19, 20)]:
        alone = tmp_path / "alone.jsonl"
        alone.write_text("".join(json.dumps(r) + "\n" for r in rows[start:stop]))
        expected = read_compact_split(str(alone), "all", FieldMap(), None, False).to_arrays()
        expected["lines"] += start
        sliced = CompactSplit.slice_arrays(packed, start, stop)
        assert sliced.keys() == expected.keys()
        for name, array in expected.items():
            assert sliced[name].dtype == array.dtype and np.array_equal(sliced[name], array)


def test_mapped_arrays_round_trip_read_only(tmp_path):
    """save_mapped / load_mapped: every array back with its name (dots kept), dtype, shape and
    values, empty ones too, as read-only plain ndarrays over the files (no pickle: .npy)."""
    arrays = {"hypothesis.buffer": np.frombuffer("é a".encode(), dtype=np.uint8),
              "ends": np.array([2, 4], dtype=np.int64), "keys": np.array([2**64 - 1], np.uint64),
              "codes": np.array([-1, 3], dtype=np.int16), "empty": np.zeros(0, np.int32),
              "grid": np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::2]}  # not contiguous
    loaded = load_mapped(save_mapped(tmp_path / "chunk", arrays))
    assert sorted(loaded) == sorted(arrays)
    for name, values in arrays.items():
        assert type(loaded[name]) is np.ndarray and loaded[name].dtype == values.dtype
        np.testing.assert_array_equal(loaded[name], values)
        assert not loaded[name].flags.writeable
    assert sorted(p.name for p in (tmp_path / "chunk").iterdir()) == \
        sorted(f"{name}.npy" for name in arrays)
