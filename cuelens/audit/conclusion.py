"""The dataset-level conclusion of a scan — ``leakage``, ``no_meaningful_leakage`` or
``inconclusive`` — with its reason and numbers, the one status every output states; results
written before it existed get it from :func:`conclude` (docs/methods.md §17)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from cuelens.audit.chance import exact_interval, wilson_interval
from cuelens.audit.results import (CONCLUSIONS, DEFAULT_MARGIN, Conclusion, ConfigSection,
                                   CueFinding, CueRow, CueStats, DatasetSummary, LeakageSection,
                                   McqBaselinesSection, PreferenceSection, SegmentationSection,
                                   SubsetsSection, typed_reads)
from cuelens.audit.subsets import effect_interval
from cuelens.data.display import shown
from cuelens.data.preference import PREFERENCE_TASK
from cuelens.wording import plural

LEAKAGE, NO_LEAKAGE, INCONCLUSIVE = CONCLUSIONS
MIN_ITEMS_PER_LABEL_PER_FOLD = 2  # below it: inconclusive, too few items
POSITIVE_VERDICTS = ("significant", "mild")  # the leakage test's interval wholly above 0
LEAKAGE_LEVEL = 0.95  # the leakage test's two-sided simultaneous level (results before it)
ONE_SIDED_LEVEL = 0.95  # the cue-word classifiers' one-sided bounds (§17)
EQUIVALENCE_LEVEL = 0.90  # a rule's two-sided interval whose upper end is its one-sided 95%
# TOST bound; no multiplicity correction: "every rule below the margin" is an intersection-union
# test, at level 5% when each rule's test is (Berger 1982)


@dataclass(frozen=True)
class Measure:
    """One effect the conclusion weighs: its evidence fields (fractions; the interval of the test
    that decides its role: its corrected test when ``above_chance``, else its equivalence
    interval), the items it was measured on, whether its corrected test finds it above chance
    and the half-width of that test's interval (``test_half``)."""

    kind: str
    code: str
    subject: str | None
    title: str
    effect: float
    ci_low: float
    ci_high: float
    level: float
    n: int
    above_chance: bool
    test_half: float
    one_sided: bool = False  # ``ci_high`` is a one-sided bound (``ci_low`` is not quoted)

    def evidence(self) -> dict:
        """The evidence entry: effect and interval in points (as the findings show them)."""
        return {"kind": self.kind, "code": self.code, "subject": self.subject,
                "title": self.title, "effect": _points(self.effect),
                "ci_low": None if self.one_sided else _points(self.ci_low),
                "ci_high": _points(self.ci_high), "unit": "points", "level": self.level}


def _points(x: float) -> float:
    return round(100 * x, 2)


def level_text(level: float) -> str:
    """``95%``, ``99.2%``: a confidence level as every text shows it."""
    return f"{100 * level:.3g}%"


def with_ci(value: str, low: float | None, high: float | None, level: float = 0.95) -> str:
    """``value (95% CI low to high)`` — the one wording of an effect with its interval at its
    test's confidence ``level`` (the terminal, the report, the advice, the conclusion);
    ``low``/``high`` already in the effect's unit."""
    if low is None or high is None:
        return value
    return f"{value} ({level_text(level)} CI {low:+.1f} to {high:+.1f})"


def d_points(d: float) -> str:
    """A leakage D (a fraction) in points, as every text shows it: ``+12.3 points``."""
    return f"{100 * d:+.1f} points"


def margin_text(margin: float) -> str:
    """``3-point``: the margin in words."""
    return f"{100 * margin:g}-point"


def effect_text(m: Measure) -> str:
    if m.one_sided:
        return (f"{d_points(m.effect)}; one-sided {level_text(m.level)} bounds up to "
                f"{100 * m.ci_high:+.1f}")
    return with_ci(d_points(m.effect), 100 * m.ci_low, 100 * m.ci_high, m.level)


