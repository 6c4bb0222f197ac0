"""User-facing errors: one clear message, no traceback, a non-zero exit code."""

from __future__ import annotations

import numbers


MAX_SEED = 2**32 - 1  #: the largest seed every seeded library accepts (scikit-learn's random_state)


def option_name(name: str) -> str:
    """A field as messages name it: its API keyword and its CLI option, ``min_count
    (--min-count)``."""
    return f"{name} (--{name.replace('_', '-')})"


def check_seed(seed: int) -> None:
    """Raise :class:`UserError` unless ``seed`` (``--seed``) is in 0 .. :data:`MAX_SEED`, the
    range every seeded step accepts (numpy refuses negative seeds with a ValueError)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise UserError(f"seed (--seed) must be a whole number, not {seed!r}")
    if not 0 <= seed <= MAX_SEED:
        raise UserError(f"seed (--seed) must be between 0 and {MAX_SEED}, not {seed}")


def check_at_least_1(**counts: int | None) -> None:
    """Raise :class:`UserError` naming the first of ``counts`` (keyword = value; ``None``: not
    given) below 1, by its keyword and its option: ``max_steps (--max-steps) must be at least 1,
    got 0``; commands call it before any work (``--batch-size 0`` was a traceback once the model
    had loaded)."""
    for name, value in counts.items():
        if value is not None and value < 1:
            raise UserError(f"{option_name(name)} must be at least 1, got {value}")


class UserError(Exception):
    """An error caused by the user's input (bad path, malformed line, unknown field or model).

    The CLI prints ``str(error)`` as one line and exits with ``exit_code`` (2 by default).
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None,
                 exit_code: int = 2) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.exit_code = exit_code
        super().__init__(self.__str__())

    def __reduce__(self) -> tuple:
        """Pickle with all fields (an error raised in a worker process keeps its path, line
        and exit code in the parent)."""
        return type(self), (self.message, self.path, self.line, self.exit_code)

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        line = "" if self.line is None else f", line {self.line}"
        return f"{self.path}{line}: {self.message}"
