"""The Ray engine (extra ``cuelens[ray]``): Ray Data workers read, normalise and encode one shard
each; the driver appends the shards in order and maps their vocabularies into the global one, so
the dataset and token ids are the local engine's (docs/large-datasets.md, "The Ray engine").

The scan's statistics passes run on Ray in :mod:`cuelens.audit.ray_passes` and the probe's
scoring in :mod:`cuelens.models.ray_scoring`; both connect through :func:`connect` and ship
arrays with :func:`pack_arrays`.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from cuelens.audit.counts import Encoder, TokenSequences, encode, instance_texts
from cuelens.data.compact import CompactSplit
from cuelens.data.dataset import Task
from cuelens.data.loading import NO_ITEMS, build_split
from cuelens.data.schema import FieldMap
from cuelens.engine.options import EngineOptions, Loaded
from cuelens.engine.sources import iter_source_records, shard_paths
from cuelens.engine.streaming import load_streaming, peek_task
from cuelens.errors import UserError

EXTRA = "the ray engine needs Ray: pip install 'cuelens[ray]'"


def connect(address: str | None = None):
    """The ``ray`` module, connected to ``address`` (None: a local cluster) once per process."""
    try:
        import ray
    except ImportError:
        raise UserError(EXTRA) from None
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, configure_logging=False,
                 log_to_driver=False)
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    return ray


def pack_arrays(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def unpack_arrays(blob: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(blob), allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def read_shard(path: str, role: str, fields: FieldMap, task: str, skip_bad: bool, ngrams: int,
               include_premise: bool) -> bytes:
    """One shard's compact columns and encoded texts, packed (runs on a worker)."""
    shard = Path(path)
    split = CompactSplit(role, path, task, [shard], iter_source_records)
    try:
        build_split(iter_source_records(shard, raw=False), shard, role, fields, task, skip_bad, into=split)
    except UserError as exc:
        error = {"message": exc.message, "path": exc.path, "line": exc.line}
        return pack_arrays({"error": np.frombuffer(json.dumps(error).encode(), dtype=np.uint8)})
    tokens = encode(instance_texts(split, include_premise), ngrams)
    arrays = split.to_arrays()
    arrays.update({"tokens.indptr": tokens.indptr, "tokens.indices": tokens.indices,
                   "tokens.vocab": np.frombuffer(json.dumps(tokens.vocab).encode(), np.uint8)})
    return pack_arrays(arrays)


def _read_batch(batch: dict, **kwargs) -> dict:
    return {"shard": batch["shard"],
            "payload": np.array([read_shard(str(p), **kwargs) for p in batch["path"]],
                                dtype=object)}


def _unpack_shard(blob: bytes, role: str, source: str,
                  shard: Path) -> tuple[CompactSplit, TokenSequences]:
    arrays = unpack_arrays(blob)
    if "error" in arrays:
        error = json.loads(arrays["error"].tobytes())
        raise UserError(error["message"], path=error["path"], line=error["line"])
    split = CompactSplit.from_arrays(arrays, role, source, [shard], iter_source_records)
    tokens = TokenSequences(indptr=arrays["tokens.indptr"], indices=arrays["tokens.indices"],
                            vocab=json.loads(arrays["tokens.vocab"].tobytes()))
    return split, tokens


def read_split_ray(source: str, role: str, fields: FieldMap, task: str | None, skip_bad: bool,
                   options: EngineOptions) -> tuple[CompactSplit, TokenSequences]:
    """Read ``source`` shard-parallel; the merged split and its encoded instance texts."""
    ray = connect(options.address)
    shards = shard_paths(source)
    if task is None:  # the first parsable record's, in any shard (none: the local rules decide)
        _, task = peek_task((r for s in shards for r in iter_source_records(s)), fields)
    rows = [{"shard": i, "path": str(p)} for i, p in enumerate(shards)]
    kwargs = {"role": role, "fields": fields, "task": task or Task.NLI, "skip_bad": skip_bad,
              "ngrams": options.ngrams, "include_premise": options.include_premise}
    results = ray.data.from_items(rows, override_num_blocks=len(rows)).map_batches(
        _read_batch, batch_size=1, fn_kwargs=kwargs, num_cpus=1)
    merged = CompactSplit(role, source, task or Task.NLI, shards, iter_source_records)
    encoder = Encoder(options.ngrams)
    for done, row in enumerate(results.iter_rows(), start=1):
        index = int(row["shard"])
        part, tokens = _unpack_shard(row["payload"], role, source, shards[index])
        merged.extend(part, shard_offset=index)
        encoder.add_encoded(tokens)
        if options.progress is not None:
            options.progress(f"read {role} shards", done / len(shards))
    if len(merged) == 0:
        raise UserError(NO_ITEMS, path=source)
    return merged, encoder.result()


def load_ray(data: str | None = None, *, train: str | None = None, test: str | None = None,
             fields: FieldMap = FieldMap(), skip_bad: bool = False,
             options: EngineOptions = EngineOptions()) -> Loaded:
    """The local engine's :class:`Loaded` dataset, its shards read on a Ray cluster."""
    encoded: dict[int, tuple[int, TokenSequences]] = {}

    def read(source: str, role: str, fields: FieldMap, task: str | None,
             skip_bad: bool) -> CompactSplit:
        split, tokens = read_split_ray(source, role, fields, task, skip_bad, options)
        encoded[id(split)] = (len(split), tokens)
        return split

    dataset = load_streaming(data, train=train, test=test, fields=fields, skip_bad=skip_bad,
                             reader=read)
    parts = [s for s in (dataset.train, dataset.test) if s is not None]
    if any(encoded[id(s)][0] != len(s) for s in parts):  # items were dropped after reading
        return Loaded(dataset)
    combined = Encoder(options.ngrams)
    for part in parts:
        combined.add_encoded(encoded[id(part)][1])
    return Loaded(dataset, combined.result())
