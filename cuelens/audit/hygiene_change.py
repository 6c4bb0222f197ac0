"""Which data-hygiene counts of two scans changed beyond their noise (docs/methods.md §18): each
count's rate over what it is counted over, before against after, with Fisher's exact test, Holm
over the counts. Comparing the counts themselves called two random halves of one file different
whenever a count grew by one (1 → 2 exact copies)."""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from cuelens.audit.results import HygieneSection
from cuelens.audit.subsets import mark_holm
from cuelens.errors import UserError

#: the counts compared, each over: the split's items, the pairs of its (sampled) items, the
#: evaluated items of the fitting/evaluated overlap
COUNTS = ("duplicate_items", "near_duplicate_pairs", "label_conflict_items", "overlap_items")
METHOD = ("each count's rate over what it is counted over (items; pairs of items for near "
          "duplicates; evaluated items for overlap), Fisher's exact test (two-sided) per count, "
          "Holm at 5% over the counts")
GREW, FELL, SAME = "grew", "fell", "same"


def hygiene_rates(results: dict) -> dict[str, tuple[int, int]] | None:
    """``{count: (value, over)}`` summed over the scan's splits (``over``: items; near-duplicate
    pairs: the pairs of the items searched, a split's ``near_sample`` when it was sampled;
    overlap: the evaluated items); ``None`` when the scan has no hygiene section."""
    hygiene = HygieneSection.in_results(results)
    if hygiene is None:
        return None
    sample = hygiene.near_sample or {}
    items = sum(s.items for s in hygiene.splits.values())
    searched = [sample.get(role, s.items) for role, s in hygiene.splits.items()]
    return {
        "duplicate_items": (sum(s.duplicate_items for s in hygiene.splits.values()), items),
        "near_duplicate_pairs": (sum(s.near_duplicate_pairs for s in hygiene.splits.values()),
                                 sum(n * (n - 1) // 2 for n in searched)),
        "label_conflict_items": (sum(s.label_conflict_items for s in hygiene.splits.values()),
                                 items),
        "overlap_items": (sum(r.exact + r.near for r in hygiene.overlap),
                          sum(r.eval_items for r in hygiene.overlap))}


def fisher_p(old: int, old_over: int, new: int, new_over: int) -> float:
    """Fisher's exact two-sided p of ``old`` of ``old_over`` against ``new`` of ``new_over``:
    the chance, given the total, of a before count as unlikely as ``old`` or less (scipy's
    definition, relative tolerance 1e-7). The hypergeometric probabilities come from their
    ratios, exact in floating point at any size: scipy's ``fisher_exact`` and ``hypergeom`` ran
    for over ten minutes on 0 → 3 near-duplicate pairs among 2·10¹⁰ pairs."""
    total = old + new
    low, high = max(0, total - new_over), min(total, old_over)
    x = np.arange(low, high, dtype=np.float64)  # each step x → x + 1
    steps = (np.log(old_over - x) + np.log(total - x)
             - np.log(x + 1) - np.log(new_over - total + x + 1))
    log_p = np.concatenate([[0.0], np.cumsum(steps)])
    log_p -= logsumexp(log_p)
    return float(min(1.0, np.exp(log_p[log_p <= log_p[old - low] + 1e-7]).sum()))


def _test(count: str, before: tuple[int, int], after: tuple[int, int]) -> dict:
    """One count's row: Fisher's exact p of its two rates (1 when a side counts over nothing)
    and the direction of the rate."""
    (old, old_over), (new, new_over) = before, after
    tested = old_over > 0 and new_over > 0
    p = fisher_p(old, old_over, new, new_over) if tested and old + new else 1.0
    rise = new * old_over - old * new_over  # the sign of new/new_over − old/old_over
    return {"count": count, "before": old, "after": new, "over_before": old_over,
            "over_after": new_over, "p_value": float(f"{p:.6g}"), "tested": tested,
            "rate": GREW if rise > 0 else FELL if rise < 0 else SAME}


def hygiene_changes(before: dict, after: dict) -> dict | None:
    """``{method, counts}``: per count ``{count, before, after, over_before, over_after,
    p_value, p_holm, tested, change}``, ``change`` ``grew``/``fell`` when its rate did so beyond the
    noise (Holm-adjusted p < 5%), else ``same``; ``None`` when a scan has no hygiene section."""
    old, new = hygiene_rates(before), hygiene_rates(after)
    if old is None or new is None:
        return None
    for side, rates in (("before", old), ("after", new)):
        for count, (value, over) in rates.items():
            if value > over:
                raise UserError(f"the {side} scan's hygiene counts {value:,} "
                                f"{count.replace('_', ' ')} among {over:,} (an edited results "
                                "file?): its hygiene cannot be compared")
    rows = mark_holm([_test(count, old[count], new[count]) for count in COUNTS])
    counts = [{**{k: v for k, v in row.items() if k not in ("significant", "rate")},
               "change": row["rate"] if row["significant"] else SAME} for row in rows]
    return {"method": METHOD, "counts": counts}
