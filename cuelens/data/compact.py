"""Compact columns for big splits (docs/large-datasets.md, "The local engine"): the same
:class:`~cuelens.data.Split` interface, without one Python object per field per item; the
record text is re-read from the shards (:class:`SourceRecords`), not kept.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from cuelens.data.dataset import Instances, Split, Task
from cuelens.data.labels import LabelFindings
from cuelens.data.readers import RecordTable, file_format, open_lines
from cuelens.data.schema import FieldMap, normalise_nli_table
from cuelens.data.splits import build_split
from cuelens.errors import UserError


class TextColumn:
    """An append-only list of strings stored as one UTF-8 buffer plus end offsets."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._ends = array("q")

    def append(self, text: str) -> None:
        self._buffer += text.encode("utf-8", "surrogatepass")
        self._ends.append(len(self._buffer))

    def extend_arrow(self, texts) -> None:
        """Append the strings of a pyarrow string array (their UTF-8 bytes, as :meth:`append`
        writes them)."""
        import pyarrow as pa

        wide = pa.types.is_large_string(texts.type)
        offsets = np.frombuffer(texts.buffers()[1], dtype=np.int64 if wide else np.int32)[
            texts.offset:texts.offset + len(texts) + 1].astype(np.int64)
        base, start = len(self._buffer), int(offsets[0])
        self._buffer += memoryview(texts.buffers()[2])[start:int(offsets[-1])]
        self._ends.frombytes((offsets[1:] - start + base).tobytes())

    def extend(self, other: "TextColumn") -> None:
        base = len(self._buffer)
        self._buffer += other._buffer
        ends = np.asarray(other._ends, dtype=np.int64) + base
        self._ends.frombytes(ends.tobytes())

    def __len__(self) -> int:
        return len(self._ends)

    def to_arrays(self, name: str) -> dict[str, np.ndarray]:
        return {f"{name}.buffer": np.frombuffer(bytes(self._buffer), dtype=np.uint8),
                f"{name}.ends": np.asarray(self._ends, dtype=np.int64)}

    @classmethod
    def from_arrays(cls, arrays, name: str) -> "TextColumn":
        column = cls()
        column._buffer = bytearray(arrays[f"{name}.buffer"].tobytes())
        column._ends = array("q", arrays[f"{name}.ends"].tobytes())
        return column

    def __getitem__(self, i: int) -> str:
        i = int(i)
        if i < 0:
            i += len(self._ends)
        start = self._ends[i - 1] if i > 0 else 0
        return self._buffer[start:self._ends[i]].decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        start, buffer = 0, self._buffer
        for end in self._ends:
            yield buffer[start:end].decode("utf-8", "surrogatepass")
            start = end


class LabelColumn:
    """Labels as ``int16`` codes into their distinct values (strings for NLI, ints for MCQ)."""

    def __init__(self) -> None:
        self.values: list = []
        self._code: dict = {}
        self.codes = array("h")

    def code(self, label) -> int:
        """The code of ``label``, a new one when it is a new value."""
        code = self._code.get(label)
        if code is None:
            code = self._code[label] = len(self.values)
            self.values.append(label)
        return code

    def append(self, label) -> None:
        self.codes.append(self.code(label))

    def extend(self, other: "LabelColumn") -> None:
        remap = [self.code(value) for value in other.values]
        codes = np.asarray(remap, dtype=np.int16)[np.asarray(other.codes, dtype=np.int64)]
        self.codes.frombytes(codes.astype(np.int16).tobytes())

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, i: int):
        return self.values[self.codes[int(i)]]

    def __iter__(self) -> Iterator:
        values = self.values
        return (values[c] for c in self.codes)


RecordsFn = Callable[[Path], Iterator[tuple[int, str, object]]]


