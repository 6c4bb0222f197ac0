"""Prompt templates of the LLM probe and their registry (docs/methods.md §6): sandboxed Jinja2
text over one item's fields (:func:`item_fields`) with a declared answer format, template files
(:func:`read_template`) and the built-ins (:data:`TEMPLATES`, ``audit prompts``); the fields,
the file format and the built-ins: docs/llm-probe.md, "Templates"."""

from __future__ import annotations

import functools
import hashlib
import re
import string
from dataclasses import dataclass, field, replace
from pathlib import Path

from cuelens.data.dataset import Task
from cuelens.errors import UserError
from cuelens.probes.llm.sandbox import (TemplateLimit, bounded_environment, bounded_loops,
                                        render_bounded)
from cuelens.registry import Registry

MODES = ("score", "generate")
TASKS = tuple(Task)
MCQ_OPTIONS = ("text", "letters")
CONTENT_FREE = "N/A"  # calibrate-before-use: the content-free input


@dataclass(frozen=True)
class PromptTemplate:
    """One prompt template and its answer format (docs/llm-probe.md, "Templates")."""

    name: str
    task: str
    mode: str
    text: str
    answers: dict[str, str] = field(default_factory=dict)   # NLI: label -> verbaliser
    options: str = "text"                                    # MCQ: "text" | "letters"
    style: str = "plain"
    max_new_tokens: int = 16
    description: str = ""
    source: str = "built-in"

    @property
    def digest(self) -> str:
        """Hash of everything that changes the prompt or its answers (part of the cache key)."""
        parts = [self.task, self.mode, self.text, repr(sorted(self.answers.items())),
                 self.options, str(self.max_new_tokens)]
        return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:16]

    def check(self, task: str, label_names: list[str]) -> None:
        """Raise a :class:`UserError` when this template cannot answer ``task``'s items."""
        if self.task != task:
            raise UserError(f"prompt '{self.name}' is for {self.task.upper()} items, the "
                            f"dataset is {task.upper()}")
        if task == Task.NLI and set(self.answers) != set(label_names):
            raise UserError(f"prompt '{self.name}' verbalises the labels "
                            f"{', '.join(sorted(self.answers))} but the dataset's labels are "
                            f"{', '.join(label_names)}; write a template file with matching "
                            "'answers' (docs/llm-probe.md)", path=self._path)

    @property
    def _path(self) -> str | None:
        return None if self.source == "built-in" else self.source

    def render(self, fields: dict) -> str:
        """The prompt for one item's ``fields`` (:func:`item_fields`); an error while rendering
        (an undefined name, ``{{ 1/0 }}``, ``{{ premise + 1 }}``) names the template and item."""
        from jinja2 import TemplateError

        try:
            return render_bounded(_compile(self.text), fields)
        except TemplateLimit as exc:
            raise UserError(f"prompt '{self.name}' stopped on item {fields.get('id')!r}: {exc} "
                            "(the sandbox's limit; docs/robustness.md)", path=self._path) from None
        except RENDER_ERRORS + (TemplateError,) as exc:
            raise UserError(f"prompt '{self.name}' fails on item {fields.get('id')!r}: "
                            f"{type(exc).__name__}: {exc}", path=self._path) from None

    def option_words(self, label_names: list[str], fields: dict) -> list[str]:
        """The answer options in output order: NLI labels' verbalisers in ``label_names`` order;
        MCQ the choices' texts or letters."""
        if self.task == Task.NLI:
            return [self.answers[label] for label in label_names]
        return list(fields["letters"] if self.options == "letters" else fields["choices"])


#: Errors a template's own expressions may raise while rendering (arithmetic on a text, …).
RENDER_ERRORS = (ArithmeticError, TypeError, ValueError, LookupError, AttributeError,
                 RecursionError)


