"""The sentence-scorer protocol shared by LM scoring (``audit score``) and controversial-pair
synthesis (``audit contrast``). Implementations live in ``cuelens/lm/`` (docs/methods.md §9)."""

from __future__ import annotations

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



class SentenceTooLong(UserError):
    """A sentence of ``tokens`` tokens, more than a model's ``limit``; ``index`` is its place
    (from 0) in the list given to ``score``, ``where`` how the message names it (default
    ``sentence {index + 1}``; :meth:`at` renames it for the caller's input)."""

    def __init__(self, index: int, tokens: int, limit: int, where: str | None = None) -> None:
        self.index, self.tokens, self.limit, self.where = index, tokens, limit, where
        super().__init__(f"{where or f'sentence {index + 1}'} has {tokens} tokens, more than "
                         f"the model's {limit}")

    def __reduce__(self) -> tuple:
        return type(self), (self.index, self.tokens, self.limit, self.where)

    def at(self, index: int, where: str) -> SentenceTooLong:
        """The same error for the sentence at ``index`` of the caller's list, named ``where``."""
        return SentenceTooLong(index, self.tokens, self.limit, where)
