"""In-memory dataset model (docs/methods.md §1): column-wise :class:`Split` s and a
:class:`Dataset` of the fitting split (``train``, ``None`` when cross-validating) and ``test``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from cuelens.data.display import dataset_html, names_text, one_line, shown, split_text
from cuelens.data.labels import LabelFindings
from cuelens.errors import UserError

if TYPE_CHECKING:
    import pandas as pd

T = TypeVar("T")


class Task(str, Enum):
    """The two task shapes (docs/methods.md §1); a ``str``, so ``Task.NLI == "nli"`` and JSON
    writes "nli"."""

    NLI = "nli"  # pair classification: premise, hypothesis, label
    MCQ = "mcq"  # multiple choice: premise, k choices, index of the correct one

    def __str__(self) -> str:
        return self.value


MCQ_LABELS = ["right", "wrong"]
RIGHT = 0


@dataclass
class Instances:
    """Flattened instances of a split: one text (hypothesis or choice) each."""

    texts: list[str]
    premises: list[str]
    labels: np.ndarray  # int64 index into the dataset's label_names
    item: np.ndarray  # int64 index of the item (question) each instance belongs to

    def __len__(self) -> int:
        return len(self.texts)


@dataclass
class Split:
    """Normalised items of one file, column-wise."""

    name: str
    path: str
    task: Task | str  # Task.NLI | Task.MCQ (plain "nli"/"mcq" compare equal)
    ids: list[str] = field(default_factory=list)
    premises: list[str] = field(default_factory=list)
    labels: list = field(default_factory=list)  # NLI: str; MCQ: int (correct choice)
    hypotheses: list[str] = field(default_factory=list)  # NLI only
    choices: list[list[str]] = field(default_factory=list)  # MCQ only
    questions: list[str | None] = field(default_factory=list)  # MCQ optional (COPA cause/effect)
    raw: list[str] = field(default_factory=list)  # original record text, one line each
    lines: list[int] = field(default_factory=list)  # line number of each item in its file
    groups: list[str | None] = field(default_factory=list)  # --group-field value per item
    skipped: dict[str, int] = field(default_factory=dict)
    findings: LabelFindings = field(default_factory=LabelFindings)  # label rewrites, duplicate keys
    overrides: frozenset[str] = frozenset()  # fields named by --premise-field etc. (item fields)

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:  # bounded: never the columns (MBs on SNLI)
        return one_line(f"<{type(self).__name__} "
                        f"{split_text(self.name, len(self), self.task, self.path)}>")

    @property
    def choice_counts(self) -> list[int]:
        """MCQ: the number of choices of each item (2 or more; may vary per item)."""
        return [len(c) for c in self.choices]

    def positions(self, why: str) -> dict[str, int]:
        """Each item's index by its id; ids shared by two items are a :class:`UserError` naming
        the first such id, its lines and ``why`` ids must be unique."""
        position: dict[str, int] = {}
        for i, item_id in enumerate(self.ids):
            if item_id in position:
                lines = self.lines[position[item_id]], self.lines[i]
                where = f" (lines {lines[0]} and {lines[1]})" if min(lines) > 0 else ""
                raise UserError(f"id {item_id!r} is given to two items{where}: ids must be "
                                f"unique, {why}", path=self.path)
            position[item_id] = i
        return position

    @property
    def n_choices(self) -> int | None:
        """MCQ: the number of choices when every item has the same; None when it varies."""
        counts = set(self.choice_counts)
        return counts.pop() if self.task == Task.MCQ and len(counts) == 1 else None

    def append(self, record: dict, raw: str, line: int) -> None:
        self.raw.append(raw)
        self.append_fields(record, line)

    def append_fields(self, record: dict, line: int) -> None:
        """Append a normalised record's columns, all but its raw text (which a compact split
        re-reads from its file)."""
        self.ids.append(record["id"])
        self.premises.append(record["premise"])
        self.labels.append(record["label"])
        if self.task == Task.NLI:
            self.hypotheses.append(record["hypothesis"])
        else:
            self.choices.append(record["choices"])
            self.questions.append(record.get("question"))
        self.lines.append(line)
        self.groups.append(record.get("group"))
        self.note(record, line)

    def note(self, record: dict, line: int) -> None:
        """Count a normalised record's label rewrite and repeated keys."""
        if "label_from" in record:
            self.findings.rewrite(record["label_from"], record["label"])
        if record.get("duplicate_keys"):
            self.findings.duplicate(record["duplicate_keys"], line)

    def premise_context(self, i: int) -> str:
        """Premise with the optional MCQ question appended (docs/methods.md §1)."""
        question = self.questions[i] if self.task == Task.MCQ else None
        return f"{self.premises[i]} {question}" if question else self.premises[i]

    def item_labels(self, label_names: list[str]) -> np.ndarray:
        """NLI: label index per item; MCQ: index of the correct choice per item."""
        if self.task == Task.MCQ:
            return np.asarray(self.labels, dtype=np.int64)
        lookup = {name: i for i, name in enumerate(label_names)}
        return np.asarray([lookup[label] for label in self.labels], dtype=np.int64)

    def instances(self, label_names: list[str]) -> Instances:
        if self.task == Task.NLI:
            n = len(self)
            return Instances(texts=list(self.hypotheses),
                             premises=[self.premise_context(i) for i in range(n)],
                             labels=self.item_labels(label_names),
                             item=np.arange(n, dtype=np.int64))
        texts, premises, labels, item = [], [], [], []
        for i, (choices, gold) in enumerate(zip(self.choices, self.labels)):
            context = self.premise_context(i)
            for j, choice in enumerate(choices):
                texts.append(choice)
                premises.append(context)
                labels.append(RIGHT if j == gold else 1 - RIGHT)
                item.append(i)
        return Instances(texts=texts, premises=premises,
                         labels=np.asarray(labels, dtype=np.int64),
                         item=np.asarray(item, dtype=np.int64))

    def subset(self, index: np.ndarray | list[int], name: str | None = None) -> "Split":
        """A new split holding the items at ``index`` (in that order)."""
        out = Split(name=name or self.name, path=self.path, task=self.task,
                    findings=self.findings, overrides=self.overrides)
        kept = ("hypotheses",) if self.task == Task.NLI else ("choices", "questions")
        for column in ("ids", "premises", "labels", *kept, "raw", "lines", "groups"):
            values = getattr(self, column)
            setattr(out, column, [values[i] for i in index])
        return out


