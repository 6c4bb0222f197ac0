"""``audit compare``: what changed between two scans of (versions of) a dataset, as a ``compare``
result (docs/results-schema.md; docs/data-hygiene.md, "What to do next, and `audit compare`")."""

from __future__ import annotations

from pathlib import Path

from cuelens.audit.compare_status import PairFacts, dimensions, direction, overall_status
from cuelens.audit.conclusion import conclusion_of, d_points
from cuelens.audit.cue_change import cue_changes, significant_cues
from cuelens.audit.examples import sort_value
from cuelens.audit.hygiene_change import hygiene_changes, hygiene_rates
from cuelens.audit.results import (ConfigSection, CueRow, DatasetSummary, EasyHardSection,
                                   LeakageSection, McqBaselinesSection, SegmentationSection,
                                   about_a_model, typed_reads)
from cuelens.errors import UserError

MAX_LISTED = 50
PROTOCOL = ("metric", "min_count", "ngrams", "alpha", "folds", "iterations", "seed", "z_prior",
            "include_premise", "in_sample_features", "max_fit_items", "flag_threshold",
            "margin", "min_label_items", "statistics")
VERDICT_ORDER = {"below chance": 0, "chance": 0, "mild": 1, "significant": 2}
HYGIENE_DIRECTION = {"grew": "worse", "fell": "better", "same": "same"}  # a count's rate


def load_scan_results(path: str | Path, command: str = "compare") -> dict:
    """A scan's results dict from its output directory or results.json, checked against the
    results schema: a malformed, edited or foreign file (another result kind, a probe's output)
    is one :class:`UserError` line naming the file and the field; ``command`` names the
    command in it."""
    from cuelens.reports.schema import load_results, validate_results

    path = Path(path)
    file = path / "results.json" if path.is_dir() else path
    results = load_results(file)
    takes = f"`audit {command}` takes the output of `audit scan`"
    if "kind" in results:
        raise UserError(f"not an audit scan result (a {results['kind']!s:.40} result); {takes}",
                        path=str(file))
    if about_a_model(results):
        raise UserError(f"this is the output of `audit probe`; {takes} (a scan directory)",
                        path=str(file))
    validate_results(results, source=str(file))
    if "leakage" not in results and command != "card":  # a card states what was measured
        raise UserError("this scan has no word-cue statistics (no leakage section, e.g. MCQ "
                        "items with different numbers of choices): nothing to compare",
                        path=str(file))
    return results


def _hygiene_counts(results: dict) -> dict | None:
    rates = hygiene_rates(results)
    return None if rates is None else {key: count for key, (count, _) in rates.items()}


def _side(results: dict, source: str) -> dict:
    """One scan's row of the comparison; a section the scan lacks is None (not compared)."""
    leak, eh = LeakageSection.required_in(results), EasyHardSection.in_results(results)
    best = leak.best
    conclusion = conclusion_of(results)
    data = DatasetSummary.required_in(results)
    role = data.fitting_role
    fitted = data.splits.get(role)
    return {"source": source, "name": data.name,
            "metric": best["metric"], "aggregator": best["aggregator"],
            "accuracy": best["accuracy"], "majority": leak.majority, "D": best["D"],
            **({"ci_low": best["ci_low"], "ci_high": best["ci_high"]} if "ci_low" in best else {}),
            "verdict": leak.headline_verdict,
            "conclusion": {"status": conclusion.status, "reason": conclusion.reason,
                           "margin": conclusion.margin},
            "hard_fraction": eh.hard_fraction if eh else None,
            "easy_hard_at_chance": bool(eh.chance_level) if eh else None,
            "n_significant_cues": len(significant_cues(results)) if "cues" in results else None,
            "hygiene": _hygiene_counts(results),
            "fitting": {"role": role,
                        "items": fitted.items if fitted is not None else None}}


def protocol(results: dict) -> dict:
    """The settings of a scan that make its numbers comparable with another's: the evaluation,
    the labels (a cue is a word and a label), the config's (``statistics`` ``exact`` where a
    scan records none) and the segmenter used."""
    config = ConfigSection.of(results)
    dataset = DatasetSummary.required_in(results)
    evaluation = "cross-validated" if dataset.cross_validated else "train/test"
    settings = {"evaluation": evaluation, "labels": ", ".join(dataset.label_names),
                **{k: getattr(config, k) for k in PROTOCOL if getattr(config, k) is not None}}
    settings.setdefault("statistics", "exact")
    segmentation = SegmentationSection.in_results(results)
    if segmentation is not None:
        settings["segmenter"] = segmentation.name
    return settings


def _protocol(before: dict, after: dict) -> dict:
    b, a = protocol(before), protocol(after)
    differences = [{"setting": key, "before": b.get(key), "after": a.get(key)}
                   for key in dict.fromkeys([*b, *a]) if b.get(key) != a.get(key)]
    return {"before": b, "after": a, "differences": differences}


def _cue_rows(cues: list[CueRow]) -> list[dict]:
    ranked = sorted(cues, key=lambda c: (-sort_value(c.metrics["z"]), c.token, c.label))
    return [{"token": c.token, "label": c.label, "count": c.count, "z": c.metrics["z"]}
            for c in ranked[:MAX_LISTED]]


def _kept_rows(old: dict[tuple[str, str], CueRow],
               new: dict[tuple[str, str], CueRow]) -> list[dict]:
    """:func:`_cue_rows` of the cues significant in both scans, each with its z before."""
    return [{**row, "z_before": old[row["token"], row["label"]].metrics["z"]}
            for row in _cue_rows([new[key] for key in old.keys() & new.keys()])]


