"""Issue 53 on real Chinese: OCNLI train → dev (../shared/data/ocnli) with the default segmenter.

Prints, as Markdown:

1. the scan (``auto`` segmenter, word statistics, ``--features none``): chosen segmenter, headline
   D with its CI and verdict, top-10 contradiction cues, wall and CPU seconds; next to a
   character uni+bigram hypothesis-only logistic regression (scikit-learn, binary counts, C=1)
   that this script fits itself, as accuracy − the dev majority share;
2. the verdict's false-positive rate on ``--nulls`` copies of OCNLI whose train and dev labels are
   drawn at random (shares kept: a seeded permutation of each split's labels), word statistics
   only (``run_word_audit``, ``--null-iterations`` iterations), the hypotheses encoded once;
3. segmentation throughput, characters per CPU-second, per segmenter on OCNLI's train texts
   (premises + hypotheses; ``thai`` on generated Thai), and the token agreement (F1 of word
   boundaries) of rjieba with jieba's Python implementation (the same dictionary).

    python benchmarks/ocnli_bench.py --nulls 20 > /tmp/ocnli.md
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from cuelens.audit.config import ScanConfig
from cuelens.audit.scan import run_word_audit
from cuelens.audit.segmentation import scan_segmentation
from cuelens.audit.segmenters import SEGMENTERS, get_segmenter, installed
from cuelens.audit.tokenize import segmenting
from cuelens.data.loading import load_dataset
from cuelens.data.synthetic import make_nli

DATA = next((p / "shared" / "data" for p in Path(__file__).resolve().parents
             if (p / "shared" / "data").is_dir()), Path("shared") / "data")
NEGATIONS = ("没有", "不", "没", "无")


def bigram_baseline(dataset) -> float:
    """Dev accuracy of a character uni+bigram hypothesis-only LR fitted on train."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = CountVectorizer(analyzer="char", ngram_range=(1, 2), binary=True)
    X = vectorizer.fit_transform(dataset.train.hypotheses)
    model = LogisticRegression(max_iter=2000).fit(X, dataset.train.labels)
    predicted = model.predict(vectorizer.transform(dataset.test.hypotheses))
    return float(np.mean(predicted == np.asarray(dataset.test.labels)))


def main_scan(dataset) -> None:
    from cuelens.audit.pipeline import scan_dataset

    wall, cpu = time.perf_counter(), time.process_time()
    results = scan_dataset(dataset, ScanConfig(), features=()).results
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    best, leakage = results["leakage"]["best"], results["leakage"]
    labels = np.asarray(dataset.test.labels)
    majority = max(np.mean(labels == label) for label in set(labels))
    lr = bigram_baseline(dataset)
    top = [c["token"] for c in sorted(results["cues"], key=lambda c: -c["metrics"]["z"])
           if c["label"] == "contradiction"][:10]
    print("## OCNLI train → dev, default segmenter\n")
    print(f"- segmenter: {results['segmentation']['name']} ({results['segmentation']['reason']})")
    print(f"- headline D = {100 * best['D']:+.1f} points (95% CI {100 * best['ci_low']:+.1f} to "
          f"{100 * best['ci_high']:+.1f}), verdict: {leakage['verdict']}")
    print(f"- char uni+bigram hypothesis-only LR: {100 * lr:.1f}% vs majority "
          f"{100 * majority:.1f}% → D {100 * (lr - majority):+.1f} points")
    print(f"- top-10 contradiction cues: {', '.join(top)}; negations among them: "
          f"{', '.join(n for n in NEGATIONS if n in top) or 'none'}")
    print(f"- warnings: {results.get('warnings', [])}")
    print(f"- scan time (word statistics, hygiene, examples, lengths; no ICQ features): "
          f"{wall:.1f} s wall, {cpu:.1f} s CPU\n")


