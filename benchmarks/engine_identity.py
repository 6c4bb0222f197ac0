"""Engine identity (issue 24): the word-cue scan's outputs on five real datasets, digested, so a
rewrite of the scan engine can show that results.json and the per-item bias table stay
byte-identical.

For each dataset (COPA dev → test, MNLI dev 5-fold CV, SNLI dev → test, ROC story cloze
dev → test, CommonsenseQA train → dev; ../shared/data) it runs the exact scan with the default
:class:`~cuelens.audit.config.ScanConfig` (seed 0), no ICQ features (their folds and parse
cache are not part of the engine), saves the outputs, and digests:

* ``results.json`` without the fields that vary from checkout to checkout (:data:`VOLATILE`):
  ``tool.version`` (the package version) only — results.json holds no timing (run.json does,
  with argv and the absolute input paths; run.json is not digested) and names each split's file
  by its base name; the rest is serialised with sorted keys;
* ``items.jsonl`` (the per-item bias outputs), byte for byte.

    python benchmarks/engine_identity.py --save /tmp/ref       # record the reference
    python benchmarks/engine_identity.py --compare /tmp/ref    # "identical" per dataset

``--save`` writes ``<name>.results.json`` (normalised), ``<name>.items.jsonl`` and
``digests.json`` into the directory; ``--compare`` prints per dataset ``identical`` or the
differing top-level sections (and exits non-zero on a difference).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from cuelens.audit.config import ScanConfig
from cuelens.audit.pipeline import scan_dataset
from cuelens.data import load_dataset

DATA = next((p / "shared" / "data" for p in Path(__file__).resolve().parents
             if (p / "shared" / "data").is_dir()), Path("shared") / "data")

DATASETS = {
    "copa": {"data": "copa"},
    "mnli_dev": {"data": "mnli/dev.jsonl"},
    "snli": {"data": "snli"},
    "roc_story_cloze": {"data": "roc_story_cloze"},
    "commonsenseqa": {"data": "commonsenseqa"},
}

# key paths removed before digesting; "*" matches every key of a mapping
VOLATILE = [("tool", "version")]


def _drop(tree: dict, path: tuple[str, ...]) -> None:
    head, rest = path[0], path[1:]
    keys = list(tree) if head == "*" else [head]
    for key in keys:
        if key not in tree:
            continue
        if not rest:
            del tree[key]
        elif isinstance(tree[key], dict):
            _drop(tree[key], rest)


def normalised(results: dict) -> str:
    for path in VOLATILE:
        _drop(results, path)
    return json.dumps(results, sort_keys=True, ensure_ascii=False, indent=1) + "\n"


def scan_one(name: str) -> tuple[str, bytes, float]:
    dataset = load_dataset(**{key: str(DATA / value) for key, value in DATASETS[name].items()})
    start = time.process_time()
    result = scan_dataset(dataset, ScanConfig(seed=0), features=())
    cpu = time.process_time() - start
    with tempfile.TemporaryDirectory() as out:
        result.write(out, item_files="none")
        results = json.loads((Path(out) / "results.json").read_text())
        items = (Path(out) / "items.jsonl").read_bytes()
    return normalised(results), items, cpu


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--save", type=Path)
    mode.add_argument("--compare", type=Path)
    parser.add_argument("--only", nargs="*", default=list(DATASETS))
    args = parser.parse_args()
    directory = args.save or args.compare
    directory.mkdir(parents=True, exist_ok=True)
    digests: dict = {}
    differ = False
    for name in args.only:
        results, items, cpu = scan_one(name)
        digests[name] = {"results": digest(results.encode()), "items": digest(items)}
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if args.save:
            (directory / f"{name}.results.json").write_text(results)
            (directory / f"{name}.items.jsonl").write_bytes(items)
            print(f"{name}: saved ({cpu:.1f} CPU s, peak RSS {peak:.0f} MiB)", flush=True)
            continue
        reference = json.loads((directory / "digests.json").read_text())[name]
        verdict = "identical" if digests[name] == reference else "DIFFERENT"
        if verdict != "identical":
            differ = True
            old = json.loads((directory / f"{name}.results.json").read_text())
            new = json.loads(results)
            sections = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
            if digests[name]["items"] != reference["items"]:
                sections.append("items.jsonl")
            verdict += f" (sections: {', '.join(sections)})"
        print(f"{name}: {verdict} ({cpu:.1f} CPU s, peak RSS {peak:.0f} MiB)", flush=True)
    if args.save:
        path = directory / "digests.json"
        known = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**known, **digests}, indent=1, sort_keys=True) + "\n")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
