"""The sections of a scan's report (docs/methods.md §10; a probe's report shows them after the
model's section): dataset overview, hygiene, cue leakage, MCQ baselines, lengths, cue words,
cue explorer, easy/hard items, ICQ feature cues and the next steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from cuelens.audit.chance import positions_verdict
from cuelens.audit.conclusion import (NO_LEAKAGE, conclusion_of, leakage_baseline,
                                      measurable)
from cuelens.audit.examples import LISTED_PER_LABEL, listed_cues
from cuelens.audit.findings import d_with_ci
from cuelens.audit.results import (ConfigSection, CueFinding, CueRow, CueStats, DatasetSummary,
                                   EasyHardSection, ExamplesSection, FeatureRow, FeaturesSection,
                                   HygieneSection, LeakageSection, LengthsSection,
                                   McqBaselinesSection, SegmentationSection)
from cuelens.data.dataset import Task, roles_note
from cuelens.data.preference import PREFERENCE_TASK
from cuelens.jsonio import format_number, read_number
from cuelens.mitigate.card import sentence
from cuelens.reports import figures as F
from cuelens.reports.options import ReportOptions
from cuelens.reports.section import Section, label_keys, pct
from cuelens.wording import plural

TOP_FEATURES_TABLE = 30
TOP_FEATURES_CHART = 10
EXAMPLES_PER_LIST = 10


#: per task, what its cue texts (one, several) and their context are called; else NLI's
TEXT_NAMES = {Task.MCQ.value: ("choice", "answer choices", "question"),
              PREFERENCE_TASK: ("response", "responses", "prompt")}
NLI_NAMES = ("hypothesis", "hypotheses", "premise")


def _names(results: dict) -> tuple[str, str, str]:
    """A cue text, several, and their context, as this task calls them (:data:`TEXT_NAMES`)."""
    return TEXT_NAMES.get(DatasetSummary.required_in(results).task, NLI_NAMES)


def _text_name(results: dict) -> tuple[str, str]:
    """What the cue texts and their context are called for this task (plain-language copy)."""
    return _names(results)[1:]


def overview(results: dict, options: ReportOptions) -> Section | None:
    ds = DatasetSummary.in_results(results)
    if ds is None:
        return None
    splits = ds.splits
    sec = Section("overview", "Dataset overview", context={
        "dataset": ds, "config": ConfigSection.in_results(results),
        "notes": ([roles_note(ds.split_roles)] if ds.split_roles else [])
        + results.get("notes", []) + (ds.labels or {}).get("warnings", []),
        "segmentation": SegmentationSection.in_results(results),
        "warnings": results.get("warnings", []),
        "rows": [{"role": role, "file": s.file, "items": s.items, "instances": s.instances,
                  "skipped": sum((s.skipped or {}).values()), "skipped_reasons": s.skipped or {}}
                 for role, s in splits.items()],
    })
    positions = {role: s.answer_position_counts for role, s in splits.items()
                 if s.answer_position_counts}
    if ds.task == Task.MCQ and positions:
        keys = sorted({k for c in positions.values() for k in c}, key=lambda k: int(k))
        cats = [f"choice {int(k) + 1}" for k in keys]
        series, hover = _shares(
            positions, keys,
            lambda role, k, n, total: f"{role}: {n:,} of {plural(total, 'question')}")
        sec.add_figure("positions", "Where the correct answer sits in each split: bars far from "
                       "an even split mean a model could gain accuracy just by preferring a "
                       "position.",
                       F.grouped_bars(cats, series, hover, axis_title="share of questions"))
    else:
        counted = {role: s.label_counts or {} for role, s in splits.items()}
        labels = label_keys(ds.label_names, *counted.values())
        series, hover = _shares(counted, labels,
                                lambda role, label, n, total: f"{label}: {n:,} of {total:,}")
        sec.add_figure("labels", "Share of each label per split: the tallest bar in a split is "
                       "the accuracy of always guessing that label.",
                       F.grouped_bars(labels, series, hover, axis_title="share of instances"))
    return sec


def _shares(counted: dict[str, dict[str, int]], keys: list[str],
            hover: Callable[[str, str, int, int], str]) -> tuple[dict, dict]:
    """Per split: each key's share of the split's counts (%) and each bar's hover line,
    ``hover(role, key, count, total)``."""
    series, lines = {}, {}
    for role, counts in counted.items():
        total = sum(counts.values()) or 1
        series[role] = [100 * counts.get(k, 0) / total for k in keys]
        lines[role] = [hover(role, k, counts.get(k, 0), total) for k in keys]
    return series, lines


HYGIENE_EXAMPLES = {"overlap": "Evaluation items found in a fitting split",
                    "duplicates": "Exact duplicates", "near_duplicates": "Near duplicates",
                    "label_conflicts": "Label-noise candidates (same input, different label)",
                    "mirrored": "Mirrored / contrastive pairs",
                    "permuted": "Copies with the choices in another order "
                                "(a deliberate construction)"}


def hygiene(results: dict, options: ReportOptions) -> Section | None:
    """Duplicates, overlap, mirrored pairs and label-noise candidates (docs/data-hygiene.md)."""
    hy = HygieneSection.in_results(results)
    if hy is None:
        return None
    examples = [(HYGIENE_EXAMPLES[kind], rows) for kind, rows in hy.examples.items()
                if rows and kind in HYGIENE_EXAMPLES]
    return Section("hygiene", "Data hygiene", context={"hy": hy, "examples": examples})


def calm(level: str, results: dict) -> str:
    """A sub-verdict's box level: no green unless the conclusion is no meaningful leakage (a
    test that finds nothing is not a clean bill: neutral grey)."""
    if level != "clean" or conclusion_of(results).status == NO_LEAKAGE:
        return level
    return "neutral"


def verdict(leak: LeakageSection, threshold: float, results: dict) -> tuple[str, str]:
    """(level, plain-language sentence) for the leakage headline (docs/methods.md §3): significant
    only when the whole 95% interval of D is above the alarm threshold; an interval of zero width
    is followed by why (``leakage.interval_note``: nothing varies, D is not known precisely)."""
    level, text = _verdict(leak, threshold, results)
    return level, f"{text} {sentence(leak.interval_note)}" if leak.interval_note else text


def _verdict(leak: LeakageSection, threshold: float, results: dict) -> tuple[str, str]:
    text, context = _text_name(results)
    best = leak.best
    what = (f"Looking only at the words of the {text}, a simple classifier ({best['metric']} "
            f"scores + {best['aggregator']}) is right {pct(best['accuracy'])} of the time, "
            f"against {pct(leak.reference['accuracy'])} for {leakage_baseline(results)}")
    level = leak.headline_verdict
    if level == "significant":
        return "flagged", (f"Significant cue leakage. {what} — {d_with_ci(best)}, the whole "
                           f"interval above the {100 * threshold:.0f}-point alarm threshold. "
                           f"Models trained on this data can score well without understanding "
                           f"the {context}.")
    if level == "mild":
        return "mild", (f"Some cue leakage, not surely above the {100 * threshold:.0f}-point "
                        f"alarm threshold. {what}: {d_with_ci(best)}.")
    if level == "below chance":
        return "clean", (f"The word-cue test finds no leakage. {what}: {d_with_ci(best)}, below "
                         "that baseline.")
    return "clean", (f"The word-cue test finds no leakage. {what}: {d_with_ci(best)}, "
                     "indistinguishable from guessing — which alone does not rule leakage out "
                     "(see the conclusion).")


def d_against(accuracy: float, baseline: float) -> float:
    """D of an accuracy against a baseline, rounded as results.json stores D (so a cell and the
    headline print the same points)."""
    return round(accuracy - baseline, 6)


def leakage(results: dict, options: ReportOptions) -> Section | None:
    leak = LeakageSection.in_results(results)
    if leak is None or not measurable(results):
        return None
    threshold = ConfigSection.of(results).flag_threshold
    level, headline = verdict(leak, threshold, results)
    level = calm(level, results)
    # every D shown against the verdict's baseline (the prior-matched constant), as the headline's
    reference = leak.reference["accuracy"]
    mcq = DatasetSummary.required_in(results).task == Task.MCQ
    sec = Section("leakage", "Cue leakage", context={
        "level": level, "verdict": headline, "leak": leak, "threshold": threshold,
        "baseline": "chance (1/k)" if mcq else "baseline: the most frequent evaluated label",
        "baseline_accuracy": reference},
        terms=["D", "CI", *dict.fromkeys(r["metric"] for r in leak.table),
               *dict.fromkeys(r["aggregator"] for r in leak.table), "BoW"])
    table = leak.table
    if table:
        metrics = list(dict.fromkeys(r["metric"] for r in table))
        aggs = list(dict.fromkeys(r["aggregator"] for r in table))
        cell = {(r["metric"], r["aggregator"]): r for r in table}
        points = {key: 100 * d_against(r["accuracy"], reference) for key, r in cell.items()}
        z = [[points.get((m, a)) for a in aggs] for m in metrics]
        txt = [[f"{pct(cell[m, a]['accuracy'])}\n{points[m, a]:+.1f}" if (m, a) in cell else ""
                for a in aggs] for m in metrics]
        sec.add_figure("heatmap", "Each cell is the held-out accuracy of guessing the label from "
                       "cue-word scores alone (rows: how a word's cue strength is scored; columns: "
                       "how the words of an instance are combined), with D = points above the "
                       "verdict's baseline (the most frequent evaluated label; MCQ: chance) below "
                       "it; red = above it, blue = no better than guessing (whether the best "
                       "cell clears chance after the 40-way selection is the verdict's interval).",
                       F.heatmap(metrics, aggs, z, txt, colour_title="D (points)", diverging=True,
                                 row_title="cue metric", column_title="aggregator"))
    names = ["chance (random choice)" if mcq else "prior-matched constant"]
    names += [b["name"] for b in leak.baselines or []]
    accs = [reference] + [b["accuracy"] for b in leak.baselines or []]
    names.append(f"best cue classifier ({leak.best['metric']} + {leak.best['aggregator']})")
    accs.append(leak.best["accuracy"])
    ds = [d_against(a, reference) for a in accs]
    sec.add_figure("baselines", "Accuracy of simple guessers that never read the "
                   f"{_text_name(results)[1]}: the further a bar reaches past the dashed baseline "
                   "line, the more the labels can be guessed from surface cues.",
                   F.horizontal_bars(names, [100 * a for a in accs], axis_title="accuracy",
                                     text=[f"{pct(a)} (D {100 * d:+.1f})"
                                           for a, d in zip(accs, ds)],
                                     colours_=[F.GREY] + [F.MAIN] * (len(names) - 2)
                                     + [F.BAD if level in ("flagged", "mild") else F.MAIN],
                                     reference=(100 * reference, "chance" if mcq else "baseline"),
                                     x_range=(0, 100)))
    return sec


def mcq_baselines(results: dict, options: ReportOptions) -> Section | None:
    """Answer-position, length, overlap and question-only baselines
    (cuelens.audit.mcq_baselines)."""
    from cuelens.audit.mcq_baselines import baseline_verdict, baselines_headline, ci_name

    mb = McqBaselinesSection.in_results(results)
    if mb is None:
        return None
    rows = [row.to_json() for row in mb.rows]  # the chart's records
    gold = {role: positions_verdict(test.to_json(), f"gold answers ({role} split)")
            for role, test in mb.gold_position.items()}
    level, headline = baselines_headline(mb)
    level = calm(level, results)
    sec = Section("mcq_baselines", "Answer-order and length artifacts", context={
        "mb": mb, "level": level, "ci": ci_name(mb),
        "verdicts": [baseline_verdict(r, mb) for r in mb.rows], "gold": gold,
        "headline": headline})
    sec.terms = ["D", "CI"]
    sec.add_figure("mcq_baselines", "Accuracy of rules that pick an answer without reading the "
                   f"question, with {ci_name(mb)}s (Bonferroni-corrected for the number of rules, "
                   "like the test); the dashed line is random guessing. Red bars differ "
                   "significantly from guessing: artifacts of the dataset.",
                   F.tested_rate_bars(rows, "name", "accuracy", "accuracy",
                                      text=[f"{pct(r.accuracy)} (D {100 * r.D:+.1f})"
                                            for r in mb.rows],
                                      reference=(100 * mb.chance, "chance")))
    return sec


def lengths(results: dict, options: ReportOptions) -> Section | None:
    """Words per hypothesis / choice by label (:mod:`cuelens.audit.lengths`), with the
    length-only baseline (NLI) or the length rules of the MCQ baselines."""
    ln = LengthsSection.in_results(results)
    if ln is None:
        return None
    by_label, top = ln.by_label, ln.max_words
    names = list(by_label)
    # the chart ends at the longest text (the file keeps every bin)
    end = 1 + max((i for name in names for i, n in enumerate(by_label[name].histogram) if n),
                  default=0)
    bins = list(range(end))
    counted, text = ln.unit.split(" per ")  # words (or characters) per hypothesis
    mcq = text == "choice"
    share = {name: [100 * n / (by_label[name].n or 1) for n in by_label[name].histogram[:end]]
             for name in names}
    hover = {name: [f"{name}: {n:,} of {by_label[name].n:,} with "
                    f"{b if b < top else f'{top} or more'} {counted}"
                    for b, n in zip(bins, by_label[name].histogram)] for name in names}
    label_colours = (F.colours(names, F.SERIES_PALETTE) if mcq else
                     F.colours(label_keys(DatasetSummary.required_in(results).label_names,
                                          dict.fromkeys(names, 0.0))))
    baselines = []
    mb = McqBaselinesSection.in_results(results)
    if ln.baseline is not None:
        baselines = [{**ln.baseline.to_json(), "fitted": True}]
    elif mb is not None:
        baselines = [dict(r.to_json(), ci_low=r.accuracy_ci[0], ci_high=r.accuracy_ci[1],
                          majority=mb.chance)
                     for r in mb.rows if "longest" in r.name or "shortest" in r.name]
    sec = Section("lengths", "Text length per label", context={
        "unit": ln.unit, "rows": [{"name": n, **by_label[n].to_json()} for n in names],
        "baselines": baselines, "mcq": mcq, "text_name": _text_name(results)[0]},
        terms=["words", "D", "CI"])
    which = "for the correct and the other choices" if mcq else "per label"
    sec.add_figure("histogram", f"Share of {_text_name(results)[0]} with each number of "
                   f"{counted}, {which} (the last point pools {top} or more {counted}): curves "
                   "that sit apart mean the length alone gives the answer away.",
                   F.lines(bins, share, hover, colour_map=label_colours,
                           x_title=f"{ln.unit} (last bin: {top}+)", y_title="share of texts"))
    return sec


def cue_words(results: dict, options: ReportOptions) -> Section | None:
    """Every significant cue and the strongest of each label (:func:`listed_cues`), ranked by
    ``options.rank_by`` (z: significance), in a sortable table and a support × strength scatter."""
    cues = CueRow.rows_in(results)
    if not cues:
        return None
    rank_by = options.rank_by
    config = ConfigSection.of(results)
    metric = config.metric
    other = rank_by if rank_by != "z" else (metric if metric != "z" else "cp")
    stats = CueStats.in_results(results)
    shown = listed_cues(cues, LISTED_PER_LABEL, rank_by)
    label_names = DatasetSummary.required_in(results).label_names
    examples = ExamplesSection.in_results(results)
    by_cue = examples.by_cue if examples is not None else {}
    rows = [[c.token, c.label, c.count, c.label_count, c.metrics.get("z"),
             c.metrics.get(other), c.significant, c.token in by_cue] for c in shown]
    min_count = stats.min_count if stats is not None else None
    sec = Section("cues", "Cue words", context={
        "rank_by": rank_by, "other": other, "stats": stats, "n_cues": len(cues),
        "n_shown": len(shown), "n_significant": sum(c.significant for c in cues),
        "n_significant_shown": sum(c.significant for c in shown),
        "per_label": LISTED_PER_LABEL, "calm": calm("clean", results),
        "min_count": min_count if min_count is not None else config.min_count,
        "labels": label_keys(label_names, {c.label: 0 for c in shown}),
        "text_name": _text_name(results)[0], "finding": CueFinding.in_results(results)},
        client={"cues": {"rank_by": rank_by, "rows": rows, "sort_col": 4 if rank_by == "z" else 5}},
        terms=["z", other, "support", "with label"])
    groups: dict[str, dict[str, list]] = {}
    # significant cues first in each trace, so that the legend shows a filled marker
    for c in sorted(shown, key=lambda c: not c.significant):
        g = groups.setdefault(c.label, {"x": [], "y": [], "hover": [], "symbol": []})
        score = read_number(c.metrics.get(rank_by))
        g["x"].append(c.count)
        g["y"].append(score if math.isfinite(score) else None)  # ±∞ / undefined: not drawn
        g["symbol"].append("circle" if c.significant else "circle-open")
        g["hover"].append(f"“{F.short(c.token)}” → {c.label}\n{plural(c.count, 'instance')}, "
                          f"{c.label_count:,} with this label\nz "
                          f"{format_number(c.metrics.get('z'), 1)}, {other} "
                          f"{format_number(c.metrics.get(other))}")
    threshold = stats.bonferroni_z if rank_by == "z" and stats is not None else None
    spec = F.scatter_groups(groups, x_title="instances containing the word (log scale)",
                            y_title=f"cue strength ({rank_by})", log_x=True,
                            colour_keys=label_names,
                            reference=None if threshold is None else
                            (threshold, "significance threshold"))
    sec.add_figure("scatter", "Each dot is a listed word, coloured by the label it points to: "
                   "words high up are strong cues, words far right are frequent, so dots in the "
                   "top right matter most (filled = statistically significant, hollow = not"
                   + (": below the dashed Bonferroni threshold" if threshold else "") + ").",
                   spec)
    return sec


def _examples_client(results: dict, examples: ExamplesSection) -> dict:
    text, _, context = _names(results)  # the explorer's field labels
    return {"examples": {**examples.to_json(), "fields": {"premise": context, "text": text}}}


def explorer(results: dict, options: ReportOptions) -> Section | None:
    examples = ExamplesSection.in_results(results)
    if examples is None or not examples.by_cue:
        return None
    return Section("explorer", "Cue explorer", context={"text_name": _text_name(results)[0]},
                   client=_examples_client(results, examples))


def easy_hard(results: dict, options: ReportOptions) -> Section | None:
    eh = EasyHardSection.in_results(results)
    if eh is None or not measurable(results):
        return None
    examples = ExamplesSection.in_results(results)
    shown = examples if examples is not None and (examples.easy or examples.hard) else None
    sec = Section("easy_hard", "Easy and hard items", context={
        "eh": eh, "has_examples": shown is not None, "per_list": EXAMPLES_PER_LIST,
        "calm": calm("clean", results)},
        client=_examples_client(results, shown) if shown is not None else {})
    sec.terms = ["easy", "hard"]
    total = (eh.easy + eh.hard) or 1
    sec.add_figure("sizes", "Items the cue-only classifier gets right in most repetitions are "
                   "easy (answerable from cues), the rest are hard; a larger hard share means a "
                   "healthier dataset, and the hard items make a cleaner test set.",
                   F.horizontal_bars(["easy", "hard"], [eh.easy, eh.hard],
                                     axis_title="items", percent=False,
                                     text=[f"{eh.easy:,} ({pct(eh.easy / total)})",
                                           f"{eh.hard:,} ({pct(eh.hard / total)})"],
                                     colours_=[F.BAD, F.GOOD]))
    return sec


def _feature_name(f: FeatureRow) -> str:
    return f.feature if f.value in (None, "", "present") else f"{f.feature} = {f.value}"


def _dominant(dist: Mapping[str, float]) -> str:
    if not dist:
        return "n/a"
    label = max(dist, key=lambda k: (dist[k], k))
    return f"{label} ({pct(dist[label], 0)})"


def features(results: dict, options: ReportOptions) -> Section | None:
    feats = FeatureRow.rows_in(results)
    if not feats:
        return None
    ranked = sorted(feats, key=lambda f: (-f.cueness, _feature_name(f)))
    rows = [{"name": _feature_name(f), "cueness": f.cueness, "train": f.train_support,
             "test": f.test_support, "train_top": _dominant(f.train_dist),
             "test_top": _dominant(f.test_dist)} for f in ranked[:TOP_FEATURES_TABLE]]
    sec = Section("features", "Linguistic feature cues (ICQ)", context={
        "rows": rows, "n_features": len(feats), "config": FeaturesSection.in_results(results)})
    sec.terms = ["cueness"]
    chart = ranked[:TOP_FEATURES_CHART]
    dist_rows = [(f"{_feature_name(f)} · {role} (n={support:,})", dist) for f in chart
                 for role, support, dist in (("train", f.train_support, f.train_dist),
                                             ("test", f.test_support, f.test_dist))]
    labels = label_keys(DatasetSummary.required_in(results).label_names, *(d for _, d in dist_rows))
    sec.add_figure("distributions", "For the strongest feature cues, how the labels are "
                   "distributed among items with the feature, in train and in test: a lopsided "
                   "bar that looks the same in both splits is a cue a model can learn and exploit.",
                   F.stacked_distributions(dist_rows, labels))
    return sec


def next_steps(results: dict, options: ReportOptions) -> Section | None:
    """What to do, derived from the findings (:func:`cuelens.audit.advice.next_steps`)."""
    steps = results.get("next_steps")
    if not steps:
        return None
    return Section("next_steps", "What to do next", context={"steps": steps})
