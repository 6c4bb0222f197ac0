"""Position-bias probe (issue 14) with a language model scoring the options, on real MCQ data.

    audit lm train --arch ngram --order 3 --corpus ptb.train.txt --out /tmp/tri
    python benchmarks/position_bench.py ngram:/tmp/tri --data /work/shared/data

Prints, per dataset, the rotations scored, the wall time (one run) and the ``position_bias``
numbers (accuracy by gold position, spread, Cochran's Q, balanced answer distribution,
consistency) with the load average.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from cuelens.data.loading import load_dataset
from cuelens.lm import load_scorer
from cuelens.probes.position import position_bias, sentence_scorer

DATASETS = ("copa", "roc_story_cloze", "commonsenseqa")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="an audit score model spec, e.g. ngram:DIR or gpt2")
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    score_fn = sentence_scorer(load_scorer(args.model))
    for name in DATASETS:
        dataset = load_dataset(str(args.data / name))
        begun = time.perf_counter()
        result = position_bias(dataset.test, score_fn, args.seed)
        seconds = time.perf_counter() - begun
        picks = result["predicted_positions"]
        print(f"{name}: {result['rotations']} rotations in {seconds:.1f} s "
              f"(load {os.getloadavg()[0]:.1f}); accuracy by position "
              f"{[round(100 * a, 1) for a in result['accuracy_by_position']]}, spread "
              f"{100 * result['spread']:.1f}, Cochran p {result['cochran_q']['p_value']:.3g}; "
              f"answers {[round(100 * s, 1) for s in picks['shares']]} (p {picks['p_value']:.3g}); "
              f"consistency {100 * result['consistency']:.1f}%")


if __name__ == "__main__":
    main()
