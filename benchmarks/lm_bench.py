"""Benchmark of the word-level LMs (issue 7, SPEC §9): PTB perplexity and BLiMP accuracy.

Trains a 3-gram (interpolated Kneser-Ney) and a word LSTM on ptb.train.txt, reports validation
perplexity on ptb.valid.txt, training time, model size on disk, and BLiMP accuracy overall and
per field (with the time to score all 67k pairs). Writes a JSON summary.

    .venv/bin/python benchmarks/lm_bench.py --arch ngram --out /tmp/lm_bench_ngram.json
    .venv/bin/python benchmarks/lm_bench.py --arch lstm --epochs 1 --hidden 128 --out /tmp/lm_bench_lstm.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", choices=["ngram", "lstm", "rnn"], default="ngram")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--order", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--embedding", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    import numpy as np
    import torch

    from cuelens.commands.score import pair_accuracy
    from cuelens.models.lm.ngram import NgramModel
    from cuelens.models.lm.rnn import RNNConfig, train_rnn
    from cuelens.models.lm.text import WordSplitter, read_corpus, read_pairs

    torch.set_num_threads(args.threads)
    splitter = WordSplitter()
    train = read_corpus(args.data / "lm_corpus" / "ptb.train.txt", splitter)
    valid = read_corpus(args.data / "lm_corpus" / "ptb.valid.txt", splitter)
    start = time.perf_counter()
    if args.arch == "ngram":
        model = NgramModel.train(train, order=args.order, discount=0.75, min_count=1,
                                 splitter=splitter)
    else:
        config = RNNConfig(arch=args.arch, embedding_size=args.embedding, hidden_size=args.hidden)
        model = train_rnn(train, valid, config, splitter, epochs=args.epochs, batch_size=32,
                          min_count=1, seed=0)
    train_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        model.save(tmp)
        size = sum(p.stat().st_size for p in Path(tmp).iterdir())
    ppl = model.perplexity(valid)
    pairs = read_pairs(args.data / "blimp" / "blimp.jsonl.gz")
    start = time.perf_counter()
    scores = model.score(pairs.good + pairs.bad)
    score_s = time.perf_counter() - start
    n = len(pairs.good)
    accuracy = pair_accuracy(scores[:n], scores[n:], pairs.paradigm, pairs.field)
    summary = {"arch": args.arch, "order": args.order if args.arch == "ngram" else None,
               "vocab": len(model.vocab), "train_seconds": round(train_s, 1),
               "model_bytes": size, "valid_perplexity": round(ppl, 2),
               "blimp_pairs": n, "blimp_score_seconds": round(score_s, 1),
               "blimp_overall": accuracy["overall"], "blimp_by_field": accuracy["by_field"],
               "finite": bool(np.isfinite(scores).all())}
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