def items_frame(split: Split, mask: np.ndarray) -> pd.DataFrame:
    """The items of ``split`` selected by the boolean ``mask`` (id, premise, hypothesis/choices,
    label)."""
    import pandas as pd

    index = np.flatnonzero(mask)
    columns: dict[str, list] = {"id": [split.ids[i] for i in index],
                                "premise": [split.premises[i] for i in index]}
    if split.task == Task.MCQ:
        columns["choices"] = [split.choices[i] for i in index]
    else:
        columns["hypothesis"] = [split.hypotheses[i] for i in index]
    columns["label"] = [split.labels[i] for i in index]
    return pd.DataFrame(columns)


def statistics_roles(fitting: T | None, evaluated: T, other: Mapping[str, T]) -> dict[str, T]:
    """The splits by the role the statistics give them (results.json ``dataset.splits``): the
    fitting split ``train`` and the evaluated one ``test``, or ``all`` when cross-validated,
    whatever their files' names (dev.jsonl used as train or test), then the ``other`` splits."""
    out = {} if fitting is None else {"train": fitting}
    out["test" if fitting is not None else "all"] = evaluated
    return {**out, **other}


def inferred_roles(fitting: str | None, evaluated: str, files: Mapping[str, str]) -> dict | None:
    """results.json ``dataset.split_roles``: the role a file was given without its name saying so
    (``fitting``/``evaluated``: the files' own roles, as
    :func:`~cuelens.data.loading.split_roles` picks them; ``files``: role → file name), e.g.
    ``{"train": "dev.jsonl", "why": "no train file"}``;
    None when every role is the file's own or the data is cross-validated."""
    if fitting == "dev":
        return {"train": files["dev"], "why": "no train file"}
    if fitting is not None and evaluated == "dev":
        return {"test": files["dev"], "why": "no test file"}
    return None


