"""The reports of ``audit contrast`` (docs/methods.md §9): model–human consistency on
controversial pairs (kind ``contrast_judge``) and the selected or synthesised pairs themselves
(kind ``contrast_pairs``).
"""

from __future__ import annotations

import math

from cuelens.reports import figures as F
from cuelens.reports.options import ReportOptions
from cuelens.reports.section import Section, Verdict, pct
from cuelens.wording import plural


JUDGE_MEASURES = {  # measure → (axis title, x range, chance level, caption)
    "accuracy": ("human-choice prediction accuracy", (0, 100), (50, "chance"),
                 "How often each model prefers the sentence people chose, on the controversial "
                 "pairs that targeted it (bars, mean over participants); the grey band is the "
                 "noise ceiling (left edge: the other participants' majority vote, right edge: "
                 "everyone's), so a bar reaching the band predicts people as well as people do."),
    "scsr": ("signed-rank cosine similarity with human ratings", (-1, 1), (0, "no relation"),
             "Signed-rank cosine between each model's log-probability ratio and the graded "
             "human ratings (bars; 1 = same direction and ordering, 0 = unrelated), with the "
             "noise-ceiling band in grey: the closer a bar gets to the band, the more "
             "human-like the model's graded preferences."),
}


def contrast_judge(results: dict, options: ReportOptions) -> Section | None:
    """Model–human consistency on controversial pairs (docs/methods.md §9): accuracy and signed-rank cosine
    per model with the noise-ceiling band, and the Wilcoxon/FDR tests."""
    models = results["models"]
    names = list(models)
    sec = Section("contrast_judge", "Model–human consistency on controversial pairs", context={
        "models": models, "tests": results.get("tests", {}),
        "facts": {k: results[k] for k in ("n_subjects", "n_pairs", "n_rows", "midpoint")
                  if k in results}})
    sec.terms = ["p_fdr"]
    for measure, (title, x_range, chance, caption) in JUDGE_MEASURES.items():
        scale = 100 if measure == "accuracy" else 1
        values = [None if models[m][measure] is None else scale * models[m][measure]
                  for m in names]
        ceilings = [models[m][f"{measure}_noise_ceiling"] for m in names]
        bands = [None if c["lower"] is None or c["upper"] is None else
                 (scale * c["lower"], scale * c["upper"]) for c in ceilings]
        text = [pct(models[m][measure]) if measure == "accuracy" else
                "n/a" if models[m][measure] is None else f"{models[m][measure]:.3f}" for m in names]
        sec.add_figure(measure, caption, F.horizontal_bars(
            names, values, axis_title=title, text=text, x_range=x_range, reference=chance,
            bands=bands, percent=measure == "accuracy"))
    return sec


def contrast_judge_verdict(results: dict) -> Verdict:
    models = results["models"]
    scored = [m for m in models if models[m]["accuracy"] is not None]
    if not scored:
        return Verdict("mild", "No model has an accuracy on the rated pairs.", "contrast_judge",
                       "model–human consistency")
    best = max(scored, key=lambda m: (models[m]["accuracy"], m))
    ceiling = models[best]["accuracy_noise_ceiling"]
    reach = ("" if ceiling.get("lower") is None else
             " — within the noise ceiling" if models[best]["accuracy"] >= ceiling["lower"] else
             f" — below the noise ceiling ({pct(ceiling['lower'])}–{pct(ceiling['upper'])})")
    return Verdict("clean", f"Most human-like model: {best}, predicting people's choice on "
                   f"{pct(models[best]['accuracy'])} of its controversial pairs{reach}.",
                   "contrast_judge", "model–human consistency")


def _per_model(key: str, header: str, tip: str, sentences: tuple[str, ...]) -> list[tuple]:
    """Numeric columns ``key``/``header``/``tip`` formatted for each sentence and model 1, 2."""
    return [(key.format(s=s, m=m), header.format(s=s, m=m), "num", tip.format(s=s, m=m))
            for s in sentences for m in (1, 2)]


