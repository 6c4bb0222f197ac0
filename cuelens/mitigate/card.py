"""Dataset-card hand-off: card.md's "Bias, Risks and Limitations" and the Croissant RAI fields,
every statement from the scan's conclusion and findings (docs/mitigation.md, "Dataset card")."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from cuelens.audit.conclusion import conclusion_of
from cuelens.audit.results import (CONCLUSION_TEXT, ConfigSection, CueRow, CueStats,
                                   DatasetSummary, ExamplesSection, HygieneSection,
                                   LeakageSection, typed_reads)
from cuelens.audit.examples import sort_value
from cuelens.audit.findings import Finding, d_with_ci, findings, is_preference
from cuelens.data.display import shown
from cuelens.data.readers import read_json
from cuelens.errors import UserError
from cuelens.markdown import markdown_text
from cuelens.wording import plural

TOP_CUES = 5
CROISSANT_CONTEXT = {"@language": "en", "@vocab": "https://schema.org/", "sc": "https://schema.org/",
                     "cr": "http://mlcommons.org/croissant/",
                     "rai": "http://mlcommons.org/croissant/RAI/"}
# per task: what the cue-only classifier sees, and what it gets right
SEES = {"mcq": ("the choices", "answers {} of the evaluated questions correctly"),
        "nli": ("the hypotheses", "labels {} of the evaluated items correctly"),
        "preference": ("the responses", "labels {} of the evaluated responses chosen or "
                       "rejected correctly")}
TASK_NAMES = {"nli": "NLI", "mcq": "multiple-choice", "preference": "preference-pair"}
DEFAULT_COMMAND = "audit scan DATA"


def warning_sentences(results: dict) -> list[str]:
    """The scan's warnings (how its words were cut: the conclusion may point to them)."""
    return [sentence(w) for w in results.get("warnings") or []]


