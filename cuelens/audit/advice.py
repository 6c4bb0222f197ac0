"""What to do next: at most one step per ranked finding, in the findings' order, so the advice never
contradicts the page (which finding gives which step: docs/data-hygiene.md, "What to do next")."""

from __future__ import annotations

from collections.abc import Callable

from cuelens.audit.conclusion import INCONCLUSIVE, LEAKAGE, NO_LEAKAGE, POSITIVE_VERDICTS, \
    Conclusion, conclude, conclusion_of, margin_of, with_ci
from cuelens.audit.examples import top_cues_by_label
from cuelens.audit.findings import (Finding, findings, is_preference, item_noun,
                                     leakage_verdict, split_file, split_name, task_of)
from cuelens.audit.preference import FORMATS, POSITION
from cuelens.audit.results import (CueRow, EasyHardSection, LLMProbeSection, PreferenceSection,
                                   ProbeSection, ScanSections, SubsetsSection, about_a_model,
                                   model_name, typed_reads)
from cuelens.data.dataset import Task
from cuelens.data.display import shown
from cuelens.registry import Registry
from cuelens.wording import plural

TOP_CUES = 3  # per label


def _named_cues(results: dict) -> str:
    """Per label, the :data:`TOP_CUES` significant cues with the largest z (ties: support,
    token), as sentences name them (:func:`~cuelens.data.display.shown`): ``label: word, word;
    label: …``; empty without significant cues."""
    significant = [cue for cue in CueRow.rows_in(results) if cue.significant]
    return "; ".join(f"{shown(label)}: {', '.join(shown(c.token) for c in group)}"
                     for label, group in top_cues_by_label(significant, TOP_CUES, "z").items())


def effect_text(f: Finding) -> str:
    """A finding's effect: ``+23.0 points (95% CI +21.5 to +24.6)``, ``2 items, 0.02%``; empty
    without one."""
    if f.effect is None:
        return ""
    if f.unit == "points":
        value = f"{f.effect:+.1f} points"
    else:
        value = f"{f.effect:.{1 if abs(f.effect) >= 0.1 else 2}f}{f.unit}"
        if f.unit == "%" and f.items is not None:
            value = f"{plural(f.items, 'item')}, {value}"
    return with_ci(value, f.ci_low, f.ci_high, f.level)


Step = dict


def _in(role: str | None, results: dict) -> str:
    """" in the train split" (" in dev.jsonl (used as train)" when the role was inferred:
    :func:`~cuelens.audit.findings.split_file`), or nothing for a single-file dataset."""
    if role in (None, "all"):
        return ""
    shown = split_file(results, role)
    return f" in the {role} split" if shown == role else f" in {shown}"


Advisor = Callable[[Finding, dict], "Step | None"]
ADVISORS: Registry[Advisor] = Registry("advisor")  # finding code → its step-maker
advises = ADVISORS.register  # registers the step-maker of findings with that ``code``


def _step(f: Finding, action: str, why: str = "", **extra) -> Step:
    """A step acting on ``f``; ``why`` defaults to its title, followed by its effect."""
    why = why or f.title.rstrip(".")
    effect = effect_text(f)
    return {"action": action, "why": f"{why}: {effect}" if effect else why,
            "section": f.section, **extra}


@advises("significant")
@advises("mild")
def _leakage(f: Finding, results: dict) -> Step | None:
    named = _named_cues(results)
    preference = is_preference(results)
    if named:
        action = (f"rebalance the strongest cue words of the responses ({named}): use them as "
                  "often in rejected responses as in chosen ones" if preference
                  else f"remove or rebalance the strongest cue words ({named})")
    else:
        action = ("rebalance the words that mark chosen or rejected responses" if preference
                  else "rebalance the words that point to one label")
    return _step(f, action, "a response-only classifier tells chosen from rejected responses "
                            "by their words, D" if preference
                 else "the labels can be guessed from the words alone, D")


