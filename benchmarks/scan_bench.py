"""Speed of the word-cue scan (issue 2) on a generated SNLI-scale dataset and on real data.

Generated data: ``--train`` (550,000) + ``--test`` (10,000) NLI items; hypotheses of
log-normal length (mean ≈ 7.5 words, like SNLI's) drawn from a Zipfian vocabulary
(``--vocab`` 40,000 types, exponent 1.1) plus planted cues: ``nobody`` starts 30% of
contradiction hypotheses, ``sleeping`` appears in 20% of contradictions, ``outdoors`` in 25% of
entailments and ``tall``/``first`` in 15% of neutrals each. Premises are short random sentences.

Timed: the floor (reading the files + tokenising the hypotheses) and the scan
(``load_dataset`` + ``run_word_audit``: tokenise, cue list with all ten metrics, the
metric × aggregator leakage table with baselines, easy/hard 5×5 on the test split), with the
per-stage breakdown from the progress callback and the peak RSS of the process. The issue's
word-cue stage (``word_cue_s``) is the scan without the BoW baseline (stage ``baselines``). Each
configuration runs in a fresh process so peak RSS is its own.

    python benchmarks/scan_bench.py --repeats 3
    python benchmarks/scan_bench.py --real            # SNLI, MNLI, ROC, COPA, ARCT
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

LABELS = ["contradiction", "entailment", "neutral"]
CUES = {"contradiction": [("nobody", 0.30, "start"), ("sleeping", 0.20, "any")],
        "entailment": [("outdoors", 0.25, "any")],
        "neutral": [("tall", 0.15, "any"), ("first", 0.15, "any")]}
REAL = {"snli": "snli", "mnli": "mnli", "roc": "roc_story_cloze", "copa": "copa",
        "arct": "arct"}
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def generate(path: Path, n: int, seed: int, vocab: int, exponent: float = 1.1) -> None:
    """Write ``n`` synthetic NLI items as JSONL (see the module docstring)."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(vocab)])
    weights = 1.0 / np.arange(1, vocab + 1) ** exponent
    weights /= weights.sum()
    lengths = np.clip(np.rint(rng.lognormal(np.log(7.0), 0.38, n)), 1, 40).astype(int)
    tokens = words[rng.choice(vocab, size=int(lengths.sum()), p=weights)]
    premise_tokens = words[rng.choice(vocab, size=n * 4, p=weights)].reshape(n, 4)
    labels = rng.integers(0, 3, n)
    draws = rng.random((n, 2))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            hypothesis = list(tokens[offsets[i]:offsets[i + 1]])
            label = LABELS[labels[i]]
            for j, (word, rate, where) in enumerate(CUES[label]):
                if draws[i, j] < rate:
                    slot = int(draws[i, j] * 1e6) % (len(hypothesis) + 1)
                    position = 0 if where == "start" else slot
                    hypothesis.insert(position, word)
            record = {"id": str(i), "premise": " ".join(premise_tokens[i]),
                      "hypothesis": " ".join(hypothesis), "label": label}
            out.write(json.dumps(record) + "\n")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_once(mode: str, data: str) -> dict:
    """One timed run in this process (called in a child process)."""
    from cuelens.audit.counts import encode
    from cuelens.audit.scan import ScanConfig, run_word_audit
    from cuelens.data import load_dataset

    start = time.perf_counter()
    dataset = load_dataset(data)
    loaded = time.perf_counter()
    if mode == "floor":
        splits = [s for s in (dataset.train, dataset.test) if s is not None]
        encode([t for s in splits for t in (
            s.hypotheses if s.task == "nli" else s.instances(dataset.label_names).texts)])
        return {"wall": time.perf_counter() - start, "load": loaded - start,
                "cpu": cpu_s(), "peak_rss_mb": peak_rss_mb()}
    stages, last = {"load": loaded - start}, [loaded]
    stage_cpu, last_cpu = {"load": cpu_s()}, [cpu_s()]

    def progress(stage: str, fraction: float) -> None:
        now, now_cpu = time.perf_counter(), cpu_s()
        stages[stage] = stages.get(stage, 0.0) + now - last[0]
        stage_cpu[stage] = stage_cpu.get(stage, 0.0) + now_cpu - last_cpu[0]
        last[0], last_cpu[0] = now, now_cpu

    audit = run_word_audit(dataset, ScanConfig(), progress)
    return {"wall": time.perf_counter() - start, "stages": stages, "peak_rss_mb": peak_rss_mb(),
            "cpu": cpu_s(), "stage_cpu": stage_cpu,
            "best": audit.leakage.best, "majority": audit.leakage.majority,
            "hard_fraction": audit.easy_hard.hard_fraction,
            "baselines": audit.leakage.baselines}


def child(mode: str, data: str) -> dict:
    result = subprocess.run([sys.executable, __file__, "--child", mode, data],
                            check=True, capture_output=True, text=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def summarise(name: str, runs: dict[str, list[dict]]) -> dict:
    scan, floor = runs["scan"], runs["floor"]
    median = statistics.median
    stages = {k: round(median(r["stages"][k] for r in scan), 2) for k in scan[0]["stages"]}
    stage_cpu = {k: round(median(r["stage_cpu"][k] for r in scan), 2)
                 for k in scan[0]["stage_cpu"]}
    out = {"dataset": name, "scan_s": round(median(r["wall"] for r in scan), 2),
           "floor_s": round(median(r["wall"] for r in floor), 2),
           "scan_cpu_s": round(median(r["cpu"] for r in scan), 2),
           "floor_cpu_s": round(median(r["cpu"] for r in floor), 2),
           "peak_rss_mb": round(max(r["peak_rss_mb"] for r in scan)), "stages": stages,
           "stage_cpu_s": stage_cpu,
           "best": scan[0]["best"], "majority": scan[0]["majority"],
           "hard_fraction": scan[0]["hard_fraction"], "runs": len(scan)}
    # the word-cue stage: the scan without the BoW baseline (timed as "baselines")
    out["word_cue_s"] = round(median(r["wall"] - r["stages"]["baselines"] for r in scan), 2)
    out["word_cue_ratio"] = round(out["word_cue_s"] / out["floor_s"], 2)
    out["ratio"] = round(out["scan_s"] / out["floor_s"], 2)
    out["cpu_ratio"] = round(out["scan_cpu_s"] / out["floor_cpu_s"], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=550_000)
    parser.add_argument("--test", type=int, default=10_000)
    parser.add_argument("--vocab", type=int, default=40_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--real", action="store_true", help="time the real datasets instead")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "DATA"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_once(*args.child)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        if args.real:
            targets = {name: str(DATA / folder) for name, folder in REAL.items()}
        else:
            directory = Path(tmp) / "synthetic"
            directory.mkdir()
            generate(directory / "train.jsonl", args.train, 0, args.vocab)
            generate(directory / "test.jsonl", args.test, 1, args.vocab)
            targets = {f"synthetic {args.train}+{args.test}": str(directory)}
        for name, data in targets.items():
            runs = {mode: [child(mode, data) for _ in range(args.repeats)]
                    for mode in ("floor", "scan")}
            print(json.dumps(summarise(name, runs)), flush=True)


if __name__ == "__main__":
    main()
