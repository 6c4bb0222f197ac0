"""Calibration and power of the two scan findings (issue 25, docs/methods.md §11).

Null datasets: real SNLI / MNLI text (premise, hypothesis) with labels drawn at random, so no
word can predict a label. Four conditions, ``--n`` datasets each (seeds 0 … n−1):

- ``cv``: one file of ``--items`` items, 5-fold grouped cross-validation;
- ``split``: train/test (``--items`` each) with the same label shares;
- ``shift``: train/test whose label shares differ (train 45/30/25 %, test 25/30/45 %: the
  training-majority label is the rarest in test);
- ``mnli``: one MNLI dev subset, cross-validated;
- ``copa``, ``arct``: COPA dev → test, ARCT train → test (multiple choice) with the right
  choice drawn at random.

For each it reports the verdict's false-positive rate (verdict ≠ chance / below chance) and the
cue finding's (at least one significant cue), with a 95% Clopper–Pearson interval; with
``--conclusions``, also the rate of each conclusion (docs/methods.md §17: leakage /
no_meaningful_leakage / inconclusive at the default 3-point margin; MCQ with the artifact rules).

Power (``--power``): a planted word added to 2/5/10/20 % of one label's hypotheses of a null
train/test dataset; per rate and seed, whether the planted word is a significant cue and
whether the verdict leaves chance.

    python benchmarks/verdict_calibration.py --n 40 --conditions split,shift > /tmp/cal1.md
    python benchmarks/verdict_calibration.py --n 40 --items 1000 --conditions cv,mnli
    python benchmarks/verdict_calibration.py --n 40 --cues-only --conditions split,shift
    python benchmarks/verdict_calibration.py --power --seeds 5 > /tmp/power.md
    python benchmarks/verdict_calibration.py --n 300 --conditions copa,arct --verdict-only \
        --label-offset 100000
    python benchmarks/verdict_calibration.py --n 20 --items 5000 --conditions split --conclusions
    python benchmarks/verdict_calibration.py --power --seeds 5 --conclusions
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy import stats

from cuelens.audit.conclusion import CONCLUSIONS, conclude
from cuelens.audit.chunked_data import held_data
from cuelens.audit.fitting import ModelBank
from cuelens.audit.leakage import all_models
from cuelens.audit.mcq_baselines import mcq_baselines
from cuelens.audit.scan import ScanConfig, cue_finding, cue_list, leakage_counts, run_word_audit
from cuelens.audit.passes import predict_run
from cuelens.audit.uncertainty import leakage_verdict, simultaneous_test
from cuelens.data.dataset import MCQ_LABELS, Dataset, Split
from cuelens.data.summary import dataset_summary

DATA = next((p / "shared" / "data" for p in Path(__file__).resolve().parents
             if (p / "shared" / "data").is_dir()), Path("shared") / "data")
LABELS = ["contradiction", "entailment", "neutral"]
PLANTED = "zorblat"


GENERATED_ITEMS = 250_000  # --text generated: premise/hypothesis pairs drawn (seed 0)


def texts(name: str) -> list[tuple[str, str]]:
    if name == "generated":  # large nulls (docs/methods.md §3, "Large scans"): the scale
        from cuelens.data.synthetic import make_nli  # benchmark's text, labels drawn anew

        return [(r["premise"], r["hypothesis"])
                for r in make_nli(GENERATED_ITEMS, seed=0, vocab_size=30_000)]
    files = {"snli": ["snli/dev.jsonl", "snli/test.jsonl"], "mnli": ["mnli/dev.jsonl"]}[name]
    out = []
    for file in files:
        with open(DATA / file, encoding="utf-8") as handle:
            out += [(r["premise"], r["hypothesis"]) for r in map(json.loads, handle)]
    return out


def split_of(name: str, pairs: list[tuple[str, str]], labels: list[str]) -> Split:
    split = Split(name=name, path=f"{name}.jsonl", task="nli")
    for i, ((premise, hypothesis), label) in enumerate(zip(pairs, labels)):
        split.append({"id": f"{name}{i}", "premise": premise, "hypothesis": hypothesis,
                      "label": label}, raw="{}", line=i + 1)
    return split


def premise_blocks(pool: list[tuple[str, str]], rng: np.random.Generator, n: int) -> list:
    """``n`` pairs taken as whole premise blocks (all hypotheses of a premise together), so
    a premise never lands in both train and test."""
    by_premise: dict[str, list] = {}
    for pair in pool:
        by_premise.setdefault(pair[0], []).append(pair)
    blocks = list(by_premise.values())
    out: list = []
    for b in rng.permutation(len(blocks)):
        if len(out) >= n:
            break
        out += blocks[b]
    return out[:n]


MCQ_NULLS = {"copa": ("copa/dev.jsonl", "copa/test.jsonl"),
             "arct": ("arct/train.jsonl", "arct/test.jsonl")}


def mcq_null(condition: str, seed: int) -> Dataset:
    """COPA dev → test or ARCT train → test with the right choice drawn at random (MCQ null)."""
    rng = np.random.default_rng(seed)
    splits = []
    for name, file in zip(("train", "test"), MCQ_NULLS[condition]):
        split = Split(name=name, path=file, task="mcq")
        with open(DATA / file, encoding="utf-8") as handle:
            for i, record in enumerate(map(json.loads, handle)):
                split.append({**record, "label": int(rng.integers(2))}, raw="{}", line=i + 1)
        splits.append(split)
    return Dataset(name=condition, format="jsonl", task="mcq", train=splits[0], test=splits[1],
                   label_names=list(MCQ_LABELS))


def null_dataset(pool, condition: str, items: int, seed: int) -> Dataset:
    if condition in MCQ_NULLS:
        return mcq_null(condition, seed)
    rng = np.random.default_rng(seed)
    shares = {"shift": ([0.45, 0.30, 0.25], [0.25, 0.30, 0.45])}.get(
        condition, ([1 / 3] * 3, [1 / 3] * 3))
    if condition in ("cv", "mnli"):
        pairs = premise_blocks(pool, rng, items)
        labels = [LABELS[i] for i in rng.choice(3, len(pairs), p=shares[1])]
        return Dataset(name=condition, format="jsonl", task="nli", train=None,
                       test=split_of("all", pairs, labels), label_names=LABELS)
    pairs = premise_blocks(pool, rng, 2 * items)
    train, test = pairs[:items], pairs[items:]
    train_labels = [LABELS[i] for i in rng.choice(3, len(train), p=shares[0])]
    test_labels = [LABELS[i] for i in rng.choice(3, len(test), p=shares[1])]
    return Dataset(name=condition, format="jsonl", task="nli",
                   train=split_of("train", train, train_labels),
                   test=split_of("test", test, test_labels), label_names=LABELS)


def plant(dataset: Dataset, rate: float, seed: int) -> Dataset:
    """Add :data:`PLANTED` to ``rate`` of the entailment hypotheses of both splits."""
    rng = np.random.default_rng(10_000 + seed)
    for split in (dataset.train, dataset.test):
        if split is None:
            continue
        for i, label in enumerate(split.labels):
            if label == "entailment" and rng.random() < rate:
                split.hypotheses[i] = f"{split.hypotheses[i]} {PLANTED}"
    return dataset


NO_LEAKAGE = {"verdict": "not computed", "best": {"D": 0.0, "ci_low": 0.0, "ci_high": 0.0}}


def mcq_verdict(dataset: Dataset, config: ScanConfig) -> dict:
    """The scan's MCQ verdict from the 40 cue models' correctness alone: the MCQ baseline is the
    constant ``1/k``, so the verdict needs no BoW or cue list (the same moments, test and
    headline rule as :func:`~cuelens.audit.leakage.leakage_section`)."""
    data, folds = held_data(dataset, config)
    store = data.store
    tally = predict_run(store, leakage_counts(store, folds, config), folds, config.folds,
                        config.seed, config.scoring, ModelBank(config.seed), all_models(), None)
    test = simultaneous_test(tally.moments, config.seed)  # PRIOR: 1/k
    h = int(np.argmax(test.low))
    return {"verdict": leakage_verdict(test.low[h], test.high[h], config.flag_threshold),
            "best": {"D": test.D[h], "ci_low": test.low[h], "ci_high": test.high[h]}}


def findings(dataset: Dataset, config: ScanConfig, cues_only: bool = False,
             verdict_only: bool = False) -> tuple[dict, dict]:
    if verdict_only:
        return {"n_significant": 0}, mcq_verdict(dataset, config)
    if not cues_only:
        audit = run_word_audit(dataset, replace(config, iterations=1))
        return audit.cue_finding.to_json(), audit.leakage.to_json()
    data, folds = held_data(dataset, config)
    store = data.store
    cues, cue_stats = cue_list(store, leakage_counts(store, folds, config), data.label_names,
                               config)
    return cue_finding(store, cues, cue_stats).to_json(), NO_LEAKAGE


def conclusion_status(dataset: Dataset, cue: dict, leakage: dict, config: ScanConfig) -> str:
    """The scan's conclusion from its two findings (the cue finding and the leakage section)
    and, for MCQ, the artifact rules."""
    results = {"config": {"folds": config.folds}, "dataset": dataset_summary(dataset),
               "cue_finding": cue, "leakage": leakage}
    if dataset.task == "mcq":
        results["mcq_baselines"] = mcq_baselines(dataset, config.folds, config.seed)
    return conclude(results, config.margin).status


def conclusion_rates(statuses: list[str]) -> str:
    """``| rate (95% CI) |`` of each conclusion, Clopper–Pearson."""
    return " | ".join(rate_row(statuses.count(c), len(statuses)) for c in CONCLUSIONS)


CONCLUSION_HEAD = "| " + " | ".join(CONCLUSIONS) + " |"


def rate_row(hits: int, n: int) -> str:
    low, high = stats.binomtest(hits, n).proportion_ci(0.95, method="exact")
    return f"{hits}/{n} = {100 * hits / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def calibration(seeds: range, items: int, conditions: list[str], cues_only: bool,
                label_offset: int, verdict_only: bool, conclusions: bool = False,
                text: str = "snli") -> None:
    pools = {"snli": texts(text), "mnli": texts("mnli")}
    print("| condition | items | verdict ≠ chance (95% CI) | ≥ 1 significant cue (95% CI) |"
          " verdicts |" + (CONCLUSION_HEAD[1:] if conclusions else ""))
    print("|---|---|---|---|---|" + "---|" * (3 if conclusions else 0))
    for condition in conditions:
        pool = pools.get(condition, pools["snli"])
        verdicts, cue_hits, statuses = [], 0, []
        start = time.perf_counter()
        for seed in seeds:
            dataset = null_dataset(pool, condition, items, seed + label_offset)
            config = ScanConfig(seed=seed)
            cue, leakage = findings(dataset, config, cues_only,
                                    verdict_only and condition in MCQ_NULLS)
            if conclusions:
                statuses.append(conclusion_status(dataset, cue, leakage, config))
            verdicts.append(leakage["verdict"])
            cue_hits += cue["n_significant"] > 0
            print(f"{condition} {seed}: {leakage['verdict']} D={leakage['best']['D']:+.4f} "
                  f"[{leakage['best']['ci_low']:+.4f}, {leakage['best']['ci_high']:+.4f}] "
                  f"cues={cue['n_significant']} {statuses[-1] if statuses else ''}",
                  file=sys.stderr)
        positives = sum(v not in ("chance", "below chance", "not computed") for v in verdicts)
        counts = ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts)))
        n = len(seeds)
        cue_rate = "—" if verdict_only and condition in MCQ_NULLS else rate_row(cue_hits, n)
        print(f"| {condition} | {items} | {rate_row(positives, n)} | {cue_rate} | {counts} |"
              + (f" {conclusion_rates(statuses)} |" if conclusions else ""))
        print(f"{condition}: {time.perf_counter() - start:.0f} s", file=sys.stderr)


def power(seeds: int, items: int, conclusions: bool = False, text: str = "snli") -> None:
    pool = texts(text)
    print("| planted share of entailment items | planted word significant | "
          "verdict ≠ chance | median D (points) | median z |"
          + (CONCLUSION_HEAD[1:] if conclusions else ""))
    print("|---|---|---|---|---|" + "---|" * (3 if conclusions else 0))
    for rate in (0.02, 0.05, 0.10, 0.20):
        found, leaked, Ds, zs, statuses = 0, 0, [], [], []
        for seed in range(seeds):
            dataset = plant(null_dataset(pool, "split", items, seed), rate, seed)
            config = ScanConfig(seed=seed)
            cue, leakage = findings(dataset, config)
            if conclusions:
                statuses.append(conclusion_status(dataset, cue, leakage, config))
            z = next((t["z"] for t in cue["top"] if t["token"] == PLANTED), None)
            found += any(t["token"] == PLANTED for t in cue["top"])
            leaked += leakage["verdict"] not in ("chance", "below chance")
            Ds.append(100 * leakage["best"]["D"])
            zs.append(z if z is not None else float("nan"))
            print(f"{rate} {seed}: {leakage['verdict']} D={leakage['best']['D']:+.4f} z={z}",
                  file=sys.stderr)
        print(f"| {100 * rate:.0f}% | {found}/{seeds} | {leaked}/{seeds} | "
              f"{np.median(Ds):+.1f} | {np.nanmedian(zs):.1f} |"
              + (f" {conclusion_rates(statuses)} |" if conclusions else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="null datasets per condition")
    parser.add_argument("--items", type=int, default=2000, help="items per split")
    parser.add_argument("--conditions", default="cv,split,shift,mnli",
                        help="comma-separated null conditions")
    parser.add_argument("--cues-only", action="store_true",
                        help="only the cue finding (no leakage table)")
    parser.add_argument("--first", type=int, default=0, help="first seed")
    parser.add_argument("--label-offset", type=int, default=0,
                        help="draw each null dataset from seed + this (labels independent of "
                             "the scan's seed)")
    parser.add_argument("--verdict-only", action="store_true",
                        help="MCQ conditions: only the verdict, from the 40 models' correctness")
    parser.add_argument("--power", action="store_true", help="planted-cue power curve")
    parser.add_argument("--seeds", type=int, default=5, help="seeds per planted rate")
    parser.add_argument("--conclusions", action="store_true",
                        help="also the rate of each conclusion (docs/methods.md §17)")
    parser.add_argument("--text", choices=("snli", "generated"), default="snli",
                        help="NLI text of the cv/split/shift nulls and of --power: SNLI, or "
                             "generated pairs (scale_data.py's text) for nulls of 50,000+ items")
    args = parser.parse_args()
    if args.power:
        power(args.seeds, args.items, args.conclusions, args.text)
    else:
        calibration(range(args.first, args.first + args.n), args.items,
                    args.conditions.split(","), args.cues_only, args.label_offset,
                    args.verdict_only, args.conclusions, args.text)


if __name__ == "__main__":
    main()