class SourceRecords:
    """The original record text of each kept item, re-read from its shard when iterated.

    ``iter_records(path)`` yields ``(line, raw, record)`` like the readers; item ``i`` is line
    ``lines[i]`` of shard ``shards[i]``. Iterating streams: nothing is held in memory.
    """

    def __init__(self, paths: list[Path], shard: array, lines: array,
                 iter_records: RecordsFn) -> None:
        self.paths, self.shard, self.lines, self._iter = paths, shard, lines, iter_records

    @classmethod
    def joined(cls, parts: list["SourceRecords"]) -> "SourceRecords":
        """The records of ``parts`` (of the same shards, e.g. the chunks of one split, in
        order), read in one pass over the shards when iterated."""
        return cls(parts[0].paths, array("i", b"".join(part.shard.tobytes() for part in parts)),
                   array("q", b"".join(part.lines.tobytes() for part in parts)), parts[0]._iter)

    def __len__(self) -> int:
        return len(self.lines)

    def __iter__(self) -> Iterator[str]:
        shard = np.frombuffer(self.shard, dtype=np.int32) if len(self.shard) else \
            np.zeros(0, np.int32)
        lines = np.frombuffer(self.lines, dtype=np.int64) if len(self.lines) else \
            np.zeros(0, np.int64)
        for index, path in enumerate(self.paths):
            wanted = iter(lines[shard == index].tolist())
            target = next(wanted, None)
            if target is None:
                continue
            for line, raw in self._raw_lines(path):
                if line == target:
                    yield raw
                    target = next(wanted, None)
                    if target is None:
                        break

    def __getitem__(self, i: int) -> str:
        i = int(i)
        target, path = self.lines[i], self.paths[self.shard[i]]
        return next(raw for line, raw in self._raw_lines(path) if line == target)

    def _raw_lines(self, path: Path) -> Iterator[tuple[int, str]]:
        """``(line, raw)`` of a shard: a JSONL shard's lines as read, not parsed again (they are
        the readers' raw records); other formats through ``iter_records``."""
        if _is_jsonl(path):
            return open_lines(path)
        return ((line, raw) for line, raw, _ in self._iter(path))


def _is_jsonl(path: Path) -> bool:
    try:
        return file_format(path) == "jsonl"
    except UserError:  # not a text format (Parquet)
        return False