def sentence(text: str, capital: bool = True) -> str:
    """``text`` as a sentence: a capital first letter (unless not ``capital``: a clause after a
    colon) and a full stop (unless it ends in one)."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:] if capital else text
    return text if text[-1] in ".!?" else text + "."


def conclusion_sentence(results: dict, bold: bool = False) -> str:
    """The scan's conclusion as one sentence, ``Inconclusive: <reason>`` (``bold``: its first
    word bold and the reason escaped, for Markdown)."""
    conclusion = conclusion_of(results)
    status, reason = CONCLUSION_TEXT[conclusion.status], sentence(conclusion.reason, False)
    return f"**{status}:** {markdown_text(reason)}" if bold else f"{status}: {reason}"


def baseline_text(results: dict) -> str:
    """What D is measured against, as the verdict measured it (its accuracy from
    ``leakage.baseline``): chance (1 in k) for multiple choice, guessing for preference pairs,
    else always giving the most common label (the prior-matched constant, docs/methods.md)."""
    accuracy = LeakageSection.required_in(results).reference["accuracy"]
    data = DatasetSummary.required_in(results)
    if data.task == "mcq":
        k = data.n_choices
        return f"chance ({'1 in ' + str(k) if k else 'random guessing'}, {accuracy * 100:.1f}%)"
    if is_preference(results):
        return f"guessing ({accuracy * 100:.1f}%)"
    return f"always giving the most common label ({accuracy * 100:.1f}%)"


def leakage_sentence(results: dict) -> str:
    """The word-cue classifier's accuracy, its baseline and D with its interval (and the scan's
    note on that interval, e.g. when every item ties); a scan without word-cue statistics
    (e.g. MCQ items with different numbers of choices) says so, with its notes."""
    leak = LeakageSection.in_results(results)
    if leak is None:
        return " ".join(["No word-cue classifier was fitted, so no cue leakage D was measured.",
                         *map(sentence, results.get("notes") or [])])
    best = leak.best
    sees, gets = SEES.get(DatasetSummary.required_in(results).task, SEES["nli"])
    accuracy = f"{best['accuracy'] * 100:.1f}%"
    text = (f"A classifier that sees only {sees} ({best['metric']} × {best['aggregator']} "
            f"word-cue model) {gets.format(accuracy)}, against "
            f"{baseline_text(results)}: cue leakage D = {d_with_ci(best)}.")
    note = leak.interval_note  # e.g. every item ties: D = 0 by construction
    return f"{text} {sentence(note)}" if note else text


def card_findings(results: dict, kinds: tuple[str, ...]) -> list[Finding]:
    """The scan's findings of ``kinds`` worth stating on a card (no ``info`` context rows but
    deliberate constructions), in rank order."""
    return [f for f in findings(results) if f.kind in kinds
            and (f.severity != "info" or f.kind == "hygiene")]


def top_cues(results: dict, n: int = TOP_CUES) -> list[CueRow]:
    """The ``n`` significant cues with the largest z."""
    cues = [c for c in CueRow.rows_in(results) if c.significant]
    return sorted(cues, key=lambda c: (-sort_value(c.metrics.get("z", 0.0)), c.token))[:n]


def cue_examples(results: dict, cue: CueRow) -> list[str]:
    """Up to two example texts of the scan's sampled items holding ``cue``'s token
    (``examples.by_cue``, docs/results-schema.md), premise → text."""
    examples = ExamplesSection.in_results(results)
    if examples is None:
        return []
    items = examples.items
    texts = [f"{items[i].get('premise', '')} → {items[i].get('text', '')}".strip(" →")
             for i in examples.by_cue.get(cue.token, []) if i < len(items)]
    return list(dict.fromkeys(texts))[:2]


def hygiene_sentences(results: dict) -> list[str]:
    """The hygiene findings as sentences; what was not checked or not found."""
    if HygieneSection.in_results(results) is None:
        return ["Data hygiene was not checked."]
    found = [sentence(f.title) for f in card_findings(results, ("hygiene",))]
    return found or ["No duplicates, train/test overlap or label conflicts were found."]


def easy_hard_sentences(results: dict) -> list[str]:
    """The easy/hard finding with what to do about it; nothing when the split is no finding
    (indistinguishable from chance, or no split)."""
    return [sentence(f.title) + " Report a model's accuracy on the hard subset (hard.jsonl next "
            "to results.json) too." for f in card_findings(results, ("easy_hard",))]


def _cue_table(results: dict) -> list[str]:
    if "cues" not in results:
        return ["Cue words were not tested (no word-cue statistics in this scan).", ""]
    cues = top_cues(results)
    if not cues:
        return ["No word is a significant cue (Bonferroni, 5% level).", ""]
    lines = ["| word | label | items | z | example |", "|---|---|---|---|---|"]
    for cue in cues:
        example = cue_examples(results, cue)
        word, label = (markdown_text(shown(text)) for text in (cue.token, cue.label))
        lines.append(f"| {word} | {label} | "
                     f"{cue.count} | {sort_value(cue.metrics.get('z', 0.0)):.1f} | "
                     f"{markdown_text(example[0]) if example else ''} |")
    stats = CueStats.in_results(results)
    if stats is not None:
        lines += ["", f"Significant: z above {stats.bonferroni_z:.2f} (Bonferroni over "
                      f"{plural(stats.n_tests, 'test') if stats.n_tests else 'all tests'}, 5% level)."]
    return lines + [""]


def code_block(text: str) -> list[str]:
    """``text`` as a fenced code block: on one line (its line breaks made spaces), fenced by
    more backticks than its longest run of them, so nothing in it closes the fence (CommonMark
    §4.5) and a file name with backticks is quoted as it is."""
    runs = re.findall("`+", text)
    fence = "`" * max(3, 1 + max(map(len, runs), default=0))
    return [fence, re.sub(r"\r\n|[\r\n]", " ", text), fence]


@typed_reads()
def card_markdown(results: dict, command: str) -> str:
    """The "Bias, Risks and Limitations" section (Markdown; every text from the data or the
    scan passes :func:`cuelens.markdown.markdown_text`)."""
    data = DatasetSummary.required_in(results)
    version = results.get("tool", {}).get("version", "")
    rules = [sentence(f.title) for f in card_findings(results, ("baseline",))]
    warnings = warning_sentences(results)
    lines = ["## Bias, Risks and Limitations", "",
             markdown_text(f"This section was generated by cuelens {version} from an audit of "
                           f"the {TASK_NAMES.get(data.task, data.task)} dataset "
                           f"{data.name} for annotation artifacts: features of the text "
                           "that give the answer away on their own."), "",
             "### Conclusion", "", conclusion_sentence(results, bold=True), "",
             *(["The scan's warnings:", "", *[f"- {markdown_text(w)}" for w in warnings], ""]
               if warnings else []),
             "### Cue leakage", "", markdown_text(leakage_sentence(results)), "",
             *[f"- {markdown_text(rule)}" for rule in rules], *([""] if rules else [])]
    easy_hard = easy_hard_sentences(results)
    if easy_hard:
        lines += ["### Easy and hard items", "", *map(markdown_text, easy_hard), ""]
    lines += ["### Strongest cues", "", *_cue_table(results),
              "### Data hygiene", "", *[f"- {markdown_text(s)}" for s in hygiene_sentences(results)],
              "", "### How to reproduce", "", *code_block(command), "",
              markdown_text(f"cuelens {version}, seed {ConfigSection.of(results).seed}."
                            + (" Per-item bias scores: items.parquet / items.jsonl next to "
                               "results.json." if "leakage" in results else "")), ""]
    return "\n".join(lines)


@typed_reads()
def croissant_rai(results: dict) -> dict:
    """JSON-LD with ``rai:dataBiases`` and ``rai:dataLimitations`` (to merge into a Croissant
    file's top-level object): lists of whole sentences, as the Croissant RAI vocabulary takes
    them."""
    biases = [conclusion_sentence(results), leakage_sentence(results)]
    biases += [sentence(f.title) for f in card_findings(results, ("baseline",))]
    cues = top_cues(results)
    if cues:
        biases.append("Strongest cue words (word → label, z): " + "; ".join(
            f"{shown(c.token)} → {shown(c.label)} ({sort_value(c.metrics.get('z', 0.0)):.1f})"
            for c in cues) + ".")
    limitations = warning_sentences(results) + hygiene_sentences(results) + \
        easy_hard_sentences(results)
    return {"@context": CROISSANT_CONTEXT, "@type": "sc:Dataset",
            "name": DatasetSummary.required_in(results).name,
            "rai:dataBiases": biases, "rai:dataLimitations": limitations}


# ------------------------------------------------------------------------------ reproduce line
def recorded_argv(run_file: Path) -> list[str] | None:
    """The ``argv`` a scan recorded in its run.json (None without a run.json); a malformed one
    is one :class:`UserError` line naming the file and the field."""
    if not run_file.is_file():
        return None
    run = read_json(run_file)
    argv = run.get("argv") if isinstance(run, dict) else None
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise UserError("no command line recorded ($.argv must be a list of strings); pass "
                        "--command to name the scan command", path=str(run_file))
    return argv


def portable_path(token: str, cwd: Path) -> str:
    """An absolute path of a command line relative to ``cwd`` when it lies under it, else its
    name: a card never shows a local absolute path. Other tokens as given."""
    if "=" in token and token.startswith("--"):
        option, value = token.split("=", 1)
        return f"{option}={portable_path(value, cwd)}"
    prefix, colon, rest = token.partition(":")
    if colon and prefix.isidentifier() and os.path.isabs(rest):  # hf:/models/x (--segmenter)
        return f"{prefix}:{portable_path(rest, cwd)}"
    if not os.path.isabs(token):
        return token
    path = Path(os.path.normpath(token))
    try:
        return str(path.relative_to(cwd)) or "."
    except ValueError:
        return path.name or token


def reproduce_command(argv: list[str] | None, cwd: Path) -> str:
    """The command a card quotes (``audit scan …``, or the ``audit filter …`` that wrote the
    scan): ``audit`` and the recorded arguments, with the data and outputs named relative to
    ``cwd`` or by name (:func:`portable_path`)."""
    if not argv or len(argv) < 2:
        return DEFAULT_COMMAND
    cwd = Path(os.path.normpath(cwd))
    return "audit " + shlex.join(portable_path(token, cwd) for token in argv[1:])
