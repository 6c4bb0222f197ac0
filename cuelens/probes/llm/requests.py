"""What an LLM backend is asked (:class:`Request`) and how it answers (:data:`OnResult`); the
bottom of :mod:`cuelens.probes.llm`, shared by the registry (:mod:`~cuelens.probes.llm.backends`)
and every backend (docs/llm-probe.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cuelens.errors import UserError

OnResult = Callable[[int, dict], None]


@dataclass(frozen=True)
class Request:
    """One question to a backend: score ``options`` after ``prompt``, or generate from it."""

    kind: str                      # "score" | "generate"
    prompt: str
    options: tuple[str, ...] = ()
    max_new_tokens: int = 0

    def key_parts(self) -> list:
        return [self.kind, self.prompt, list(self.options), self.max_new_tokens]


class RequestTooLong(UserError):
    """A request that does not fit the model's positions; ``index`` into the requests the
    backend was given (the caller names the item)."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index

    def __reduce__(self) -> tuple:
        return type(self), (self.message, self.index)