# ------------------------------------------------------------------------------ the measures
def _leakage_measure(results: dict) -> Measure | None:
    leak = LeakageSection.in_results(results)
    if leak is None:
        return None
    best = leak.best
    low, high = best.get("ci_low", best["D"]), best.get("ci_high", best["D"])
    data = DatasetSummary.in_results(results)
    n = int((data.evaluated_items if data is not None else None) or 0)
    verdict = leak.headline_verdict
    return Measure("leakage", verdict, f"{best['metric']} × {best['aggregator']}",
                   "a classifier of cue-word scores", float(best["D"]), float(low),
                   float(high), leak.level,
                   n, verdict in POSITIVE_VERDICTS, (float(high) - float(low)) / 2)


def _equivalence_measure(leak: Measure, results: dict) -> Measure:
    """The word-cue statistics weighed for equivalence: at the largest of the cue-only models'
    one-sided 95% upper bounds (``leakage.best.equivalence_high``, an intersection-union test)
    when recorded; results written before it keep the headline's two-sided 95% one."""
    high = LeakageSection.required_in(results).best.get("equivalence_high")
    if high is None or leak.above_chance:
        return leak
    return replace(leak, ci_high=float(high), level=ONE_SIDED_LEVEL, one_sided=True,
                   title="the cue-word classifiers")


def _mcq_measures(results: dict) -> list[Measure]:
    """Every MCQ rule: a rule above chance at its Bonferroni-corrected interval (the one its
    test used), any other at its equivalence interval (:data:`EQUIVALENCE_LEVEL`): the
    cluster-robust one when the row records ``D_equivalence_high`` (questions sharing a choice
    set, docs/methods.md §17; symmetric about D), else the exact one."""
    section = McqBaselinesSection.in_results(results)
    if section is None:
        return []
    out = []
    for row in section.rows:
        found = bool(row.significant) and row.D > 0
        if found:
            (low, high), level = row.D_ci, float(section.ci_level or 0.95)
        else:
            low, high = (x - row.chance for x in exact_interval(
                row.accuracy, int(row.n_items), EQUIVALENCE_LEVEL))
            if row.D_equivalence_high is not None:  # clustered by choice set (CR1)
                high = float(row.D_equivalence_high)
                low = 2 * float(row.D) - high
            level = EQUIVALENCE_LEVEL
        out.append(Measure("baseline", "rule", row.name, f"the rule “{row.name}”",
                           float(row.D), float(low), float(high), level,
                           int(row.n_items), found, (row.D_ci[1] - row.D_ci[0]) / 2))
    return out


def _preference_measures(results: dict) -> list[Measure]:
    """Both picks of every shortcut (a pair has two responses: the opposite pick of a rule
    below ½ is above it): significant after Holm at its 95% Wilson interval, else at its
    equivalence interval."""
    out = []
    section = PreferenceSection.in_results(results)
    for role, row in section.rows if section is not None else []:
        if row["rate"] is None:
            continue
        n = int(row["decided"])
        tost = wilson_interval(round(row["rate"] * n), n, EQUIVALENCE_LEVEL)
        for sign, pick in ((1, "the rule"), (-1, "the opposite of the rule")):
            effect = sign * (row["rate"] - 0.5)
            found = bool(row["significant"]) and effect > 0
            low, high = row["rate_ci"] if found else tost
            level = 0.95 if found else EQUIVALENCE_LEVEL
            bounds = sorted((sign * (low - 0.5), sign * (high - 0.5)))
            out.append(Measure("baseline", "preference_shortcut", row["shortcut"],
                               f"{pick} “{row['shortcut']}” ({role})", effect, bounds[0],
                               bounds[1], level, n, found,
                               (row["rate_ci"][1] - row["rate_ci"][0]) / 2))
    return out


