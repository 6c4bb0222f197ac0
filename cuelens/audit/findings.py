"""The findings of a results file, ranked: what a reader should see first, and what the advice turns
into steps (units and severities: docs/data-hygiene.md, "What to do next, and `audit compare`")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cuelens.audit.chance import letter
from cuelens.audit.conclusion import (cue_summary, d_points, leakage_baseline, measurable,
                                      with_ci)
from cuelens.audit.preference import POSITION, rule_text
from cuelens.audit.results import (DatasetSummary, EasyHardSection, HygieneSection,
                                   LeakageSection, LLMProbeSection, McqBaselinesSection,
                                   PreferenceSection, ProbeSection, SplitHygiene, SubsetsSection,
                                   model_name, typed_reads)
from cuelens.audit.subsets import effect_interval
from cuelens.data.dataset import role_names
from cuelens.data.display import shown
from cuelens.data.preference import PREFERENCE_TASK
from cuelens.wording import plural

SEVERITIES = ("high", "medium", "low", "info")
UNREADABLE = 0.05  # share of unreadable LLM answers worth a finding
LEAKAGE_SEVERITY = {"significant": "high", "mild": "medium", "chance": "info",
                    "below chance": "low"}


@dataclass(frozen=True)
class Finding:
    """One finding: ``kind`` (leakage, cues, baseline, hygiene, easy_hard, probe), a
    one-sentence ``title``, the effect with its interval (``None`` when it has none) in ``unit``,
    the ``items`` it concerns, the report ``section`` (anchor id) showing the evidence and its
    ``severity`` (:data:`SEVERITIES`). ``code`` names the finding within its kind (e.g. hygiene
    ``duplicates``, ``label_conflicts``; probe ``relies_on_cue``) and ``subject`` what it is
    about (a split, an MCQ rule, a cue, a prompt template), for code that acts on findings;
    ``level`` is the confidence of the interval, the one its test used (e.g. 99.2% for an MCQ
    rule, Bonferroni-corrected)."""

    kind: str
    title: str
    effect: float | None
    ci_low: float | None
    ci_high: float | None
    unit: str
    items: int | None
    section: str
    severity: str
    code: str = ""
    subject: str | None = None
    level: float = 0.95


Rule = Callable[[dict], list[Finding]]
RULES: list[Rule] = []


def finding_rule(func: Rule) -> Rule:
    """Register a function ``results -> [Finding]``; every rule runs on every results dict."""
    RULES.append(func)
    return func


def d_with_ci(row: dict) -> str:
    """A leakage row's D with its interval, when it has one (``D``, ``ci_low``, ``ci_high`` as
    fractions): ``+12.3 points (95% CI +10.1 to +14.2)`` — the one wording of the terminal, the
    report's verdict, the Jupyter summary, the comparison and the dataset card.

    >>> d_with_ci({"D": 0.123, "ci_low": 0.101, "ci_high": 0.142})
    '+12.3 points (95% CI +10.1 to +14.2)'
    >>> d_with_ci({"D": -0.02})
    '-2.0 points'
    """
    return with_ci(d_points(row["D"]), _points(row.get("ci_low")), _points(row.get("ci_high")))


def _points(x: float | None) -> float | None:
    return None if x is None else round(100 * x, 4)  # shown to 0.1: never rounded twice


def _in_points(row: dict, key: str) -> tuple[float | None, float | None, float | None]:
    """``row[key]`` and its interval (``ci_low``, ``ci_high``; None where absent) in points: a
    finding's effect, ``ci_low`` and ``ci_high``."""
    return _points(row.get(key)), _points(row.get("ci_low")), _points(row.get("ci_high"))


def split_name(role: str) -> str:
    """A split role in a sentence: "test", or "evaluated" for the single file of a
    cross-validated scan."""
    return "evaluated" if role == "all" else role


def split_file(results: dict, role: str) -> str:
    """A split role as the user knows it: "train", or "dev.jsonl (used as train)" when the role
    was given to a file whose name does not say it (results.json ``dataset.split_roles``)."""
    data = DatasetSummary.in_results(results)
    return role_names(data.split_roles if data is not None else None).get(role, role)