@advises("significant_cues")
def _cues(f: Finding, results: dict) -> Step | None:
    """Significant cue words without a leakage verdict: leakage on their own (docs/methods.md
    §17), so to be removed or rebalanced; with too few items for a conclusion, worth a look before
    they grow (with a leakage verdict, the leakage step already names them)."""
    if leakage_verdict(results) in POSITIVE_VERDICTS:
        return None
    named = _named_cues(results)
    what = "marks chosen or rejected responses" if is_preference(results) else \
        "points to one label"
    noun = item_noun(results)
    if conclusion_of(results).status == LEAKAGE:  # the words are (part of) the leakage
        return _step(f, f"remove or rebalance the significant cue words ({named})",
                     f"each {what} on its own, and the scan concludes leakage; {noun}s with one")
    return _step(f, f"review the significant cue words ({named}) before they grow",
                 f"each {what} on its own, though a cue-only model does not beat "
                 f"the prior-matched baseline; {noun}s with one")


@advises("easy_share")
def _easy_hard(f: Finding, results: dict) -> Step | None:
    section = EasyHardSection.in_results(results)
    hard = section.hard if section is not None else 0
    if leakage_verdict(results) not in POSITIVE_VERDICTS or not hard:
        return None
    if is_preference(results):
        return _step(f, f"score reward models separately on the pairs of the {hard:,} hard "
                        "responses", "a response-only cue classifier labels the easy responses "
                        "chosen or rejected correctly, so only pairs of hard ones measure more "
                        "than cue matching; easy share", output="hard")
    return _step(f, f"use the {hard:,} hard items as the test set, or report accuracy on them "
                    "separately", "a cue-only classifier answers the easy ones, so only the "
                    "hard ones measure more than cue matching; easy share", output="hard")


RULE_FIXES = {  # MCQ rule → what to change in the data (docs/mcq-artifacts.md)
    **dict.fromkeys(("longest choice", "shortest choice", "longest in words"),
                    "make the wrong choices as long as the right ones"),
    "overlap with question": "write wrong choices that reuse the question's words as often as "
                             "the right ones do",
    "answer position": "shuffle the answer positions",
    "question only": "vary the right answer of questions that repeat",
    "choice-only BoW LR": "rewrite the choices whose words give the answer away (the cue words "
                          "of right and wrong choices)",
}


def _rule_fix(rule: str) -> str:
    return RULE_FIXES.get(rule, f"remove what the rule “{rule}” exploits")


@advises("rule")
def _rule(f: Finding, results: dict) -> Step | None:
    better = "better" if (f.effect or 0) > 0 else "worse"
    return _step(f, _rule_fix(f.subject or ""),
                 f"the rule “{f.subject}” does {better} than chance without reading the "
                 "question, D")


#: preference shortcut → what to change in the pairs (docs/preference.md)
PREFERENCE_FIXES = {
    **dict.fromkeys(("longer (characters)", "longer (tokens)"),
                    "collect rejected responses as long as the chosen ones, or compare models "
                    "with a length-controlled win rate"),
    **{name: f"make “{name}” as common in rejected responses as in chosen ones (or strip it "
             "from both)" for name in FORMATS},
    "apology or refusal": "review the pairs where one response apologises or refuses: if "
                          "refusing is not what the prompt calls for, balance them",
    POSITION: "show the chosen response first in half of the pairs, or judge every pair in "
              "both orders (audit judge)",
}


def _preference_fix(shortcut: str) -> str:
    return PREFERENCE_FIXES.get(shortcut, f"balance “{shortcut}” between chosen and rejected "
                                          "responses")


def _significant_subsets(results: dict, shortcut: str) -> str:
    """" — first in subset a, b": where the subsets table finds ``shortcut`` (else empty)."""
    table = SubsetsSection.in_results(results)
    where = [row["subset"] for row in (table.rows if table is not None else [])
             if row["cells"].get(shortcut, {}).get("significant")]
    return f" — first in {table.field} {', '.join(where)}" if table is not None and where else ""


@advises("preference_shortcut")
@advises("position_effect")
def _preference_shortcut(f: Finding, results: dict) -> Step | None:
    direction = "picks" if (f.effect or 0) > 0 else "misses"
    return _step(f, _preference_fix(f.subject or "")
                 + _significant_subsets(results, f.subject or ""),
                 f"the rule “{f.subject}” {direction} the chosen response more often than a coin "
                 "flip without reading the prompt; win rate − 50%")


def _overall_row_significant(results: dict, shortcut: str) -> bool:
    section = PreferenceSection.in_results(results)
    return section is not None and any(row["shortcut"] == shortcut and row["significant"]
                                       for _, row in section.rows)


