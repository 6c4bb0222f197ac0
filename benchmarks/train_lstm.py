"""Train the PTB word LSTM reported in docs/BENCHMARKS.md (issue 17, docs/methods.md §9), on the CPU.

Two layers of 256, adaptive softmax (cutoffs 2,000 / 6,000: several times cheaper than a full
10k softmax on a CPU, still exact normalised probabilities), dropout 0.25, Adam 2e-3 halved
whenever validation perplexity stops improving, whole sentences as back-propagation units (batch
64, length-bucketed). The best epoch is kept in ``--out``; training stops before an epoch that
would overrun ``--max-minutes``. Weights are not committed: re-create them with

    nohup .venv/bin/python benchmarks/train_lstm.py --out /tmp/ptb_lstm > /tmp/ptb_lstm.log &

then evaluate with ``benchmarks/lm_bench.py --load lstm:/tmp/ptb_lstm``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--dropout", type=float, default=0.25)
    parser.add_argument("--cutoffs", type=int, nargs="*", default=[2000, 6000])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--max-minutes", type=float, default=55.0)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import torch

    from cuelens.lm.rnn import RNNConfig, train_rnn
    from cuelens.lm.text import WordSplitter, read_corpus

    torch.set_num_threads(args.threads)
    splitter = WordSplitter()
    corpus = args.data / "lm_corpus"
    train = read_corpus(corpus / "ptb.train.txt", splitter)
    valid = read_corpus(corpus / "ptb.valid.txt", splitter)
    config = RNNConfig(arch="lstm", embedding_size=args.hidden, hidden_size=args.hidden,
                       layers=args.layers, dropout=args.dropout, cutoffs=args.cutoffs)
    last = [0.0]

    def progress(stage: str, fraction: float) -> None:
        if time.perf_counter() - last[0] > 60:
            last[0] = time.perf_counter()
            print(f"{time.strftime('%H:%M:%S')} {stage} {100 * fraction:.1f}%", flush=True)

    start = time.perf_counter()
    train_rnn(train, valid, config, splitter, epochs=args.epochs, batch_size=args.batch_size,
              lr=args.lr, min_count=1, seed=0, log=lambda line: print(line, flush=True),
              progress=progress, checkpoint=args.out, plateau_decay=0.5,
              max_seconds=60 * args.max_minutes)
    seconds = time.perf_counter() - start
    from cuelens.lm.rnn import RNNModel

    best = RNNModel.from_pretrained(args.out)
    test = read_corpus(corpus / "ptb.test.txt", splitter)
    summary = {"config": {**vars(args), "data": str(args.data), "out": str(args.out)},
               "train_seconds": round(seconds), "vocab": len(best.vocab),
               "valid_perplexity": round(best.perplexity(valid), 2),
               "test_perplexity": round(best.perplexity(test), 2)}
    print(json.dumps(summary, indent=2), flush=True)


if __name__ == "__main__":
    main()
