"""The ``hygiene`` section (docs/data-hygiene.md): per-split counts, fitting/evaluated overlap,
examples and warnings."""

from __future__ import annotations

import typing
from dataclasses import dataclass, field

from cuelens.audit.results.section import Section


@dataclass(frozen=True, kw_only=True, repr=False)
class SplitHygiene(Section):
    """One split's hygiene counts (docs/methods.md §11): exact copies, near duplicates, label
    conflicts and the deliberate constructions (mirrored MCQ pairs or contrastive NLI pairs,
    permuted copies, shared premises)."""

    items: int
    duplicate_items: int = 0  # 0: a hand-made file without the count
    duplicate_groups: int = 0
    near_duplicate_pairs: int = 0
    label_conflict_groups: int = 0
    label_conflict_items: int = 0
    mirrored_pairs: int | None = None
    contrastive_pairs: int | None = None
    permuted_copies: int | None = None
    shared_premise_items: int | None = None

    @property
    def constructed_pairs(self) -> tuple[str, int]:
        """``("mirrored_pairs", n)`` (MCQ) or ``("contrastive_pairs", n)`` (NLI)."""
        if self.mirrored_pairs is not None:
            return "mirrored_pairs", self.mirrored_pairs
        return "contrastive_pairs", self.contrastive_pairs or 0


@dataclass(frozen=True, kw_only=True, repr=False)
class OverlapRow(Section):
    """Evaluated items (``eval``) that also occur in the fitting split (``fit``): exact and
    near copies, items sharing a premise, and the ``fraction`` of the evaluated ones copied."""

    fit: str
    eval: str
    eval_items: int
    exact: int
    near: int
    shared_premise: int
    fraction: float


@dataclass(frozen=True, kw_only=True, repr=False)
class HygieneSection(Section):
    """``hygiene`` (docs/data-hygiene.md): the near-duplicate settings, one
    :class:`SplitHygiene` per split, the fitting/evaluated :class:`OverlapRow` s, example items
    per finding, the splits whose near duplicates come from a sample (``near_sample``: role →
    sample size) and the warnings."""

    key: typing.ClassVar[str] = "hygiene"

    near_threshold: float | None = None
    num_perm: int | None = None
    splits: dict[str, SplitHygiene]
    overlap: list[OverlapRow] = field(default_factory=list)
    examples: dict[str, list] = field(default_factory=dict)
    near_sample: dict[str, int] | None = None
    warnings: list[str] = field(default_factory=list)
