"""Same results before and after a speed change (issue 26): scan a few datasets and diff outputs.

Runs ``audit scan --features none`` (exact statistics, and ``--stats streaming`` with
``--streaming``) on the shared COPA, SNLI (dev → test) and CommonsenseQA (train → dev) and on
any generated files given with ``--file`` (``benchmarks/scale_data.py``), writing
``OUT/<name>-<stats>/``. With ``--against REF`` (an ``OUT`` of an earlier run, e.g. on the base
commit) it compares ``results.json`` (ignoring ``tool.version``), ``cues.csv``, ``easy.jsonl``
and ``hard.jsonl`` byte for byte and prints one line per output; exit 1 on any difference.

    git stash; python benchmarks/scan_identity.py /tmp/ref --file /tmp/nli100k.jsonl; git stash pop
    python benchmarks/scan_identity.py /tmp/new --file /tmp/nli100k.jsonl --against /tmp/ref
    python benchmarks/scan_identity.py /tmp/new --no-scan --against /tmp/ref \
        --ignore-config max_fit_items      # after a change of that default
    python benchmarks/scan_identity.py /tmp/new --against /tmp/ref --ignore-config segmenter \
        --ignore-section segmentation      # issue 53: a new field, the rest unchanged
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("CUELENS_SHARED_DATA") or next(
    (p / "shared" / "data" for p in HERE.parents if (p / "shared" / "data").is_dir()),
    Path("shared") / "data"))
MCQ = {"copa", "commonsenseqa"}  # --stats streaming reads NLI items only
SHARED = {"copa": ["--train", "copa/dev.jsonl", "--test", "copa/test.jsonl"],
          "snli": ["--train", "snli/dev.jsonl", "--test", "snli/test.jsonl"],
          # the largest fitting portion of the fidelity datasets (53,595 instances)
          "commonsenseqa": ["--train", "commonsenseqa/train.jsonl",
                            "--test", "commonsenseqa/dev.jsonl"]}
COMPARED = ("results.json", "cues.csv", "easy.jsonl", "hard.jsonl")


def scan_arguments(args) -> dict[str, list[str]]:
    """name → the input arguments of ``audit scan``."""
    out = {name: [a if a.startswith("--") else str(DATA / a) for a in arguments]
           for name, arguments in SHARED.items() if (DATA / name).is_dir()}
    for path in args.file:
        out[Path(path).stem] = [path]
    return out


def run_scans(args) -> list[str]:
    names = []
    for name, inputs in scan_arguments(args).items():
        for stats in ["exact"] + (["streaming"] if args.streaming and name not in MCQ else []):
            out = args.out / f"{name}-{stats}"
            command = [sys.executable, "-m", "cuelens.cli", "scan", *inputs, "--features", "none",
                       "--stats", stats, "--out", str(out)]
            if stats == "streaming":
                command += ["--work-dir", str(args.out / f"work-{name}")]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
            names.append(out.name)
    return names


def comparable(path: Path, ignored: tuple[str, ...] = ()) -> bytes:
    """The bytes compared: results.json without ``tool.version`` and the ``ignored`` config
    keys (a changed default echoed in ``config``, e.g. ``max_fit_items``) and sections
    (``section:KEY``, a new one)."""
    if path.name != "results.json":
        return path.read_bytes()
    results = json.loads(path.read_bytes())
    results.get("tool", {}).pop("version", None)
    for key in ignored:
        if key.startswith("section:"):
            results.pop(key.removeprefix("section:"), None)
        else:
            results.get("config", {}).pop(key, None)
    return json.dumps(results, sort_keys=True).encode()


def compare(out: Path, against: Path, names: list[str], ignored: tuple[str, ...] = ()) -> bool:
    same = True
    for name in names:
        for output in COMPARED:
            new, old = out / name / output, against / name / output
            if not old.exists() and not new.exists():
                continue
            equal = (old.exists() and new.exists()
                     and comparable(new, ignored) == comparable(old, ignored))
            same &= equal
            print(f"{name}/{output}: {'identical' if equal else 'DIFFERS'}")
    return same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--file", action="append", default=[], help="a generated JSONL file")
    parser.add_argument("--streaming", action="store_true", help="also --stats streaming")
    parser.add_argument("--against", type=Path, help="an earlier OUT to compare with")
    parser.add_argument("--ignore-config", action="append", default=[], metavar="KEY",
                        help="a results.json config key left out of the comparison (a changed "
                             "default, e.g. max_fit_items)")
    parser.add_argument("--ignore-section", action="append", default=[], metavar="KEY",
                        help="a top-level results.json section left out (a new one)")
    parser.add_argument("--no-scan", action="store_true",
                        help="compare the scans already in OUT instead of running them")
    args = parser.parse_args()
    names = (sorted(p.name for p in args.out.iterdir() if (p / "results.json").exists())
             if args.no_scan else run_scans(args))
    if args.against is not None and not compare(args.out, args.against, names,
                                                tuple(args.ignore_config) + tuple(
                                                    f"section:{k}" for k in args.ignore_section)):
        sys.exit(1)


if __name__ == "__main__":
    main()
