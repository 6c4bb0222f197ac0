"""Hand-built results.json documents (docs/results-schema.md v1.0) for the report tests.

``nli_results`` / ``mcq_results`` cover every section; ``xss=True`` puts the payloads of issue 4
into every untrusted string: dataset name, file names, labels, ids, tokens, example text,
feature names and model names.
"""

from __future__ import annotations

import copy

import jsonschema
import pytest

from cuelens.errors import UserError
from cuelens.reports import validate_results
from cuelens.reports.schema import results_schema

PAYLOADS = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "</script><script>alert(2)</script>",
    "javascript:alert(3)",
    "<svg onload=alert(4)>&amp;\u2028<!--",
]
XSS_TEXT = " ".join(PAYLOADS)

NLI_LABELS = ["contradiction", "entailment", "neutral"]
# planted cues: (token, label, count, label_count, z, significant)
NLI_CUES = [("nobody", "contradiction", 51, 49, 9.1, True), ("sleeping", "contradiction", 40, 33, 7.2, True),
            ("cat", "contradiction", 30, 14, 1.4, False), ("outdoors", "entailment", 60, 50, 8.8, True),
            ("person", "entailment", 80, 52, 5.5, True), ("human", "entailment", 12, 7, 1.9, False),
            ("tall", "neutral", 25, 20, 6.0, True), ("first", "neutral", 33, 24, 5.1, True),
            ("sad", "neutral", 9, 5, 1.1, False)]


def _cue(token, label, count, label_count, z, significant):
    cp = round(label_count / count, 6)
    return {"token": token, "label": label, "count": count, "label_count": label_count,
            "metrics": {"freq": label_count, "cp": cp, "pmi": round(cp - 0.33, 6), "lmi": 0.001,
                        "rd": 1.5, "ad": 0.4, "cos": 0.9, "wp": 0.3, "z": z, "npmi": 0.2},
            "significant": significant}


def _leakage(majority: float, best_acc: float, baselines: list[dict]) -> dict:
    table = [{"metric": m, "aggregator": a,
              "accuracy": round(best_acc - 0.02 * i - 0.01 * j, 6),
              "D": round(best_acc - 0.02 * i - 0.01 * j - majority, 6)}
             for i, m in enumerate(["cp", "pmi", "z"]) for j, a in enumerate(["average", "max", "sgd", "lr"])]
    return {"majority": majority, "table": table,
            "best": {"metric": "cp", "aggregator": "average", "accuracy": best_acc,
                     "D": round(best_acc - majority, 6)},
            "flagged": best_acc - majority > 0.10, "baselines": baselines}


def _examples(cues, label_of, texts) -> dict:
    items, by_cue = [], {}
    for token, *_ in cues:
        by_cue[token] = []
        for k in range(3):
            by_cue[token].append(len(items))
            items.append({"id": f"{token}-{k}", "premise": f"A scene number {k} in a park.",
                          "text": texts(token, k), "label": label_of(token), "easy": k != 2})
    return {"items": items, "by_cue": by_cue, "easy": [0, 1, 3], "hard": [2, 5]}


