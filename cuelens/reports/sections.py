"""The report's sections (docs/methods.md §10), one builder each, in page order.

A builder takes the validated results dict and returns a :class:`Section` — the template context,
its Plotly figures (each with a one-sentence caption) and the data the page's script needs — or
``None`` when the results do not contain that part (absent sections are omitted, not empty).
Builders register themselves with :func:`section`; :func:`build_sections` runs them in order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from cuelens.audit.examples import LISTED_PER_LABEL, listed_cues
from cuelens.data.dataset import Task
from cuelens.data.preference import PREFERENCE_TASK
from cuelens.io import format_number, read_number
from cuelens.probes.sanity import probe_verdict
from cuelens.reports import figures as F
from cuelens.reports.glossary import GLOSSARY
from cuelens.reports.options import ReportOptions

TOP_FEATURES_TABLE = 30
TOP_FEATURES_CHART = 10
TOP_PROBE_CUES = 25
TOP_DISTRIBUTION_CUES = 10
MAX_DATA_MAP_POINTS = 1500  # SVG markers: ~0.5 s to draw on a slow machine
EXAMPLES_PER_LIST = 10


@dataclass
class Figure:
    id: str
    caption: str
    spec: dict


@dataclass
class Section:
    key: str  # also the template name: templates/sections/<key>.html.j2 and the anchor id
    title: str
    context: dict = field(default_factory=dict)
    figures: dict[str, Figure] = field(default_factory=dict)
    client: dict = field(default_factory=dict)  # merged into the page's JSON data
    terms: list[str] = field(default_factory=list)  # abbreviations it shows (reports.glossary)

    def add_figure(self, name: str, caption: str, spec: dict) -> None:
        self.figures[name] = Figure(f"fig-{self.key}-{name}", caption, spec)


Builder = Callable[[dict, ReportOptions], "Section | None"]
SECTIONS: list[tuple[str, Builder]] = []


def section(key: str) -> Callable[[Builder], Builder]:
    """Register a section builder; sections appear in registration order."""

    def register(builder: Builder) -> Builder:
        SECTIONS.append((key, builder))
        return builder

    return register


MODEL_SECTIONS = ("probe", "llm_probe")


def build_sections(results: dict, options: ReportOptions | None = None) -> list[Section]:
    """The page's sections in order, ending with the key to the abbreviations they use."""
    options = options or ReportOptions()
    sections = [s for _, builder in SECTIONS if (s := builder(results, options)) is not None]
    # a probe report is about the model: its section follows the summary
    sections.sort(key=lambda s: 0 if s.key == "summary" else 1 if s.key in MODEL_SECTIONS else 2)
    terms = [t for t in GLOSSARY if any(t in s.terms for s in sections)]
    if terms:
        sections.append(Section("glossary", "Key to abbreviations",
                                context={"terms": [(t, GLOSSARY[t]) for t in terms]}))
    return sections


def pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{100 * x:.{digits}f}%"


def points(x: float) -> str:
    return f"{100 * x:+.1f} points"


def _baseline_name(results: dict) -> str:
    """What the leakage baseline is, in words (docs/methods.md §3: majority label, or 1/k for MCQ)."""
    ds = results["dataset"]
    if ds["task"] == Task.MCQ:
        return f"picking one of the {ds.get('n_choices') or 'k'} choices at random"
    if ds["task"] == PREFERENCE_TASK:
        return "guessing (one response of each pair is chosen)"
    return "always giving the most common label"


def _text_name(results: dict) -> tuple[str, str]:
    """What the cue text and its context are called for this task (for plain-language copy)."""
    if results["dataset"]["task"] == Task.MCQ:
        return "answer choices", "question"
    if results["dataset"]["task"] == PREFERENCE_TASK:
        return "responses", "prompt"
    return "hypotheses", "premise"


def _label_keys(label_names: list[str], *dists: Mapping[str, float]) -> list[str]:
    """The keys of ``dists``: dataset labels first, in their order, then any other keys (e.g. the
    MCQ distribution test's "cue choice" / "other choice")."""
    present = {k for d in dists for k in d}
    return [l for l in label_names if l in present] + sorted(present - set(label_names))


# --------------------------------------------------------------------------------- summary
MAX_FINDINGS_SHOWN = 6  # findings listed at once in the summary; the rest behind "show all"
SEVERITY_LEVEL = {"high": "flagged", "medium": "mild", "low": "clean", "info": "clean"}


@dataclass
class Verdict:
    """One headline of the summary block: a verdict level (flagged / mild / clean), its
    sentence, the section holding the evidence and what it is about."""

    level: str
    text: str
    section: str
    about: str


def effect_text(effect: float | None, low: float | None, high: float | None, unit: str) -> str:
    """``+23.1 points [+21.0, +25.2]``, ``57.0% [53.1, 60.8]`` or ``1,210 items`` (effects are
    already in ``unit``: :mod:`cuelens.audit.findings`)."""
    if effect is None:
        return "–"
    if unit == "points":
        fmt = "{:+.1f}"
    elif unit == "%":
        fmt = "{:.2f}" if 0 < abs(effect) < 1 else "{:.1f}"  # 2 copies of 9,842: 0.02%
    else:
        fmt = "{:,.0f}"
    text = fmt.format(effect) + ("%" if unit == "%" else f" {unit}")
    if low is not None and high is not None:
        text += f" [{fmt.format(low)}, {fmt.format(high)}]"
    return text


