"""What an operator is: a function that builds a new *wrong* choice from one of a question's
choices, or returns ``None``; each is listed once in :mod:`cuelens.augment.operators`'s table,
which stress tests and augmentation share (docs/methods.md §7; docs/augmentation.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from cuelens.errors import UserError


CORRECT, WRONG = "correct", "wrong"


@dataclass
class OpContext:
    """What an operator may use besides its source choice."""

    rng: np.random.Generator
    item: int = 0  # index of the question in ``pool``
    pool: list[str] = field(default_factory=list)  # correct choice of every question (crossover)
    taken: frozenset[str] = frozenset()  # normalised choices of the question (must differ)

    def pick(self, options):
        """One of ``options``, drawn with ``rng``."""
        return options[int(self.rng.integers(len(options)))]


@dataclass(frozen=True)
class Operator:
    name: str
    source: str  # CORRECT | WRONG: the choice the new wrong choice is built from
    needs_parse: bool  # whether ``fn`` receives a spaCy Doc (else the plain text)
    fn: Callable[..., str | None]
    description: str

    @classmethod
    def of(cls, name: str, fn: Callable[..., str | None], *, source: str = CORRECT,
           needs_parse: bool = True) -> Operator:
        """Operator ``name`` running ``fn(source, ctx) -> str | None``; its description is the
        first line of ``fn``'s docstring."""
        doc = (fn.__doc__ or "").strip().splitlines()
        return cls(name, source, needs_parse, fn, doc[0] if doc else name)

    @property
    def english_only(self) -> bool:
        """Reads a spaCy English parse (or English word lists): refused on other languages."""
        return self.needs_parse


def check_language(ops: Iterable[Operator], language: str) -> None:
    """One :class:`UserError` line when English-only operators are asked for text in another
    ``language`` (docs/languages.md)."""
    english = [op.name for op in ops if op.english_only]
    if language != "en" and english:
        raise UserError(f"operator(s) {', '.join(english)} work on English text only and this "
                        f"text is {language!r}: use co or mt (docs/languages.md)")


ALIASES = {"crossover": "co", "mutation": "mt"}