def nli_results(xss: bool = False) -> dict:
    label_of = {c[0]: c[1] for c in NLI_CUES}.get
    results = {
        "schema_version": "1.0",
        "tool": {"name": "cuelens", "version": "0.1.0"},
        "config": {"metric": "cp", "min_count": 5, "ngrams": 1, "alpha": 1.0, "folds": 5,
                   "iterations": 5, "seed": 0, "in_sample_features": False, "z_prior": "empirical",
                   "flag_threshold": 0.10, "include_premise": False},
        "dataset": {
            "name": "toy-nli", "format": "directory", "task": "nli", "n_choices": None,
            "cross_validated": False, "label_names": NLI_LABELS,
            "splits": {
                "train": {"file": "train.jsonl", "items": 300, "instances": 300,
                          "label_counts": {"contradiction": 100, "entailment": 110, "neutral": 90},
                          "answer_position_counts": None, "skipped": {"missing label": 2}},
                "test": {"file": "test.jsonl", "items": 120, "instances": 120,
                         "label_counts": {"contradiction": 40, "entailment": 40, "neutral": 40},
                         "answer_position_counts": None, "skipped": {}}}},
        "cues": [_cue(*c) for c in NLI_CUES],
        "cue_stats": {"bonferroni_z": 4.8, "n_tests": 27, "alpha": 0.05, "min_count": 5,
                      "fitted_on": "train"},
        "leakage": _leakage(0.366667, 0.61,
                            [{"name": "hypothesis-only BoW LR", "accuracy": 0.6, "D": 0.233333}]),
        "easy_hard": {"easy": 70, "hard": 50, "hard_fraction": 0.416667, "folds": 5,
                      "iterations": 5, "seed": 0, "metric": "cp", "aggregator": "lr",
                      "split": "test"},
        "examples": _examples(NLI_CUES, label_of,
                              lambda tok, k: f"The {tok.upper() if k == 1 else tok} is here, "
                                             f"said {tok}ish people ({k})."),
        "features": [
            {"feature": "NEGATION", "value": "present", "cueness": 0.12, "train_support": 120,
             "test_support": 40, "train_dist": {"contradiction": 0.8, "entailment": 0.1, "neutral": 0.1},
             "test_dist": {"contradiction": 0.7, "entailment": 0.15, "neutral": 0.15}},
            {"feature": "TENSE", "value": "future", "cueness": 0.03, "train_support": 30,
             "test_support": 12, "train_dist": {"contradiction": 0.2, "entailment": 0.2, "neutral": 0.6},
             "test_dist": {"contradiction": 0.25, "entailment": 0.25, "neutral": 0.5}}],
        "features_config": {"features": ["word", "negation", "tense"], "min_support": 10,
                            "cv_folds_used": False},
        "probe": {
            "model": {"name": "minilm", "resolved": "/models/minilm", "source": "model"},
            "accuracy": 0.71,
            "accuracy_test": {"cues": [
                {"cue": "nobody", "kind": "word", "n_with": 40, "n_without": 80, "acc_with": 0.9,
                 "acc_without": 0.7, "delta": 0.2, "ci_low": 0.1, "ci_high": 0.3},
                {"cue": "NEGATION", "kind": "feature", "n_with": 30, "n_without": 90,
                 "acc_with": 0.6, "acc_without": 0.75, "delta": -0.15, "ci_low": -0.3,
                 "ci_high": -0.02}], "total_abs_delta": 0.35},
            "distribution_test": {"cues": [
                {"cue": "nobody", "train_dist": {"contradiction": 0.96, "entailment": 0.02, "neutral": 0.02},
                 "predicted_dist": {"contradiction": 0.7, "entailment": 0.15, "neutral": 0.15},
                 "n": 30, "score": 0.21}]},
            "easy_hard": {"easy_accuracy": 0.9, "hard_accuracy": 0.5, "gap": 0.4},
            "data_map": {"points": [{"guid": f"g{i}", "confidence": (i % 10) / 10,
                                     "variability": (i % 7) / 20, "correctness": (i % 5) / 4}
                                    for i in range(60)]}}}
    return _inject(results, "nli") if xss else results


def mcq_results(xss: bool = False) -> dict:
    cues = [("because", "right", 40, 30, 6.1, True), ("not", "wrong", 35, 30, 5.0, True),
            ("went", "right", 20, 11, 0.9, False), ("never", "wrong", 18, 15, 4.9, True)]
    label_of = {c[0]: c[1] for c in cues}.get
    results = {
        "schema_version": "1.0",
        "tool": {"name": "cuelens", "version": "0.1.0"},
        "config": {"metric": "cp", "min_count": 5, "seed": 0, "flag_threshold": 0.10},
        "dataset": {
            "name": "toy-mcq", "format": "jsonl", "task": "mcq", "n_choices": 2,
            "cross_validated": True, "label_names": ["right", "wrong"],
            "splits": {"all": {"file": "copa.jsonl", "items": 200, "instances": 400,
                               "label_counts": {"right": 200, "wrong": 200},
                               "answer_position_counts": {"0": 120, "1": 80},
                               "skipped": {}}}},
        "cues": [_cue(*c) for c in cues],
        "cue_stats": {"bonferroni_z": 4.2, "n_tests": 8, "alpha": 0.05, "min_count": 5,
                      "fitted_on": "all"},
        "leakage": _leakage(0.5, 0.56, [{"name": "answer position", "accuracy": 0.6, "D": 0.1}]),
        "easy_hard": {"easy": 90, "hard": 110, "hard_fraction": 0.55, "folds": 5,
                      "iterations": 5, "seed": 0, "metric": "cp", "aggregator": "lr",
                      "split": "all"},
        "examples": _examples(cues, label_of, lambda tok, k: f"Choice {k}: it happened {tok} so."),
        "probe": {
            "model": {"name": "roberta", "resolved": None, "source": "predictions"},
            "accuracy": 0.66,
            "short_circuit": {"aw": 0.62, "aw_n": 130, "aw_ci": [0.535, 0.698],
                              "aw_thresholds": {"mode": "calibrated", "t1": 0.41, "t2": 0.33,
                                                "null_rate": 0.049, "target_null_rate": 0.05,
                                                "n_null": 650},
                              "co": 0.8,
                              "per_op": {"co": {"n": 100, "pass_rate": 0.8},
                                         "mt": {"n": 90, "pass_rate": 0.55},
                                         "neg+": {"n": 0, "pass_rate": None}}}}}
    return _inject(results, "mcq") if xss else results


