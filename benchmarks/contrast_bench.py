"""Benchmarks for controversial sentence pairs (docs/methods.md §9) on the contstim data.

    .venv/bin/python benchmarks/contrast_bench.py natural [--repeats 5]
    .venv/bin/python benchmarks/contrast_bench.py judge
    .venv/bin/python benchmarks/contrast_bench.py synthetic --m1 ngram:DIR --m2 lstm:DIR [--n 20]

``natural``: the full 231,725 × 9 selection (36 model pairs × 10): solve time (median of
``--repeats``), objective, feasibility, and a comparison with the published selection's objective
(``natural_selected_pairs.csv``, mapped to npz rows by ``natural_selected_sentence_index.csv``).
Peak memory: run it under ``/usr/bin/time -v``. ``judge``: the 30-participant experiment-2 file.
``synthetic``: triplets from the first ``--n`` sentences of ``natural_sentences_8word.txt`` with
the contstim vocabularies; time per sentence, controversial fraction, example triplets.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path("/work/shared/data/contstim")


def bench_natural(repeats: int) -> dict:
    from cuelens.lm.contrast.natural import (check_selection, fractional_ranks,
                                                  select_natural_pairs)
    from cuelens.lm.contrast.scores import load_scores

    started = time.perf_counter()
    models, logprobs, *_ = load_scores(DATA / "natural_sentence_logprobs.npz", None)
    load_s = time.perf_counter() - started
    times, selection, ranks = [], None, None
    for _ in range(repeats):
        started = time.perf_counter()
        ranks = fractional_ranks(logprobs)
        selection = select_natural_pairs(ranks, per_pair=10)
        times.append(time.perf_counter() - started)
    started = time.perf_counter()
    milp = select_natural_pairs(ranks, per_pair=10, solver="milp")
    milp_s = time.perf_counter() - started
    n = len(ranks)
    published = pd.read_csv(DATA / "natural_selected_pairs.csv")
    index = pd.read_csv(DATA / "natural_selected_sentence_index.csv")
    row_of = dict(zip(index["sentence"], index["npz_index"]))
    col = {m: i for i, m in enumerate(models)}
    pub_ours = sum(ranks[row_of[r.sentence1], col[r.model_1]] + ranks[row_of[r.sentence2], col[r.model_2]]
                   for r in published.itertuples())
    pub_feasible = sum(ranks[row_of[r.sentence1], col[r.model_2]] >= 0.5
                       and ranks[row_of[r.sentence2], col[r.model_1]] >= 0.5
                       for r in published.itertuples())
    ours_sentences = {s for t in selection.trials for s in t[2:]}
    return {
        "models": models, "n_sentences": n, "non_finite": int((~np.isfinite(logprobs)).sum()),
        "load_seconds": round(load_s, 3), "solve_seconds_runs": [round(t, 3) for t in times],
        "solve_seconds_median": round(statistics.median(times), 3),
        "milp_seconds": round(milp_s, 3), "candidates_after_pruning": selection.n_candidates,
        "objective": selection.objective, "objective_milp": milp.objective,
        "objective_published_scale": (selection.objective * (n - 1) + 2 * len(selection.trials)) / n,
        "problems": check_selection(ranks, selection),
        "published_objective_file_ranks": float((published.s1_ranked_log_prob_model_1
                                                 + published.s2_ranked_log_prob_model_2).sum()),
        "published_objective_our_ranks": float(pub_ours),
        "published_trials_feasible_under_our_threshold": int(pub_feasible),
        "sentences_shared_with_published": len(ours_sentences & set(row_of.values())),
    }


def bench_judge() -> dict:
    from cuelens.lm.contrast.judge import cross_check_majority, judge, load_trials, model_names

    started = time.perf_counter()
    df = load_trials(DATA / "contstim_Nov2022_30_participants_anon_aligned_with_loso.csv.gz")
    result = judge(df, model_names(df.columns))
    seconds = time.perf_counter() - started
    catch = df[df["trial_type"] == "natural_vs_shuffled"]
    natural_chosen = ((catch["sentence1_type"] == "N") & (catch["rating"] < 3.5)) | \
                     ((catch["sentence2_type"] == "N") & (catch["rating"] > 3.5))
    return {"seconds": round(seconds, 3), "catch_trials_natural_preferred":
            f"{int(natural_chosen.sum())}/{len(catch)}",
            "cross_check": cross_check_majority(df),
            "models": {m: {k: e[k] for k in ("n", "n_pairs", "accuracy", "accuracy_noise_ceiling",
                                              "scsr", "scsr_noise_ceiling")}
                       for m, e in result["models"].items()},
            "tests_accuracy": [{k: t[k] for k in ("a", "b", "mean_difference", "p_fdr")}
                               for t in result["tests"]["accuracy"]]}


def bench_synthetic(m1: str, m2: str, n: int, max_steps: int, seed: int, rows_path=None) -> dict:
    from cuelens.data.readers import text_lines
    from cuelens.lm.contrast.synthetic import Vocabulary, synthesize_triplet
    from cuelens.lm import load_scorer

    scorers = [load_scorer(m1), load_scorer(m2)]
    vocab = Vocabulary(text_lines(DATA / "vocab_low.txt"), text_lines(DATA / "vocab_cap.txt"),
                       frozenset(text_lines(DATA / "preps.txt")))
    starts = list(dict.fromkeys(text_lines(DATA / "natural_sentences_8word.txt")))[:n]
    rows, seconds, cpu_seconds = [], [], []
    for k, sentence in enumerate(starts):
        started, cpu = time.perf_counter(), time.process_time()
        rows.append(synthesize_triplet(sentence, *scorers, vocab, seed=seed * 1_000_003 + k,
                                       max_steps=max_steps))
        seconds.append(time.perf_counter() - started)
        cpu_seconds.append(time.process_time() - cpu)
        if rows_path:
            with open(rows_path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({**rows[-1], "seconds": round(seconds[-1], 2),
                                         "cpu_seconds": round(cpu_seconds[-1], 2)}) + "\n")
        print(f"{k + 1}/{len(starts)} {seconds[-1]:.1f}s controversiality "
              f"{rows[-1]['controversiality']:.2f}", flush=True)
    return {"n": len(rows), "seconds_per_sentence_median": round(statistics.median(seconds), 2),
            "seconds_per_sentence": [round(s, 2) for s in seconds],
            "cpu_seconds_per_sentence_median": round(statistics.median(cpu_seconds), 2),
            "controversial_fraction": sum(r["controversial"] for r in rows) / len(rows),
            "examples": [{k: r[k] for k in ("n", "s1", "s2", "lp_n_m1", "lp_s1_m1", "lp_n_m2",
                                             "lp_s2_m2", "controversiality")} for r in rows[:10]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["natural", "judge", "synthetic"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--m1")
    parser.add_argument("--m2")
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--max-steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", help="synthetic: append each triplet (with its time) here")
    args = parser.parse_args()
    if args.what == "natural":
        out = bench_natural(args.repeats)
    elif args.what == "judge":
        out = bench_judge()
    else:
        out = bench_synthetic(args.m1, args.m2, args.n, args.max_steps, args.seed, args.rows)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
