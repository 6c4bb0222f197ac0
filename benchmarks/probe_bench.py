"""End-to-end `audit train` / `audit probe` runs with all-MiniLM-L6-v2 on real data (docs/methods.md §6).

Stages (each: fine-tune with the CLI, then probe with the CLI; timings are wall-clock):

- ``snli``: fine-tune ``minilm`` (NLI head) on a seeded random subset of SNLI dev
  (``--snli-train`` items, 1 epoch), probe SNLI test (9,824 items; cues from all of SNLI dev).
- ``copa``: MCQ head, COPA dev (500) as train, COPA test (500).
- ``arct``: MCQ head, ARCT train (1,210) → ARCT test (444).
- ``throughput``: inference items/s and items per CPU-second on ``--throughput-items`` SNLI test
  items (batch 64, length-sorted, dynamic padding) of the SNLI model (else ``minilm`` with a
  fresh seeded head), one run comparing our backends (torch, onnx, auto, torch-int8) with
  ``transformers.pipeline("text-classification")`` on the same model and items, interleaved,
  median of ``--repeats`` rounds, with the load average of each run and every backend's max
  probability difference from torch; a bf16 roberta-base-sized random model when CUDA is present.

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
from dataclasses import replace
from pathlib import Path

DATA = Path(os.environ.get("CUELENS_DATA",
                          Path(__file__).resolve().parents[2] / "shared" / "data"))
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


def _timed(fn, repeats: int) -> tuple[object, dict]:
    """Run ``fn`` ``repeats`` times: its last result and median wall / CPU seconds with the
    1-minute load average seen at each run."""
    walls, cpus, loads, result = [], [], [], None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        loads.append(round(os.getloadavg()[0], 1))
    return result, {"wall_s": round(statistics.median(walls), 2),
                    "cpu_s": round(statistics.median(cpus), 2), "load_1min": loads}


def _pipeline_probs(pipe, split, id2label: dict, batch_size: int):
    import numpy as np

    inputs = [{"text": p, "text_pair": h} for p, h in zip(split.premises, split.hypotheses)]
    out = pipe(inputs, batch_size=batch_size, top_k=None, truncation=True, max_length=128)
    column = {label: int(i) for i, label in id2label.items()}
    probs = np.zeros((len(inputs), len(column)), dtype=np.float32)
    for row, scores in enumerate(out):
        for entry in scores:
            probs[row, column[entry["label"]]] = entry["score"]
    return probs


def stage_throughput(out: Path, args) -> dict:
    """CPU: our classifier (backends torch, onnx, auto = the probe's default, torch-int8) and
    ``transformers.pipeline("text-classification")`` on the same model and items, interleaved
    round by round so load changes hit all alike; GPU (when present): bf16 roberta-base-size."""
    import numpy as np
    import torch
    import transformers

    from cuelens.data import load_dataset
    from cuelens.models.classifier import DEFAULT_BATCH, load_classifier

    dataset = load_dataset(str(DATA / "snli"))
    split = dataset.test.subset(list(range(min(args.throughput_items, len(dataset.test)))))
    trained = (out / "snli-model").is_dir()
    torch.manual_seed(args.seed)  # a fresh head (no trained model) is seeded
    clf = load_classifier(str(out / "snli-model") if trained else "minilm", "nli",
                          label_names=None if trained else dataset.label_names, device="cpu")
    batch = DEFAULT_BATCH["cpu"]
    setup_s, runs, backends_used = {}, {}, {}
    for name in ("torch", "onnx", "auto", "torch-int8"):  # onnx: exported once, then cached
        started = time.perf_counter()
        ours = replace(clf, backend=name, _runner=None)
        ours.use_backend(name)
        setup_s[name] = round(time.perf_counter() - started, 1)
        backends_used[name] = ours
        runs[name] = lambda ours=ours: ours.predict_proba(split)
    pipe = transformers.pipeline("text-classification", model=clf.model, tokenizer=clf.tokenizer,
                                 device="cpu")
    runs["transformers.pipeline"] = lambda: _pipeline_probs(pipe, split, clf.model.config.id2label,
                                                            batch)
    warm = split.subset(list(range(min(batch, len(split)))))
    for name, ours in backends_used.items():  # warm-up (auto decides here, on its first batch)
        ours.predict_proba(warm)
    _pipeline_probs(pipe, warm, clf.model.config.id2label, batch)
    probs: dict = {}
    stats: dict = {name: {"wall_s": [], "cpu_s": [], "load_1min": []} for name in runs}
    for _ in range(args.repeats):
        for name, fn in runs.items():
            probs[name], one = _timed(fn, 1)
            for key in stats[name]:
                stats[name][key] += one[key] if key == "load_1min" else [one[key]]
    reference = probs["torch"]
    rows = {}
    for name in runs:
        wall, cpu = statistics.median(stats[name]["wall_s"]), statistics.median(stats[name]["cpu_s"])
        rows[name] = {"items_per_s": round(len(split) / wall, 1),
                      "items_per_cpu_s": round(len(split) / cpu, 1),
                      "wall_s_runs": stats[name]["wall_s"], "load_1min": stats[name]["load_1min"],
                      "max_abs_diff_vs_torch": float(np.abs(probs[name] - reference).max()),
                      "argmax_agreement_vs_torch": float(
                          (probs[name].argmax(1) == reference.argmax(1)).mean())}
        print(name, rows[name], flush=True)
    summary = {"name": "throughput", "items": len(split), "batch_size": batch,
               "repeats": args.repeats, "model": "SNLI-fine-tuned minilm" if trained else
               "minilm, fresh seeded NLI head", "threads": torch.get_num_threads(),
               "backend_setup_s": setup_s, "auto_chose": backends_used["auto"].backend_in_use,
               "ours_over_pipeline": round(rows["auto"]["items_per_s"]
                                           / rows["transformers.pipeline"]["items_per_s"], 2),
               "cpu": rows}
    if torch.cuda.is_available():
        summary["gpu"] = gpu_throughput(out, dataset, args)
    else:
        summary["gpu"] = "not measured: no CUDA device"
    return summary


def gpu_throughput(out: Path, dataset, args) -> dict:
    """bf16 autocast, batch 256, on a randomly initialised roberta-base-sized classifier."""
    import torch
    from transformers import AutoTokenizer, RobertaConfig, RobertaForSequenceClassification

    from cuelens.models.classifier import Classifier
    from cuelens.models.hub import resolve_model_name

    model = RobertaForSequenceClassification(RobertaConfig(num_labels=3, vocab_size=50265,
                                                           max_position_embeddings=514))
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_name(args.gpu_tokenizer))
    clf = Classifier(model.to("cuda"), tokenizer, "nli", "cuda", "roberta-base (random)",
                     "random")
    big = dataset.test
    clf.predict_proba(big.subset(range(512)))

    def run():
        torch.cuda.synchronize()
        clf.predict_proba(big)
        torch.cuda.synchronize()

    _, timing = _timed(run, args.repeats)
    return {"device": torch.cuda.get_device_name(), "items": len(big),
            "items_per_s": round(len(big) / timing["wall_s"], 1), **timing}


STAGES = {"snli": stage_snli, "copa": stage_mcq("copa", 2, "3e-5", 64),
          "arct": stage_mcq("arct", 1, "3e-5", 64), "throughput": stage_throughput}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/probe-bench"))
    parser.add_argument("--stages", default=",".join(STAGES))
    parser.add_argument("--snli-train", type=int, default=1000)
    parser.add_argument("--int8", action="store_true", help="probe SNLI with --int8")
    parser.add_argument("--throughput-items", type=int, default=1000)
    parser.add_argument("--gpu-tokenizer", default="minilm",
                        help="tokenizer of the GPU model (an alias or a directory)")
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
