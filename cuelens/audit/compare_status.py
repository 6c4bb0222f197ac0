"""The status of ``audit compare``: one per dimension (conclusion, cue leakage D, cues, data
hygiene, gold positions, training items lost) and one overall (docs/data-hygiene.md, "What to do
next, and `audit compare`").

A dimension is ``better``, ``worse``, ``same`` or ``not compared`` (a section one scan lacks). The
overall status follows the conclusion (docs/methods.md §17): it is never ``improved`` while both
scans conclude ``leakage`` (``still_leaking`` then, or ``mixed``/``worsened``), and never
``worsened`` when the conclusion improved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cuelens.audit.conclusion import LEAKAGE, margin_text
from cuelens.audit.findings import task_of
from cuelens.audit.results import CONCLUSION_TEXT, McqBaselinesSection
from cuelens.registry import Registry
from cuelens.wording import plural

BETTER, WORSE, SAME, NOT_COMPARED = "better", "worse", "same", "not compared"
CONCLUSION_RANK = {"leakage": 0, "inconclusive": 1, "no_meaningful_leakage": 2}
STATUS_TEXT = {"improved": "Improved", "worsened": "Worse", "mixed": "Mixed",
               "unchanged": "No measured change", "still_leaking": "Still leaking"}



@dataclass(frozen=True)
class PairFacts:
    """What the dimensions read of the pair besides the two scans, computed once per comparison:
    whether the 95% intervals of D overlap, the cue changes
    (:func:`~cuelens.audit.cue_change.cue_changes`; None: not tested) and the hygiene counts'
    changes (:func:`~cuelens.audit.hygiene_change.hygiene_changes`; None: a scan has no hygiene
    section)."""

    cis_overlap: bool
    cue_changes: dict | None
    hygiene_changes: dict | None


#: ``func(before, after, b, a, facts) -> {status, before, after, text} | None`` (None: the
#: dimension does not apply, e.g. gold positions of an NLI scan)
Dimension = Callable[[dict, dict, dict, dict, PairFacts], dict | None]
DIMENSIONS: Registry[Dimension] = Registry("comparison dimension")
dimension = DIMENSIONS.register  # registers a Dimension under its name


def direction(before: float, after: float, lower_is_better: bool = True) -> str:
    """``better``, ``worse`` or ``same`` for a change of a measure."""
    if after == before:
        return SAME
    return BETTER if (after < before) == lower_is_better else WORSE


def _not_compared(why: str) -> dict:
    return {"status": NOT_COMPARED, "before": None, "after": None, "text": why}


def _missing(b, a, section: str) -> dict:
    """``not compared``: a side lacks ``section`` (its value is None)."""
    which = "either scan" if b is None and a is None else "the before scan" \
        if b is None else "the after scan"
    return _not_compared(f"{which} has no {section} section")


@dimension("conclusion")
def _conclusion(before: dict, after: dict, b: dict, a: dict, facts: PairFacts) -> dict:
    old, new = b["conclusion"]["status"], a["conclusion"]["status"]
    return {"status": direction(CONCLUSION_RANK[old], CONCLUSION_RANK[new], lower_is_better=False),
            "before": old, "after": new,
            "text": f"{CONCLUSION_TEXT[old].lower()} → {CONCLUSION_TEXT[new].lower()}"}


@dimension("cue leakage D")
def _leakage_d(before: dict, after: dict, b: dict, a: dict, facts: PairFacts) -> dict:
    """Better or worse when the 95% intervals do not overlap, or when one scan's interval lies
    below the conclusion's margin and the other's reaches above it; else the same."""
    margin = a["conclusion"]["margin"]
    text = f"{100 * b['D']:+.1f} → {100 * a['D']:+.1f} points"
    if "ci_low" not in b or "ci_low" not in a:
        return {"status": SAME, "before": b["D"], "after": a["D"],
                "text": f"{text} (no intervals to tell a change from noise)"}
    if not facts.cis_overlap:
        status, why = direction(b["D"], a["D"]), "the 95% intervals do not overlap"
    elif (b["ci_high"] < margin) != (a["ci_high"] < margin):
        status = BETTER if a["ci_high"] < margin else WORSE
        why = (f"the interval now {'lies below' if status == BETTER else 'reaches above'} the "
               f"{margin_text(margin)} margin: upper end {100 * b['ci_high']:+.1f} → "
               f"{100 * a['ci_high']:+.1f}")
    else:
        status, why = SAME, "the 95% intervals overlap"
    return {"status": status, "before": b["D"], "after": a["D"], "text": f"{text} ({why})"}


@dimension("significant cues")
def _cues(before: dict, after: dict, b: dict, a: dict, facts: PairFacts) -> dict:
    """Better when some cue weakened beyond its noise and none strengthened, worse when one
    strengthened (:func:`~cuelens.audit.cue_change.cue_changes`); how many cues pass the
    threshold depends on the number of items, so the counts alone decide nothing."""
    old, new = b["n_significant_cues"], a["n_significant_cues"]
    if old is None or new is None:
        return _missing(old, new, "cues")
    text = f"{old:,} → {new:,}"
    changes = facts.cue_changes
    if changes is None:
        return {"status": SAME, "before": old, "after": new,
                "text": f"{text} (no counts to tell a change from noise)"}
    weaker, stronger = len(changes["weakened"]), len(changes["strengthened"])
    status = WORSE if stronger else BETTER if weaker else SAME
    return {"status": status, "before": old, "after": new,
            "text": f"{text}; beyond the noise {weaker} weakened, {stronger} strengthened"}


@dimension("data hygiene")
def _hygiene(before: dict, after: dict, b: dict, a: dict, facts: PairFacts) -> dict:
    """Worse when the rate of some count (duplicates, near duplicates, label conflicts, overlap)
    grew beyond the noise, better when one fell beyond it and none grew
    (:func:`~cuelens.audit.hygiene_change.hygiene_changes`); the text names every count that
    changed, marking those within the noise."""
    old, new = b["hygiene"], a["hygiene"]
    if old is None or new is None or facts.hygiene_changes is None:
        return _missing(old, new, "hygiene")
    rows = facts.hygiene_changes["counts"]
    changes = {row["change"] for row in rows}
    status = WORSE if "grew" in changes else BETTER if "fell" in changes else SAME
    return {"status": status, "before": sum(old.values()), "after": sum(new.values()),
            "text": "; ".join(_hygiene_text(row) for row in rows
                              if row["before"] != row["after"] or row["change"] != "same")
                    or "no count changed"}


def _hygiene_text(row: dict) -> str:
    """One changed count: its values and whether its rate changed beyond the noise."""
    if row["change"] != "same":
        why = f"its rate {row['change']} beyond the noise, p {row['p_holm']:.2g} (Holm)"
    elif not row["tested"]:
        why = "not tested: one scan counts it over no items"
    else:
        why = "within the noise"
    return f"{row['count'].replace('_', ' ')} {row['before']:,} → {row['after']:,} ({why})"


@dimension("gold positions")
def _gold_positions(before: dict, after: dict, b: dict, a: dict, facts: PairFacts) -> dict | None:
    """Splits whose answer positions are significantly unbalanced (MCQ only)."""
    if task_of(before) != "mcq":
        return None
    old_section = McqBaselinesSection.in_results(before)
    new_section = McqBaselinesSection.in_results(after)
    if old_section is None or new_section is None:
        return _missing(old_section, new_section, "multiple-choice rules")
    old = sum(t.significant for t in old_section.gold_position.values())
    new = sum(t.significant for t in new_section.gold_position.values())
    return {"status": direction(old, new), "before": old, "after": new,
            "text": f"{old} → {plural(new, 'split')} with unbalanced answer positions"}


@dimension("training items lost")
def _training_items(before: dict, after: dict, b: dict, a: dict, facts: PairFacts) -> dict:
    """Items of the fitting split the after scan no longer has: a cost (worse), never a gain."""
    old, new = b["fitting"], a["fitting"]
    if old["role"] != new["role"] or old["items"] is None or new["items"] is None:
        return _not_compared(f"the scans fit on different splits ({old['role']} → "
                             f"{new['role']})")
    lost = old["items"] - new["items"]
    return {"status": WORSE if lost > 0 else SAME, "before": old["items"], "after": new["items"],
            "text": f"{old['items']:,} → {new['items']:,} "
                    f"{'train items' if old['role'] == 'train' else 'items (cross-validated)'}"
                    + (f" ({lost:,} dropped)" if lost > 0 else "")}


def dimensions(before: dict, after: dict, b: dict, a: dict, facts: PairFacts) -> list[dict]:
    """Every registered dimension that applies: ``{name, status, before, after, text}``."""
    rows = []
    for name, func in DIMENSIONS.items():
        row = func(before, after, b, a, facts)
        if row is not None:
            rows.append({"name": name, **row})
    return rows


def overall_status(dims: list[dict], protocols_differ: bool = False) -> tuple[str, str]:
    """The overall status and its headline, led by the conclusion (module docstring)."""
    by_name = {d["name"]: d for d in dims}
    conclusion = by_name["conclusion"]
    better = [d["name"] for d in dims if d["status"] == BETTER and d["name"] != "conclusion"]
    worse = [d["name"] for d in dims if d["status"] == WORSE and d["name"] != "conclusion"]
    if conclusion["status"] == BETTER:
        status = "mixed" if worse else "improved"
    elif conclusion["status"] == WORSE:
        status = "mixed" if better else "worsened"
    elif conclusion["after"] == LEAKAGE and not worse:
        status = "still_leaking" if better else "unchanged"
    else:
        status = ("mixed" if better and worse else "improved" if better else
                  "worsened" if worse else "unchanged")
    old, new = (CONCLUSION_TEXT[conclusion[k]].lower() for k in ("before", "after"))
    parts = [f"the conclusion {'stays ' + new if old == new else f'went from {old} to {new}'}"]
    if better:
        parts.append("better: " + ", ".join(better))
    if worse:
        parts.append("worse: " + ", ".join(worse))
    if status in ("improved", "still_leaking"):
        parts.append("nothing got worse")
    elif status == "unchanged":
        parts.append("no other change beyond the noise of the scans")
    headline = f"{STATUS_TEXT[status]}: {'; '.join(parts)}."
    if protocols_differ:
        headline += " The two scans used different protocols (see the warning)."
    return status, headline
