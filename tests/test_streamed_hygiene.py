"""Data hygiene of chunked splits (cuelens.audit.streamed_hygiene) is exactly the in-memory
section (cuelens.audit.hygiene.data_hygiene) on real and planted data, chunk sizes 7 to 1000,
with and without the near-duplicate sample; KeySpill counts keys as np.unique does, and spills
joined read back as one."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import numpy as np
import pytest

import cuelens.audit.near_duplicates as near_duplicates
from cuelens.audit.streamed_hygiene import data_hygiene
from cuelens.audit.hygiene_keys import ItemKeys
from cuelens.audit.streamed_hygiene import ChunkedRoles, ItemFlags, KeySpill, SpilledKeys, flags_of, \
    streamed_hygiene
from cuelens.data import load_dataset
from cuelens.data.dataset import Dataset
from cuelens.data.schema import FieldMap
from cuelens.engine.chunks import ChunkedSplit, read_chunked
from cuelens.engine.streaming import load_streaming
from tests.conftest import write_jsonl


def streamed(dataset: Dataset, chunk_items: int, tmp_path: Path, seed: int = 0,
             flags: ItemFlags | None = None) -> dict:
    """``streamed_hygiene`` of the dataset's splits read again from their files in chunks,
    their keys cut in up to 64 partitions (``data_hygiene``, the reference, keeps one);
    ``flags``: receives the item flags."""
    splits: list[ChunkedSplit] = []
    (tmp_path / "chunks").mkdir(parents=True)
    for role, split in dataset.splits.items():
        for _ in read_chunked(split.path, role, FieldMap(), dataset.task, False,
                              tmp_path / "chunks", chunk_items, into=splits):
            pass
    evaluated = "test" if dataset.train is not None else "all"
    roles = ChunkedRoles({s.name: s for s in splits}, evaluated,
                         "train" if dataset.train is not None else None)
    with patch("cuelens.audit.streamed_hygiene.PARTITION_KEYS", 8):
        section = streamed_hygiene(roles, seed, tmp_path / "work", flags=flags)
    assert list((tmp_path / "work").iterdir()) == []  # the spill files are removed
    return section


def _exact_flags(split, fitting) -> dict[str, np.ndarray]:
    """The per-item copy flags of a loaded split, from its keys in memory (the reference):
    duplicate / label_conflict within the split, overlap / shared_premise against ``fitting``."""
    from cuelens.audit.hygiene_keys import ItemKeys, copy_flags, first_match

    keys = ItemKeys.of(split)
    duplicate, conflict = copy_flags(keys.inputs, keys.answers)
    out = {"duplicate": duplicate, "label_conflict": conflict}
    if fitting is not None:
        fit = ItemKeys.of(fitting)
        out["overlap"] = first_match(keys.inputs, fit.inputs) >= 0
        out["shared_premise"] = first_match(keys.premises, fit.premises) >= 0
    return out


@pytest.mark.parametrize("source, chunk_items, overlaps", [
    ({"data": "snli/dev.jsonl"}, 1000, 0),
    ({"train": "snli/dev.jsonl", "test": "snli/test.jsonl"}, 1000, 1),
    ({"data": "balanced_copa/dev.jsonl"}, 7, 0),  # MCQ, 500 mirrored pairs
    # MCQ with questions; B-COPA holds COPA dev's items, some with the choices swapped
    ({"train": "copa/dev.jsonl", "test": "balanced_copa/dev.jsonl"}, 7, 1),
    ({"data": "commonsenseqa"}, 1000, 1),
    ({"data": "arct"}, 100, 3),  # train, dev and test: no examples, three overlap rows
])
def test_real_data_gives_the_in_memory_section(shared_data, tmp_path, source, chunk_items,
                                               overlaps):
    paths = {key: str(shared_data / value) for key, value in source.items()}
    dataset = load_streaming(paths.get("data"), train=paths.get("train"), test=paths.get("test"))
    expected = data_hygiene(dataset, seed=1)
    assert len(expected.overlap) == overlaps
    assert streamed(dataset, chunk_items, tmp_path, seed=1) == expected


def planted(directory: Path) -> Path:
    """train/test NLI files with planted copies, conflicts, near copies, contrastive pairs,
    overlap and shared premises; counts in the comments."""
    words = lambda k: " ".join(f"w{k}x{j}" for j in range(12))  # noqa: E731
    train = [{"premise": f"premise {i}", "hypothesis": words(i), "label": "entailment"}
             for i in range(40)]
    train[10] = dict(train[3])  # copy of item 3 (duplicate group 1)
    train[20] = {**train[3], "premise": "PREMISE 3!", "label": "neutral"}  # a conflicting copy
    train[25] = {**train[5], "label": "neutral"}  # group 2, also a conflict
    train[30] = {**train[7], "hypothesis": words(7).rsplit(" ", 1)[0] + " other"}  # near 7
    train[33] = {**train[8], "premise": "another premise", "label": "contradiction"}  # contrast
    test = [{"premise": f"test premise {i}", "hypothesis": f"t{i} " + words(100 + i),
             "label": "neutral"} for i in range(30)]
    test[4] = dict(train[12])  # exact overlap (first train item 12)
    test[9] = {**train[3], "label": "contradiction"}  # exact overlap with train 3
    test[15] = {**test[15], "premise": "premise 17"}  # shares train 17's premise
    test[21] = {**train[14], "hypothesis": words(14).rsplit(" ", 1)[0] + " changed"}  # near 14
    for rows, name in ((train, "train"), (test, "test")):
        write_jsonl(directory / f"{name}.jsonl",
                    [{"id": f"{name}{i}", **row} for i, row in enumerate(rows)])
    return directory


def test_planted_counts_and_examples_match(tmp_path):
    dataset = load_dataset(str(planted(tmp_path / "data")))
    expected = data_hygiene(dataset, seed=2)
    train = expected.splits["train"]
    # item 3 ×3 (labels e, e, n): one redundant copy; item 5 ×2 (e, n): a conflict, no copy
    assert (train.duplicate_items, train.duplicate_groups) == (1, 1)
    assert (train.label_conflict_groups, train.label_conflict_items) == (2, 5)
    assert train.near_duplicate_pairs == 1
    # hypothesis of item 3 ×3 (labels e, e, n): 2 pairs; item 5 ×2: 1; item 8 ×2: 1
    assert train.contrastive_pairs == 4
    (row,) = expected.overlap
    assert (row.exact, row.near, row.shared_premise) == (2, 1, 4)  # + 17, 14
    exact = [(e["line"], e["other"]["line"]) for e in expected.examples["overlap"]
             if e["kind"] == "exact"]
    assert exact == [(5, 13), (10, 4)]  # test item 9 matches train item 3, its first copy
    for chunk_items in (7, 1000):
        flags = ItemFlags.under(tmp_path / f"flags{chunk_items}")
        assert streamed(dataset, chunk_items, tmp_path / str(chunk_items), 2, flags) == expected
        assert sorted(path.name for path in flags.directory.iterdir()) == ["test", "train"]
        bits = {role: flags.of(role, 0, len(split)) for role, split in dataset.splits.items()}
        for role, fitting in (("train", None), ("test", dataset.train)):
            columns = flags_of(bits[role], fitting is not None)
            for name, column in _exact_flags(dataset.splits[role], fitting).items():
                assert np.array_equal(columns[name], column), (role, name)
            # read per item range (a chunk's), the same bits
            n = len(bits[role])
            assert np.array_equal(np.concatenate([flags.of(role, first, min(6, n - first))
                                                  for first in range(0, n, 6)]), bits[role])
        assert flags_of(bits["test"], True)["overlap"].sum() == 2  # = row.exact


def test_nli_answers_need_no_numbering_across_chunks(tmp_path):
    """Labels first seen in another order in each chunk: an item's answer key depends on its
    label alone, so copies and conflicts across chunks are the in-memory ones."""
    rows = [("premise a", "one two three", "neutral"), ("premise b", "four five six", "entailment"),
            ("premise b", "four five six", "entailment"),  # chunk 2: a copy of item 1 ...
            ("premise a", "one two three", "contradiction")]  # ... and a conflict with item 0
    write_jsonl(tmp_path / "nli.jsonl", [{"id": f"i{i}", "premise": p, "hypothesis": h,
                                          "label": label} for i, (p, h, label) in enumerate(rows)])
    dataset = load_dataset(str(tmp_path / "nli.jsonl"))
    first, second = (ItemKeys.of(dataset.test.subset(np.arange(start, start + 2)))
                     for start in (0, 2))
    assert first.answers[1] == second.answers[0] and first.answers[0] != second.answers[1]
    expected = data_hygiene(dataset)
    counts = expected.splits["all"]
    assert (counts.duplicate_items, counts.label_conflict_groups) == (1, 1)
    assert streamed(dataset, 2, tmp_path) == expected


def test_near_duplicate_sample_path(shared_data, tmp_path, monkeypatch):
    monkeypatch.setattr(near_duplicates, "NEAR_MAX_ITEMS", 300)
    dataset = load_streaming(train=str(shared_data / "snli/dev.jsonl"),
                             test=str(shared_data / "snli/test.jsonl"))
    expected = data_hygiene(dataset, seed=4)
    assert expected.near_sample == {"train": 300, "test": 300}
    assert streamed(dataset, 1000, tmp_path, seed=4) == expected


def test_key_spill_groups_and_parts(tmp_path):
    rng = np.random.default_rng(0)
    keys = np.concatenate([rng.integers(0, 2**64, 3000, dtype=np.uint64),
                           rng.integers(0, 40, 5000).astype(np.uint64)])  # many small repeats
    keys = keys[rng.permutation(len(keys))]
    spill = KeySpill(tmp_path, (("item", "<i8"),), bits=3, buffered=500)
    for start in range(0, len(keys), 333):
        spill.add(keys[start:start + 333], item=np.arange(start, min(start + 333, len(keys))))
    _, counts = np.unique(keys, return_counts=True)
    spilled = spill.spilled()
    assert spilled.group_summary() == {"groups": len(counts), "largest": int(counts.max()),
                                     "grouped_items": int(counts[counts > 1].sum())}
    parts = list(spilled.parts())
    assert len(parts) == 8
    seen = set()
    for part in parts:
        assert np.all(np.diff(part["item"]) > 0)  # rows in the order they were added
        assert np.array_equal(keys[part["item"]], part["key"])
        assert not seen & set(part["key"].tolist())  # a key lives in one partition
        seen |= set(part["key"].tolist())
    assert sum(len(p["key"]) for p in parts) == len(keys)
    with pytest.raises(ValueError):
        spill.add(keys[:2])
    halves = []  # two spills joined read back as one (a split's chunks)
    for k, items in enumerate(np.array_split(np.arange(len(keys)), 2)):
        half = KeySpill(tmp_path / f"half{k}", (("item", "<i8"),), bits=3)
        half.add(keys[items], item=items)
        halves.append(half.spilled())
    for part, joined in zip(parts, SpilledKeys.joined(halves).parts()):
        assert all(np.array_equal(part[name], joined[name]) for name in ("key", "item"))
