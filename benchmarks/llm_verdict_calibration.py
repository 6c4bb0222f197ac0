"""How often the LLM probe names a least cue-reliant template when every template relies on
the cues alike (docs/llm-probe.md, "Results and verdict"; docs/BENCHMARKS.md §2.9), and how
often it names the right one when one template relies less.

Simulated answers, ``--reps`` runs per row: ``--items`` test items, two word cues (30% and 20%
of the items); under the null each template is right on a random 60% of the items whatever the
cues; under ``planted`` the first template is also right on every item with the first cue. The
verdict runs as in `audit probe --llm` (1,000 bootstrap resamples). Example:

    python benchmarks/llm_verdict_calibration.py --reps 200
"""

from __future__ import annotations

import argparse

import numpy as np

from cuelens.probes.cues import Cue
from cuelens.probes.llm.pipeline import verdict


def _run(rng: np.random.Generator, n_templates: int, items: int, planted: bool) -> str | None:
    cues = [Cue("a", "word", rng.random(items) < 0.3), Cue("b", "word", rng.random(items) < 0.2)]
    correct = {f"t{i}": (rng.random(items) < 0.6) * 1.0 for i in range(n_templates)}
    if planted:
        correct["t0"][cues[0].test_mask] = 1.0
    sections = [{"name": name, "accuracy": right.mean(), "unparseable": {"rate": 0.0},
                 "accuracy_test": {"cues": [{"cue": c.name} for c in cues],
                                   "total_abs_delta": sum(
                                       abs(right[c.test_mask].mean() - right[~c.test_mask].mean())
                                       for c in cues)}}
                for name, right in correct.items()]
    return verdict(sections, correct, cues, seed=int(rng.integers(2**32)))["least_cue_reliant"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--items", type=int, default=500)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    for n_templates in (2, 3, 5):
        named = [_run(rng, n_templates, args.items, False) for _ in range(args.reps)]
        print(f"null, {n_templates} templates: one named in "
              f"{sum(n is not None for n in named)}/{args.reps}", flush=True)
    for n_templates in (2, 3):
        named = [_run(rng, n_templates, args.items, True) for _ in range(args.reps)]
        right = sum(n is not None and n != "t0" for n in named)
        print(f"planted, {n_templates} templates (t0 relies on cue a): a template other than "
              f"t0 named in {right}/{args.reps}, t0 in {named.count('t0')}", flush=True)


if __name__ == "__main__":
    main()
