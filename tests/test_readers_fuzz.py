"""Fuzzing the readers (issue 13): whatever bytes a file holds, reading it either succeeds or
raises one :class:`UserError` — never another exception. Bounded: a fixed number of
derandomized examples with a per-example deadline, a few seconds in all."""

from __future__ import annotations

import gzip
import json
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuelens.data.loading import read_split
from cuelens.data.readers import _DECODER, LineError, iter_records, parse_json, read_json, \
    read_table, text_lines
from cuelens.data.schema import FieldMap
from cuelens.errors import UserError

FUZZ = settings(max_examples=120, deadline=5000,  # 5 s: a catastrophic parse, not a loaded CI box
                derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])

# Bytes biased towards the characters that matter to the parsers.
TOKENS = [b'"', b",", b"\t", b"\n", b"\r\n", b"{", b"}", b"[", b"]", b":", b"\\", b"NaN",
          b"1e999", b"9" * 30, b'"premise"', b'"hypothesis"', b'"label"', b'"choices"',
          b"\xef\xbb\xbf", b"\xe9", b"\xff", b"null", b" ", b"a"]
content = st.lists(st.one_of(st.sampled_from(TOKENS), st.binary(max_size=8)), max_size=60).map(
    b"".join)


_SCRATCH = tempfile.TemporaryDirectory(prefix="cuelens-fuzz-")  # removed at exit


def _file(data: bytes, suffix: str, compress: bool) -> Path:
    path = Path(_SCRATCH.name) / f"f{suffix}{'.gz' if compress else ''}"
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def _only_user_errors(read) -> None:
    try:
        read()
    except UserError:
        pass


@FUZZ
@given(data=content, suffix=st.sampled_from([".jsonl", ".csv", ".tsv"]), compress=st.booleans())
def test_record_readers_fail_only_with_user_errors(data, suffix, compress):
    path = _file(data, suffix, compress)

    def read():
        for line, raw, record in iter_records(path):
            assert isinstance(line, int) and line >= 1 and isinstance(raw, str)
            assert isinstance(record, (dict, LineError))
        read_split(path, "all", FieldMap(), None, skip_bad=True)

    _only_user_errors(read)


@FUZZ
@given(data=content, compress=st.booleans())
def test_text_json_and_table_readers_fail_only_with_user_errors(data, compress):
    _only_user_errors(lambda: text_lines(_file(data, ".txt", compress), keep_blank=True))
    _only_user_errors(lambda: read_json(_file(data, ".json", compress)))
    _only_user_errors(lambda: read_table(_file(data, ".csv", compress)))


@FUZZ
@given(value=st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                          lambda inner: st.lists(inner, max_size=4)
                          | st.dictionaries(st.text(max_size=5), inner, max_size=4),
                          max_leaves=20))
def test_dataset_records_of_any_shape_are_read_or_refused(value):
    record = {"premise": value, "hypothesis": "h", "label": "x", "choices": value}
    data = (json.dumps(record, allow_nan=True) + "\n").encode()
    _only_user_errors(lambda: read_split(_file(data, ".jsonl", False), "all", FieldMap(), None,
                                         skip_bad=False))


@FUZZ
@given(content)
def test_line_parse_is_the_decoders(data):
    """The C-scanner shortcut of parse_json gives json's own value or error message."""
    text = data.decode("utf-8", "replace")
    try:
        expected = _DECODER.decode(text)
    except (json.JSONDecodeError, ValueError, RecursionError):
        try:
            parse_json(text, "f.jsonl", 1)
        except LineError as error:
            assert "f.jsonl" in str(error) and "line 1" in str(error)
        else:
            raise AssertionError(f"accepted {text!r}")
        return
    assert parse_json(text, "f.jsonl", 1) == expected


@pytest.mark.parametrize("text", ['{"premise": "a", "label": 1}', '[1, 2.5, "x", null]', '"x"',
                                  " {}", '{"a": 1} ', "1 2", '{"a": 1}}', "", "NaN", '{"a": '])
def test_line_parse_keeps_values_and_messages(text):
    try:
        expected = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        with pytest.raises(LineError, match=re.escape(f"({exc.msg} at column {exc.colno})")):
            parse_json(text, "f.jsonl", 1)
        return
    except ValueError:
        with pytest.raises(LineError, match="NaN is not valid JSON"):
            parse_json(text, "f.jsonl", 1)
        return
    assert parse_json(text, "f.jsonl", 1) == expected