def _prefix(role: str) -> str:
    """"train: " before a finding about one split; nothing for a single-file dataset's."""
    return "" if role == "all" else f"{role}: "


def task_of(results: dict) -> str | None:
    """The task of a results.json content's dataset (``nli``, ``mcq``, ``preference``)."""
    data = DatasetSummary.in_results(results)
    return data.task if data is not None else None


def leakage_verdict(results: dict) -> str | None:
    """The word-cue leakage verdict of a results.json content, as the leakage finding and the
    conclusion read it (:attr:`~cuelens.audit.results.LeakageSection.headline_verdict`; None:
    no leakage section)."""
    leak = LeakageSection.in_results(results)
    return leak.headline_verdict if leak is not None else None


def is_preference(results: dict) -> bool:
    """True for the results of a preference-pair scan (items are responses, labels
    chosen/rejected; docs/preference.md)."""
    return task_of(results) == PREFERENCE_TASK


def item_noun(results: dict) -> str:
    """What one evaluated item is: "response" in a preference scan, else "item"."""
    return "response" if is_preference(results) else "item"


# --------------------------------------------------------------------------------- scan
@finding_rule
def _leakage(results: dict) -> list[Finding]:
    leak = LeakageSection.in_results(results)
    if leak is None or not measurable(results):
        return []
    best, verdict = leak.best, leak.headline_verdict
    d = d_points(best["D"])
    base = leakage_baseline(results)
    guessed = ("Chosen and rejected responses can be told apart by their words alone"
               if is_preference(results) else "The labels can be guessed from the words alone")
    title = {
        "significant": f"{guessed}: {d} above {base}.",
        "mild": f"Some cue leakage, below the alarm threshold: {d} above {base}.",
        "chance": f"The word-cue test finds no leakage: a classifier of cue-word scores is "
                  f"not shown to beat {base} (its interval covers 0).",
        "below chance": f"A classifier of cue-word scores does worse than {base} ({d}).",
    }.get(verdict, f"Cue leakage {d}.")
    data = DatasetSummary.in_results(results)
    return [Finding("leakage", title, *_in_points(best, "D"), "points",
                    data.evaluated_items if data is not None else None, "leakage",
                    LEAKAGE_SEVERITY.get(verdict, "medium"), verdict, level=leak.level)]


@finding_rule
def _cues(results: dict) -> list[Finding]:
    summary = cue_summary(results)
    if not summary or not summary.n_significant:
        return []
    n = summary.n_significant
    named = ", ".join(f"“{shown(c['token'])}” → {shown(c['label'])}" for c in summary.top[:3])
    share = summary.share_items
    covered = f", found in {100 * share:.0f}% of the items" if share is not None else ""
    if is_preference(results):
        covered = covered.replace("items", "responses")
        title = (f"{n:,} {'word marks' if n == 1 else 'words mark'} chosen or rejected responses "
                 f"significantly{covered} (strongest: {named}).")
    else:
        title = (f"{n:,} {'word points' if n == 1 else 'words point'} to one label "
                 f"significantly{covered} (strongest: {named}).")
    severity = {"significant": "high", "mild": "medium"}.get(leakage_verdict(results) or "", "low")
    return [Finding("cues", title, None if share is None else round(100 * share, 2), None, None,
                    "%", summary.items_covered, "cues", severity, "significant_cues")]


@finding_rule
def _easy_hard(results: dict) -> list[Finding]:
    eh = EasyHardSection.in_results(results)
    easy = None if eh is None or eh.chance_level else eh.easy_share
    if eh is None or easy is None:
        return []
    noun = item_noun(results)
    answered = ("labelled chosen or rejected correctly" if is_preference(results)
                else "answered")
    title = (f"{100 * easy:.0f}% of the {split_name(eh.split or 'all')} {noun}s are "
             f"{answered} by a cue-only classifier (easy); {plural(eh.hard, noun)} "
             f"{'is' if eh.hard == 1 else 'are'} hard.")
    # as important as the leakage it measures, one step below
    severity = {"significant": "medium", "mild": "low"}.get(leakage_verdict(results) or "",
                                                            "info")
    return [Finding("easy_hard", title, round(100 * easy, 2), None, None, "%", eh.easy,
                    "easy_hard", severity, "easy_share")]


