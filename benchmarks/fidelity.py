"""Fidelity table (issues 2 and 12): word-cue leakage of the real datasets in ../shared/data.

For each dataset: majority %, best word-cue accuracy % for the default metric (CP) with
cross-fitted features (the default) and with in-sample features (the original paper's
procedure) — descriptive, like the best of the whole 40-model table —, the prior-matched
baseline, the verdict model (largest simultaneous lower bound over all 40 models) with its D
against that baseline, two-sided 95% simultaneous interval and adjusted p-value (docs/methods.md
§11), the verdict, the significant individual cues and the share of evaluated items holding one, the hard fraction of the easy/hard split
(5 folds × 5 iterations, seed 0; "chance" when the headline CI covers 0), the winning
metric/aggregator over the whole table, the partial-input BoW baseline, the fold groups (items
sharing a premise or text), and the data hygiene counts: exact duplicates within splits,
evaluation items found (exactly / nearly) in the fitting split, mirrored / contrastive pairs and
label-noise candidates. Prints one markdown table.

    python benchmarks/fidelity.py > /tmp/fidelity.md
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from cuelens.audit.streamed_hygiene import data_hygiene
from cuelens.audit.scan import ScanConfig, run_word_audit
from cuelens.data import load_dataset

# ../shared/data of the checkout (a worktree may sit one level deeper than the main checkout)
DATA = next((p / "shared" / "data" for p in Path(__file__).resolve().parents
             if (p / "shared" / "data").is_dir()), Path("shared") / "data")

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
    "Balanced COPA, one file": ({"data": "balanced_copa/dev.jsonl"}, "5-fold grouped CV"),
}


def load(arguments: dict):
    return load_dataset(**{key: str(DATA / value) for key, value in arguments.items()})


def row(name: str, arguments: dict, protocol: str) -> str:
    start = time.perf_counter()
    dataset = load(arguments)
    config = ScanConfig()
    audit = run_word_audit(dataset, config)
    original = run_word_audit(dataset, ScanConfig(in_sample_features=True, iterations=1)).leakage.to_json()
    leakage = audit.leakage.to_json()
    hygiene = data_hygiene(dataset, config.seed)
    winner = max(leakage["table"], key=lambda r: r["D"])
    cp_best = max((r for r in leakage["table"] if r["metric"] == config.metric),
                  key=lambda r: r["D"])
    cp_in_sample = max((r for r in original["table"] if r["metric"] == config.metric),
                       key=lambda r: r["D"])
    finding = audit.cue_finding
    bow = leakage["baselines"][0]["accuracy"]
    pct = lambda x: f"{100 * x:.1f}"  # noqa: E731
    pts = lambda x: f"{100 * x:+.1f}"  # noqa: E731
    best = leakage["best"]
    splits = hygiene["splits"].values()
    duplicates = sum(s["duplicate_items"] for s in splits)
    pairs = sum(s.get("mirrored_pairs", s.get("contrastive_pairs", 0)) for s in splits)
    noise = sum(s["label_conflict_items"] for s in splits)
    fit_role = "train" if dataset.train is not None else None
    overlap = next((r for r in hygiene["overlap"] if r["fit"] == fit_role and r["eval"] == "test"),
                   None)
    overlap_text = "CV" if overlap is None else f"{overlap['exact']} / {overlap['near']}"
    groups = leakage["groups"]
    hard = "chance" if audit.easy_hard["chance_level"] else pct(audit.easy_hard["hard_fraction"])
    elapsed = time.perf_counter() - start
    print(f"{name}: {elapsed:.0f} s", file=sys.stderr)
    return (f"| {name} | {protocol} | {len(dataset.test)} | {pct(leakage['majority'])} | "
            f"{pct(cp_best['accuracy'])} ({cp_best['aggregator']}) | "
            f"{pct(cp_in_sample['accuracy'])} ({cp_in_sample['aggregator']}) | "
            f"{pct(leakage['baseline']['accuracy'])} | "
            f"{best['metric']}/{best['aggregator']} {pts(best['D'])} "
            f"[{pts(best['ci_low'])}, {pts(best['ci_high'])}], p = {best['p_value']:.2g} | "
            f"{leakage['verdict']} | {finding['n_significant']} "
            f"({pct(finding['share_items'])}) | {hard} | "
            f"{winner['metric']}/{winner['aggregator']} ({pct(winner['accuracy'])}) | {pct(bow)} | "
            f"{groups['groups']} / {groups['largest']} | {duplicates} | {overlap_text} | "
            f"{pairs} | {noise} |")


def main() -> None:
    print("| dataset | protocol | eval items | majority % | CP best, cross-fitted % | "
          "CP best, in-sample % | prior-matched % | verdict model: D (pts) [simultaneous 95%] | "
          "verdict | significant cues (% items) | hard % | "
          "best metric/aggregator (acc %) | BoW LR % | groups / largest | duplicates | "
          "overlap exact / near | mirrored / contrastive pairs | label-noise items |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, (arguments, protocol) in DATASETS.items():
        print(row(name, arguments, protocol), flush=True)


if __name__ == "__main__":
    main()