_LOGPROB = "log-probability of {s} under model {m}"


# Table columns per selection method: (key in the pair record, header, type, tooltip);
# type is text, num (3 decimals), int or bool.
PAIR_COLUMNS = {
    "natural": [
        ("model_1", "model 1", "text", "ranks s1 low and s2 high"),
        ("model_2", "model 2", "text", "ranks s1 high and s2 low"),
        ("s1", "s1", "text", "sentence rejected by model 1, accepted by model 2"),
        ("s2", "s2", "text", "sentence rejected by model 2, accepted by model 1"),
        ("s1_index", "s1 #", "int", "line of s1 in the corpus (index in the scores file)"),
        ("s2_index", "s2 #", "int", "line of s2 in the corpus (index in the scores file)"),
        *_per_model("{s}_logprob_model_{m}", "log p({s}|m{m})", _LOGPROB, ("s1", "s2")),
        *_per_model("{s}_rank_model_{m}", "rank {s}|m{m}",
                    "fractional rank of {s} in the corpus under model {m} (0 = least probable)",
                    ("s1", "s2")),
    ],
    "synthetic": [
        ("model_1", "model 1", "text", "rejects s1, accepts s2"),
        ("model_2", "model 2", "text", "accepts s1, rejects s2"),
        ("n", "natural n", "text", "the natural starting sentence"),
        ("s1", "s1", "text", "synthetic sentence rejected by model 1, accepted by model 2"),
        ("s2", "s2", "text", "synthetic sentence rejected by model 2, accepted by model 1"),
        *_per_model("lp_{s}_m{m}", "log p({s}|m{m})", _LOGPROB, ("n", "s1", "s2")),
        ("controversiality", "controversiality", "num",
         "log p(n|m1)/p(s1|m1) + log p(n|m2)/p(s2|m2): how far each model's rejected sentence fell"),
        ("controversial", "controversial", "bool", "both models' rejected sentences fell below n"),
    ],
}


PAIR_FACTS = ("objective", "n_sentences", "per_pair", "n_trials", "threshold", "solver",
              "n_candidates_after_pruning", "non_finite_logprobs", "controversial_fraction",
              "seconds_per_sentence_median", "max_steps", "patience", "seed")


def _cell(value):
    """A JSON-safe table cell: non-finite numbers (``-inf`` log-probabilities) become None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def contrast_pairs(results: dict, options: ReportOptions) -> Section | None:
    """The selected (natural) or synthesised controversial pairs with both models'
    log-probabilities (and corpus ranks): a sortable, filterable table (docs/methods.md §9)."""
    method = results["method"]
    columns = PAIR_COLUMNS[method]
    pairs = results["pairs"]
    rows = [[_cell(p.get(key)) for key, *_ in columns] for p in pairs]
    model_pairs = sorted({f"{p['model_1']} vs {p['model_2']}" for p in pairs})
    title = {"natural": "Natural controversial sentence pairs",
             "synthetic": "Synthetic controversial sentence triplets"}[method]
    return Section("contrast_pairs", title, context={
        "method": method, "columns": columns, "model_pairs": model_pairs, "n_pairs": len(pairs),
        "models": results["models"],
        "facts": {k: f"{v:.6g}" if isinstance(v, float) else v
                  for k in PAIR_FACTS if (v := results.get(k)) is not None}},
        client={"contrast_pairs": {"columns": [[t, typ] for _, t, typ, _ in columns],
                                   "rows": rows}})


def contrast_pairs_verdict(results: dict) -> Verdict:
    share = results.get("controversial_fraction")
    return Verdict("clean", f"{plural(len(results['pairs']), results['method'] + ' controversial pair')} "
                   f"for {', '.join(results['models'])}"
                   + ("" if share is None else f"; {pct(share)} of them controversial") + ".",
                   "contrast_pairs", "controversial pairs")