def null_rate(dataset, nulls: int, iterations: int) -> None:
    from cuelens.audit.counts import encode

    segmentation = scan_segmentation(dataset)
    with segmenting(segmentation.segmenter):
        tokens = encode(dataset.train.hypotheses + dataset.test.hypotheses)
        verdicts = []
        start = time.perf_counter()
        for seed in range(nulls):
            rng = np.random.default_rng(seed)
            null = replace(dataset, train=replace(dataset.train, labels=list(
                rng.permutation(dataset.train.labels))), test=replace(
                dataset.test, labels=list(rng.permutation(dataset.test.labels))))
            audit = run_word_audit(null, ScanConfig(seed=seed, iterations=iterations),
                                   tokens=tokens)
            leakage = audit.leakage.to_json()
            verdicts.append(leakage["verdict"])
            print(f"null {seed}: {leakage['verdict']} D={leakage['best']['D']:+.4f}",
                  flush=True, file=__import__("sys").stderr)
    positives = sum(v not in ("chance", "below chance") for v in verdicts)
    print(f"## Random-label OCNLI copies ({nulls}, iterations={iterations})\n")
    print(f"- verdict ≠ chance: {positives}/{nulls} = {100 * positives / nulls:.0f}% "
          f"({', '.join(f'{v} {verdicts.count(v)}' for v in sorted(set(verdicts)))}); "
          f"{time.perf_counter() - start:.0f} s wall\n")


def throughput(dataset) -> None:
    texts = list(dataset.train.premises) + list(dataset.train.hypotheses)
    thai = [r[k] for r in make_nli(5000, seed=0, language="th") for k in ("premise", "hypothesis")]
    print("## Segmentation throughput (characters per CPU-second)\n")
    print("| segmenter | text | characters | CPU s | chars / CPU s |\n|---|---|---|---|---|")
    for name in SEGMENTERS:
        if not installed(name):
            continue
        corpus, what = (thai, "generated Thai") if name == "thai" else (texts, "OCNLI train")
        segmenter = get_segmenter(name)
        segmenter.words(corpus[0])  # load dictionaries outside the timing
        cpu = time.process_time()
        for text in corpus:
            segmenter.words(text)
        cpu = time.process_time() - cpu
        chars = sum(map(len, corpus))
        print(f"| {name} | {what} | {chars} | {cpu:.2f} | {chars / cpu:,.0f} |")
    try:
        import jieba
    except ImportError:
        return
    jieba.initialize()
    cpu = time.process_time()
    reference = [list(jieba.cut(text)) for text in texts]
    cpu = time.process_time() - cpu
    chars = sum(map(len, texts))
    print(f"| jieba (Python, not registered) | OCNLI train | {chars} | {cpu:.2f} | "
          f"{chars / cpu:,.0f} |\n")
    import rjieba

    def boundaries(words):
        ends, position = set(), 0
        for word in words:
            position += len(word)
            ends.add(position)
        return ends

    hits = total_a = total_b = 0
    for text, words in zip(texts, reference):
        a, b = boundaries(rjieba.cut(text)), boundaries(words)
        hits, total_a, total_b = hits + len(a & b), total_a + len(a), total_b + len(b)
    f1 = 2 * hits / (total_a + total_b)
    print(f"rjieba vs jieba word-boundary F1 on OCNLI train: {f1:.4f}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nulls", type=int, default=20)
    parser.add_argument("--null-iterations", type=int, default=1)
    parser.add_argument("--skip", default="", help="comma-separated: scan, nulls, throughput")
    args = parser.parse_args()
    dataset = load_dataset(train=str(DATA / "ocnli" / "train.jsonl"),
                           test=str(DATA / "ocnli" / "dev.jsonl"))
    skip = set(args.skip.split(","))
    if "scan" not in skip:
        main_scan(dataset)
    if "throughput" not in skip:
        throughput(dataset)
    if "nulls" not in skip:
        null_rate(dataset, args.nulls, args.null_iterations)


if __name__ == "__main__":
    main()