@advises("subset_shortcut")
def _subset_shortcut(f: Finding, results: dict) -> Step | None:
    """A shortcut significant in some subsets only (with an overall effect, the overall step
    names the subsets)."""
    if _overall_row_significant(results, f.subject or ""):
        return None
    fix = (_preference_fix if is_preference(results) else _rule_fix)(f.subject or "")
    return _step(f, fix + _significant_subsets(results, f.subject or ""),
                 f"the shortcut “{f.subject}” is concentrated in these subsets; strongest")


@advises("positions")
def _positions(f: Finding, results: dict) -> Step | None:
    return _step(f, f"shuffle the answer positions{_in(f.subject, results)} so each is right "
                    "equally often")


@advises("overlap")
def _overlap(f: Finding, results: dict) -> Step | None:
    item = f"{split_name(f.subject or '')} item"
    items = plural(f.items or 0, item + " that also occurs", item + "s that also occur")
    return _step(f, f"remove the {items} in a fitting split",
                 "copies reward memorisation, not understanding; share")


@advises("label_conflicts")
def _label_conflicts(f: Finding, results: dict) -> Step | None:
    if is_preference(results):
        return _step(f, f"check the pairs of the {plural(f.items or 0, 'response')} that are "
                        f"both chosen and rejected for the same prompt{_in(f.subject, results)}",
                     "the same response is preferred in one pair and rejected in another: the "
                     "annotations disagree or the pairs compare it with responses of different "
                     "quality")
    return _step(f, f"fix the {plural(f.items or 0, 'item')} with label conflicts"
                    f"{_in(f.subject, results)}",
                 "identical inputs carry different labels: one of each group is mislabelled or "
                 "lost the words that tell it apart")


@advises("duplicates")
def _duplicates(f: Finding, results: dict) -> Step | None:
    return _step(f, f"drop the {f.items:,} redundant exact copies{_in(f.subject, results)}",
                 "copies weigh some items several times in training and evaluation")


@advises("near_duplicates")
def _near(f: Finding, results: dict) -> Step | None:
    return _step(f, f"review the {f.items:,} near-duplicate pairs{_in(f.subject, results)} "
                    "(both members are listed)", "near copies with the same answer add little")


def _contrast_step(results: dict, fs: list[Finding]) -> Step | None:
    """Collect mirrored / contrastive items when word cues leak and the data has none."""
    leaks = any(f.kind == "leakage" and f.code in POSITIVE_VERDICTS for f in fs)
    constructed = any(f.code in ("mirrored_pairs", "contrastive_pairs") for f in fs)
    if not leaks or constructed:
        return None
    if is_preference(results):
        return {"action": "collect contrastive pairs: rejected responses that are minimal edits "
                          "of the chosen ones (same words, length and formatting; worse content)",
                "why": "pairs whose responses differ only in quality neutralise word, length "
                       "and formatting cues by construction", "section": "hygiene"}
    mcq = task_of(results) == Task.MCQ
    return {"action": "collect contrastive items: " + (
        "mirror each question so every choice is once right and once wrong" if mcq
        else "minimally edit hypotheses so the same words appear under every label"),
        "why": "the dataset has no mirrored/contrastive pairs, which neutralise word cues by "
               "construction", "section": "hygiene"}


# --------------------------------------------------------------------------------- probe
@advises("at_chance")
def _at_chance(f: Finding, results: dict) -> Step | None:
    return _step(f, f"check {f.subject} before reading its cue tests: train it longer or "
                    "check that its predictions match the test items")


@advises("untrained_head")
def _untrained(f: Finding, results: dict) -> Step | None:
    return _step(f, f"fine-tune {f.subject} on the task first (audit train), then probe the "
                    "trained model")


@advises("relies_on_cue")
def _relies(f: Finding, results: dict) -> Step | None:
    return _step(f, f"retrain {model_name(results)} on data where “{f.subject}” appears equally "
                    "under every label (audit augment), and report its accuracy on items "
                    "without the cue")


@advises("easy_hard_gap")
def _gap(f: Finding, results: dict) -> Step | None:
    probe = ProbeSection.in_results(results)
    hard = ((probe and probe.easy_hard) or {}).get("hard_accuracy")
    return _step(f, f"report {f.subject}'s accuracy on the hard items"
                    + (f" ({100 * hard:.1f}%)" if hard is not None else "")
                    + " beside its overall accuracy")


