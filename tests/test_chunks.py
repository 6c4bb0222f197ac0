"""Chunked splits (cuelens.engine.chunks): the same items, records, skips and text keys as the
compact in-memory split, whatever the chunk size and shard boundaries."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cuelens.audit.text_keys import TextKeys, text_keys
from cuelens.data.schema import FieldMap
from cuelens.data.synthetic import make_nli
from cuelens.engine.chunks import read_chunked
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
