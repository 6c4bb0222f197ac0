"""Benchmark of the word-level LMs (issue 7, docs/methods.md §9): PTB perplexity and BLiMP accuracy.

Trains a 3-gram (interpolated Kneser-Ney) and a word LSTM on ptb.train.txt, reports validation
perplexity on ptb.valid.txt, training time, model size on disk, and BLiMP accuracy overall and
per field (with the time to score all 67k pairs). Writes a JSON summary.

    .venv/bin/python benchmarks/lm_bench.py --arch ngram --out /tmp/lm_bench_ngram.json
    .venv/bin/python benchmarks/lm_bench.py --arch lstm --epochs 1 --hidden 128 --out /tmp/lm_bench_lstm.json

``--speed PYTHON`` instead measures causal and masked scoring throughput (sentences per CPU-second, median of 3) against
minicons on random-initialised GPT-2 and BERT (6 layers, 512 hidden, 8k-token tokenizers trained
on ptb.train.txt), with the same sentences (BLiMP), and checks the per-sentence values agree
where both compute the same quantity. PYTHON is the interpreter of a throw-away venv with
``transformers<5`` and minicons (minicons does not run with transformers 5 and is never a
dependency of cuelens); this script re-runs itself there with ``--minicons-worker``.

    .venv/bin/python benchmarks/lm_bench.py --speed /tmp/mcvenv/bin/python --out /tmp/lm_speed.json
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
    parser.add_argument("--load", help="Evaluate this trained model (ngram:DIR / lstm:DIR) "
                                       "instead of training one.")
    parser.add_argument("--open-vocab", action="store_true",
                        help="Spell unknown words (open-vocabulary word-level model).")
    parser.add_argument("--speed", metavar="PYTHON", help="Throughput vs minicons (see above).")
    parser.add_argument("--minicons-worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--causal", type=int, default=256, help="Sentences for causal speed.")
    parser.add_argument("--masked", type=int, default=64, help="Sentences for PLL speed.")
    args = parser.parse_args()
    if args.minicons_worker:
        return minicons_worker(args)
    if args.speed:
        return speed(args)

    import numpy as np
    import torch

    from cuelens.lm import load_scorer
    from cuelens.lm.pairs import evaluate_pairs
    from cuelens.lm.ngram import NgramModel
    from cuelens.lm.rnn import RNNConfig, train_rnn
    from cuelens.lm.text import WordSplitter, read_corpus, read_pairs

    torch.set_num_threads(args.threads)
    splitter = WordSplitter()
    train = read_corpus(args.data / "lm_corpus" / "ptb.train.txt", splitter)
    valid = read_corpus(args.data / "lm_corpus" / "ptb.valid.txt", splitter)
    start = time.perf_counter()
    if args.load:
        model = load_scorer(args.load, open_vocab=args.open_vocab)
        args.arch = args.load.split(":")[0]
    elif args.arch == "ngram":
        model = NgramModel.train(train, order=args.order, discount=0.75, min_count=1,
                                 splitter=splitter)
    else:
        config = RNNConfig(arch=args.arch, embedding_size=args.embedding, hidden_size=args.hidden)
        model = train_rnn(train, valid, config, splitter, epochs=args.epochs, batch_size=32,
                          min_count=1, seed=0, log=print)
    train_s = time.perf_counter() - start
    model.open_vocab = args.open_vocab
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        size = sum(p.stat().st_size for p in Path(tmp).iterdir())
    ppl = model.perplexity(valid)
    pairs = read_pairs(args.data / "blimp" / "blimp.jsonl.gz")
    start = time.perf_counter()
    scores = model.score(pairs.good + pairs.bad)
    score_s = time.perf_counter() - start
    n = len(pairs.good)
    accuracy = evaluate_pairs(model, scores, pairs.good, pairs.bad, pairs.paradigm, pairs.field)
    summary = {"arch": args.arch, "load": args.load, "open_vocab": args.open_vocab,
               "order": args.order if args.arch == "ngram" else None,
               "vocab": len(model.vocab), "train_seconds": None if args.load else round(train_s, 1),
               "model_bytes": size, "valid_perplexity": round(ppl, 2),
               "blimp_pairs": n, "blimp_score_seconds": round(score_s, 1),
               "blimp_overall": accuracy["overall"], "blimp_by_field": accuracy["by_field"],
               "blimp_ties": accuracy["ties"]["overall"],
               "blimp_ties_by_field": accuracy["ties"]["by_field"],
               "blimp_oov_pair_rate": accuracy["oov"]["pair_rate"],
               "blimp_oov_word_rate": accuracy["oov"]["word_rate"],
               "blimp_oov_by_field": accuracy["oov"]["by_field"],
               "finite": bool(np.isfinite(scores).all())}
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


def _sentences(data: Path, n: int) -> list[str]:
    from cuelens.lm.text import read_pairs

    good = read_pairs(data / "blimp" / "blimp.jsonl.gz").good
    return [good[i] for i in range(0, len(good), len(good) // n)][:n]


def _timed(function, *args, repeats: int = 3, **kwargs):
    """Value and the median CPU seconds (all threads of this process) over ``repeats`` calls.

    CPU time, not wall time: the benchmark machine is shared, and wall time under load varies
    several-fold between consecutive calls."""
    import statistics

    seconds = []
    for _ in range(repeats):
        start = time.process_time()
        value = function(*args, **kwargs)
        seconds.append(time.process_time() - start)
    return value, statistics.median(seconds)


def minicons_worker(args) -> None:
    """Runs inside the minicons venv: time minicons on the saved models, write values + times."""
    import torch
    from minicons import scorer

    torch.set_num_threads(args.threads)
    root = args.minicons_worker
    spec = json.loads((root / "sentences.json").read_text())
    causal = scorer.IncrementalLMScorer(str(root / "gpt2"), "cpu")
    masked = scorer.MaskedLMScorer(str(root / "bert"), "cpu")
    total = lambda x: x.sum(0).item()   # noqa: E731

    def run_causal(sentences, bow):
        out = []
        for i in range(0, len(sentences), 32):
            out += causal.sequence_score(sentences[i:i + 32], reduction=total, bos_token=True,
                                         bow_correction=bow)
        return out

    def run_masked(sentences):
        out = []
        for i in range(0, len(sentences), 16):
            out += masked.sequence_score(sentences[i:i + 16], reduction=total,
                                         PLL_metric="original")
        return out

    run_causal(spec["causal"][:32], False)     # warm-up
    plain, plain_s = _timed(run_causal, spec["causal"], False)
    _, bow_s = _timed(run_causal, spec["causal"], True)
    pll, pll_s = _timed(run_masked, spec["masked"])
    (root / "minicons.json").write_text(json.dumps(
        {"causal": plain, "causal_s": plain_s, "causal_bow_s": bow_s, "pll": pll,
         "pll_s": pll_s}))


def speed(args) -> None:
    """Ours vs minicons: causal (bow correction on) and PLL throughput, value agreement."""
    import subprocess

    import numpy as np
    import torch

    import tests.lm_random_init as random_init
    from cuelens.lm.causal import CausalScorer
    from cuelens.lm.masked import MaskedScorer
    from cuelens.lm.text import read_sentences

    torch.set_num_threads(args.threads)
    corpus = read_sentences(args.data / "lm_corpus" / "ptb.train.txt")
    causal_text, masked_text = _sentences(args.data, args.causal), _sentences(args.data,
                                                                               args.masked)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bpe = random_init.byte_level_bpe(corpus, 8000)
        gpt2 = random_init.gpt2(bpe, layers=6, hidden=512, heads=8, positions=256)
        wordpiece = random_init.wordpiece(corpus, 8000)
        bert = random_init.bert(wordpiece, layers=6, hidden=512, heads=8, positions=256)
        for name, model, tokenizer in (("gpt2", gpt2, bpe), ("bert", bert, wordpiece)):
            model.save_pretrained(root / name)
            tokenizer.save_pretrained(root / name)
            config = json.loads((root / name / "tokenizer_config.json").read_text())
            config["tokenizer_class"] = "PreTrainedTokenizerFast"   # loadable by transformers 4
            (root / name / "tokenizer_config.json").write_text(json.dumps(config))
        (root / "sentences.json").write_text(json.dumps({"causal": causal_text,
                                                         "masked": masked_text}))
        ours_causal = CausalScorer(gpt2, bpe, name="gpt2", batch_size=32)
        ours_plain = CausalScorer(gpt2, bpe, name="gpt2", batch_size=32, bow_correction=False)
        ours_pll = MaskedScorer(bert, wordpiece, name="bert")
        ours_causal.score(causal_text[:32])     # warm-up
        _, causal_s = _timed(ours_causal.score, causal_text)
        plain, plain_s = _timed(ours_plain.score, causal_text)
        pll, pll_s = _timed(ours_pll.score, masked_text)
        subprocess.run([args.speed, __file__, "--minicons-worker", str(root), "--threads",
                        str(args.threads), "--out", str(args.out)], check=True)
        theirs = json.loads((root / "minicons.json").read_text())
    rate = lambda n, s: round(n / s, 1)   # noqa: E731   (sentences per CPU-second)
    summary = {
        "threads": args.threads, "timing": "median of 3, CPU seconds of the scoring process", "causal_sentences": len(causal_text),
        "masked_sentences": len(masked_text),
        "ours_causal_bow_per_cpu_s": rate(len(causal_text), causal_s),
        "ours_causal_plain_per_cpu_s": rate(len(causal_text), plain_s),
        "minicons_causal_plain_per_cpu_s": rate(len(causal_text), theirs["causal_s"]),
        "minicons_causal_bow_per_cpu_s": rate(len(causal_text), theirs["causal_bow_s"]),
        "ratio_causal_bow_vs_minicons_plain": round(theirs["causal_s"] / causal_s, 2),
        "ratio_causal_bow_vs_minicons_bow": round(theirs["causal_bow_s"] / causal_s, 2),
        "ours_pll_per_cpu_s": rate(len(masked_text), pll_s),
        "minicons_pll_per_cpu_s": rate(len(masked_text), theirs["pll_s"]),
        "ratio_pll": round(theirs["pll_s"] / pll_s, 2),
        "max_abs_diff_causal_plain": float(np.abs(plain - np.array(theirs["causal"])).max()),
        "max_abs_diff_pll": float(np.abs(pll - np.array(theirs["pll"])).max()),
    }
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
