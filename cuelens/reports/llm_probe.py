"""The model section of an LLM probe's report (``audit probe --llm``, docs/llm-probe.md): accuracy,
cue reliance and position bias per prompt template.
"""

from __future__ import annotations

from cuelens.audit.results import DatasetSummary
from cuelens.reports import figures as F
from cuelens.reports.options import ReportOptions
from cuelens.reports.probe import delta_errors, position_bias_figure
from cuelens.reports.section import Section, Verdict, label_keys, pct
from cuelens.wording import plural

TOP_LLM_CUES = 8


def llm_probe(results: dict, options: ReportOptions) -> Section | None:
    lp = results.get("llm_probe")
    if not lp or not lp.get("templates"):
        return None
    templates = lp["templates"]
    rows = [{"name": t["name"], "mode": t["mode"], "style": t.get("style", ""),
             "accuracy": t["accuracy"], "unparseable": t["unparseable"]["rate"],
             "total_abs_delta": t["accuracy_test"]["total_abs_delta"],
             "easy": (t.get("easy_hard") or {}).get("easy_accuracy"),
             "hard": (t.get("easy_hard") or {}).get("hard_accuracy"),
             "tokens": t["tokens"]["total"]} for t in templates]
    sec = Section("llm_probe", "Does a prompted language model use the cues?",
                  context={"model": lp.get("model", {}), "rows": rows,
                           "verdict": lp.get("verdict", {})})
    sec.terms = ["ΔAcc", "Σ|ΔAcc|", "score", "CI"]
    names = [t["name"] for t in templates]
    sec.add_figure("accuracy", "Test accuracy per prompt template; the share of answers that "
                   "could not be read (generation only) is counted as wrong and shown after the "
                   "bar.", F.horizontal_bars(
                       names, [100 * t["accuracy"] for t in templates], axis_title="accuracy",
                       x_range=(0, 100),
                       text=[f"{pct(t['accuracy'])}, {pct(t['unparseable']['rate'])} unparseable"
                             for t in templates]))
    rows_by = [{c["cue"]: c for c in t["accuracy_test"]["cues"]} for t in templates]
    common = set.intersection(*(set(r) for r in rows_by))
    cues = sorted(common, key=lambda c: (-max(abs(r[c]["delta"]) for r in rows_by), c))
    cues = cues[:TOP_LLM_CUES]
    if cues:
        sec.add_figure("delta", "ΔAcc per cue (accuracy with the cue minus without it) for each "
                       "template side by side, with 95% bootstrap intervals; the dashed line at "
                       "0 is no effect: the template whose bars stay closest to it relies least "
                       "on the cues.",
                       F.grouped_bars(cues, {n: [100 * r[c]["delta"] for c in cues]
                                             for n, r in zip(names, rows_by)},
                                      {n: [_delta_hover(r[c]) for c in cues]
                                       for n, r in zip(names, rows_by)},
                                      axis_title="ΔAcc (points)", percent=False,
                                      errors={n: delta_errors([r[c] for c in cues])
                                              for n, r in zip(names, rows_by)},
                                      reference=(0, "no effect")))
    dists = [{c["cue"]: c for c in t["distribution_test"]["cues"]} for t in templates]
    shared = set.intersection(*(set(d) for d in dists))
    if shared:
        cue = min(shared, key=lambda c: (-max(abs(d[c]["score"]) for d in dists), c))
        dist_rows = [(f"{cue} · training data", dists[0][cue]["train_dist"])]
        dist_rows += [(f"{cue} · {n} (score {d[cue]['score']:+.3f})", d[cue]["predicted_dist"])
                      for n, d in zip(names, dists)]
        data = DatasetSummary.in_results(results)
        labels = label_keys(data.label_names if data is not None else [],
                            *(d for _, d in dist_rows))
        sec.add_figure("distribution", "On a label-balanced set of items with the cue, each "
                       "template's predicted labels: an even spread means the prompt does not "
                       "follow the cue; leaning like the training data means it does.",
                       F.stacked_distributions(dist_rows, labels))
    sec.context["position_verdicts"] = [
        (t["name"], position_bias_figure(sec, t["position_bias"], f"position_bias_{i}",
                                          f"Prompt {t['name']}, position bias. "))
        for i, t in enumerate(templates) if t.get("position_bias")]
    return sec


def _delta_hover(c: dict) -> str:
    interval = ("" if c.get("ci_low") is None else
                f" [95% CI {100 * c['ci_low']:+.1f}, {100 * c['ci_high']:+.1f}]")
    return (f"“{F.short(c['cue'])}”: ΔAcc {100 * c['delta']:+.1f} points{interval}"
            + (", significant" if c.get("significant") else ""))


def llm_verdict(lp: dict) -> Verdict:
    templates = lp["templates"]
    relied = [t["name"] for t in templates
              if any(c.get("significant") and c["delta"] > 0 for c in t["accuracy_test"]["cues"])]
    best = max(templates, key=lambda t: (t["accuracy"], t["name"]))
    least = (lp.get("verdict") or {}).get("least_cue_reliant")
    text = (f"Best prompt “{best['name']}”: {pct(best['accuracy'])} accuracy. "
            + (f"Relies on cues with {len(relied)} of {plural(len(templates), 'prompt')} "
               f"({', '.join(relied)}). " if relied else
               "No prompt's accuracy changes significantly with a cue. ")
            + (f"Least cue-reliant prompt: “{least}”." if least else
               str((lp.get("verdict") or {}).get("reason", ""))))
    return Verdict("flagged" if relied else "clean", text.strip(), "llm_probe",
                   f"model {lp.get('model', {}).get('name', '')}")
