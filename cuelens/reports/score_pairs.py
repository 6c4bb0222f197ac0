"""The report of ``audit score-pairs`` (kind ``score_pairs``, docs/lm.md): minimal-pair accuracy
per language model, field and paradigm.
"""

from __future__ import annotations

from cuelens.reports import figures as F
from cuelens.reports.options import ReportOptions
from cuelens.reports.section import Section, Verdict, pct
from cuelens.wording import plural


def score_pairs(results: dict, options: ReportOptions) -> Section | None:
    models = results["models"]
    names = list(models)
    sec = Section("score_pairs", "Language models on sentence pairs",
                  context={"models": models})
    sec.add_figure("overall", "How often each model gives the higher probability to the "
                   "acceptable sentence of a pair; 50% is chance.",
                   F.horizontal_bars(names, [100 * models[m]["overall"] for m in names],
                                     axis_title="accuracy", x_range=(0, 100),
                                     text=[f"{pct(models[m]['overall'])} of {models[m]['n']:,}"
                                           for m in names],
                                     reference=(50, "chance")))
    covered = [m for m in names if "ties" in models[m] or "oov" in models[m]]
    if covered:
        rows = [(m, measure, models[m][key][field]) for m in covered
                for measure, key, field in (("ties", "ties", "overall"),
                                            ("pairs with an unknown word", "oov", "pair_rate"))
                if key in models[m]]
        sec.add_figure("coverage", "Ties (both sentences equally probable: counted as errors "
                       "above) and pairs containing a word outside the model's vocabulary; a "
                       "word-level model gives every unknown word the same <unk> probability.",
                       F.horizontal_bars([f"{m}: {measure}" for m, measure, _ in rows],
                                         [100 * v for _, _, v in rows], axis_title="% of pairs",
                                         x_range=(0, 100), text=[pct(v) for _, _, v in rows]))
    for key, what in (("by_field", "linguistic field"), ("by_paradigm", "paradigm")):
        groups = sorted({g for m in names for g in models[m].get(key, {})})
        if not groups:
            continue
        z = [[100 * models[m][key][g] if g in models[m].get(key, {}) else None for m in names]
             for g in groups]
        text = [["" if v is None else f"{v:.0f}%" for v in row] for row in z]
        sec.add_figure(key, f"Accuracy per {what} (rows) and model (columns): pale cells show "
                       f"where a model fails to prefer the acceptable sentence.",
                       F.heatmap(groups, names, z, text, colour_title="accuracy %",
                                 diverging=False, zmin=0, zmax=100, row_title=what,
                                 column_title="model"))
    return sec


def score_pairs_verdict(results: dict) -> Verdict:
    models = results["models"]
    best = max(models, key=lambda m: (models[m]["overall"], m))
    return Verdict("clean", f"Best model {best}: prefers the acceptable sentence in "
                   f"{pct(models[best]['overall'])} of {plural(models[best]['n'], 'pair')} "
                   f"(chance 50%); {plural(len(models), 'model')} compared.", "score_pairs",
                   "language models")