def verdicts(results: dict) -> list[Verdict]:
    """The headline verdicts of a results file, the model's first for a probe report."""
    out = []
    pr = results.get("probe")
    if pr:
        level, sentence = probe_verdict(pr)
        out.append(Verdict({"relies": "flagged", "unreliable": "mild"}.get(level, "clean"),
                           sentence, "probe", f"model {pr.get('model', {}).get('name', '')}"))
    lp = results.get("llm_probe")
    if lp and lp.get("templates"):
        out.append(_llm_verdict(lp))
    leak = results.get("leakage")
    if leak is not None:
        level, sentence = verdict(leak, results.get("config", {}).get("flag_threshold", 0.10),
                                  results)
        out.append(Verdict(level, sentence, "leakage", "cue leakage"))
    mb = results.get("mcq_baselines")
    if mb is not None:
        from cuelens.audit.mcq_baselines import baselines_headline

        level, sentence = baselines_headline(mb)
        out.append(Verdict(level, sentence, "mcq_baselines", "answer-order and length rules"))
    kind = results.get("kind")
    if kind in KIND_VERDICTS:
        out.append(KIND_VERDICTS[kind](results))
    return out


def _llm_verdict(lp: dict) -> Verdict:
    templates = lp["templates"]
    relied = [t["name"] for t in templates
              if any(c.get("significant") and c["delta"] > 0 for c in t["accuracy_test"]["cues"])]
    best = max(templates, key=lambda t: (t["accuracy"], t["name"]))
    least = (lp.get("verdict") or {}).get("least_cue_reliant")
    text = (f"Best prompt “{best['name']}”: {pct(best['accuracy'])} accuracy. "
            + (f"Relies on cues with {len(relied)} of {len(templates)} prompt(s) "
               f"({', '.join(relied)}). " if relied else
               f"No prompt's accuracy changes significantly with a cue. ")
            + (f"Least cue-reliant prompt: “{least}”." if least else
               str((lp.get("verdict") or {}).get("reason", ""))))
    return Verdict("flagged" if relied else "clean", text.strip(), "llm_probe",
                   f"model {lp.get('model', {}).get('name', '')}")


def _score_pairs_verdict(results: dict) -> Verdict:
    models = results["models"]
    best = max(models, key=lambda m: (models[m]["overall"], m))
    return Verdict("clean", f"Best model {best}: prefers the acceptable sentence in "
                   f"{pct(models[best]['overall'])} of {models[best]['n']:,} pairs "
                   f"(chance 50%); {len(models)} model(s) compared.", "score_pairs",
                   "language models")


def _judge_verdict(results: dict) -> Verdict:
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


def _pairs_verdict(results: dict) -> Verdict:
    share = results.get("controversial_fraction")
    return Verdict("clean", f"{len(results['pairs']):,} {results['method']} controversial "
                   f"pair(s) for {', '.join(results['models'])}"
                   + ("" if share is None else f"; {pct(share)} of them controversial") + ".",
                   "contrast_pairs", "controversial pairs")


def _compare_verdict(results: dict) -> Verdict:
    delta = results["delta_D"]
    intervals = all("ci_low" in results[side] for side in ("before", "after"))
    overlap = (f" (the 95% intervals {'overlap' if results['cis_overlap'] else 'do not overlap'})"
               if intervals else "")
    return Verdict("clean" if delta < 0 else "mild",
                   f"Cue leakage D changed by {100 * delta:+.1f} points{overlap}.", "compare",
                   "before and after")


KIND_VERDICTS: dict[str, Callable[[dict], Verdict]] = {
    "score_pairs": _score_pairs_verdict, "contrast_judge": _judge_verdict,
    "contrast_pairs": _pairs_verdict, "compare": _compare_verdict}


@section("summary")
def summary(results: dict, options: ReportOptions) -> Section | None:
    """The page's first block: the verdicts, then the ranked findings
    (:func:`cuelens.audit.findings.findings`), each linking to its evidence."""
    from cuelens.audit.findings import findings

    found = findings(results)
    rows = [{"kind": f.kind.replace("_", " "), "title": f.title, "severity": f.severity,
             "effect": effect_text(f.effect, f.ci_low, f.ci_high, f.unit), "items": f.items,
             "section": f.section, "level": SEVERITY_LEVEL.get(f.severity, "clean")}
            for f in found]
    return Section("summary", "Summary", context={
        "verdicts": verdicts(results), "findings": rows, "shown": MAX_FINDINGS_SHOWN},
        terms=["CI"] if any(f.ci_low is not None for f in found) else [])


# --------------------------------------------------------------------------------- overview
@section("overview")
def overview(results: dict, options: ReportOptions) -> Section | None:
    ds = results.get("dataset")
    if ds is None:
        return None
    splits = ds["splits"]
    sec = Section("overview", "Dataset overview", context={
        "dataset": ds, "config": results.get("config", {}),
        "notes": results.get("notes", []) + ds.get("labels", {}).get("warnings", []),
        "rows": [{"role": role, "file": s.get("file"), "items": s["items"],
                  "instances": s.get("instances"), "skipped": sum(s.get("skipped", {}).values()),
                  "skipped_reasons": s.get("skipped", {})} for role, s in splits.items()],
    })
    positions = {role: s.get("answer_position_counts") for role, s in splits.items()
                 if s.get("answer_position_counts")}
    if ds["task"] == Task.MCQ and positions:
        keys = sorted({k for c in positions.values() for k in c}, key=lambda k: int(k))
        cats = [f"choice {int(k) + 1}" for k in keys]
        series, hover = {}, {}
        for role, counts in positions.items():
            total = sum(counts.values()) or 1
            series[role] = [100 * counts.get(k, 0) / total for k in keys]
            hover[role] = [f"{role}: {counts.get(k, 0):,} of {total:,} questions" for k in keys]
        sec.add_figure("positions", "Where the correct answer sits in each split: bars far from "
                       "an even split mean a model could gain accuracy just by preferring a position.",
                       F.grouped_bars(cats, series, hover, axis_title="share of questions"))
    else:
        labels = _label_keys(ds["label_names"], *(s["label_counts"] for s in splits.values()))
        series, hover = {}, {}
        for role, s in splits.items():
            total = sum(s["label_counts"].values()) or 1
            series[role] = [100 * s["label_counts"].get(l, 0) / total for l in labels]
            hover[role] = [f"{l}: {s['label_counts'].get(l, 0):,} of {total:,}" for l in labels]
        sec.add_figure("labels", "Share of each label per split: the tallest bar in a split is "
                       "the accuracy of always guessing that label.",
                       F.grouped_bars(labels, series, hover, axis_title="share of instances"))
    return sec


