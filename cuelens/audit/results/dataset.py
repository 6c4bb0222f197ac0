"""The ``dataset`` section (docs/results-schema.md): the data's task, labels and one summary
per split."""

from __future__ import annotations

import typing
from dataclasses import dataclass

from cuelens.audit.results.section import Section


@dataclass(frozen=True, kw_only=True, repr=False)
class SplitSummary(Section):
    """One split of ``dataset.splits``: its file, sizes, label counts (MCQ: right/wrong
    instances), answer-position counts (MCQ; null otherwise) and skipped lines per reason."""

    nullable: typing.ClassVar[tuple[str, ...]] = ("file", "answer_position_counts")

    file: str | None = None
    items: int
    instances: int | None = None
    label_counts: dict[str, int] | None = None  # None: a hand-made file without them
    answer_position_counts: dict[str, int] | None = None
    skipped: dict[str, int] | None = None


@dataclass(frozen=True, kw_only=True, repr=False)
class DatasetSummary(Section):
    """``dataset`` (docs/results-schema.md): the data's name, format, task, labels and one
    :class:`SplitSummary` per split role; ``split_roles``: a role given to a file whose name does
    not say it; ``labels``: the label report (rare and rewritten labels, warnings)."""

    key: typing.ClassVar[str] = "dataset"
    nullable: typing.ClassVar[tuple[str, ...]] = ("n_choices",)

    name: str | None = None
    format: str | None = None
    task: str
    n_choices: int | None = None
    cross_validated: bool | None = None
    label_names: list[str]
    splits: dict[str, SplitSummary]
    split_roles: dict[str, str] | None = None
    labels: dict | None = None

    @property
    def evaluated_role(self) -> str:
        """The role of the split the statistics are measured on ("test", else "all")."""
        return "test" if "test" in self.splits else "all" if "all" in self.splits else \
            next(iter(self.splits), "")

    @property
    def fitting_role(self) -> str:
        """The role the cue statistics are fitted on ("all" when cross-validated)."""
        cross = self.cross_validated if self.cross_validated is not None else \
            "train" not in self.splits
        return "all" if cross else "train"

    @property
    def evaluated_items(self) -> int | None:
        """How many items the evaluated split holds (None: no such split)."""
        split = self.splits.get(self.evaluated_role)
        return None if split is None else split.items