@finding_rule
def _mcq_rules(results: dict) -> list[Finding]:
    mb = McqBaselinesSection.in_results(results)
    if mb is None:
        return []
    out = []
    level = float(mb.ci_level or 0.95)
    paired = {name for row in mb.rows if row.complement_of
              for name in (row.name, row.complement_of)}
    for row in mb.rows:
        if not row.significant or (row.name in paired and row.D <= 0):
            continue  # with two choices, a rule below chance is its complement above it
        if row.D > 0:
            title, severity, code = (
                f"The rule “{row.name}” finds the answer without reading the question: "
                f"{d_points(row.D)} above chance.", "high", "rule")
        else:  # more than two choices: the rule points at a wrong choice, not to the answer
            title, severity, code = (
                f"The wrong choices favour the rule “{row.name}”: its pick is the answer less "
                f"often than chance ({d_points(row.D)}), which rules out one wrong choice but "
                "does not find the answer.", "low", "below_chance_rule")
        low, high = row.D_ci
        out.append(Finding("baseline", title, _points(row.D), _points(low), _points(high),
                           "points", row.n_items, "mcq_baselines", severity, code, row.name,
                           level))
    for role, test in mb.gold_position.items():
        if test.significant and test.most_common:
            top = test.most_common
            out.append(Finding(
                "baseline", f"The right answer sits at position {letter(top['position'])} in "
                f"{100 * top['share']:.1f}% of the {split_name(role)} items "
                f"({100 * top['expected_share']:.1f}% if balanced).",
                round(100 * (top["share"] - top["expected_share"]), 2), None, None, "points",
                sum(test.counts), "mcq_baselines", "medium", "positions", role))
    return out


@finding_rule
def _preference_shortcuts(results: dict) -> list[Finding]:
    """Significant rows of the ``preference`` section: a rule that reads only the two responses
    (length, formatting, position) and picks the chosen one more (or less) often than 1/2."""
    out = []
    section = PreferenceSection.in_results(results)
    for role, row in section.rows if section is not None else []:
        if row["significant"]:
            rate, (low, high) = row["rate"], row["rate_ci"]
            outcome = ("" if rate > 0.5 else
                       ", so the opposite pick wins" if row["shortcut"] != POSITION
                       else ", so the response shown second wins")
            title = (f"{_prefix(role)}Picking {rule_text(row['shortcut'])} finds the chosen one "
                     f"in {100 * rate:.1f}% of the {plural(row['decided'], 'pair')} it tells apart "
                     f"(50% if unrelated){outcome}.")
            code = "position_effect" if row["shortcut"] == POSITION else \
                "preference_shortcut"
            out.append(Finding("baseline", title, _points(rate - 0.5), _points(low - 0.5),
                               _points(high - 0.5), "points", row["decided"], "preference",
                               "high", code, row["shortcut"]))
    return out


@finding_rule
def _subset_shortcuts(results: dict) -> list[Finding]:
    """Per shortcut, the subsets where its cell is significant after Holm over the whole
    subset × shortcut table (the ``subsets`` section), strongest effect first."""
    table = SubsetsSection.in_results(results)
    if table is None:
        return []
    out = []
    for name in table.shortcuts:
        hits = sorted(((row["cells"][name], row) for row in table.rows
                       if row["cells"].get(name, {}).get("significant")),
                      key=lambda hit: (-abs(hit[0]["effect"] or 0), hit[1]["subset"]))
        if not hits:
            continue
        top = hits[0][0]
        named = ", ".join(f"{row['subset']} ({100 * cell['value']:.1f}%)" for cell, row in hits)
        title = (f"“{name}” is a significant shortcut in {len(hits)} of the "
                 f"{plural(len(table.rows), 'subset')} by {table.field} (Holm over "
                 f"{plural(table.n_tests, 'test')}): {named}.")
        low, high = effect_interval(top) if top["ci"] else (None, None)
        out.append(Finding("baseline", title, _points(top["effect"]), _points(low), _points(high),
                           "points", sum(row["n_items"] for _, row in hits), "subsets", "medium",
                           "subset_shortcut", name))
    return out