# --------------------------------------------------------------------------------- hygiene
HYGIENE_EXAMPLES = {"overlap": "Evaluation items found in a fitting split",
                    "duplicates": "Exact duplicates", "near_duplicates": "Near duplicates",
                    "label_conflicts": "Label-noise candidates (same input, different label)",
                    "mirrored": "Mirrored / contrastive pairs",
                    "permuted": "Copies with the choices in another order (a deliberate construction)"}


@section("hygiene")
def hygiene(results: dict, options: ReportOptions) -> Section | None:
    """Duplicates, overlap, mirrored pairs and label-noise candidates (docs/data-hygiene.md)."""
    hy = results.get("hygiene")
    if hy is None:
        return None
    examples = [(HYGIENE_EXAMPLES[kind], rows) for kind, rows in hy["examples"].items()
                if rows and kind in HYGIENE_EXAMPLES]
    return Section("hygiene", "Data hygiene", context={"hy": hy, "examples": examples})


# --------------------------------------------------------------------------------- leakage
def d_interval(row: dict) -> str:
    """``+12.3 points (95% CI +10.1 to +14.2)``, or just the points without an interval."""
    if "ci_low" not in row:
        return points(row["D"])
    return (f"{points(row['D'])} (95% CI {100 * row['ci_low']:+.1f} to "
            f"{100 * row['ci_high']:+.1f})")


def verdict(leak: dict, threshold: float, results: dict) -> tuple[str, str]:
    """(level, plain-language sentence) for the leakage headline (docs/methods.md §3): significant only
    when the whole 95% interval of D is above the alarm threshold."""
    text, context = _text_name(results)
    best = leak["best"]
    what = (f"Looking only at the words of the {text}, a simple classifier ({best['metric']} "
            f"scores + {best['aggregator']}) is right {pct(best['accuracy'])} of the time, "
            f"against {pct(leak['majority'])} for {_baseline_name(results)}")
    level = leak.get("verdict") or ("significant" if leak["flagged"] else
                                    "mild" if best["D"] > 0 else "chance")
    if level == "significant":
        return "flagged", (f"Significant cue leakage. {what} — {d_interval(best)}, the whole "
                           f"interval above the {100 * threshold:.0f}-point alarm threshold. "
                           f"Models trained on this data can score well without understanding "
                           f"the {context}.")
    if level == "mild":
        return "mild", (f"Some cue leakage, not surely above the {100 * threshold:.0f}-point "
                        f"alarm threshold. {what}: {d_interval(best)}.")
    return "clean", (f"No cue leakage detected. {what}: {d_interval(best)}, indistinguishable "
                     "from guessing.")


@section("leakage")
def leakage(results: dict, options: ReportOptions) -> Section | None:
    leak = results.get("leakage")
    if leak is None:
        return None
    threshold = results.get("config", {}).get("flag_threshold", 0.10)
    level, sentence = verdict(leak, threshold, results)
    sec = Section("leakage", "Cue leakage", context={
        "level": level, "verdict": sentence, "leak": leak, "threshold": threshold,
        "baseline": ("chance (1/k)" if results["dataset"]["task"] == Task.MCQ
                     else "majority baseline")},
        terms=["D", "CI", *dict.fromkeys(r["metric"] for r in leak["table"]),
               *dict.fromkeys(r["aggregator"] for r in leak["table"]), "BoW"])
    table = leak["table"]
    if table:
        metrics = list(dict.fromkeys(r["metric"] for r in table))
        aggs = list(dict.fromkeys(r["aggregator"] for r in table))
        cell = {(r["metric"], r["aggregator"]): r for r in table}
        z = [[100 * cell[m, a]["D"] if (m, a) in cell else None for a in aggs] for m in metrics]
        txt = [[f"{pct(cell[m, a]['accuracy'])}\n{100 * cell[m, a]['D']:+.1f}"
                if (m, a) in cell else "" for a in aggs] for m in metrics]
        sec.add_figure("heatmap", "Each cell is the held-out accuracy of guessing the label from "
                       "cue-word scores alone (rows: how a word's cue strength is scored; columns: "
                       "how the words of an instance are combined), with D = points above the "
                       "baseline below it; red = leakage, blue = no better than guessing.",
                       F.heatmap(metrics, aggs, z, txt, colour_title="D (points)", diverging=True,
                                 row_title="cue metric", column_title="aggregator"))
    mcq = results["dataset"]["task"] == Task.MCQ
    names = ["chance (random choice)" if mcq else "majority baseline"]
    names += [b["name"] for b in leak.get("baselines", [])]
    accs = [leak["majority"]] + [b["accuracy"] for b in leak.get("baselines", [])]
    ds = [0.0] + [b["D"] for b in leak.get("baselines", [])]
    names.append(f"best cue classifier ({leak['best']['metric']} + {leak['best']['aggregator']})")
    accs.append(leak["best"]["accuracy"])
    ds.append(leak["best"]["D"])
    sec.add_figure("baselines", "Accuracy of simple guessers that never read the "
                   f"{_text_name(results)[1]}: the further a bar reaches past the dashed baseline "
                   "line, the more the labels can be guessed from surface cues.",
                   F.horizontal_bars(names, [100 * a for a in accs], axis_title="accuracy",
                                     text=[f"{pct(a)} (D {100 * d:+.1f})" for a, d in zip(accs, ds)],
                                     colours_=[F.GREY] + [F.MAIN] * (len(names) - 2)
                                     + [F.BAD if level in ("flagged", "mild") else F.MAIN],
                                     reference=(100 * leak["majority"], "chance" if mcq else "majority"),
                                     x_range=(0, 100)))
    return sec