def _subset_measures(results: dict) -> list[Measure]:
    """Subset cells above chance after Holm (leakage evidence only: a subset's interval is not
    the dataset's, so subsets never decide ``no_meaningful_leakage``)."""
    table = SubsetsSection.in_results(results)
    if table is None:
        return []
    out = []
    for row in table.rows:
        for name, cell in row["cells"].items():
            effect = cell.get("effect")
            if not cell.get("significant") or effect is None or effect <= 0 or not cell["ci"]:
                continue
            low, high = effect_interval(cell)
            out.append(Measure("baseline", "subset_shortcut", name,
                               f"“{name}” in the subset {table.field} = {row['subset']}",
                               float(effect), float(low), float(high), 0.95,
                               int(row["n_items"]), True, (cell["ci"][1] - cell["ci"][0]) / 2))
    return out


# ------------------------------------------------------------------------------ too few items
def too_few_items(results: dict) -> tuple[str, int] | None:
    """(why, items short) when some label has fewer than
    :data:`MIN_ITEMS_PER_LABEL_PER_FOLD` fitting items per fold (cross-validated: its count ÷
    folds; with a train split: its train count), or the evaluated split fewer than that per label;
    None when there are enough. Labels the scan reports as rare count only when fewer than two
    others are left (docs/methods.md §17)."""
    data = DatasetSummary.in_results(results)
    fitted = data.splits.get(data.fitting_role) if data is not None else None
    if data is None or fitted is None or fitted.label_counts is None:
        return None
    splits, fitting = data.splits, data.fitting_role
    folds = ConfigSection.of(results).folds
    per_fold = folds if fitting == "all" else 1
    counts = {k: v for k, v in fitted.label_counts.items() if v > 0}
    rare = set((data.labels or {}).get("rare", []))
    if len(set(counts) - rare) >= 2:
        counts = {k: v for k, v in counts.items() if k not in rare}
    need = MIN_ITEMS_PER_LABEL_PER_FOLD * per_fold
    needed = (f"the {need} needed ({MIN_ITEMS_PER_LABEL_PER_FOLD} per fold × {folds} folds)"
              if fitting == "all" else f"the {need} needed in the train split")
    short = [(label, n) for label, n in counts.items() if n < need]
    if len(counts) < 2 and data.task != "mcq":
        return (f"only {plural(len(counts), 'label')} in the "
                f"{'data' if fitting == 'all' else 'train split'}", need * 2)
    evaluated = data.evaluated_role
    n_eval = int(splits[evaluated].items)
    if short and data.task == "mcq":  # one right choice per question
        n = min(n for _, n in short)
        return f"too few items: {plural(n, 'question')}, fewer than {needed}", need - n
    if short:
        label, n = min(short, key=lambda s: (s[1], s[0]))
        return (f"too few items: the label “{label}” has {plural(n, 'item')}, fewer "
                f"than {needed} ({n_eval:,} evaluated items)", sum(need - c for _, c in short))
    if evaluated != fitting and n_eval < MIN_ITEMS_PER_LABEL_PER_FOLD * len(counts):
        return (f"too few items: the test split has {n_eval:,}, fewer than "
                f"{MIN_ITEMS_PER_LABEL_PER_FOLD} per label",
                MIN_ITEMS_PER_LABEL_PER_FOLD * len(counts) - n_eval)
    return None


def measurable(results: dict) -> bool:
    """False below the minimum of :func:`too_few_items`: then no output shows the leakage
    accuracies (a 3-item file's 100% and 0% baselines say nothing)."""
    return too_few_items(results) is None


# ------------------------------------------------------------------------------ settling
def _items_for(m: Measure, half: float, distance: float) -> float:
    """Items beyond ``m.n`` at which an interval half-width ``half`` (shrinking as ``1/√n``)
    falls below ``distance``: ``n · (half / distance)² − n``; infinite when it never can."""
    if distance <= 0 or m.n <= 0 or not math.isfinite(half):
        return math.inf
    return max(1.0, m.n * (half / distance) ** 2 - m.n)