@finding_rule
def _hygiene(results: dict) -> list[Finding]:
    hy = HygieneSection.in_results(results)
    if hy is None:
        return []
    out = []
    noun = item_noun(results)
    for row in hy.overlap:
        found = row.exact + row.near
        if found:
            out.append(Finding(
                "hygiene", f"{plural(found, split_file(results, row.eval) + ' ' + noun)} also "
                f"occur in {split_file(results, row.fit)} ({row.exact:,} exact, "
                f"{row.near:,} near copies).",
                round(100 * row.fraction, 2), None, None, "%", found, "hygiene",
                "high" if row.fraction >= 0.01 else "medium", "overlap", row.eval))
    for role, counts in hy.splits.items():
        out += _split_hygiene(role, counts, is_preference(results), split_file(results, role))
    return out


def _split_hygiene(role: str, counts: SplitHygiene, preference: bool, shown: str) -> list[Finding]:
    """The findings of one split's hygiene counts; ``shown``: the split as the titles name it
    (:func:`split_file`)."""
    n, out, prefix = counts.items or 1, [], _prefix(shown)
    conflicts = counts.label_conflict_items
    groups = counts.label_conflict_groups
    if conflicts:
        what = (f"{plural(groups, 'response')} to the same prompt {'is' if groups == 1 else 'are'}"
                f" chosen in one pair and rejected in another ({plural(conflicts, 'item')})"
                if preference else f"{plural(groups, 'group')} of identical inputs "
                f"{'carries' if groups == 1 else 'carry'} different labels "
                f"({plural(conflicts, 'item')})")
        out.append(Finding(
            "hygiene", f"{prefix}{what}.",
            round(100 * conflicts / n, 2), None, None, "%", conflicts, "hygiene", "medium",
            "label_conflicts", role))
    redundant = counts.duplicate_items
    if redundant:
        out.append(Finding(
            "hygiene", prefix + plural(redundant, "item is a redundant exact copy",
                                       "items are redundant exact copies") + " of another.",
            round(100 * redundant / n, 2), None, None, "%", redundant,
            "hygiene", "medium" if redundant / n >= 0.01 else "low", "duplicates", role))
    near = counts.near_duplicate_pairs
    if near:
        out.append(Finding(
            "hygiene", f"{prefix}{plural(near, 'pair')} of near-duplicate items with the "
            "same answer.", None, None, None, "items", near, "hygiene", "low",
            "near_duplicates", role))
    permuted = counts.permuted_copies or 0
    if permuted:
        out.append(Finding(
            "hygiene", f"{prefix}{plural(permuted, 'item repeats', 'items repeat')} another "
            "with the choices in a different order, a deliberate construction (e.g. to balance "
            "answer positions).", round(100 * permuted / n, 2), None, None, "%", permuted,
            "hygiene", "info", "permuted_copies", role))
    kind, pairs = counts.constructed_pairs
    if pairs:
        mirrored = kind == "mirrored_pairs"
        out.append(Finding(
            "hygiene",
            f"{prefix}{plural(pairs, 'mirrored pair' if mirrored else 'contrastive pair')}"
            f" (the same {'choices' if mirrored else 'hypothesis'} with different answers) "
            "neutralise word cues by construction.", None, None, None, "items", pairs,
            "hygiene", "info", kind, role))
    return out