# --------------------------------------------------------------------------------- MCQ baselines
@section("mcq_baselines")
def mcq_baselines(results: dict, options: ReportOptions) -> Section | None:
    """Answer-position, length, overlap and question-only baselines (cuelens.audit.mcq_baselines)."""
    from cuelens.audit.chance import positions_verdict
    from cuelens.audit.mcq_baselines import baseline_verdict, baselines_headline, ci_name

    mb = results.get("mcq_baselines")
    if mb is None:
        return None
    rows = mb["rows"]
    gold = {role: positions_verdict(counts, f"gold answers ({role} split)")
            for role, counts in mb["gold_position"].items()}
    level, headline = baselines_headline(mb)
    sec = Section("mcq_baselines", "Answer-order and length artifacts", context={
        "mb": mb, "level": level, "ci": ci_name(mb),
        "verdicts": [baseline_verdict(r, mb) for r in rows], "gold": gold,
        "headline": headline})
    sec.terms = ["D", "CI"]
    names = [r["name"] for r in rows]
    accs = [100 * r["accuracy"] for r in rows]
    lo = [a - 100 * r["accuracy_ci"][0] for a, r in zip(accs, rows)]
    hi = [100 * r["accuracy_ci"][1] - a for a, r in zip(accs, rows)]
    sec.add_figure("mcq_baselines", "Accuracy of rules that pick an answer without reading the "
                   f"question, with {ci_name(mb)}s (Bonferroni-corrected for the number of rules, "
                   "like the test); the dashed line is random guessing. Red bars differ "
                   "significantly from guessing: artifacts of the dataset.",
                   F.horizontal_bars(names, accs, axis_title="accuracy", errors=(lo, hi),
                                     text=[f"{pct(r['accuracy'])} (D {100 * r['D']:+.1f})"
                                           for r in rows],
                                     colours_=[F.BAD if r["significant"] else F.MAIN
                                               for r in rows],
                                     reference=(100 * mb["chance"], "chance"), x_range=(0, 100)))
    return sec


# --------------------------------------------------------------------------------- lengths
@section("lengths")
def lengths(results: dict, options: ReportOptions) -> Section | None:
    """Words per hypothesis / choice by label (:mod:`cuelens.audit.lengths`), with the
    length-only baseline (NLI) or the length rules of the MCQ baselines."""
    ln = results.get("lengths")
    if not ln:
        return None
    by_label = ln["by_label"]
    top = ln["max_words"]
    names = list(by_label)
    # the chart ends at the longest text (the file keeps every bin)
    end = 1 + max((i for name in names for i, n in enumerate(by_label[name]["histogram"]) if n),
                  default=0)
    bins = list(range(end))
    mcq = ln["unit"] == "words per choice"
    share = {name: [100 * n / (by_label[name]["n"] or 1) for n in by_label[name]["histogram"][:end]]
             for name in names}
    hover = {name: [f"{name}: {n:,} of {by_label[name]['n']:,} with "
                    f"{b if b < top else f'{top} or more'} words"
                    for b, n in zip(bins, by_label[name]["histogram"])] for name in names}
    label_colours = (F.colours(names, F.SERIES_PALETTE) if mcq else
                     F.colours(_label_keys(results["dataset"]["label_names"], by_label)))
    baselines = []
    if ln.get("baseline"):
        baselines = [dict(ln["baseline"], fitted=True)]
    elif results.get("mcq_baselines"):
        baselines = [dict(r, ci_low=r["accuracy_ci"][0], ci_high=r["accuracy_ci"][1],
                          majority=results["mcq_baselines"]["chance"])
                     for r in results["mcq_baselines"]["rows"]
                     if "longest" in r["name"] or "shortest" in r["name"]]
    sec = Section("lengths", "Text length per label", context={
        "unit": ln["unit"], "rows": [{"name": n, **by_label[n]} for n in names],
        "baselines": baselines, "mcq": mcq, "text_name": _text_name(results)[0]},
        terms=["words", "D", "CI"])
    sec.add_figure("histogram", f"Share of {_text_name(results)[0]} with each number of words, "
                   + ("for the correct and the other choices" if mcq else "per label")
                   + f" (the last point pools {top} or more words): curves that sit apart mean "
                   "the length alone gives the answer away.",
                   F.lines(bins, share, hover, colour_map=label_colours,
                           x_title=f"{ln['unit']} (last bin: {top}+)", y_title="share of texts"))
    return sec