def role_names(roles: Mapping[str, str] | None) -> dict[str, str]:
    """Role → how a sentence names that split, for :func:`inferred_roles`: ``{"train":
    "dev.jsonl (used as train)"}``; empty when no role was inferred."""
    return {role: f"{file} (used as {role})" for role, file in (roles or {}).items()
            if role != "why"}


def roles_note(roles: Mapping[str, str]) -> str:
    """``dev.jsonl used as train: no train file`` for :func:`inferred_roles`."""
    role = next(key for key in roles if key != "why")
    return f"{roles[role]} used as {role}: {roles['why']}"


class EvaluatedItems:
    """What a scan reads of its evaluated items, loaded or kept on disk in chunks: one path over
    the evaluated split's parts (:meth:`evaluated_parts`: the loaded split, or each chunk), each
    with its share of a per-item mask."""

    if TYPE_CHECKING:  # a property of Dataset, a field of ChunkedData
        @property
        def splits(self) -> Mapping[str, Any]:
            """Role → split (each with its ``path``), in results.json order."""

    @property
    def input_paths(self) -> list[str]:
        """Paths of every loaded split file (outputs must never overwrite one of them)."""
        return [split.path for split in self.splits.values()]

    def evaluated_parts(self, mask: np.ndarray) -> Iterator[tuple[Split, np.ndarray]]:
        raise NotImplementedError

    def evaluated_frame(self, mask: np.ndarray) -> pd.DataFrame:
        """The evaluated items where ``mask`` holds, as one frame (:func:`items_frame`)."""
        import pandas as pd

        return pd.concat([items_frame(split, part) for split, part in self.evaluated_parts(mask)],
                         ignore_index=True)

    def item_lines(self, item_easy: np.ndarray
                   ) -> Callable[[str], Iterator[tuple[str, bool]]]:
        """Per mode ("records": the input lines, else the ids), each evaluated item's line and
        easy flag (results.json's easy/hard item files; :mod:`cuelens.audit.results`)."""
        def lines(mode: str) -> Iterator[tuple[str, bool]]:
            for split, part in self.evaluated_parts(item_easy):
                yield from zip(split.raw if mode == "records" else split.ids, part.tolist())

        return lines


@dataclass
class Dataset(EvaluatedItems):
    """A loaded dataset: the fitting split (or ``None`` for cross-validation) and the evaluation
    split."""

    name: str
    format: str
    task: str
    train: Split | None
    test: Split
    label_names: list[str]
    other: dict[str, Split] = field(default_factory=dict)  # splits loaded but not used (e.g. dev)

    @property
    def splits(self) -> dict[str, Split]:
        return statistics_roles(self.train, self.test, self.other)

    def __repr__(self) -> str:  # one screen: never the splits' columns
        splits = "; ".join(split_text(role, len(s), s.task, s.path)
                           for role, s in self.splits.items())
        note = f"; {roles_note(self.split_roles)}" if self.split_roles else ""
        return one_line(f"<Dataset {shown(self.name)}: {splits}; labels "
                        f"{names_text(self.label_names)}{note}>")

    def _repr_html_(self) -> str:
        roles = self.split_roles
        return dataset_html(self.name, self.task, [(role, s.path, len(s)) for role, s in
                                                   self.splits.items()], self.label_names,
                            roles_note(roles) if roles else None)

    @property
    def split_roles(self) -> dict | None:
        """The role given to a file whose name does not say it (results.json
        ``dataset.split_roles``; :func:`~cuelens.data.loading.inferred_roles`)."""
        fitting = None if self.train is None else self.train.name
        return inferred_roles(fitting, self.test.name,
                              {s.name: Path(s.path).name for s in (self.train, self.test) if s})

    def evaluated_parts(self, mask: np.ndarray) -> Iterator[tuple[Split, np.ndarray]]:
        """The evaluated (test) split, loaded: one part."""
        yield self.test, mask

    @property
    def n_choices(self) -> int | None:
        """MCQ: the number of choices of every item of the fitting and evaluated splits; None
        when it varies (the word-cue statistics then do not run: docs/mcq-artifacts.md)."""
        splits = [s for s in (self.train, self.test) if s is not None]
        counts = {k for s in splits for k in s.choice_counts}
        return counts.pop() if self.task == Task.MCQ and len(counts) == 1 else None

    @property
    def cross_validated(self) -> bool:
        return self.train is None
