"""Calibrated vs fixed-threshold AW (docs/methods.md §7) on fine-tuned MCQ models, e.g. the plain and
augmented MiniLM models of ``benchmarks/short_circuit_augmentation.sh``.

For each ``NAME=MODEL_DIR`` and the test split ``--test``: predict the test questions, keep the
correctly answered ones, and run the AW test of :mod:`cuelens.probes.attention` twice on them —
calibrated thresholds (5% null rate on unrelated premises) and the paper's fixed 0.14 / 0.13 —
against the same null pairs. Prints a markdown table (AW with 95% Wilson CI, thresholds, null
rate, CPU seconds) and writes it as JSON to ``--out``.

Usage: python benchmarks/aw_calibration.py --test ../shared/data/copa/test.jsonl \
           --out /tmp/aw-copa.json copa-plain=/tmp/sc/copa-plain copa-aug=/tmp/sc/copa-aug
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path


def run_model(name: str, path: str, test: str, seed: int, null_draws: int) -> dict:
    import numpy as np

    from cuelens.data import load_dataset
    from cuelens.models.classifier import load_classifier
    from cuelens.probes.attention import aw_test
    from cuelens.probes.predictions import classifier_predictions

    dataset = load_dataset(test)
    clf = load_classifier(path, "mcq", device="cpu")
    clf.use_backend("torch")
    split = dataset.test
    pred = classifier_predictions(clf, dataset).pred
    correct = np.flatnonzero(pred == split.item_labels(dataset.label_names))
    premises = [split.premise_context(int(i)) for i in correct]
    right = [split.choices[i][split.labels[i]] for i in correct]
    row: dict = {"model": name, "path": path, "accuracy": round(len(correct) / len(split), 4),
                 "n_correct": len(correct)}
    for mode in ("calibrated", "fixed"):
        cpu = time.process_time()
        result = aw_test(clf.model, clf.tokenizer, premises, right, thresholds=mode, seed=seed,
                         null_draws=null_draws, max_length=clf.max_length)
        th = result.thresholds
        assert th is not None, result.note
        row[mode] = {"aw": result.score, "ci": result.ci, "t1": th.t1, "t2": th.t2,
                     "null_rate": th.null_rate, "n_null": th.n_null,
                     "cpu_seconds": round(time.process_time() - cpu, 1)}
    return row


def pct(x: float) -> str:
    return f"{100 * x:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", help="NAME=MODEL_DIR")
    parser.add_argument("--test", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--null-draws", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    specs = [spec.split("=", 1) for spec in args.models]
    rows = [run_model(name, path, args.test, args.seed, args.null_draws) for name, path in specs]
    args.out.write_text(json.dumps(rows, indent=2))
    print("| model | acc | n | calibrated AW [95% CI] | t1 / t2 | null rate (n null) "
          "| fixed 0.14/0.13 AW [95% CI] | fixed null rate |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        c, f = r["calibrated"], r["fixed"]
        print(f"| {r['model']} | {pct(r['accuracy'])} | {r['n_correct']} | {pct(c['aw'])} "
              f"[{pct(c['ci'][0])}, {pct(c['ci'][1])}] | {c['t1']:.4f} / {c['t2']:.4f} | "
              f"{pct(c['null_rate'])} ({c['n_null']}) | {pct(f['aw'])} [{pct(f['ci'][0])}, "
              f"{pct(f['ci'][1])}] | {pct(f['null_rate'])} |")
    print(f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f}")


if __name__ == "__main__":
    main()