# --------------------------------------------------------------------------------- cue words
@section("cues")
def cue_words(results: dict, options: ReportOptions) -> Section | None:
    """Every significant cue and the strongest of each label (:func:`listed_cues`), ranked by
    ``options.rank_by`` (z: significance), in a sortable table and a support × strength scatter."""
    cues = results.get("cues")
    if not cues:
        return None
    rank_by = options.rank_by
    metric = results.get("config", {}).get("metric", "cp")
    other = rank_by if rank_by != "z" else (metric if metric != "z" else "cp")
    stats = results.get("cue_stats", {})
    shown = listed_cues(cues, LISTED_PER_LABEL, rank_by)
    label_names = results["dataset"]["label_names"]
    by_cue = results.get("examples", {}).get("by_cue", {})
    rows = [[c["token"], c["label"], c["count"], c["label_count"], c["metrics"].get("z"),
             c["metrics"].get(other), c["significant"], c["token"] in by_cue] for c in shown]
    n_significant = sum(c["significant"] for c in cues)
    sec = Section("cues", "Cue words", context={
        "rank_by": rank_by, "other": other, "stats": stats, "n_cues": len(cues),
        "n_shown": len(shown), "n_significant": n_significant,
        "n_significant_shown": sum(c["significant"] for c in shown),
        "per_label": LISTED_PER_LABEL,
        "min_count": stats.get("min_count", results.get("config", {}).get("min_count")),
        "labels": _label_keys(label_names, {c["label"]: 0 for c in shown}),
        "text_name": _text_name(results)[0], "finding": results.get("cue_finding")},
        client={"cues": {"rank_by": rank_by, "rows": rows, "sort_col": 4 if rank_by == "z" else 5}},
        terms=["z", other, "support", "with label"])
    groups: dict[str, dict[str, list]] = {}
    # significant cues first in each trace, so that the legend shows a filled marker
    for c in sorted(shown, key=lambda c: not c["significant"]):
        g = groups.setdefault(c["label"], {"x": [], "y": [], "hover": [], "symbol": []})
        score = read_number(c["metrics"].get(rank_by))
        g["x"].append(c["count"])
        g["y"].append(score if math.isfinite(score) else None)  # ±∞ / undefined: not drawn
        g["symbol"].append("circle" if c["significant"] else "circle-open")
        g["hover"].append(f"“{F.short(c['token'])}” → {c['label']}\n{c['count']:,} instances, "
                          f"{c['label_count']:,} with this label\nz "
                          f"{format_number(c['metrics'].get('z'), 1)}, {other} "
                          f"{format_number(c['metrics'].get(other))}")
    threshold = stats.get("bonferroni_z") if rank_by == "z" else None
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


# --------------------------------------------------------------------------------- explorer
def _examples_client(results: dict) -> dict:
    ex = results["examples"]
    return {"examples": {"items": ex["items"], "by_cue": ex.get("by_cue", {}),
                         "easy": ex.get("easy", []), "hard": ex.get("hard", []),
                         "fields": dict(zip(("premise", "text"), _field_names(results)))}}


def _field_names(results: dict) -> tuple[str, str]:
    """What one example's context and text are called (explorer field labels)."""
    task = results["dataset"]["task"]
    return {Task.MCQ.value: ("question", "choice"), PREFERENCE_TASK: ("prompt", "response")}.get(
        task, ("premise", "hypothesis"))


@section("explorer")
def explorer(results: dict, options: ReportOptions) -> Section | None:
    by_cue = results.get("examples", {}).get("by_cue")
    if not by_cue:
        return None
    return Section("explorer", "Cue explorer",
                   context={"n_cues": len(by_cue), "text_name": _text_name(results)[0]},
                   client=_examples_client(results))


# --------------------------------------------------------------------------------- easy / hard
@section("easy_hard")
def easy_hard(results: dict, options: ReportOptions) -> Section | None:
    eh = results.get("easy_hard")
    if eh is None:
        return None
    has_examples = bool(results.get("examples", {}).get("easy") or
                        results.get("examples", {}).get("hard"))
    sec = Section("easy_hard", "Easy and hard items", context={
        "eh": eh, "has_examples": has_examples, "per_list": EXAMPLES_PER_LIST,
        "text_name": _text_name(results)[0]},
        client=_examples_client(results) if has_examples else {})
    sec.terms = ["easy", "hard"]
    total = (eh["easy"] + eh["hard"]) or 1
    sec.add_figure("sizes", "Items the cue-only classifier gets right in most repetitions are "
                   "easy (answerable from cues), the rest are hard; a larger hard share means a "
                   "healthier dataset, and the hard items make a cleaner test set.",
                   F.horizontal_bars(["easy", "hard"], [eh["easy"], eh["hard"]],
                                     axis_title="items", percent=False,
                                     text=[f"{eh['easy']:,} ({pct(eh['easy'] / total)})",
                                           f"{eh['hard']:,} ({pct(eh['hard'] / total)})"],
                                     colours_=[F.BAD, F.GOOD]))
    return sec


# --------------------------------------------------------------------------------- ICQ features
def _feature_name(f: dict) -> str:
    return f["feature"] if f.get("value") in (None, "", "present") else f"{f['feature']} = {f['value']}"


def _dominant(dist: Mapping[str, float]) -> str:
    if not dist:
        return "n/a"
    label = max(dist, key=lambda k: (dist[k], k))
    return f"{label} ({pct(dist[label], 0)})"


@section("features")
def features(results: dict, options: ReportOptions) -> Section | None:
    feats = results.get("features")
    if not feats:
        return None
    ranked = sorted(feats, key=lambda f: (-f["cueness"], _feature_name(f)))
    rows = [{"name": _feature_name(f), "cueness": f["cueness"], "train": f["train_support"],
             "test": f["test_support"], "train_top": _dominant(f["train_dist"]),
             "test_top": _dominant(f["test_dist"])} for f in ranked[:TOP_FEATURES_TABLE]]
    sec = Section("features", "Linguistic feature cues (ICQ)", context={
        "rows": rows, "n_features": len(feats), "config": results.get("features_config", {})})
    sec.terms = ["cueness"]
    chart = ranked[:TOP_FEATURES_CHART]
    dist_rows = [(f"{_feature_name(f)} · {role} (n={f[f'{role}_support']:,})", f[f"{role}_dist"])
                 for f in chart for role in ("train", "test")]
    labels = _label_keys(results["dataset"]["label_names"], *(d for _, d in dist_rows))
    sec.add_figure("distributions", "For the strongest feature cues, how the labels are "
                   "distributed among items with the feature, in train and in test: a lopsided "
                   "bar that looks the same in both splits is a cue a model can learn and exploit.",
                   F.stacked_distributions(dist_rows, labels))
    return sec