def items_to_settle(open_: list[Measure], margin: float) -> int | None:
    """About how many more evaluated items would settle an inconclusive ``open_`` set, were the
    point estimates to hold (docs/methods.md §17): leakage as soon as one corrected test's
    interval (half-width ``h``) leaves 0 behind (``n · (h / D)²`` for a ``D > 0``), no
    meaningful leakage once every equivalence bound ``u`` is below the margin
    (``n · ((u − D) / (margin − D))²`` for each, the largest of them); the smaller of the two,
    less the ``n`` items already evaluated. None when neither can happen."""
    first_leak = min((_items_for(m, m.test_half, m.effect) for m in open_), default=math.inf)
    all_below = max((_items_for(m, m.ci_high - m.effect, margin - m.effect) for m in open_),
                    default=math.inf)
    needed = min(first_leak, all_below)
    return None if not math.isfinite(needed) else math.ceil(round(needed, 6))


@typed_reads()
def conclude(results: dict, margin: float = DEFAULT_MARGIN) -> Conclusion:
    """The dataset-level conclusion from a scan's (or probe's) results dict (docs/methods.md
    §17): ``leakage`` / ``no_meaningful_leakage`` / ``inconclusive``; its
    ``level`` is that of the interval its reason quotes."""
    leak = _leakage_measure(results)

    def conclusion(status: str, reason: str, quoted: Measure | None,
                   evidence: Sequence[Measure] = (), items: int | None = None) -> Conclusion:
        return Conclusion(status, reason, margin,
                          quoted.level if quoted else leak.level if leak else LEAKAGE_LEVEL,
                          leak.effect if leak else None, leak.ci_low if leak else None,
                          leak.ci_high if leak else None,
                          [m.evidence() for m in evidence], items)

    short = too_few_items(results)
    if short is not None:
        why, missing = short
        return conclusion(INCONCLUSIVE, f"{why}; no statement about leakage is possible.",
                          None, items=missing)
    rules = _mcq_measures(results) + _preference_measures(results)
    found = [m for m in ([leak] if leak else []) + rules + _subset_measures(results)
             if m.above_chance]
    if found:  # the leakage test first, then the rules in their table order
        return conclusion(LEAKAGE, _leakage_reason(found[0], results, len(found)), found[0],
                          found)
    cues = significant_cues(results)
    if cues:  # the scan's other calibrated finding (§2, §11): words that give the label away
        return replace(conclusion(LEAKAGE, _cue_reason(cues, results), None), level=CUE_LEVEL,
                       evidence=[_cue_evidence(c) for c in cues])
    segmentation = SegmentationSection.in_results(results)
    if segmentation is not None and segmentation.unsegmented:
        return conclusion(INCONCLUSIVE, "the words look unsegmented (see the warnings): cue "
                          "statistics over whole phrases cannot rule leakage out; scan again "
                          "with a segmenter for the language (docs/languages.md).", leak)
    weighed = ([_equivalence_measure(leak, results)] if leak else []) + rules
    if not weighed:
        return conclusion(INCONCLUSIVE, "no statistic of cue leakage was measured on this "
                          "data.", None)
    top = max(weighed, key=lambda m: m.ci_high)
    open_ = [m for m in weighed if m.ci_high >= margin]
    if not open_:
        return conclusion(NO_LEAKAGE, _no_leakage_reason(top, len(weighed), margin), top,
                          weighed)
    more = items_to_settle(open_, margin)
    return conclusion(INCONCLUSIVE, _inconclusive_reason(top, results, margin, more), top,
                      open_, more)


CUE_LEVEL = 0.95  # the cue test's family-wise level: z above the Bonferroni threshold (§2)


def cue_summary(results: dict) -> CueFinding | None:
    """``cue_finding`` of the results (written by the scan), else the same derived from
    ``cues`` (``items_covered`` and ``share_items`` only when the scan wrote them); None without
    cues."""
    recorded = CueFinding.in_results(results)
    if recorded is not None or "cues" not in results:
        return recorded
    cues = [c for c in CueRow.rows_in(results) if c.significant]
    top = sorted(cues, key=lambda c: (-c.z, c.token, c.label))[:5]
    stats = CueStats.in_results(results)
    return CueFinding(n_significant=len(cues),
                      bonferroni_z=stats.bonferroni_z if stats is not None else None,
                      top=[{"token": c.token, "label": c.label, "z": c.z} for c in top])