def score_pairs_results(xss: bool = False) -> dict:
    name = "gpt2 " + XSS_TEXT if xss else "gpt2"
    return {"kind": "score_pairs", "models": {
        name: {"overall": 0.81, "n": 400, "by_paradigm": {"anaphor_agreement": 0.9, "island": 0.6},
               "by_field": {"morphology": 0.85, "syntax": 0.77},
               "ties": {"overall": 0.0, "by_paradigm": {"anaphor_agreement": 0.0, "island": 0.0}},
               "oov": {"word_rate": 0.0, "pair_rate": 0.0}},
        "bigram": {"overall": 0.66, "n": 400, "by_paradigm": {"anaphor_agreement": 0.7, "island": 0.5},
                   "by_field": {"morphology": 0.7, "syntax": 0.62},
                   "ties": {"overall": 0.125}, "oov": {"word_rate": 0.2, "pair_rate": 0.875}}}}


def _inject(results: dict, task: str) -> dict:
    """Put the payloads into every untrusted string of a results dict (a deep copy)."""
    r = copy.deepcopy(results)
    bad_label = PAYLOADS[1]
    ds = r["dataset"]
    ds["name"] = "toy " + XSS_TEXT
    for split in ds["splits"].values():
        split["file"] = PAYLOADS[2] + ".jsonl"
        split["skipped"] = {PAYLOADS[0]: 1}
    if task == "nli":  # labels are free strings only for pair tasks
        ds["label_names"] = ds["label_names"] + [bad_label]
        for split in ds["splits"].values():
            split["label_counts"][bad_label] = 5
        r["cues"].append(_cue(PAYLOADS[0], bad_label, 20, 18, 7.5, True))
        r["features"][0]["train_dist"][bad_label] = 0.0
        r["features"].append({**r["features"][1], "feature": PAYLOADS[2], "value": PAYLOADS[3]})
    r["cues"].append(_cue(PAYLOADS[2], r["cues"][0]["label"], 15, 12, 6.5, True))
    r["leakage"]["baselines"][0]["name"] = PAYLOADS[4]
    ex = r["examples"]
    start = len(ex["items"])
    for k, payload in enumerate(PAYLOADS):
        ex["items"].append({"id": payload, "premise": XSS_TEXT, "text": f"x {payload} y {XSS_TEXT}",
                            "label": bad_label if task == "nli" else "right", "easy": False})
    ex["by_cue"][PAYLOADS[0]] = list(range(start, start + len(PAYLOADS)))
    ex["by_cue"][PAYLOADS[2]] = [start + 2]
    ex["hard"] = list(range(start, start + len(PAYLOADS)))
    r["probe"]["model"]["name"] = PAYLOADS[0]
    return r


def large_results(cues_per_label: int = 12000, data_map_points: int = 100_000) -> dict:
    """SNLI-scale results: ~36k (word, label) cues, 300 explorer cues x 20 examples and a
    100k-point data map (the report must sample, not embed, all of it)."""
    r = nli_results()
    r["cues"] = [_cue(f"w{i}", label, 5 + i % 997, 1 + (i * 7) % 5, round((i % 50) / 5, 6), i % 3 == 0)
                 for label in NLI_LABELS for i in range(cues_per_label)]
    items, by_cue = [], {}
    for c in range(300):
        by_cue[f"w{c}"] = list(range(len(items), len(items) + 20))
        items += [{"id": f"{c}-{k}", "premise": "Two people walk a dog along a beach at sunset. " * 2,
                   "text": f"Somebody w{c} is outside with an animal near the water {k}.",
                   "label": NLI_LABELS[c % 3], "easy": k % 2 == 0} for k in range(20)]
    r["examples"] = {"items": items, "by_cue": by_cue, "easy": list(range(0, 20, 2)),
                     "hard": list(range(1, 20, 2))}
    r["probe"]["data_map"]["points"] = [
        {"guid": f"g{i}", "confidence": (i % 101) / 100, "variability": (i % 37) / 80,
         "correctness": (i % 6) / 5} for i in range(data_map_points)]
    return r