# --------------------------------------------------------------------------------- probe
@section("probe")
def probe(results: dict, options: ReportOptions) -> Section | None:
    pr = results.get("probe")
    if pr is None:
        return None
    level, sentence = probe_verdict(pr)
    sec = Section("probe", "Does a model use the cues?", context={
        "probe": pr, "level": {"relies": "flagged", "unreliable": "mild"}.get(level, "clean"),
        "verdict": sentence})
    sec.terms = ["ΔAcc", "Σ|ΔAcc|", "score", "CI", "AW", "CO"]
    _probe_accuracy_test(sec, pr)
    _probe_distribution_test(sec, pr, results["dataset"]["label_names"],
                             results["dataset"]["task"] == Task.MCQ)
    _probe_easy_hard(sec, pr)
    _probe_data_map(sec, pr)
    _probe_short_circuit(sec, pr)
    _probe_position_bias(sec, pr)
    return sec


def _probe_accuracy_test(sec: Section, pr: dict) -> None:
    cues = pr.get("accuracy_test", {}).get("cues")
    if not cues:
        return
    top = sorted(cues, key=lambda c: (-abs(c["delta"]), c["cue"]))[:TOP_PROBE_CUES]
    lo, hi = _delta_errors(top)
    sec.add_figure("delta", "ΔAcc = the model's accuracy on test items with the cue minus "
                   "without it, with 95% bootstrap intervals: bars clearly right of zero mean "
                   "the model does better when the cue is present, so it probably relies on it "
                   "(red = significant after the multiple-test correction).",
                   F.horizontal_bars(
                       [f"{c['cue']} ({c['kind'] + ', ' if c.get('kind') else ''}n={c['n_with']:,})"
                        for c in top],
                       [100 * c["delta"] for c in top], axis_title="ΔAcc (points)", percent=False,
                       text=[f"{100 * c['delta']:+.1f}" for c in top],
                       colours_=[F.BAD if c["delta"] > 0 and c.get("significant") else F.MAIN
                                 for c in top],
                       errors=(lo, hi), reference=(0, "no effect")))


def _probe_distribution_test(sec: Section, pr: dict, label_names: list[str], mcq: bool) -> None:
    cues = pr.get("distribution_test", {}).get("cues")
    if not cues:
        return
    top = sorted(cues, key=lambda c: (-abs(c.get("score", 0.0)), c["cue"]))[:TOP_DISTRIBUTION_CUES]
    rows = []
    for c in top:
        rows.append((f"{c['cue']} · training data", c["train_dist"]))
        score = f", score {c['score']:+.3f}" if "score" in c else ""
        n = f"n={c['n']:,}" if "n" in c else "balanced"
        rows.append((f"{c['cue']} · model ({n}{score})", c["predicted_dist"]))
    labels = _label_keys(label_names, *(d for _, d in rows))
    caption = ("On questions where the cue-bearing choice is right exactly half of the time, a "
               "model that ignores the cue picks it about 50% of the time (second bar of each "
               "pair); leaning the way the training data does (first bar) means it follows the cue."
               if mcq else
               "On a label-balanced set of items with the cue, the model's predictions (second "
               "bar of each pair) should be evenly spread; if they lean the same way as the "
               "training data (first bar), the model follows the cue.")
    sec.add_figure("distribution", caption, F.stacked_distributions(rows, labels))


def _probe_easy_hard(sec: Section, pr: dict) -> None:
    eh = pr.get("easy_hard")
    if not eh:
        return
    names, values = ["all test items"], [pr.get("accuracy")]
    names += ["easy items", "hard items"]
    values += [eh["easy_accuracy"], eh["hard_accuracy"]]
    keep = [(n, v) for n, v in zip(names, values) if v is not None]
    sec.add_figure("easy_hard", "Model accuracy on items a cue-only classifier solves (easy) "
                   "and on those it cannot (hard): a large gap means the model's score leans "
                   "on the cues.",
                   F.horizontal_bars([n for n, _ in keep], [100 * v for _, v in keep],
                                     axis_title="accuracy", text=[pct(v) for _, v in keep],
                                     colours_=[F.GREY, F.BAD, F.GOOD][-len(keep):],
                                     x_range=(0, 100)))


