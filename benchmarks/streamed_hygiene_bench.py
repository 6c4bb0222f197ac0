"""Peak memory of the hygiene section in memory vs streamed from chunks (issue 16;
docs/BENCHMARKS.md "Streamed hygiene").

    OMP_NUM_THREADS=1 python benchmarks/streamed_hygiene_bench.py DATA streamed --chunk-items 250000
    OMP_NUM_THREADS=1 python benchmarks/streamed_hygiene_bench.py DATA memory

``streamed``: read DATA into chunk files (:func:`cuelens.engine.chunks.read_chunked`), then
:func:`cuelens.audit.streamed_hygiene.streamed_hygiene`; ``memory``:
:func:`cuelens.engine.streaming.load_streaming`, then
:func:`cuelens.audit.hygiene.data_hygiene`. Prints one JSON line: seconds and RSS (MiB) after
loading / chunking, the peak RSS of the hygiene step alone (VmHWM reset before it) and of the
whole process.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

from cuelens.data.schema import FieldMap


def _status(field: str) -> int:
    """A ``/proc/self/status`` memory field in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024)
    raise KeyError(field)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("data")
    parser.add_argument("mode", choices=["streamed", "memory"])
    parser.add_argument("--chunk-items", type=int, default=250_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        start = time.perf_counter()
        if args.mode == "streamed":
            from cuelens.audit.streamed_hygiene import streamed_hygiene
            from cuelens.engine.chunks import ChunkedSplit, read_chunked

            splits: list[ChunkedSplit] = []
            for _ in read_chunked(args.data, "all", FieldMap(), None, False, Path(temp),
                                  args.chunk_items, into=splits):
                pass
            run = lambda: streamed_hygiene({"all": splits[0]}, "all", True, args.seed,  # noqa: E731
                                           Path(temp) / "work")
        else:
            from cuelens.audit.streamed_hygiene import data_hygiene
            from cuelens.engine.streaming import load_streaming

            dataset = load_streaming(args.data)
            run = lambda: data_hygiene(dataset, args.seed)  # noqa: E731
        loaded, loaded_rss = time.perf_counter(), _status("VmRSS")
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM: the hygiene step's peak
        section = run()
        out = {"mode": args.mode, "load_s": round(loaded - start, 1),
               "hygiene_s": round(time.perf_counter() - loaded, 1), "loaded_rss_mb": loaded_rss,
               "hygiene_peak_rss_mb": _status("VmHWM"),
               "process_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                            / 1024),
               "splits": section["splits"]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