def write_xss_dataset(directory, task: str, n: int = 120):
    """A single cross-validated JSONL file whose name, ids, hypotheses/choices and (NLI) labels
    carry the payloads; the payload words are planted as cues so they reach the cue table and the
    explorer. Returns the file's path."""
    import json
    from pathlib import Path

    path = Path(directory) / f'{PAYLOADS[1]}.jsonl'  # a file name without "/"
    path.parent.mkdir(parents=True, exist_ok=True)
    labels = ["entailment", PAYLOADS[0]]
    rows = []
    for i in range(n):
        payload = PAYLOADS[i % len(PAYLOADS)]
        cue = f"{payload} nobody" if i % 2 else "somebody is here"
        row = {"id": f"{payload}#{i}", "premise": f"{PAYLOADS[2]} scene {i % 7}"}
        if task == "nli":
            row.update(hypothesis=f"{cue} with a dog {i % 5}", label=labels[i % 2])
        else:
            row.update(choices=[f"{cue} with a dog", f"a cat {payload if i % 3 else ''} sits"],
                       label=i % 2)
        rows.append(json.dumps(row))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def contrast_judge_results(xss: bool = False) -> dict:
    """``audit contrast judge`` output (docs/results-schema.md, kind contrast_judge)."""
    name = "bert " + XSS_TEXT if xss else "bert"

    def model(acc, scsr, acc_band, scsr_band):
        return {"n": 120, "n_pairs": 40, "n_subjects": 6, "accuracy": acc, "scsr": scsr,
                "accuracy_per_group": [acc] * 3, "scsr_per_group": [scsr] * 3,
                "accuracy_noise_ceiling": {"lower": acc_band[0], "upper": acc_band[1]},
                "scsr_noise_ceiling": {"lower": scsr_band[0], "upper": scsr_band[1]}}

    def test(a, b, p, q):
        return {"a": a, "b": b, "n_groups": 3, "mean_difference": 0.1, "statistic": 0.0, "p": p,
                "p_fdr": q}

    tests = [test(name, "gpt2", 0.25, 0.375), test(name, "noise_ceiling_lower", 0.125, 0.375),
             test("gpt2", "noise_ceiling_lower", 0.5, 0.5)]
    return {"kind": "contrast_judge", "midpoint": 3.5, "n_rows": 240, "n_subjects": 6,
            "n_pairs": 80,
            "models": {name: model(0.625, 0.25, (0.7, 0.8), (0.45, 0.55)),
                       "gpt2": model(0.75, -0.125, (0.7, 0.8), (0.4, 0.6))},
            "groups": [0, 1, 2], "tests": {"accuracy": tests, "scsr": copy.deepcopy(tests)}}


def contrast_pairs_results(xss: bool = False, method: str = "natural") -> dict:
    """``audit contrast natural|synthetic --summary`` output (kind contrast_pairs)."""
    bad = XSS_TEXT if xss else ""
    models = ["bert" + bad, "gpt2", "lstm"]
    if method == "synthetic":
        pairs = [{"natural_index": k, "model_1": models[0], "model_2": models[1],
                  "n": f"natural sentence {k} {bad}", "s1": f"first synthetic {k} {bad}",
                  "s2": f"second synthetic {k}", "lp_n_m1": -30.0 - k, "lp_n_m2": -31.0,
                  "lp_s1_m1": -50.0 - k, "lp_s1_m2": -30.5, "lp_s2_m1": -29.0,
                  "lp_s2_m2": None if k == 1 else -45.0, "controversiality": 30.0 - k,
                  "controversial": k != 2, "steps_s1": 9, "steps_s2": 8, "converged": True}
                 for k in range(3)]
        facts = {"models": models[:2], "n_sentences": 3, "seed": 0, "max_steps": 200,
                 "patience": 8, "controversial_fraction": 2 / 3,
                 "seconds_per_sentence_median": 1.5, "seconds_total": 4.5}
    else:
        pairs = [{"model_1": a, "model_2": b, "s1_index": 2 * k, "s2_index": 2 * k + 1,
                  "s1": f"sentence {2 * k} {bad}", "s2": None if k == 2 else f"sentence {2 * k + 1}",
                  "s1_rank_model_1": 0.0625 * k, "s1_rank_model_2": 0.75,
                  "s2_rank_model_1": 0.875, "s2_rank_model_2": 0.125,
                  "s1_logprob_model_1": -40.0 - k, "s1_logprob_model_2": -20.5,
                  "s2_logprob_model_1": -18.25, "s2_logprob_model_2": None if k == 1 else -38.0}
                 for k, (a, b) in enumerate([(models[0], models[1]), (models[0], models[2]),
                                             (models[1], models[2])])]
        facts = {"objective": 0.5625, "models": models, "n_sentences": 100, "per_pair": 1,
                 "n_trials": 3, "threshold": 0.5, "solver": "lsa",
                 "n_candidates_after_pruning": 12, "feasible": True, "non_finite_logprobs": 0}
    return {"kind": "contrast_pairs", "method": method, **facts, "pairs": pairs}


