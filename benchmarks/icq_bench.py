"""ICQ feature benchmark (issue 3): annotation speed (cold / warm cache) and top feature cues.

Speed: every hypothesis/choice text of the NLI and MCQ datasets in ``--data`` (all splits), with
their premises for OVERLAP, annotated with all seven features; *cold* starts from an empty cache
directory (spaCy model load included), *warm* re-reads the disk cache in a fresh in-memory state.
Throughput counts every text (duplicates included: parsing each distinct text once is part of
the method) and also reports the distinct count.

Fidelity: the top feature cues of SNLI (dev → test), MNLI (dev, cross-validated), ROC story
cloze (dev → test), COPA (dev → test) and ARCT (train → test).

Usage::

    .venv/bin/python benchmarks/icq_bench.py speed --runs 3
    .venv/bin/python benchmarks/icq_bench.py fidelity --cache-dir /tmp/icq-cache
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from pathlib import Path

from cuelens.audit.features import get_features
from cuelens.audit.features.annotate import annotate
from cuelens.audit.icq import run_feature_audit
from cuelens.audit.parse_cache import ParseCache
from cuelens.data import load_dataset

DATA = Path("/work/shared/data")
SPEED_SETS = ["snli", "snli_hard", "mnli", "copa", "balanced_copa", "arct", "arct_adv",
              "roc_story_cloze", "commonsenseqa"]
FIDELITY_SETS = [("SNLI (dev → test)", "snli"), ("MNLI (dev, 5-fold CV)", "mnli"),
                 ("ROC story cloze (dev → test)", "roc_story_cloze"),
                 ("COPA (dev → test)", "copa"), ("ARCT (train → test)", "arct")]


def corpus(data: Path) -> tuple[list[str], list[str]]:
    """All hypothesis/choice texts and their premises, every split of every speed dataset."""
    texts, premises = [], []
    for name in SPEED_SETS:
        for path in sorted((data / name).glob("*.jsonl")):
            split = load_dataset(str(path)).test
            inst = split.instances(["contradiction", "entailment", "neutral"]
                                   if split.task == "nli" else ["right", "wrong"])
            texts += inst.texts
            premises += inst.premises
    return texts, premises


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children (spaCy workers)."""
    me, kids = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                     resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(features, texts, premises, cache_dir) -> tuple[float, float]:
    """``(wall seconds, CPU seconds)`` of one annotation pass from a fresh in-memory state."""
    ParseCache.clear_memory()
    start, cpu = time.perf_counter(), cpu_seconds()
    annotate(features, texts, premises, ParseCache(cache_dir))
    return time.perf_counter() - start, cpu_seconds() - cpu


def speed(args) -> None:
    texts, premises = corpus(args.data)
    print(f"{len(texts)} texts ({len(set(texts))} distinct), "
          f"{len(set(premises))} distinct premises")
    for label, names in [("all features", None), ("word only", ["word"])]:
        features = get_features(names)
        cold, warm = [], []
        for _ in range(args.runs if names is None else 3):
            with tempfile.TemporaryDirectory() as cache:
                cold.append(timed(features, texts, premises, cache))
                print(f"  {label} cold run: wall {cold[-1][0]:.1f} s, CPU {cold[-1][1]:.1f} s",
                      flush=True)
                warm.extend(timed(features, texts, premises, cache) for _ in range(3))
        for kind, runs in [("cold", cold), ("warm", warm)]:
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            print(f"{label:13s} {kind}: median wall {wall:8.2f} s over {len(runs)} runs "
                  f"({', '.join(f'{w:.2f}' for w, _ in runs)}) → {len(texts) / wall:,.0f} "
                  f"texts/s; CPU {cpu:.2f} s → {len(texts) / cpu:,.0f} texts per CPU-second")
            if names is not None:
                break  # word features are never cached: cold == warm


def fidelity(args) -> None:
    for title, name in FIDELITY_SETS:
        ds = load_dataset(str(args.data / name))
        rows = run_feature_audit(ds, cache_dir=args.cache_dir)["features"]
        print(f"\n### {title}: {len(rows)} candidate feature values\n")
        print("| rank | feature | value | cueness % | train / test support | train dist "
              "| test dist |")
        print("|---|---|---|---|---|---|---|")
        shown = rows[:5] + [r for r in rows if r.feature != "WORD"][:5]
        for row in list({id(r): r for r in shown}.values()):
            rank = rows.index(row) + 1
            dist = lambda d: " ".join(f"{k[:4]} {v:.2f}" for k, v in d.items())  # noqa: E731
            print(f"| {rank} | {row.feature} | {row.value} | {100 * row.cueness:.2f} "
                  f"| {row.train_support} / {row.test_support} | {dist(row.train_dist)} "
                  f"| {dist(row.test_dist)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("speed")
    s.add_argument("--runs", type=int, default=3)
    f = sub.add_parser("fidelity")
    f.add_argument("--cache-dir", default=None)
    for p in (s, f):
        p.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    (speed if args.command == "speed" else fidelity)(args)


if __name__ == "__main__":
    main()
