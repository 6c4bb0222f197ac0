"""What to do next: concrete steps derived from a scan's findings (docs/data-hygiene.md).

:func:`next_steps` reads a results dict (leakage verdict, significant cues, easy/hard split,
hygiene) and returns ``{"action", "why"}`` steps, most important first. Each rule
fires only on a finding it can name, so a clean dataset gets a short list. ICQ feature cues
carry no significance test, so they give no advice of their own.
"""

from __future__ import annotations

from cuelens.audit.examples import sort_value
from cuelens.audit.uncertainty import MILD, SIGNIFICANT
from cuelens.data.dataset import Task

TOP_CUES = 3  # per label
POSITION_D = 0.05  # MCQ answer-position baseline this far above chance is worth fixing


def strongest_cues(cues: list[dict], per_label: int = TOP_CUES) -> dict[str, list[str]]:
    """Per label, the significant cues with the largest z (ties: support, token)."""
    by_label: dict[str, list[dict]] = {}
    for cue in cues:
        if cue["significant"]:
            by_label.setdefault(cue["label"], []).append(cue)
    return {label: [c["token"] for c in sorted(
        group, key=lambda c: (-sort_value(c["metrics"]["z"]), -c["count"], c["token"]))[:per_label]]
        for label, group in sorted(by_label.items())}


def _points(x: float) -> str:
    return f"{100 * x:+.1f} points"


def next_steps(results: dict) -> list[dict]:
    """Steps for the dataset's author, each ``{"action": ..., "why": ...}``."""
    steps = []
    leak, eh = results["leakage"], results["easy_hard"]
    best, verdict = leak["best"], leak.get("verdict")
    hygiene = results.get("hygiene", {})
    mcq = results["dataset"]["task"] == Task.MCQ
    ci = f"D = {_points(best['D'])}, 95% CI [{_points(best['ci_low'])}, " \
         f"{_points(best['ci_high'])}]" if "ci_low" in best else f"D = {_points(best['D'])}"
    for row in hygiene.get("overlap", []):
        if row["exact"] or row["near"]:
            steps.append({"action": f"deduplicate: remove the {row['exact'] + row['near']} "
                                    f"{row['eval']} item(s) that also occur in {row['fit']}",
                          "why": f"{row['exact']} exact and {row['near']} near-duplicate copies "
                                 "reward memorisation, not understanding"})
    for role, counts in hygiene.get("splits", {}).items():
        if counts["duplicate_items"]:
            steps.append({"action": f"deduplicate {role}: drop {counts['duplicate_items']} "
                                    "redundant exact copies",
                          "why": "copies weigh some items several times in training and "
                                 "evaluation"})
        if counts["label_conflict_groups"]:
            steps.append({"action": f"review {counts['label_conflict_items']} label-noise "
                                    f"candidates in {role}",
                          "why": "identical inputs carry different labels"})
    if verdict in (SIGNIFICANT, MILD):
        cues = strongest_cues(results.get("cues", []))
        if cues:
            named = "; ".join(f"{label}: {', '.join(tokens)}" for label, tokens in cues.items())
            steps.append({"action": f"remove or rebalance the top cues ({named})",
                          "why": f"the labels can be guessed from these words alone ({ci})"})
        if not eh.get("chance_level") and eh["hard"]:
            steps.append({"action": f"use the {eh['hard']} hard items (hard.jsonl) as the test "
                                    "set, or report accuracy on them separately",
                          "why": "a cue-only classifier fails on them, so they measure more "
                                 "than cue matching"})
        pairs = sum(c.get("mirrored_pairs", c.get("contrastive_pairs", 0))
                    for c in hygiene.get("splits", {}).values())
        if not pairs:
            steps.append({"action": "collect contrastive items: " + (
                "mirror each question so every choice is once right and once wrong"
                if mcq else "minimally edit hypotheses so the same words appear under every "
                            "label"),
                "why": "the dataset has no mirrored/contrastive pairs, which neutralise "
                       "word cues by construction"})
    for baseline in leak.get("baselines", []):
        if baseline["name"] == "answer position" and baseline["D"] > POSITION_D:
            steps.append({"action": "shuffle the answer positions",
                          "why": f"always picking the most common position scores "
                                 f"{_points(baseline['D'])} above chance"})
    finding = results.get("cue_finding", {})
    if verdict not in (SIGNIFICANT, MILD) and finding.get("n_significant"):
        named = ", ".join(t["token"] for t in finding["top"][:2 * TOP_CUES])
        steps.append({"action": f"review the {finding['n_significant']} significant cue "
                                f"word(s) ({named}) before they grow",
                      "why": f"each is significant on its own and together they occur in "
                             f"{100 * finding['share_items']:.1f}% of the evaluated items, but "
                             f"a cue-only model does not beat the prior-matched baseline ({ci})"})
    if not steps:
        steps.append({"action": "no change needed for word cues; probe your model "
                                "(audit probe) to check what it relies on",
                      "why": f"no word is a significant cue and no cue-only model beats the "
                             f"prior-matched baseline ({ci})"})
    return steps