class CompactSplit(Split):
    """A :class:`Split` whose columns are compact; items are appended shard by shard."""

    def __init__(self, name: str, path: str, task: str, shards: list[Path],
                 iter_records: RecordsFn) -> None:
        super().__init__(name=name, path=path, task=task)
        self.columns = {name: TextColumn() for name in ("ids", "premises", "hypotheses")}
        self.label_column = LabelColumn()
        self.shard_of, self.line_of = array("i"), array("q")
        self.shard = 0  # index of the shard being appended
        self._expose()
        self.raw = SourceRecords(shards, self.shard_of, self.line_of,  # type: ignore[assignment]
                                 iter_records)

    def _expose(self) -> None:
        """Serve the compact columns under the :class:`Split` field names."""
        for name, column in self.columns.items():
            setattr(self, name, column)
        self.labels = self.label_column  # type: ignore[assignment]
        self.lines = self.line_of  # type: ignore[assignment]

    def append(self, record: dict, raw: str, line: int) -> None:
        self.append_fields(record, line)  # into the compact columns, exposed as the fields
        self.shard_of.append(self.shard)

    def append_table(self, rows: RecordTable, fields: FieldMap, file_name: str) -> bool:
        """Append the records of ``rows`` (of the file ``file_name``) at once when they are NLI
        items that :func:`~cuelens.data.schema.normalise_nli_table` takes: the same items and
        label rewrites as :meth:`append` of each; False, with nothing appended, otherwise."""
        found = normalise_nli_table(rows.table, fields) if self.task == Task.NLI else None
        if found is None:
            return False
        n, lines = len(rows), np.arange(rows.line, rows.line + len(rows), dtype=np.int64)
        if found.ids is None:  # normalise_nli's default ids
            for line in lines.tolist():
                self.columns["ids"].append(f"{file_name}:{line}")
        else:
            self.columns["ids"].extend_arrow(found.ids)
        self.columns["premises"].extend_arrow(found.premises)
        self.columns["hypotheses"].extend_arrow(found.hypotheses)
        codes = np.asarray([self.label_column.code(label) for label in found.labels],
                           dtype=np.int16)
        self.label_column.codes.frombytes(codes[found.label_index].tobytes())
        counts = np.bincount(found.label_index, minlength=len(found.labels)).tolist()
        for original, label, items in zip(found.originals, found.labels, counts):
            if original != label:
                self.findings.rewrite(original, label, items)
        self.groups.extend([None] * n)
        self.shard_of.frombytes(np.full(n, self.shard, dtype=np.int32).tobytes())
        self.line_of.frombytes(lines.tobytes())
        return True

    def extend(self, other: "CompactSplit", shard_offset: int) -> None:
        """Append ``other`` (read from shards numbered from ``shard_offset`` here)."""
        for name, column in self.columns.items():
            column.extend(other.columns[name])
        self.label_column.extend(other.label_column)
        self.choices.extend(other.choices)
        self.questions.extend(other.questions)
        self.groups.extend(other.groups)
        shard_of = np.asarray(other.shard_of, dtype=np.int32) + shard_offset
        self.shard_of.frombytes(shard_of.tobytes())
        self.line_of.extend(other.line_of)
        for reason, count in other.skipped.items():
            self.skipped[reason] = self.skipped.get(reason, 0) + count
        self.findings.merge(other.findings)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Plain arrays (no pickle) of one shard's columns, e.g. to ship it from a worker."""
        meta = {"task": self.task, "labels": self.label_column.values, "choices": self.choices,
                "questions": self.questions, "groups": self.groups, "skipped": self.skipped,
                "findings": self.findings.to_dict()}
        out: dict[str, np.ndarray] = {
            "meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
            "label_codes": np.asarray(self.label_column.codes, dtype=np.int16),
            "lines": np.asarray(self.line_of, dtype=np.int64)}
        for name, column in self.columns.items():
            out.update(column.to_arrays(name))
        return out

    @classmethod
    def from_arrays(cls, arrays, name: str, path: str, shards: list[Path],
                    iter_records: RecordsFn) -> "CompactSplit":
        """The split of one shard (``shards`` = [that shard]) packed by :meth:`to_arrays`."""
        meta = json.loads(arrays["meta"].tobytes().decode("utf-8"))
        split = cls(name, path, meta["task"], shards, iter_records)
        split.columns = {column: TextColumn.from_arrays(arrays, column)
                         for column in split.columns}
        for value in meta["labels"]:
            split.label_column.code(value)
        split.label_column.codes.frombytes(arrays["label_codes"].tobytes())
        split.choices, split.questions = meta["choices"], meta["questions"]
        split.groups = meta["groups"]
        split.skipped = meta["skipped"]
        split.findings = LabelFindings.from_dict(meta["findings"])
        split.line_of.frombytes(arrays["lines"].tobytes())
        split.shard_of.frombytes(np.zeros(len(split.line_of), dtype=np.int32).tobytes())
        split._expose()
        return split

    @staticmethod
    def slice_arrays(arrays: dict, start: int, stop: int) -> dict[str, np.ndarray]:
        """The :meth:`to_arrays` of items ``start … stop − 1`` of a split packed as ``arrays``:
        their label values in order of first appearance, no skips or findings."""
        meta = json.loads(arrays["meta"].tobytes().decode("utf-8"))
        codes = arrays["label_codes"][start:stop]
        present, first = np.unique(codes, return_index=True)
        order = present[np.argsort(first)]
        recode = np.zeros(len(meta["labels"]), dtype=np.int16)
        recode[order] = np.arange(len(order))
        meta.update({key: meta[key][start:stop] for key in ("choices", "questions", "groups")},
                    labels=[meta["labels"][code] for code in order.tolist()], skipped={},
                    findings=LabelFindings().to_dict())
        out = {"meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
               "label_codes": recode[codes], "lines": arrays["lines"][start:stop]}
        for name in ("ids", "premises", "hypotheses"):
            ends, text = arrays[f"{name}.ends"], arrays[f"{name}.buffer"]
            if len(ends):  # (MCQ: no hypotheses)
                low = int(ends[start - 1]) if start else 0
                text, ends = text[low:int(ends[stop - 1])], ends[start:stop] - low
            out.update({f"{name}.buffer": text, f"{name}.ends": ends})
        return out

    @property
    def _compact(self) -> bool:
        """False once the loader replaced the columns by plain lists (a subset was taken)."""
        return self.labels is self.label_column

    def item_labels(self, label_names: list[str]) -> np.ndarray:
        if self.task == Task.MCQ or not self._compact:
            return super().item_labels(label_names)
        lookup = {name: i for i, name in enumerate(label_names)}
        table = np.asarray([lookup[v] for v in self.label_column.values], dtype=np.int64)
        return table[np.frombuffer(self.label_column.codes, dtype=np.int16)] if len(self) else \
            np.zeros(0, np.int64)

    def instances(self, label_names: list[str]) -> Instances:
        """NLI without copies: the columns themselves (MCQ flattens as usual)."""
        if self.task == Task.MCQ or not self._compact:
            return super().instances(label_names)
        return Instances(texts=self.columns["hypotheses"],  # type: ignore[arg-type]
                         premises=self.columns["premises"],  # type: ignore[arg-type]
                         labels=self.item_labels(label_names),
                         item=np.arange(len(self), dtype=np.int64))


