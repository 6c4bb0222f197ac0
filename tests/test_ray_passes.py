"""Statistics that stream, read and tokenised and with their passes on Ray workers (issue 24,
docs/large-datasets.md "Ray runs the passes"): results.json and the per-item bias table are
byte-identical to the local engine's, on one 2-CPU local cluster, for cross-validated
multiple-choice and train/test NLI data in several shards and chunks across them (and n-gram
cue features), with a
capped training sample (the candidates merge) and two easy/hard iterations (the item sink); the
per-item table (JSONL and Parquet), the examples and the hygiene keys (planted copies, label
conflicts and train/test overlap: the same hygiene section and item flags) are computed on
workers too; the driver tokenises nothing and receives no per-item result: the easy/hard
counters and the item flags are written on the workers (issue 24); a bad line or an unseen test
label is the local engine's error."""

from __future__ import annotations

import functools
import json
from dataclasses import replace
from pathlib import Path

import pytest

from cuelens.audit.config import ScanConfig
from cuelens.audit.counts import Encoder
from cuelens.audit.scan import EasyMask
from cuelens.audit.passes import EasyCounters, Tally
from cuelens.audit.streamed_hygiene import ItemFlags
from cuelens.audit.chunked_data import load_chunked
from cuelens.audit import chunk_scan
from cuelens.audit.chunk_scan import scan_streaming
from cuelens.data.schema import FieldMap
from cuelens.data.synthetic import make_mcq, make_nli
from cuelens.errors import UserError
from cuelens.jsonio import dumps_json

pytest.importorskip("ray", reason="Ray is not installed: pip install 'cuelens[ray]'")
pytestmark = pytest.mark.timeout(600)

CONFIG = ScanConfig(folds=3, iterations=2, max_fit_items=150, seed=5)