@functools.cache
def _compile(text: str):
    """The compiled template; one :class:`UserError` for a syntax error or a tag that reads
    other templates (``include``, ``import``, ``from``, ``extends``: a prompt is one file)."""
    from jinja2 import TemplateSyntaxError, nodes

    environment = bounded_environment()
    try:
        tree = environment.parse(text)
    except TemplateSyntaxError as exc:
        raise UserError(f"template syntax error: {exc.message}", line=exc.lineno) from None
    for node in tree.find_all((nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
        tag = {"Include": "include", "Import": "import", "FromImport": "from",
               "Extends": "extends"}[type(node).__name__]
        raise UserError(f"'{{% {tag} %}}' is not allowed: a prompt template is one file "
                        "and reads no other template", line=node.lineno)
    bounded_loops(tree)
    return environment.from_string(tree)


def item_fields(split, i: int, label_names: list[str]) -> dict:
    """The fields a template sees for test item ``i`` (docs/llm-probe.md, "Templates")."""
    fields = {"id": split.ids[i], "premise": split.premises[i], "labels": list(label_names)}
    if split.task == Task.NLI:
        fields["hypothesis"] = split.hypotheses[i]
    else:
        choices = list(split.choices[i])
        fields.update(choices=choices, question=split.questions[i] or "",
                      letters=list(string.ascii_uppercase[: len(choices)]))
    return fields


def content_free(fields: dict, template: PromptTemplate) -> dict:
    """Calibrate-before-use: the item's fields with every input text replaced by "N/A" (the
    choices stay when they are what is scored)."""
    out = dict(fields, premise=CONTENT_FREE, id="__content_free__")
    if "hypothesis" in out:
        out["hypothesis"] = CONTENT_FREE
    if "choices" in out:
        out["question"] = CONTENT_FREE if out["question"] else ""
        if template.options == "letters":
            out["choices"] = [CONTENT_FREE] * len(out["choices"])
    return out


# --------------------------------------------------------------------------- template files
_KEYS = {"task", "mode", "answers", "options", "style", "max_new_tokens", "description", "name"}


def _parse_answers(value: str, path: str, line: int) -> dict[str, str]:
    answers: dict[str, str] = {}
    for part in value.split(","):
        label, sep, word = part.partition("=")
        if not sep or not label.strip() or not word.strip():
            raise UserError(f"answers: expected 'label=word, …', got {part.strip()!r}",
                            path=path, line=line)
        label, word = label.strip(), word.strip()
        if re.search(r"\s#", word):
            raise UserError(f"answers: {word!r} holds a comment after the answer word (a comment "
                            "is a line of its own starting with #)", path=path, line=line)
        if label in answers:
            raise UserError(f"answers: the label {label!r} is mapped twice", path=path,
                            line=line)
        twin = next((other for other, known in answers.items()
                     if known.casefold() == word.casefold()), None)
        if twin is not None:
            raise UserError(f"answers: the labels {twin!r} and {label!r} are both answered "
                            f"{word!r}; every label needs its own answer word (else both get "
                            "the same probability on every item)", path=path, line=line)
        answers[label] = word
    return answers


def read_template(path: str | Path) -> PromptTemplate:
    """Parse a template file (front matter, ``---``, Jinja2 text)."""
    from cuelens.data.readers import open_lines

    path = Path(path)
    lines = [line.removesuffix("\r") for _, line in open_lines(path)]
    if "---" not in [line.strip() for line in lines]:
        raise UserError("prompt template needs a front matter ending with a line '---'",
                        path=str(path))
    meta: dict = {}
    key_line: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        if line.strip() == "---":
            rest = "\n".join(lines[number:])
            body, before_body = rest.strip("\n"), number + len(rest) - len(rest.lstrip("\n"))
            break
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        key = key.strip()
        if not sep or key not in _KEYS:
            raise UserError(f"unknown front-matter line {line.strip()!r} (keys: "
                            f"{', '.join(sorted(_KEYS))})", path=str(path), line=number)
        meta[key] = value.strip()
        key_line[key] = number
    where = str(path)
    for key, allowed in (("task", TASKS), ("mode", MODES)):
        if key not in meta:
            raise UserError(f"front matter needs '{key}: {'|'.join(allowed)}'", path=where)
        if meta[key] not in allowed:
            raise UserError(f"{key} must be {' or '.join(allowed)}, not {meta[key]!r} (a comment "
                            "is a line of its own starting with #)", path=where,
                            line=key_line[key])
    answers = (_parse_answers(meta["answers"], where, key_line["answers"])
               if "answers" in meta else {})
    if meta["task"] == Task.NLI and not answers:
        raise UserError("an NLI template needs 'answers: label=word, …'", path=where)
    options = meta.get("options", "letters" if meta["mode"] == "generate" else "text")
    if options not in MCQ_OPTIONS:
        raise UserError(f"options must be one of {', '.join(MCQ_OPTIONS)}", path=where)
    try:
        max_new = int(meta.get("max_new_tokens", 16))
    except ValueError:
        raise UserError("max_new_tokens must be an integer", path=where) from None
    template = PromptTemplate(name=meta.get("name") or path.stem, task=meta["task"],
                              mode=meta["mode"], text=body, answers=answers, options=options,
                              style=meta.get("style", "plain"), max_new_tokens=max_new,
                              description=meta.get("description", ""), source=where)
    try:
        _compile(body)
    except UserError as exc:
        raise UserError(str(exc.message), path=where,
                        line=None if exc.line is None else exc.line + before_body) from None
    return template


# --------------------------------------------------------------------------- built-ins
YES_NO = {"entailment": "yes", "neutral": "maybe", "contradiction": "no"}
TRUE_FALSE = {"entailment": "true", "neutral": "neither", "contradiction": "false"}
_NLI_YES_NO = ('Premise: {{ premise }}\nHypothesis: {{ hypothesis }}\n'
               'Given the premise, is the hypothesis correct? Answer yes, no or maybe.')
_NLI_TRUE_FALSE = ('Suppose this is true: "{{ premise }}"\nThen is the following statement true, '
                   'false, or neither?\n"{{ hypothesis }}"')
_COT = ("\nLet us think it through step by step, then give the final answer on a last line "
        "of the form 'Answer: X', where X is {words}.")
_MCQ_LIST = ("{{ premise }}{% if question %} {{ question }}{% endif %}\n"
             "{% for choice in choices %}{{ letters[loop.index0] }}. {{ choice }}\n{% endfor %}"
             "Which option is the right one?")

#: the built-in prompt templates: what ``audit prompts`` lists
TEMPLATES: Registry[PromptTemplate] = Registry("prompt template", [(t.name, t) for t in [
    PromptTemplate("nli-yes-no", Task.NLI, "score", _NLI_YES_NO + "\nAnswer:", YES_NO,
                   description="premise and hypothesis, answered yes / no / maybe"),
    PromptTemplate("nli-true-false", Task.NLI, "score", _NLI_TRUE_FALSE + "\nAnswer:",
                   TRUE_FALSE, description="'suppose … then is … true, false or neither?'"),
    PromptTemplate("nli-yes-no-cot", Task.NLI, "generate",
                   _NLI_YES_NO + _COT.format(words="yes, no or maybe"), YES_NO, style="cot",
                   max_new_tokens=256,
                   description="nli-yes-no, reasoning step by step before answering"),
    PromptTemplate("nli-true-false-cot", Task.NLI, "generate",
                   _NLI_TRUE_FALSE + _COT.format(words="true, false or neither"),
                   TRUE_FALSE, style="cot", max_new_tokens=256,
                   description="nli-true-false, reasoning step by step before answering"),
    PromptTemplate("mcq-choice", Task.MCQ, "score",
                   "{{ premise }}{% if question %} {{ question }}{% endif %}\nAnswer:",
                   options="text", description="scores each choice's text as the answer"),
    PromptTemplate("mcq-letter", Task.MCQ, "score", _MCQ_LIST + "\nAnswer:",
                   options="letters", description="lettered options, scores the letters"),
    PromptTemplate("mcq-letter-cot", Task.MCQ, "generate",
                   _MCQ_LIST + _COT.format(words="the letter of the option"), options="letters",
                   style="cot", max_new_tokens=256,
                   description="mcq-letter, reasoning step by step, letter parsed"),
]])


def resolve_template(name_or_file: str) -> PromptTemplate:
    """A built-in template by name, else a template file."""
    if name_or_file in TEMPLATES:
        return TEMPLATES[name_or_file]
    if Path(name_or_file).is_file():
        return read_template(name_or_file)
    raise UserError(f"unknown prompt '{name_or_file}': not a built-in template "
                    f"({TEMPLATES.choices()}) nor a file")


def default_templates(task: str) -> list[PromptTemplate]:
    """The built-in templates of ``task`` (what ``--llm`` uses without ``--prompt``)."""
    return [t for t in TEMPLATES.values() if t.task == task]


def with_max_new_tokens(template: PromptTemplate, value: int | None) -> PromptTemplate:
    """``template`` with its generation budget overridden (``--max-new-tokens``)."""
    return template if value is None else replace(template, max_new_tokens=value)
