"""End-to-end `audit train` / `audit probe` runs with all-MiniLM-L6-v2 on real data (SPEC §6).

Stages (each: fine-tune with the CLI, then probe with the CLI; timings are wall-clock):

- ``snli``: fine-tune ``minilm`` (NLI head) on a seeded random subset of SNLI dev
  (``--snli-train`` items, 1 epoch), probe SNLI test (9,824 items; cues from all of SNLI dev).
- ``copa``: MCQ head, COPA dev (500) as train, COPA test (500).
- ``arct``: MCQ head, ARCT train (1,210) → ARCT test (444).
- ``throughput``: inference items/s of the SNLI model on ``--throughput-items`` SNLI test items
  (the tool's default batch size, length-sorted, dynamic padding), float32 and ``--int8``,
  median of ``--repeats`` runs; a roberta-base-sized random model as well when a GPU is present.

Usage: python benchmarks/probe_bench.py --out /tmp/probe-bench [--stages snli,copa,arct,throughput]
Prints a markdown summary; writes ``summary.json`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
AUDIT = str(Path(sys.executable).with_name("audit"))


def run(*args) -> float:
    """Run an `audit` command, streaming its output; return its wall-clock seconds."""
    started = time.perf_counter()
    print("$ audit", " ".join(map(str, args)), flush=True)
    subprocess.run([AUDIT, *map(str, args)], check=True)
    return time.perf_counter() - started


def snli_subset(out: Path, n: int, seed: int) -> Path:
    import numpy as np

    lines = (DATA / "snli" / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    keep = np.sort(np.random.default_rng(seed).choice(len(lines), min(n, len(lines)),
                                                      replace=False))
    path = out / f"snli-dev-{n}.jsonl"
    path.write_text("".join(lines[i] + "\n" for i in keep), encoding="utf-8")
    return path


def summarise(name: str, probe_dir: Path, train_s: float, probe_s: float, note: str) -> dict:
    probe = json.loads((probe_dir / "results.json").read_text())["probe"]
    cues = sorted(probe["accuracy_test"]["cues"], key=lambda c: -abs(c["delta"]))[:5]
    return {"name": name, "note": note, "train_seconds": round(train_s, 1),
            "probe_seconds": round(probe_s, 1), "accuracy": probe["accuracy"],
            "easy_hard": probe.get("easy_hard"),
            "total_abs_delta": probe["accuracy_test"]["total_abs_delta"],
            "top_delta": [{k: c[k] for k in ("cue", "kind", "n_with", "delta", "ci_low",
                                              "ci_high")} for c in cues],
            "distribution": [{k: c[k] for k in ("cue", "n", "score")}
                             for c in probe["distribution_test"]["cues"][:5]]}


def stage_snli(out: Path, args) -> dict:
    subset = snli_subset(out, args.snli_train, args.seed)
    model = out / "snli-model"
    train_s = run("train", "--train", subset, "--test", DATA / "snli" / "test.jsonl", "--model",
                  "minilm", "--epochs", 1, "--lr", "5e-5", "--batch-size", 32, "--max-length",
                  64, "--seed", args.seed, "--out", model)
    probe_s = run("probe", DATA / "snli", "--model", model, "--out", out / "snli-probe",
                  "--seed", args.seed, *(["--int8"] if args.int8 else []))
    return summarise("SNLI", out / "snli-probe", train_s, probe_s,
                     f"train: {args.snli_train} random SNLI-dev items, 1 epoch, lr 5e-5, "
                     "batch 32, max-length 64; probe: SNLI test 9,824, cues from SNLI dev"
                     + (", int8 inference" if args.int8 else ""))


def stage_mcq(name: str, epochs: int, lr: str, max_length: int):
    def stage(out: Path, args) -> dict:
        model = out / f"{name}-model"
        train_s = run("train", DATA / name, "--model", "minilm", "--epochs", epochs, "--lr", lr,
                      "--batch-size", 16, "--max-length", max_length, "--seed", args.seed, "--out",
                      model)
        probe_s = run("probe", DATA / name, "--model", model, "--out", out / f"{name}-probe",
                      "--seed", args.seed)
        return summarise(name.upper(), out / f"{name}-probe", train_s, probe_s,
                         f"MCQ head, {epochs} epoch(s), lr {lr}, batch 16, "
                         f"max-length {max_length}")
    return stage


def stage_throughput(out: Path, args) -> dict:
    import torch

    from cuelens.data import load_dataset
    from cuelens.models.classifier import load_classifier

    dataset = load_dataset(str(DATA / "snli"))
    split = dataset.test.subset(range(min(args.throughput_items, len(dataset.test))))
    rows = {}
    for label, int8 in (("minilm fp32 cpu", False), ("minilm int8 cpu", True)):
        clf = load_classifier(str(out / "snli-model"), "nli", device="cpu")
        if int8:
            clf.quantize_int8()
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            clf.predict_proba(split)
            times.append(time.perf_counter() - started)
        rows[label] = round(len(split) / statistics.median(times), 1)
        print(label, rows[label], "items/s", flush=True)
    if torch.cuda.is_available():
        from transformers import AutoTokenizer, RobertaConfig, RobertaForSequenceClassification

        from cuelens.models.classifier import Classifier

        model = RobertaForSequenceClassification(RobertaConfig(num_labels=3, vocab_size=50265,
                                                               max_position_embeddings=514))
        tokenizer = AutoTokenizer.from_pretrained(str(out / "snli-model"))
        clf = Classifier(model.to("cuda"), tokenizer, "nli", "cuda", "roberta-base (random)",
                         "random")
        big = dataset.test
        clf.predict_proba(big.subset(range(512)))
        times = []
        for _ in range(args.repeats):
            torch.cuda.synchronize()
            started = time.perf_counter()
            clf.predict_proba(big)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - started)
        rows[f"roberta-base-size {torch.cuda.get_device_name()}"] = round(
            len(big) / statistics.median(times), 1)
    return {"name": "throughput", "items": len(split), "repeats": args.repeats,
            "threads": torch.get_num_threads(), "items_per_second": rows}


STAGES = {"snli": stage_snli, "copa": stage_mcq("copa", 2, "3e-5", 64),
          "arct": stage_mcq("arct", 1, "3e-5", 64), "throughput": stage_throughput}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/probe-bench"))
    parser.add_argument("--stages", default=",".join(STAGES))
    parser.add_argument("--snli-train", type=int, default=1000)
    parser.add_argument("--int8", action="store_true", help="probe SNLI with --int8")
    parser.add_argument("--throughput-items", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    summary_path = args.out / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    for name in args.stages.split(","):
        summary[name] = STAGES[name](args.out, args)
        summary_path.write_text(json.dumps(summary, indent=2))
        print(json.dumps(summary[name], indent=2), flush=True)


if __name__ == "__main__":
    main()