def assert_schema_rejects(results: dict, where: str) -> None:
    """``results`` fails validation with a one-line error naming the JSON path ``where``, and the
    reference validator (jsonschema) agrees."""
    with pytest.raises(UserError) as err:
        validate_results(results, source="r.json")
    assert str(err.value).startswith(f"r.json: not a cuelens results file: {where}:")
    assert not jsonschema.Draft202012Validator(results_schema()).is_valid(results)


def llm_probe_results() -> dict:
    """``nli_results`` with an ``llm_probe`` section (two prompt templates) instead of ``probe``."""
    results = nli_results()
    del results["probe"]

    def cue(name, delta, low, high, significant):
        return {"cue": name, "kind": "word", "n_with": 40, "n_without": 80, "acc_with": 0.7,
                "acc_without": round(0.7 - delta, 6), "delta": delta, "ci_low": low,
                "ci_high": high, "significant": significant}

    def template(name, accuracy, cues):
        return {"name": name, "mode": "score", "style": "plain", "accuracy": accuracy,
                "unparseable": {"n": 0, "rate": 0.0},
                "tokens": {"prompt": 12000, "completion": 0, "total": 12000},
                "accuracy_test": {"cues": cues, "total_abs_delta": sum(abs(c["delta"]) for c in cues)},
                "distribution_test": {"cues": [{
                    "cue": "nobody", "n": 30, "score": 0.2 if name == "nli-plain" else 0.05,
                    "train_dist": {"contradiction": 0.96, "entailment": 0.02, "neutral": 0.02},
                    "predicted_dist": {"contradiction": 0.6, "entailment": 0.2, "neutral": 0.2}}]}}

    results["llm_probe"] = {
        "model": {"name": "tiny-gpt2", "backend": "hf"},
        "templates": [
            template("nli-plain", 0.58, [cue("nobody", 0.25, 0.12, 0.37, True),
                                         cue("outdoors", 0.0, -0.1, 0.1, False),
                                         cue("tall", -0.08, -0.2, 0.04, False)]),
            template("nli-yes-no", 0.55, [cue("nobody", 0.05, -0.06, 0.16, False),
                                          cue("outdoors", 0.02, -0.08, 0.12, False),
                                          cue("tall", -0.01, -0.12, 0.1, False)])],
        "verdict": {"least_cue_reliant": "nli-yes-no", "measure": "total_abs_delta",
                    "ranking": ["nli-yes-no", "nli-plain"]}}
    return results


def compare_results() -> dict:
    """``audit compare`` of the NLI fixture with a version whose cues were rebalanced."""
    from cuelens.audit.compare import compare_scans

    before = nli_results()
    after = copy.deepcopy(before)
    after["leakage"] = _leakage(0.366667, 0.42, [])
    after["cues"] = [dict(c, significant=c["token"] in ("tall", "first")) for c in after["cues"]]
    return compare_scans(before, after, "v1/results.json", "v2/results.json")


def lengths_section(task: str = "nli") -> dict:
    """A ``lengths`` section: short entailments, long neutral hypotheses."""
    def summary(peak, n=40):
        hist = [0] * 41
        for k in range(n):
            hist[peak + (k % 5) - 2] += 1
        return {"n": n, "histogram": hist, "mean": float(peak), "median": float(peak)}

    if task == "mcq":
        return {"unit": "words per choice", "max_words": 40,
                "by_label": {"correct choice": summary(7, 200), "other choices": summary(5, 200)}}
    return {"unit": "words per hypothesis", "max_words": 40,
            "by_label": {"contradiction": summary(7), "entailment": summary(5),
                         "neutral": summary(10)},
            "baseline": {"name": "hypothesis length only", "accuracy": 0.45, "ci_low": 0.36,
                         "ci_high": 0.54, "majority": 0.333333, "D": 0.116667,
                         "protocol": "train→test"}}
