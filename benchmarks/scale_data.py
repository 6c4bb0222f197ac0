"""Generated NLI data for the scale benchmark (issue 16), written shard by shard.

Items come from :func:`cuelens.data.synthetic.make_nli` (planted cues, Zipfian filler words,
30,000-type vocabulary); shard ``s`` is drawn with seed ``seed + s`` and ids ``s<s>-<i>``, so any
number of items is generated in bounded memory and the same arguments give the same files.

    python benchmarks/scale_data.py OUT_DIR --items 1000000 --shard-items 250000 --format parquet
    python benchmarks/scale_data.py nli2m.jsonl --items 2000000 --format jsonl   # one file
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cuelens.data.synthetic import make_nli

VOCAB = 30_000


def shard_records(shard: int, n: int, seed: int) -> list[dict]:
    return make_nli(n, seed=seed + shard, vocab_size=VOCAB, id_prefix=f"s{shard}")


def write_parquet(path: Path, records: list[dict]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {key: [r[key] for r in records] for key in ("id", "premise", "hypothesis", "label")}
    pq.write_table(pa.table(columns), path)


def generate(out: Path, items: int, shard_items: int, fmt: str, seed: int = 0) -> list[Path]:
    """Write ``items`` NLI items; parquet/jsonl shards in directory ``out`` or one JSONL file."""
    shards = (items + shard_items - 1) // shard_items
    if fmt == "jsonl" and out.suffix == ".jsonl":
        with open(out, "w", encoding="utf-8") as handle:
            for s in range(shards):
                for r in shard_records(s, min(shard_items, items - s * shard_items), seed):
                    handle.write(json.dumps(r, ensure_ascii=False) + "\n")
        return [out]
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for s in range(shards):
        records = shard_records(s, min(shard_items, items - s * shard_items), seed)
        path = out / f"part-{s:05d}.{fmt}"
        if fmt == "parquet":
            write_parquet(path, records)
        else:
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                            encoding="utf-8")
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--items", type=int, required=True)
    parser.add_argument("--shard-items", type=int, default=250_000)
    parser.add_argument("--format", choices=["parquet", "jsonl"], default="parquet")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    generate(args.out, args.items, args.shard_items, args.format, args.seed)


if __name__ == "__main__":
    main()