def write_shards(directory: Path, records: list[dict], n_shards: int) -> str:
    directory.mkdir(parents=True)
    size = -(-len(records) // n_shards)
    for s in range(n_shards):
        part = records[s * size:(s + 1) * size]
        (directory / f"part-{s}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in part), encoding="utf-8")
    return str(directory)


def scan_outputs(work: Path, sources: tuple[str | None, ...], passes=None,
                 config: ScanConfig = CONFIG) -> tuple[str, list[bytes]]:
    """results.json and the per-item table's files of a streaming scan of ``sources`` (data,
    train, test) in chunks of 130 items, read and passed over on ``passes`` (None: locally)."""
    work.mkdir()
    reader = {} if passes is None else {"reader": passes.read}
    data = load_chunked(*sources, FieldMap(), False, config, work, chunk_items=130, **reader)
    if passes is not None:
        data.store.passes = passes
    result = scan_streaming(data, config)
    return dumps_json(result.results), [path.read_bytes()
                                        for path in result.bias.files.values()]


def spy(monkeypatch, cls, name: str, calls: list) -> None:
    """Count the calls of ``cls.name`` in this (the driver's) process; the method keeps its
    name, so that a bound one still pickles to the worker's own."""
    original = getattr(cls, name)

    @functools.wraps(original)
    def spied(self, *args):
        calls.append(name)
        return original(self, *args)

    monkeypatch.setattr(cls, name, spied)


def planted(records: list[dict], copies: dict[int, int], conflicts: dict[int, int]
            ) -> list[dict]:
    """``records`` with item ``i`` made a copy of item ``j`` for ``copies[i] = j``, and a copy
    under another label for ``conflicts[i] = j`` (the hygiene flags)."""
    records = list(records)
    for i, j in copies.items():
        records[i] = {**records[j], "id": records[i]["id"]}
    for i, j in conflicts.items():
        label = records[j]["label"]
        other = (label + 1) % len(records[j]["choices"]) if "choices" in records[j] else \
            next(name for name in ("entailment", "neutral") if name != label)
        records[i] = {**records[j], "id": records[i]["id"], "label": other}
    return records


@pytest.mark.parametrize("layout, ngrams", [("cross-validated", 1), ("train/test", 2)])
def test_ray_engine_equals_the_local_engine(cluster, tmp_path, monkeypatch, layout, ngrams):
    from cuelens.audit.ray_passes import RayPasses

    if layout == "cross-validated":  # multiple choice: 3 instances an item, hashed folds
        monkeypatch.setattr(chunk_scan, "GROUPED_FOLD_INSTANCES", 0)  # (train/test: grouped)
        records = planted(make_mcq(300, seed=7, n_choices=3), {150: 40, 280: 41}, {260: 42})
        sources = (write_shards(tmp_path / "data", records, 3), None, None)
    else:
        records = planted(make_nli(900, seed=7), {500: 3, 620: 10, 880: 400},
                          {550: 30, 750: 650})
        sources = (None, write_shards(tmp_path / "train", records[:600], 2),
                   write_shards(tmp_path / "test", records[600:], 2))
    config = replace(CONFIG, ngrams=ngrams)
    ran, received = [], []  # the Ray run really reads, counts and tallies on workers

    class Spied(RayPasses):
        def _ordered(self, ray, part, calls):
            ran.append(part.__name__)
            for result in super()._ordered(ray, part, calls):
                received.append((part.__name__, result))
                yield result

    per_item: list[str] = []  # in this process: counters added, masks and flags written, read
    for cls, name in ((EasyCounters, "add"), (EasyMask, "write"), (EasyMask, "of"),
                      (ItemFlags, "write"), (ItemFlags, "of")):
        spy(monkeypatch, cls, name, per_item)
    local = scan_outputs(tmp_path / "local", sources, config=config)
    assert {"add", "write", "of"} == set(per_item)  # the local engine does it all here
    per_item.clear()
    tokenised = []  # texts tokenised in this (the driver's) process
    original = Encoder._add_chunk
    monkeypatch.setattr(Encoder, "_add_chunk",
                        lambda self, texts: tokenised.append(len(texts)) or original(self, texts))
    remote = scan_outputs(tmp_path / "ray", sources, Spied(in_flight=3), config)
    assert {"_read_part", "_build_chunk", "_count_part", "_tally_part", "_items_part",
            "_chunk_keys", "_partition_findings", "_first_positions_part"} <= set(ran)
    results = json.loads(local[0])
    assert json.loads(remote[0])["hygiene"] == results["hygiene"]
    rows = [json.loads(line) for line in local[1][0].splitlines()]  # items.jsonl
    assert all(sum(row[flag] is True for row in rows) > 0
               for flag in ("duplicate", "label_conflict"))  # the planted copies are flagged
    assert remote[0] == local[0]
    assert remote[1] == local[1]
    assert results["config"]["statistics"] == "streaming"
    assert results["leakage"]["best"]["D"] > 0.05  # planted cues are found
    assert not tokenised  # the driver tokenised nothing
    assert not per_item  # ... nor added, wrote or read per-item state: the workers did
    tallies = [result for part, result in received if part == "_tally_part"]
    assert tallies and all(isinstance(result, Tally) for result in tallies)  # no item records
    assert all(result.flags == {} for part, result in received if part == "_partition_findings")


@pytest.mark.parametrize("bad", ["malformed line", "unseen label"])
def test_ray_reading_errors_are_the_local_ones(cluster, tmp_path, bad):
    from cuelens.audit.ray_passes import RayPasses

    records = make_nli(300, seed=3)
    train = write_shards(tmp_path / "train", records[:200], 2)
    test = write_shards(tmp_path / "test", records[200:], 2)
    shard = Path(test) / "part-1.jsonl"
    lines = shard.read_text(encoding="utf-8").splitlines(keepends=True)
    if bad == "malformed line":
        lines[7] = "{not json\n"
    else:
        lines[7] = json.dumps({**json.loads(lines[7]), "label": "sarcasm"}) + "\n"
    shard.write_text("".join(lines), encoding="utf-8")
    errors = []
    for name, reader in (("local", {}), ("ray", {"reader": RayPasses().read})):
        (tmp_path / name).mkdir()
        with pytest.raises(UserError) as caught:
            load_chunked(None, train, test, FieldMap(), False, CONFIG, tmp_path / name,
                         chunk_items=30, **reader)
        errors.append((str(caught.value), caught.value.line))
    assert errors[0] == errors[1]
    assert ("line 8" in errors[0][0]) and (bad != "unseen label" or "sarcasm" in errors[0][0])


def test_ray_streaming_cuts_words_as_local_streaming(cluster, tmp_path):
    """``--engine ray --stats streaming`` chooses the segmenter local streaming chooses, from the
    same sample, and its workers cut words with it: the same cue words on Chinese text (the
    workers cut it with unicode: whole sentences as words, the guard's warning and an
    inconclusive verdict); an ``hf:`` tokenizer, given to no worker, is one error line."""
    from cuelens.audit.chunk_scan import scan_files
    from cuelens.audit.ray_passes import RayPasses
    from cuelens.jsonio import write_jsonl

    data = tmp_path / "zh.jsonl"
    write_jsonl(data, make_nli(200, seed=5, language="zh"))
    config = ScanConfig(folds=2, iterations=1)
    local = scan_files(str(data), config=config, work_dir=tmp_path).results
    passes = RayPasses()
    remote = scan_files(str(data), config=config, work_dir=tmp_path, reader=passes.read,
                        passes=passes).results
    assert remote["segmentation"] == local["segmentation"]
    assert remote["segmentation"]["name"] in ("chinese", "chars")
    assert remote["cues"] == local["cues"] and "warnings" not in remote
    assert remote["conclusion"] == local["conclusion"]
    with pytest.raises(UserError, match=r"segmenter \(--segmenter\) hf:\S+ needs exact"):
        scan_files(str(data), config=replace(config, segmenter=f"hf:{tmp_path}"),
                   reader=passes.read, passes=passes)