# --------------------------------------------------------------------------------- probe
@finding_rule
def _probe(results: dict) -> list[Finding]:
    pr = ProbeSection.in_results(results)
    if pr is None:
        return []
    name = model_name(results)
    sanity = pr.sanity or {}
    acc = sanity.get("accuracy", {})
    untrained = pr.model.get("untrained_head")
    if untrained:  # probed with --allow-untrained: the head's weights are random
        return [Finding("probe", f"{name} has no fine-tuned head "
                        f"({plural(len(untrained), 'weight')} at random, probed with "
                        "--allow-untrained), so its cue tests say nothing about the model.",
                        *_in_points(acc, "accuracy"), "%", None, "probe", "high",
                        "untrained_head", name)]
    if sanity and not sanity.get("interpretable", True):
        why = "performs at chance" if acc.get("covers_chance", True) else \
            "gave no answer for most items"
        return [Finding("probe", f"{name} {why}, so its cue tests are not interpretable.",
                        *_in_points(acc, "accuracy"), "%", None, "probe", "high", "at_chance",
                        name)]
    out = [Finding("probe", f"{name} relies on “{cue['cue']}”: {d_points(cue['delta'])} of "
                   "accuracy on items with it.", *_in_points(cue, "delta"), "points",
                   cue["n_with"], "probe", "high", "relies_on_cue", cue["cue"])
           for cue in pr.tested_cues if cue.get("significant") and cue["delta"] > 0]
    eh = pr.easy_hard or {}
    if eh.get("gap") is not None and eh["gap"] > 0 and eh.get("ci_low", eh["gap"]) > 0:
        out.append(Finding(  # beyond the noise: the gap's interval above 0 (where recorded)
            "probe", f"{name} is {100 * eh['gap']:.1f} points more accurate on easy (cue-"
            f"answerable) items ({100 * eh['easy_accuracy']:.1f}%) than on hard ones "
            f"({100 * eh['hard_accuracy']:.1f}%).", *_in_points(eh, "gap"), "points", None,
            "probe", "medium" if eh["gap"] >= 0.1 else "low", "easy_hard_gap", name))
    pb = pr.position_bias
    if pb and pb.get("cochran_q", {}).get("significant"):
        out.append(Finding("probe", f"{name}'s accuracy depends on where the right answer "
                           f"sits (spread {100 * pb['spread']:.1f} points).",
                           _points(pb["spread"]), None, None, "points", pb.get("n_items"),
                           "probe", "high", "position_bias", name))
    if not any(f.code == "relies_on_cue" for f in out):
        tested = len(pr.tested_cues)
        out.append(Finding("probe", f"No tested cue changes {name}'s accuracy significantly "
                           f"({plural(tested, 'cue')} tested).", None, None, None, "points",
                           None, "probe", "info", "no_cue_reliance", name))
    return out


@finding_rule
def _llm_probe(results: dict) -> list[Finding]:
    lp = LLMProbeSection.in_results(results)
    if lp is None or not lp.templates:
        return []
    name = model_name(results)
    out = []
    for t in lp.templates:
        relied = [c for c in t["accuracy_test"].get("cues", [])
                  if c.get("significant") and c["delta"] > 0]
        if relied:
            top = max(relied, key=lambda c: (c["delta"], c["cue"]))
            out.append(Finding(
                "probe", f"{name} with prompt “{t['name']}” relies on “{top['cue']}” "
                f"({plural(len(relied), 'cue')} significant).",
                *_in_points(top, "delta"), "points", top["n_with"], "llm_probe", "high",
                "prompt_relies_on_cue", t["name"]))
        rate = t["unparseable"]["rate"]
        if rate >= UNREADABLE:
            out.append(Finding("probe", f"{100 * rate:.0f}% of the answers to prompt "
                               f"“{t['name']}” could not be read (counted as wrong).",
                               round(100 * rate, 2), None, None, "%", t["unparseable"]["n"],
                               "llm_probe", "medium", "unreadable_answers", t["name"]))
    if lp.least_cue_reliant:
        out.append(Finding("probe", f"Prompt “{lp.least_cue_reliant}” relies least on the cues.",
                           None, None, None, "points", None, "llm_probe", "info",
                           "least_cue_reliant", lp.least_cue_reliant))
    return out


# --------------------------------------------------------------------------------- ranking
def _size(f: Finding) -> float:
    """Comparable magnitude within a severity: points and % as they are; findings without one
    (counts of pairs) rank after them."""
    if f.effect is not None and f.unit in ("points", "%"):
        return abs(f.effect)
    return 0.0


def rank_key(f: Finding) -> tuple:
    return (SEVERITIES.index(f.severity), -_size(f), -(f.items or 0), f.kind, f.title)


@typed_reads()
def findings(results: dict) -> list[Finding]:
    """Every registered rule's findings on ``results`` (a scan or probe results dict), most
    important first: by severity, then effect size, then items affected."""
    return sorted((f for rule in RULES for f in rule(results)), key=rank_key)
