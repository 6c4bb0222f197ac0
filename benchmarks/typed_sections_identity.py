"""The typed results.json sections read a real scan's results.json and write it back byte for
byte (cuelens/audit/results/), with the time a read and a write take.

    python benchmarks/typed_sections_identity.py [../shared/data/copa ../shared/data/arct
                                                  ../shared/data/snli/dev.jsonl]
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from cuelens.audit.config import ScanConfig
from cuelens.audit.pipeline import scan_dataset
from cuelens.audit.results import ScanSections
from cuelens.data import load_dataset
from cuelens.jsonio import dumps_json

DEFAULT = ["../shared/data/copa", "../shared/data/arct", "../shared/data/snli/dev.jsonl"]


def median_seconds(run, times: int = 5) -> float:
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        spent.append(time.perf_counter() - start)
    return statistics.median(spent)


def main(paths: list[str]) -> int:
    failed = 0
    for path in paths:
        text = dumps_json(scan_dataset(load_dataset(path), ScanConfig()).results)
        content = json.loads(text)
        same = dumps_json(ScanSections.from_json(content).to_json()) == text
        read = median_seconds(lambda: ScanSections.from_json(content))
        sections = ScanSections.from_json(content)
        write = median_seconds(sections.to_json)
        print(f"{path}: {'identical' if same else 'DIFFERENT'} ({len(text):,} bytes, "
              f"{len(sections.cues or []):,} cue rows; read {read:.3f} s, write {write:.3f} s, "
              "medians of 5)")
        failed += not same
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or DEFAULT))