def format_value(value, unit: str) -> str:
    """A value of a ``changes`` row as the page and the terminal show it."""
    if value is None:
        return "—"
    if unit == "points":
        return d_points(value)
    if unit == "%":
        return f"{100 * value:.1f}%"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _row(name: str, before, after, unit: str, way: str) -> dict:
    return {"measure": name, "before": before, "after": after, "unit": unit, "direction": way}


def _rule_rows(before: dict, after: dict) -> list[dict]:
    """MCQ rules (and gold positions per split) of both scans: better when a significant
    artifact is gone, worse when one appears."""
    rows = []
    sections = McqBaselinesSection.in_results(before), McqBaselinesSection.in_results(after)
    old, new = ({r.name: r for r in s.rows} if s else {} for s in sections)
    for name in dict.fromkeys([*old, *new]):
        b, a = old.get(name), new.get(name)
        way = "same" if b is None or a is None else direction(b.significant, a.significant)
        rows.append({**_row(f"rule “{name}” D", b and b.D, a and a.D, "points", way),
                     "significant": [b and b.significant, a and a.significant]})
    old_pos, new_pos = (s.gold_position if s else {} for s in sections)
    for role in dict.fromkeys([*old_pos, *new_pos]):
        before_test, after_test = old_pos.get(role), new_pos.get(role)
        if before_test is None or after_test is None:
            continue
        rows.append({**_row(f"answer positions ({role}): most common share",
                            (before_test.most_common or {}).get("share"),
                            (after_test.most_common or {}).get("share"), "%",
                            direction(before_test.significant, after_test.significant)),
                     "significant": [before_test.significant, after_test.significant]})
    return rows


def _changes(b: dict, a: dict, before: dict, after: dict, facts: PairFacts,
             cue_direction: str) -> list[dict]:
    """Every measure both scans have, with the direction of its change (the significant cues':
    their dimension's status; a hygiene count's: its rate's change beyond the noise)."""
    noise = facts.cis_overlap or "ci_low" not in b or "ci_low" not in a  # no clear change in D
    rows = [_row("cue leakage D", b["D"], a["D"], "points",
                 "same" if noise else direction(b["D"], a["D"])),
            _row("verdict", b["verdict"], a["verdict"], "",  # D's verdict: D's noise too
                 "same" if noise else direction(VERDICT_ORDER.get(b["verdict"], 1),
                                                VERDICT_ORDER.get(a["verdict"], 1)))]
    if b["hard_fraction"] is not None and a["hard_fraction"] is not None:
        rows.append(_row("hard fraction", b["hard_fraction"], a["hard_fraction"], "%",
                         "same" if b["easy_hard_at_chance"] or a["easy_hard_at_chance"] else
                         direction(b["hard_fraction"], a["hard_fraction"],
                                   lower_is_better=False)))
    if b["n_significant_cues"] is not None and a["n_significant_cues"] is not None:
        rows.append(_row("significant cues", b["n_significant_cues"], a["n_significant_cues"],
                         "cues", cue_direction))
    if facts.hygiene_changes is not None:
        rows += [_row(row["count"].replace("_", " "), row["before"], row["after"], "items",
                      HYGIENE_DIRECTION[row["change"]])
                 for row in facts.hygiene_changes["counts"]]
    return rows + _rule_rows(before, after)


@typed_reads()
def compare_scans(before: dict, after: dict, before_source: str = "before",
                  after_source: str = "after") -> dict:
    """The ``compare`` result of two scan results dicts: a status per dimension and overall
    (:mod:`cuelens.audit.compare_status`), every measure both have, the cues gained, lost and
    kept (none when either scan has no cue section: not compared)."""
    task, after_task = (DatasetSummary.required_in(side).task for side in (before, after))
    if task != after_task:
        raise UserError(f"cannot compare a {task.upper()} scan with a {after_task.upper()} scan")
    cues_compared = "cues" in before and "cues" in after
    old, new = (significant_cues(before), significant_cues(after)) if cues_compared else ({}, {})
    gained = [new[k] for k in new.keys() - old.keys()]
    lost = [old[k] for k in old.keys() - new.keys()]
    b, a = _side(before, before_source), _side(after, after_source)
    overlap = bool("ci_low" in b and "ci_low" in a
                   and b["ci_low"] <= a["ci_high"] and a["ci_low"] <= b["ci_high"])
    facts = PairFacts(overlap, cue_changes(before, after) if cues_compared else None,
                      hygiene_changes(before, after))
    proto = _protocol(before, after)
    dims = dimensions(before, after, b, a, facts)
    status, headline = overall_status(dims, bool(proto["differences"]))
    warnings = []
    if proto["differences"]:
        named = "; ".join(f"{d['setting']} {d['before']} → {d['after']}"
                          for d in proto["differences"])
        warnings.append(f"the scans used different protocols ({named}): a change in D or in the "
                        "cues may come from the protocol, not from the data")
    return {"kind": "compare", "schema_version": before.get("schema_version", "1.0"),
            "task": task, "before": b, "after": a,
            "delta_D": round(a["D"] - b["D"], 6), "cis_overlap": overlap,
            "cues_compared": cues_compared,
            "cues_gained": _cue_rows(gained), "cues_lost": _cue_rows(lost),
            "cues_kept": _kept_rows(old, new),
            "n_cues_gained": len(gained), "n_cues_lost": len(lost),
            "n_cues_kept": len(old.keys() & new.keys()),
            "status": status, "headline": headline, "dimensions": dims,
            "cue_changes": facts.cue_changes, "hygiene_changes": facts.hygiene_changes,
            "changes": _changes(b, a, before, after, facts, next(
                (d["status"] for d in dims if d["name"] == "significant cues"), "same")),
            "protocol": proto, "warnings": warnings}
