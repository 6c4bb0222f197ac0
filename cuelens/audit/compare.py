"""``audit compare``: what changed between two scans of (versions of) a dataset.

:func:`compare_scans` takes two scan results (e.g. before and after removing cues) and returns a
result of kind ``compare`` (docs/results-schema.md): the headline D of each with its 95% CI and
verdict, the change in D, the hard fraction, the hygiene counts, and the significant cues
gained and lost (a cue is a (token, label) pair; significance as in each scan's own table).
:func:`load_scan_results` accepts a scan output directory or its results.json.
"""

from __future__ import annotations

from pathlib import Path

from cuelens.audit.examples import sort_value
from cuelens.errors import UserError

MAX_LISTED = 50
HYGIENE_COUNTS = ("duplicate_items", "near_duplicate_pairs", "label_conflict_items")


def load_scan_results(path: str | Path) -> dict:
    """A scan's results dict from its output directory or results.json (one-line errors)."""
    from cuelens.reports import load_results

    path = Path(path)
    file = path / "results.json" if path.is_dir() else path
    results = load_results(file)
    if not isinstance(results, dict) or "leakage" not in results or "kind" in results:
        raise UserError("not an audit scan result (no leakage section)", path=str(file))
    return results


def _significant(results: dict) -> dict[tuple[str, str], dict]:
    return {(c["token"], c["label"]): c for c in results.get("cues", []) if c["significant"]}


def _side(results: dict, source: str) -> dict:
    leak, eh = results["leakage"], results["easy_hard"]
    best = leak["best"]
    hygiene = results.get("hygiene", {})
    counts = {key: sum(s[key] for s in hygiene.get("splits", {}).values())
              for key in HYGIENE_COUNTS}
    counts["overlap_items"] = sum(r["exact"] + r["near"] for r in hygiene.get("overlap", []))
    return {"source": source, "name": results["dataset"]["name"],
            "metric": best["metric"], "aggregator": best["aggregator"],
            "accuracy": best["accuracy"], "majority": leak["majority"], "D": best["D"],
            **({"ci_low": best["ci_low"], "ci_high": best["ci_high"]} if "ci_low" in best else {}),
            "verdict": leak.get("verdict", "significant" if leak["flagged"] else "mild"),
            "hard_fraction": eh["hard_fraction"],
            "n_significant_cues": len(_significant(results)), "hygiene": counts}


def _cue_rows(cues: list[dict]) -> list[dict]:
    ranked = sorted(cues, key=lambda c: (-sort_value(c["metrics"]["z"]), c["token"], c["label"]))
    return [{"token": c["token"], "label": c["label"], "count": c["count"],
             "z": c["metrics"]["z"]} for c in ranked[:MAX_LISTED]]


def compare_scans(before: dict, after: dict, before_source: str = "before",
                  after_source: str = "after") -> dict:
    """The ``compare`` result of two scan results dicts."""
    if before["dataset"]["task"] != after["dataset"]["task"]:
        raise UserError(f"cannot compare a {before['dataset']['task'].upper()} scan with a "
                        f"{after['dataset']['task'].upper()} scan")
    old, new = _significant(before), _significant(after)
    gained = [new[k] for k in new.keys() - old.keys()]
    lost = [old[k] for k in old.keys() - new.keys()]
    b, a = _side(before, before_source), _side(after, after_source)
    overlap_ci = ("ci_low" in b and "ci_low" in a
                  and b["ci_low"] <= a["ci_high"] and a["ci_low"] <= b["ci_high"])
    return {"kind": "compare", "schema_version": before.get("schema_version", "1.0"),
            "task": before["dataset"]["task"], "before": b, "after": a,
            "delta_D": round(a["D"] - b["D"], 6), "cis_overlap": bool(overlap_ci),
            "cues_gained": _cue_rows(gained), "cues_lost": _cue_rows(lost),
            "n_cues_gained": len(gained), "n_cues_lost": len(lost),
            "n_cues_kept": len(old.keys() & new.keys())}