def significant_cues(results: dict) -> list[dict]:
    """The strongest significant cue words of :func:`cue_summary`, each ``{"token", "label",
    "z"}``; none for a scan without them."""
    summary = cue_summary(results)
    return list(summary.top) if summary and summary.n_significant else []


def _cue_evidence(cue: dict) -> dict:
    return {"kind": "cues", "code": "significant_cue", "subject": cue["token"],
            "title": f"the word “{shown(cue['token'])}” → {shown(cue['label'])}",
            "effect": cue["z"],
            "ci_low": None, "ci_high": None, "unit": "z", "level": CUE_LEVEL}


def _cue_reason(cues: list[dict], results: dict) -> str:
    recorded, stats = CueFinding.in_results(results), CueStats.in_results(results)
    n = recorded.n_significant if recorded is not None else len(cues)
    threshold = stats.bonferroni_z if stats is not None else None
    above = f"z above the corrected {threshold:.2f}" if isinstance(threshold, (int, float)) \
        else "Bonferroni-corrected"
    top = cues[0]
    words = "word gives the label away on its own" if n == 1 else \
        "words give the label away on their own"
    return (f"{n:,} {words} ({above}; strongest: “{shown(top['token'])}” → "
            f"{shown(top['label'])}, z = {top['z']:.1f}), though no cue-only classifier beats the "
            "baseline on the evaluated items.")


def _evaluated(results: dict) -> str:
    data = DatasetSummary.in_results(results)
    n = data.evaluated_items if data is not None else None
    noun = "questions" if data is not None and data.task == "mcq" else "items"
    return f"{n:,} evaluated {noun}" if n is not None else f"the evaluated {noun}"


def leakage_baseline(results: dict) -> str:
    """What the word-cue leakage test's classifier is compared with, in words, for every
    sentence that names it (docs/methods.md §3: 1/k for MCQ, ½ for preference pairs, else the
    majority label)."""
    data = DatasetSummary.in_results(results)
    if data is not None and data.task == "mcq":
        return f"picking one of the {f'{data.n_choices} ' if data.n_choices else ''}choices " \
               "at random"
    if data is not None and data.task == PREFERENCE_TASK:
        return "guessing (one response of each pair is chosen)"
    return "always giving the most common label"


def _leakage_reason(top: Measure, results: dict, n_found: int) -> str:
    others = f"; {n_found - 1} more above chance" if n_found > 1 else ""
    what = ("the labels can be guessed from the words alone"
            if top.kind == "leakage" else f"{top.title} finds the answer without reading the "
            "question" if top.code == "rule" else f"{top.title} finds the chosen response")
    baseline = leakage_baseline(results) if top.kind == "leakage" else "chance"
    return f"{what}: {effect_text(top)} above {baseline}{others}."


def _no_leakage_reason(top: Measure, n_weighed: int, margin: float) -> str:
    every = (f"{top.title}, {effect_text(top)}" if n_weighed == 1 else
             f"all {n_weighed} cue-only predictors (highest: {top.title}, {effect_text(top)})")
    return f"every interval stays below the {margin_text(margin)} margin: {every}."


def _inconclusive_reason(top: Measure, results: dict, margin: float, more: int | None) -> str:
    settle = (f"; about {plural(more, 'more evaluated item')} would settle it"
              if more is not None else "")
    return (f"{_evaluated(results)} cannot rule out leakage up to {100 * top.ci_high:+.1f} "
            f"points ({top.title}: {effect_text(top)}), nor show it is below the "
            f"{margin_text(margin)} margin{settle}.")


def margin_of(results: dict) -> float:
    """The margin a results dict was scanned with (``config.margin``; older files: the
    default)."""
    return float(ConfigSection.of(results).margin)


def conclusion_of(results: dict) -> Conclusion:
    """The conclusion a results dict records, or :func:`conclude` on it (files written before
    results.json had one) at its scan's margin."""
    recorded = Conclusion.in_results(results)
    return recorded if recorded is not None else conclude(results, margin_of(results))
