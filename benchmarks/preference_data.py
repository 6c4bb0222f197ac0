"""Generated preference pairs for the 1M-pair scan benchmark (docs/BENCHMARKS.md).

RewardBench-shaped records (``id``, ``prompt``, ``chosen``, ``rejected``, ``subset``) written in
chunks, so any size is generated in bounded memory; the same arguments give the same file.
Words are Zipfian over a 30,000-type vocabulary of pseudo-words; prompts have 6–20 words,
responses 8 + Poisson(22) words (about 31 on average). Planted: the chosen response gets 10 more
words in 60% of pairs of subset ``chat``, and a markdown list in 30% of ``reasoning`` pairs (5%
of its rejected ones); the other two subsets carry nothing.

    python benchmarks/preference_data.py pairs1m.jsonl --pairs 1000000
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

VOCAB = 30_000
SUBSETS = ("chat", "reasoning", "safety", "code")
CHUNK = 50_000


def _vocabulary(rng: np.random.Generator) -> np.ndarray:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(3, 9, VOCAB)
    return np.array(["".join(rng.choice(letters, size=n)) for n in lengths])


def chunk_records(start: int, n: int, vocab: np.ndarray, rng: np.random.Generator) -> list[dict]:
    weights = 1.0 / np.arange(1, VOCAB + 1)
    weights /= weights.sum()
    subsets = [SUBSETS[i % len(SUBSETS)] for i in range(start, start + n)]
    lengths = np.column_stack([rng.integers(6, 21, n), 8 + rng.poisson(22, (n, 2))])
    lengths[:, 1] += 10 * (np.array([s == "chat" for s in subsets]) & (rng.random(n) < 0.6))
    ends = np.cumsum(lengths.ravel())
    words = vocab[rng.choice(VOCAB, size=int(ends[-1]), p=weights)]
    texts = [" ".join(words[e - k:e]) for e, k in zip(ends.tolist(), lengths.ravel().tolist())]
    listed = rng.random((n, 2)) < np.array([0.3, 0.05])
    rows = []
    for j, i in enumerate(range(start, start + n)):
        prompt, chosen, rejected = texts[3 * j:3 * j + 3]
        if subsets[j] == "reasoning":
            if listed[j, 0]:
                chosen = "- " + chosen.replace(" ", "\n- ", 1)
            if listed[j, 1]:
                rejected = "- " + rejected.replace(" ", "\n- ", 1)
        rows.append({"id": f"p{i}", "prompt": prompt, "chosen": chosen, "rejected": rejected,
                     "subset": subsets[j]})
    return rows


def generate(out: Path, pairs: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    vocab = _vocabulary(rng)
    with open(out, "w", encoding="utf-8") as handle:
        for start in range(0, pairs, CHUNK):
            for row in chunk_records(start, min(CHUNK, pairs - start), vocab, rng):
                handle.write(json.dumps(row) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    generate(args.out, args.pairs, args.seed)


if __name__ == "__main__":
    main()