class ShardFiller:
    """The records of one shard (:func:`~cuelens.data.readers.jsonl_pieces`: records and
    :class:`~cuelens.data.readers.RecordTable` blocks) appended to compact splits by
    :func:`~cuelens.data.splits.build_split`, a block at once where
    :meth:`CompactSplit.append_table` takes it (the same items); ``done`` once read whole."""

    def __init__(self, pieces: Iterator, path: Path, fields: FieldMap, skip_bad: bool) -> None:
        self._pieces = pieces
        self._pending: RecordTable | Iterator | None = None  # what is left of the last block
        self.path, self.fields, self.skip_bad = path, fields, skip_bad
        self.done = False

    def fill(self, split: CompactSplit, limit: int | None = None) -> None:
        """Append records to ``split`` until it holds ``limit`` items (None: all)."""
        build_split(self._records(split, limit), self.path, split.name, self.fields, split.task,
                    self.skip_bad, into=split)

    def _records(self, split: CompactSplit, limit: int | None) -> Iterator:
        while limit is None or len(split) < limit:
            piece = self._next()
            if piece is None:
                self.done = True
                return
            if not isinstance(piece, RecordTable):
                yield piece
                continue
            room = len(piece) if limit is None else min(limit - len(split), len(piece))
            if split.append_table(piece.head(room), self.fields, self.path.name):
                self._pending = piece.after(room) if room < len(piece) else None
            else:
                self._pending = piece.records()

    def _next(self):
        """The next piece: what is left of the last block, else the next of the shard."""
        pending = self._pending
        if isinstance(pending, RecordTable):
            self._pending = None
            return pending
        if pending is not None:
            record = next(pending, None)
            if record is not None:
                return record
            self._pending = None
        return next(self._pieces, None)


class Concatenated:
    """Read-only concatenation of text sequences (a split's texts after another's)."""

    def __init__(self, parts: list) -> None:
        self.parts = parts
        self._starts = np.cumsum([0] + [len(p) for p in parts])

    def __len__(self) -> int:
        return int(self._starts[-1])

    def __iter__(self) -> Iterator[str]:
        for part in self.parts:
            yield from part

    def __getitem__(self, i: int) -> str:
        i = int(i)
        k = int(np.searchsorted(self._starts, i, side="right")) - 1
        return self.parts[k][i - int(self._starts[k])]


def concatenate(parts: list):
    """``parts`` joined: one list when every part is a list, else a :class:`Concatenated`."""
    if len(parts) == 1:
        return parts[0]
    if all(isinstance(p, list) for p in parts):
        return [text for part in parts for text in part]
    return Concatenated(parts)
