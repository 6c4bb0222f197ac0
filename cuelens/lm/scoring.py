"""The sentence-scorer protocol shared by LM scoring (``audit score``) and controversial-pair
synthesis (``audit contrast``). Implementations live in ``cuelens/lm/`` (docs/methods.md §9)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from cuelens.errors import UserError


@runtime_checkable
class SentenceScorer(Protocol):
    """Anything that gives natural-log probabilities of whole sentences.

    ``name``: a short display name (e.g. ``"gpt2"``, ``"ngram:models/tri"``).
    ``score(sentences)``: float64 array, ``log p(s | model)`` per sentence (natural log).
    ``word_scores(sentence)``: list of ``(word, log p(word | context))`` whose sum is ``score``.
    """

    name: str

    def score(self, sentences: list[str]) -> np.ndarray: ...

    def word_scores(self, sentence: str) -> list[tuple[str, float]]: ...


# Optional capabilities (docs/methods.md §9). Scorers may offer these; callers test with
# ``hasattr``.
# - ``score`` is batched: pass many sentences in one call (e.g. every vocabulary replacement at
#   one position); all scorers in ``cuelens/lm/`` batch and length-sort internally.
# - Causal models (``CausalScorer``): ``next_word_logprobs(prefix: str, candidates: list[str])
#   -> np.ndarray`` — the corrected natural-log probability of each candidate as the next
#   whitespace word after ``prefix`` (empty prefix: the first word), for candidate pruning.
# - Masked models (``MaskedScorer``): ``masked_word_logprobs(sentence: str, position: int,
#   candidates: list[str]) -> np.ndarray`` — log p(candidate | sentence with whitespace word
#   ``position`` masked), a multi-token candidate filling its masked slot left to right.
# - ``word_logprobs(sentences) -> list[np.ndarray]``: per-word values of many sentences at once.



class SentenceError(UserError):
    """A sentence a model cannot score; ``index`` is its place (from 0) in the list given to
    ``score``, ``where`` how the message names it (default ``sentence {index + 1}``; :meth:`at`
    renames it for the caller's input)."""

    def __init__(self, index: int, where: str | None = None) -> None:
        self.index, self.where = index, where
        super().__init__(self.describe(where or f"sentence {index + 1}"))

    def describe(self, where: str) -> str:
        """The message naming the sentence ``where``."""
        return f"{where} cannot be scored"

    def details(self) -> tuple:
        """The arguments after ``index`` and before ``where``."""
        return ()

    def __reduce__(self) -> tuple:
        return type(self), (self.index, *self.details(), self.where)

    def at(self, index: int, where: str | None = None) -> SentenceError:
        """The same error for the sentence at ``index`` of the caller's list, named ``where``."""
        make: Callable[..., SentenceError] = type(self)
        return make(index, *self.details(), where)


class SentenceTooLong(SentenceError):
    """A sentence of ``tokens`` tokens, more than a model's ``limit``."""

    def __init__(self, index: int, tokens: int, limit: int, where: str | None = None) -> None:
        self.tokens, self.limit = tokens, limit
        super().__init__(index, where)

    def describe(self, where: str) -> str:
        return f"{where} has {self.tokens} tokens, more than the model's {self.limit}"

    def details(self) -> tuple:
        return self.tokens, self.limit


class SentenceWithoutTokens(SentenceError):
    """A non-empty sentence the model's tokenizer reads as no tokens (only combining marks or
    zero-width characters, say): scoring it would give log p = 0, probability 1."""

    def describe(self, where: str) -> str:
        return (f"{where} has no tokens under the model's tokenizer (only characters it drops, "
                "such as combining marks or zero-width spaces): it cannot be scored")
