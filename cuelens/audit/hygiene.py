"""Data hygiene's ``hygiene`` section of results.json: duplicates, train/test overlap, mirrored
pairs and label-noise candidates, as rows and sentences (:func:`hygiene_section`; ``warnings``
are plain sentences, values for the caller to show), from the findings that
:mod:`cuelens.audit.streamed_hygiene` counts. What each count means and the job of each hygiene
module: docs/data-hygiene.md ("Data hygiene") and docs/methods.md §11.
"""

from __future__ import annotations

from collections.abc import Mapping

from cuelens.audit.hygiene_counts import Keyed, OverlapFindings, Ref, SplitFindings, example_refs
from cuelens.audit.near_duplicates import NEAR_THRESHOLD, NUM_PERM
from cuelens.audit.results import HygieneSection, OverlapRow, SplitHygiene
from cuelens.data.dataset import Split, Task
from cuelens.data.display import cluster_end
from cuelens.wording import plural

TEXT_CHARS = 240


def clip(text: str, limit: int = TEXT_CHARS) -> str:
    """``text``, or its first words within ``limit`` characters followed by "…" (cut inside a
    word only when the first word alone is longer: Thai, Chinese; then between whole grapheme
    clusters, never between a letter and its combining marks nor inside an emoji or a
    flag)."""
    if len(text) <= limit:
        return text
    end = cluster_end(text, limit - 1)
    space = text.rfind(" ", 0, end) if not text[end].isspace() else end
    if space > 0:
        end = space
    return text[:end].rstrip() + "…"


def describe(role: str, split: Split, i: int) -> dict:
    """Item ``i`` of ``split`` as an example shows it."""
    shown = split.hypotheses[i] if split.task == Task.NLI else " / ".join(split.choices[i])
    return {"split": role, "id": split.ids[i], "line": split.lines[i],
            "text": clip(f"{split.premise_context(i)} → {shown}")}


def _example(shown: Mapping[Ref, dict], kind: str | None, item: Ref, other: Ref) -> dict:
    """An example pair: the first item as :func:`describe` gives it, the other (``other``) with
    its text too."""
    row = {**shown[item], "other": {key: shown[other][key]
                                    for key in ("split", "id", "line", "text")}}
    return {**row, "kind": kind} if kind else row


def hygiene_section(keyed: dict[str, Keyed], found: list[SplitFindings],
                    overlaps: list[OverlapFindings], cross_validated: bool,
                    shown: Mapping[Ref, dict],
                    names: Mapping[str, str] | None = None) -> HygieneSection:
    """The ``hygiene`` section of results.json from the :func:`findings`, with each example item
    as ``shown[role, item]`` (:func:`describe`); ``names``: how the warnings name a split role
    (e.g. "train" → "dev.jsonl (used as train)"; default: the role)."""
    splits = {f.role: SplitHygiene(**f.counts()) for f in found}
    overlap = [OverlapRow(**o.row()) for o in overlaps]
    sampled = {role: len(k.sample.items) for role, k in keyed.items()
               if len(k.sample.items) < k.items}
    return HygieneSection(
        near_threshold=NEAR_THRESHOLD, num_perm=NUM_PERM, splits=splits, overlap=overlap,
        examples={name: [_example(shown, *ref) for ref in refs]
                  for name, refs in example_refs(found, overlaps).items()},
        near_sample=sampled or None,
        warnings=_warnings(splits, overlap, sampled, cross_validated, names or {}))


def _warnings(splits: dict[str, SplitHygiene], overlap: list[OverlapRow],
              sampled: dict[str, int], cross_validated: bool,
              names: Mapping[str, str]) -> list[str]:
    out = []
    for row in overlap:
        if row.exact or row.near:
            out.append(f"the evaluation split ({names.get(row.eval, row.eval)}) shares "
                       f"{row.exact:,} exact and {plural(row.near, 'near-duplicate item')} with "
                       f"the fitting split ({names.get(row.fit, row.fit)}), "
                       f"{100 * row.fraction:.1f}% of its {plural(row.eval_items, 'item')}: "
                       "scores on it are inflated by memorisation")
    for role, counts in splits.items():
        name = names.get(role, role)
        if counts.duplicate_items:
            kept = " (cross-validation keeps copies in one fold)" if cross_validated else ""
            out.append(f"{name}: "
                       f"{plural(counts.duplicate_items, 'redundant exact duplicate item')} "
                       f"in {plural(counts.duplicate_groups, 'group')}{kept}")
        if counts.label_conflict_groups:
            out.append(f"{name}: {plural(counts.label_conflict_groups, 'group')} of identical "
                       f"inputs {'carries' if counts.label_conflict_groups == 1 else 'carry'} "
                       f"different labels ({plural(counts.label_conflict_items, 'item')}; "
                       "label-noise candidates)")
    for role, size in sampled.items():
        out.append(f"{names.get(role, role)}: near-duplicate counts come from a random sample "
                   f"of {size:,} of its {plural(splits[role].items, 'item')} (near overlap: "
                   "sampled evaluation items against sampled fitting items); exact counts "
                   "cover every item")
    return out