@advises("position_bias")
def _position_bias(f: Finding, results: dict) -> Step | None:
    return _step(f, f"average {f.subject}'s answers over rotations of the choices "
                    "(audit rotate) before reporting its accuracy")


@advises("prompt_relies_on_cue")
def _prompt_relies(f: Finding, results: dict) -> Step | None:
    llm_probe = LLMProbeSection.in_results(results)
    least = llm_probe and llm_probe.least_cue_reliant
    better = f"prompt “{least}”" if least and least != f.subject else "a calibrated prompt"
    return _step(f, f"prefer {better} to “{f.subject}” with {model_name(results)}")


@advises("unreadable_answers")
def _unreadable(f: Finding, results: dict) -> Step | None:
    return _step(f, f"constrain the answer format of prompt “{f.subject}” or score its "
                    "choices instead of generating, so unreadable answers stop counting as "
                    "wrong")


def _closing(results: dict, fs: list[Finding], conclusion: Conclusion | None = None) -> Step:
    """The one step of a result without any other: "no change needed" only when the scan
    concludes no meaningful leakage."""
    if about_a_model(results):
        name = model_name(results)
        least = next((f.subject for f in fs if f.code == "least_cue_reliant"), None)
        return {"action": f"use prompt “{least}” with {name}" if least else
                f"stress-test {name} beyond word cues (audit stress) before relying on its "
                "accuracy", "why": f"no tested cue changes {name}'s accuracy significantly",
                "section": "llm_probe" if least else "probe"}
    follow = ("test a reward model or an LLM judge on these pairs, in both orders (audit judge)"
              if is_preference(results) else
              "probe a model trained on this data (audit probe) to see what it relies on")
    assert conclusion is not None
    if conclusion.status != NO_LEAKAGE:
        return {"action": f"read the evidence in the report, then {follow}",
                "why": conclusion.reason.rstrip("."), "section": "overview"}
    return {"action": "no change needed: no cue, rule or hygiene finding calls for one; "
                      f"next, {follow}",
            "why": conclusion.reason.rstrip("."), "section": "overview"}


def advise(sections: ScanSections) -> tuple[ScanSections, dict]:
    """``sections`` with their conclusion (:func:`~cuelens.audit.conclusion.conclude`, at the
    scan's margin) and next steps, computed once every section is in, and their results.json
    content (:meth:`~cuelens.audit.results.ScanSections.advised`)."""
    return sections.advised(lambda results: conclude(results, margin_of(results)),
                            next_steps)


@typed_reads()
def next_steps(results: dict) -> list[Step]:
    """Steps for the reader, most important first, derived from :func:`findings` (a probe's:
    about the model only)."""
    fs = findings(results)
    if about_a_model(results):
        fs = [f for f in fs if f.kind == "probe"]
    steps = [step for f in fs if f.code in ADVISORS
             and (step := ADVISORS[f.code](f, results)) is not None]
    actions = [step["action"] for step in steps]  # one step per action (longer in characters
    steps = [step for k, step in enumerate(steps)  # and in tokens share their fix)
             if step["action"] not in actions[:k]]
    contrast = _contrast_step(results, fs)
    if contrast is not None:  # right after the leakage step
        at = next((k + 1 for k, s in enumerate(steps) if s["section"] == "leakage"), len(steps))
        steps.insert(at, contrast)
    if about_a_model(results):
        return steps or [_closing(results, fs)]
    conclusion = conclusion_of(results)
    if conclusion.status == INCONCLUSIVE:  # first: nothing else settles the question
        steps.insert(0, _more_items(conclusion))
    return steps or [_closing(results, fs, conclusion)]


def _more_items(conclusion: Conclusion) -> Step:
    """The step of an inconclusive scan: how many more evaluated items would settle it."""
    n = conclusion.items_needed
    more = f"about {plural(n, 'more evaluated item')}" if n else "more evaluated items"
    return {"action": f"add {more} (a larger test split, or more data to cross-validate) and "
                      "scan again before concluding either way",
            "why": conclusion.reason.rstrip("."), "section": "overview"}