def _probe_data_map(sec: Section, pr: dict) -> None:
    pts = pr.get("data_map", {}).get("points")
    if not pts:
        return
    step = max(1, -(-len(pts) // MAX_DATA_MAP_POINTS))
    sample = pts[::step]
    sec.context["data_map_sampled"] = (len(sample), len(pts)) if step > 1 else None
    sec.add_figure("data_map", "Each dot is a training item: high confidence and low "
                   "variability = easy to learn, low confidence = hard or mislabelled, high "
                   "variability = ambiguous; colour is how often the model got it right.",
                   F.colour_scatter([p["variability"] for p in sample],
                                    [p["confidence"] for p in sample],
                                    [p.get("correctness", 0.0) for p in sample],
                                    [f"{p.get('guid', '')}" for p in sample],
                                    x_title="variability", y_title="confidence",
                                    colour_title="correct"))


# --------------------------------------------------------------------------------- LLM probe
TOP_LLM_CUES = 8


@section("llm_probe")
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
    deltas = [{c["cue"]: c["delta"] for c in t["accuracy_test"]["cues"]} for t in templates]
    common = set.intersection(*(set(d) for d in deltas))
    cues = sorted(common, key=lambda c: (-max(abs(d[c]) for d in deltas), c))[:TOP_LLM_CUES]
    if cues:
        rows_by = [{c["cue"]: c for c in t["accuracy_test"]["cues"]} for t in templates]
        sec.add_figure("delta", "ΔAcc per cue (accuracy with the cue minus without it) for each "
                       "template side by side, with 95% bootstrap intervals; the dashed line at "
                       "0 is no effect: the template whose bars stay closest to it relies least "
                       "on the cues.",
                       F.grouped_bars(cues, {n: [100 * d[c] for c in cues]
                                             for n, d in zip(names, deltas)},
                                      {n: [_delta_hover(r[c]) for c in cues]
                                       for n, r in zip(names, rows_by)},
                                      axis_title="ΔAcc (points)", percent=False,
                                      errors={n: _delta_errors([r[c] for c in cues])
                                              for n, r in zip(names, rows_by)},
                                      reference=(0, "no effect")))
    dists = [{c["cue"]: c for c in t["distribution_test"]["cues"]} for t in templates]
    shared = set.intersection(*(set(d) for d in dists))
    if shared:
        cue = min(shared, key=lambda c: (-max(abs(d[c]["score"]) for d in dists), c))
        dist_rows = [(f"{cue} · training data", dists[0][cue]["train_dist"])]
        dist_rows += [(f"{cue} · {n} (score {d[cue]['score']:+.3f})", d[cue]["predicted_dist"])
                      for n, d in zip(names, dists)]
        labels = _label_keys(results["dataset"]["label_names"], *(d for _, d in dist_rows))
        sec.add_figure("distribution", "On a label-balanced set of items with the cue, each "
                       "template's predicted labels: an even spread means the prompt does not "
                       "follow the cue; leaning like the training data means it does.",
                       F.stacked_distributions(dist_rows, labels))
    sec.context["position_verdicts"] = [
        (t["name"], _position_bias_figure(sec, t["position_bias"], f"position_bias_{i}",
                                          f"Prompt {t['name']}, position bias. "))
        for i, t in enumerate(templates) if t.get("position_bias")]
    return sec


def _delta_errors(rows: list[dict]) -> tuple[list[float], list[float]]:
    """Whisker lengths (points) below and above each ΔAcc from its 95% interval (0: none)."""
    low = [100 * (c["delta"] - c["ci_low"]) if c.get("ci_low") is not None else 0.0 for c in rows]
    high = [100 * (c["ci_high"] - c["delta"]) if c.get("ci_high") is not None else 0.0
            for c in rows]
    return low, high


def _delta_hover(c: dict) -> str:
    interval = ("" if c.get("ci_low") is None else
                f" [95% CI {100 * c['ci_low']:+.1f}, {100 * c['ci_high']:+.1f}]")
    return (f"“{F.short(c['cue'])}”: ΔAcc {100 * c['delta']:+.1f} points{interval}"
            + (", significant" if c.get("significant") else ""))


# Display names of the stress operators (docs/methods.md §7; keys as registered in cuelens.augment.operators).
OPERATOR_NAMES = {"co": "CO crossover", "mt": "MT word swap", "neg+": "Neg+ add negation",
                  "neg-": "Neg− remove negation", "ner": "NER name swap",
                  "pr": "PR pronoun switch", "pi": "PI pronoun → name",
                  "adv": "Adv emphasis adverb", "syn": "Syn synonym",
                  "voice": "Voice subject/object swap"}


def _probe_short_circuit(sec: Section, pr: dict) -> None:
    sc = pr.get("short_circuit")
    if not sc:
        return
    ops = [(OPERATOR_NAMES.get(op, op), v) for op, v in sc.get("per_op", {}).items()
           if v.get("pass_rate") is not None]
    if "aw" in sc and sc["aw"] is not None:
        ops.insert(0, ("AW (attention to the premise)", {"pass_rate": sc["aw"], "n": None}))
    if not ops:
        return
    sec.add_figure("short_circuit", "Share of stress tests passed per operator (higher is "
                   "better): each test swaps a wrong answer for a tricky one, and a model that "
                   "answers from the choices alone, ignoring the premise, fails them.",
                   F.horizontal_bars(
                       [op for op, _ in ops], [100 * v["pass_rate"] for _, v in ops],
                       axis_title="pass rate", x_range=(0, 100),
                       text=[pct(v["pass_rate"]) + (f" of {v['n']:,}" if v.get("n") else "")
                             for _, v in ops]))


def _probe_position_bias(sec: Section, pr: dict) -> None:
    pb = pr.get("position_bias")
    if pb:
        sec.context["position_verdict"] = _position_bias_figure(sec, pb, "position_bias")


def _position_bias_figure(sec: Section, pb: dict, name: str, lead: str = "") -> str:
    """Add the chart of a ``position_bias`` section (:mod:`cuelens.probes.position`) as figure
    ``name`` (caption starting with ``lead``); return its plain-English verdict."""
    from cuelens.audit.chance import letter
    from cuelens.probes.position import position_verdict

    accs = pb["accuracy_by_position"]
    picks = pb["predicted_positions"]["shares"]
    width = max(len(accs), len(picks))
    positions = [letter(p) for p in range(width)]
    sec.add_figure(name, lead + "Left series: the model's accuracy when the right answer is "
                   "moved to each position (every question is shown in every rotation of its "
                   "choices). Right series: how often the model answers each position on a "
                   "position-balanced subset. A position-blind model has flat bars.",
                   F.grouped_bars(positions, {
                       "accuracy with the answer here": [100 * a for a in accs]
                       + [None] * (width - len(accs)),
                       "share of the model's answers": [100 * x for x in picks]
                       + [None] * (width - len(picks))}, axis_title="percent"))
    return position_verdict(pb)


# --------------------------------------------------------------------------------- score pairs
@section("score_pairs")
def score_pairs(results: dict, options: ReportOptions) -> Section | None:
    if results.get("kind") != "score_pairs":
        return None
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


# --------------------------------------------------------------------------------- contrast judge
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


@section("contrast_judge")
def contrast_judge(results: dict, options: ReportOptions) -> Section | None:
    """Model–human consistency on controversial pairs (docs/methods.md §9): accuracy and signed-rank cosine
    per model with the noise-ceiling band, and the Wilcoxon/FDR tests."""
    if results.get("kind") != "contrast_judge":
        return None
    models = results["models"]
    names = list(models)
    sec = Section("contrast_judge", "Model–human consistency on controversial pairs", context={
        "models": models, "tests": results.get("tests", {}),
        "facts": {k: results[k] for k in ("n_subjects", "n_pairs", "n_rows", "midpoint")
                  if k in results}})
    sec.terms = ["p_fdr"]
    for measure, (title, x_range, chance, caption) in JUDGE_MEASURES.items():
        scale = 100 if measure == "accuracy" else 1
        values = [_scaled(models[m][measure], scale) for m in names]
        ceilings = [models[m][f"{measure}_noise_ceiling"] for m in names]
        bands = [None if c["lower"] is None or c["upper"] is None else
                 (scale * c["lower"], scale * c["upper"]) for c in ceilings]
        text = [("n/a" if models[m][measure] is None else
                 pct(models[m][measure]) if measure == "accuracy" else f"{models[m][measure]:.3f}")
                for m in names]
        sec.add_figure(measure, caption, F.horizontal_bars(
            names, values, axis_title=title, text=text, x_range=x_range, reference=chance,
            bands=bands, percent=measure == "accuracy"))
    return sec


def _scaled(value: float | None, scale: float) -> float | None:
    return None if value is None else scale * value


# --------------------------------------------------------------------------------- contrast pairs
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


@section("contrast_pairs")
def contrast_pairs(results: dict, options: ReportOptions) -> Section | None:
    """The selected (natural) or synthesised controversial pairs with both models'
    log-probabilities (and corpus ranks): a sortable, filterable table (docs/methods.md §9)."""
    if results.get("kind") != "contrast_pairs":
        return None
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


# --------------------------------------------------------------------------------- compare
COMPARE_STATUS = {"improved": "clean", "worsened": "flagged", "mixed": "mild",
                  "unchanged": "neutral"}  # verdict box class: no green when nothing changed


@section("compare")
def compare(results: dict, options: ReportOptions) -> Section | None:
    """Two scans side by side (``audit compare``): the status, protocol warnings, every measure
    coloured by the direction of its change, D with CIs, cues gained, lost and kept."""
    if results.get("kind") != "compare":
        return None
    sides = [results["before"], results["after"]]
    from cuelens.audit.compare import format_value

    rows = [{**c, "before_text": format_value(c["before"], c["unit"]),
             "after_text": format_value(c["after"], c["unit"]),
             "marks": [" *" if flag else "" for flag in c.get("significant", [False, False])]}
            for c in results.get("changes", [])]
    sec = Section("compare", "Before and after", context={
        "c": results, "sides": sides, "d_text": [d_interval(s) for s in sides], "rows": rows,
        "level": COMPARE_STATUS.get(results.get("status", ""), "neutral"),
        "z": lambda cue, key="z": format_number(cue[key], 1)})
    sec.context["strip"] = interval_strip(sides)
    return sec


def interval_strip(sides: list[dict]) -> dict:
    """Positions (percent of the strip's width) of each scan's D and 95% interval on one axis
    that includes 0: the compare page draws them with HTML alone, so it needs no plotly.js."""
    ends = [100 * s.get(key, s["D"]) for s in sides for key in ("ci_low", "ci_high")] + [0.0]
    low, high = min(ends), max(ends)
    span = (high - low) or 1.0

    def at(value: float) -> float:
        return round(100 * (100 * value - low) / span, 2)

    rows = [{"name": name, "source": s["source"], "D": 100 * s["D"],
             "left": at(s.get("ci_low", s["D"])),
             "width": max(at(s.get("ci_high", s["D"])) - at(s.get("ci_low", s["D"])), 0.4),
             "point": at(s["D"])} for name, s in zip(("before", "after"), sides)]
    return {"rows": rows, "zero": at(0.0), "low": low, "high": high}


@section("preference")
def preference(results: dict, options: ReportOptions) -> Section | None:
    """Preference shortcuts, the subset table and judge logs: :mod:`cuelens.reports.shortcuts`."""
    from cuelens.reports.shortcuts import preference_section

    return preference_section(results)


@section("subsets")
def subsets(results: dict, options: ReportOptions) -> Section | None:
    from cuelens.reports.shortcuts import subsets_section

    return subsets_section(results)


@section("judge_log")
def judge_log(results: dict, options: ReportOptions) -> Section | None:
    from cuelens.reports.shortcuts import judge_section

    return judge_section(results)


@section("next_steps")
def next_steps(results: dict, options: ReportOptions) -> Section | None:
    """What to do, derived from the findings (:func:`cuelens.audit.advice.next_steps`)."""
    steps = results.get("next_steps")
    if not steps:
        return None
    return Section("next_steps", "What to do next", context={"steps": steps})
