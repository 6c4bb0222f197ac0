"""Fidelity table (issue 2): word-cue leakage of the real datasets in ../shared/data.

For each dataset: majority %, best word-cue accuracy % for the default metric (CP) with
cross-fitted features (the default) and with in-sample features (the original paper's
procedure), D in points (cross-fitted), the hard fraction of the easy/hard split (5 folds ×
5 iterations, seed 0), the winning metric/aggregator over the whole table, and the
partial-input BoW baseline. Prints one markdown table.

    python benchmarks/fidelity.py > /tmp/fidelity.md
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from cuelens.audit.fitting import scan_data
from cuelens.audit.leakage import leakage_table
from cuelens.audit.scan import ScanConfig, run_word_audit
from cuelens.data import load_dataset

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

# name → (load_dataset arguments, protocol shown in the table)
DATASETS = {
    "COPA": ({"data": "copa"}, "dev → test"),
    "ARCT": ({"data": "arct"}, "train → test"),
    "ARCT adversarial": ({"data": "arct_adv"}, "train → test"),
    "ROC story cloze": ({"data": "roc_story_cloze"}, "dev → test"),
    "SNLI": ({"data": "snli"}, "dev → test"),
    "SNLI hard": ({"train": "snli/dev.jsonl", "test": "snli_hard/test.jsonl"}, "dev → hard test"),
    "MNLI": ({"data": "mnli/dev.jsonl"}, "dev, 5-fold CV"),
    "CommonsenseQA": ({"data": "commonsenseqa"}, "train → dev"),
    "Balanced COPA": ({"train": "balanced_copa/dev.jsonl", "test": "copa/test.jsonl"},
                      "B-COPA dev → COPA test"),
}


def load(arguments: dict):
    return load_dataset(**{key: str(DATA / value) for key, value in arguments.items()})


def row(name: str, arguments: dict, protocol: str) -> str:
    start = time.perf_counter()
    dataset = load(arguments)
    config = ScanConfig()
    audit = run_word_audit(dataset, config)
    data = scan_data(dataset, config.ngrams, config.include_premise, config.folds, config.seed)
    in_sample = ScanConfig(in_sample_features=True).scoring
    original = leakage_table(data, in_sample, config.metric, config.folds, config.flag_threshold)
    leakage = audit.leakage
    winner = max(leakage["table"], key=lambda r: r["D"])
    bow = leakage["baselines"][0]["accuracy"]
    pct = lambda x: f"{100 * x:.1f}"  # noqa: E731
    elapsed = time.perf_counter() - start
    print(f"{name}: {elapsed:.0f} s", file=sys.stderr)
    return (f"| {name} | {protocol} | {len(dataset.test)} | {pct(leakage['majority'])} | "
            f"{pct(leakage['best']['accuracy'])} ({leakage['best']['aggregator']}) | "
            f"{pct(original['best']['accuracy'])} ({original['best']['aggregator']}) | "
            f"{100 * leakage['best']['D']:+.1f} | {pct(audit.easy_hard['hard_fraction'])} | "
            f"{winner['metric']}/{winner['aggregator']} ({pct(winner['accuracy'])}) | {pct(bow)} |")


def main() -> None:
    print("| dataset | protocol | eval items | majority % | CP best, cross-fitted % | "
          "CP best, in-sample % | D (pts) | hard % | best metric/aggregator (acc %) | "
          "BoW LR % |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, (arguments, protocol) in DATASETS.items():
        print(row(name, arguments, protocol), flush=True)


if __name__ == "__main__":
    main()
