"""The bounded Jinja2 sandbox prompt templates run in: Jinja2's ``SandboxedEnvironment`` plus
per-render limits that stop with :class:`TemplateLimit` (docs/robustness.md, "Prompt templates")."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

#: Loop iterations one render may run, all loops together (nested loops multiply).
MAX_LOOP_ITERATIONS = 100_000
#: Characters (or items) of one value, and of one prompt.
MAX_PROMPT_CHARS = 1_000_000
#: Bits of one integer a template computes (``9 ** 9 ** 9`` is refused).
MAX_INTEGER_BITS = 4_096
#: The global each ``{% for %}`` iterates through (:func:`bounded_loops`).
LOOP_GUARD = "cuelens_loop_guard"
_WIDTH = re.compile(r"\d{7,}")


class TemplateLimit(Exception):
    """A render reached one of the sandbox's limits."""


class LoopBudget:
    """Counts the loop iterations of one render (all ``for`` loops share it)."""

    def __init__(self, limit: int = MAX_LOOP_ITERATIONS) -> None:
        self.left = limit

    def __call__(self, iterable: Iterable) -> Iterator:
        for item in iterable:
            self.left -= 1
            if self.left < 0:
                raise TemplateLimit(f"more than {MAX_LOOP_ITERATIONS:,} loop iterations")
            yield item


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (str, bytes, list, tuple, dict)) else 0


def _check_value(value: Any) -> Any:
    """``value`` when it is within the limits; else :class:`TemplateLimit`."""
    if _size(value) > MAX_PROMPT_CHARS:
        raise TemplateLimit(f"a value of more than {MAX_PROMPT_CHARS:,} characters")
    if isinstance(value, int) and value.bit_length() > MAX_INTEGER_BITS:
        raise TemplateLimit(f"an integer of more than {MAX_INTEGER_BITS:,} bits")
    return value


def _check_arguments(args: Iterable[Any]) -> None:
    """No integer argument that would make a value over the limits (a width, a repeat count:
    ``center(10**10)``)."""
    for arg in args:
        if isinstance(arg, int) and abs(arg) > MAX_PROMPT_CHARS:
            raise TemplateLimit(f"an argument over {MAX_PROMPT_CHARS:,}")


def _check_format(text: Any) -> None:
    """No width over the limit in a format string (``'%10000000000s'``, ``'{:>10000000000}'``)."""
    if isinstance(text, str) and any(int(m) > MAX_PROMPT_CHARS for m in _WIDTH.findall(text)):
        raise TemplateLimit(f"a width over {MAX_PROMPT_CHARS:,} characters")


def check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse ``*``, ``**``, ``+`` and ``%`` whose result would exceed the limits, before
    computing it."""
    if operator == "*":
        sizes = (_size(left) * right if isinstance(right, int) else 0,
                 _size(right) * left if isinstance(left, int) else 0)
        if max(sizes) > MAX_PROMPT_CHARS:
            raise TemplateLimit(f"a value of more than {MAX_PROMPT_CHARS:,} characters")
        if isinstance(left, int) and isinstance(right, int) and \
                left.bit_length() + right.bit_length() > MAX_INTEGER_BITS:
            raise TemplateLimit(f"an integer of more than {MAX_INTEGER_BITS:,} bits")
    elif operator == "**" and isinstance(left, int) and isinstance(right, int) and \
            abs(left) > 1 and right > 0 and left.bit_length() * right > MAX_INTEGER_BITS:
        raise TemplateLimit(f"an integer of more than {MAX_INTEGER_BITS:,} bits")
    elif operator == "+" and _size(left) + _size(right) > MAX_PROMPT_CHARS:
        raise TemplateLimit(f"a value of more than {MAX_PROMPT_CHARS:,} characters")
    elif operator == "%":
        _check_format(left)


def bounded_environment():
    """A :class:`~jinja2.sandbox.SandboxedEnvironment` whose operators, calls and filters
    respect the limits (loops: :func:`bounded_loops`)."""
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    class Bounded(SandboxedEnvironment):
        intercepted_binops = frozenset({"*", "**", "+", "%"})

        def call_binop(self, context, operator, left, right):
            check_binop(operator, left, right)
            return _check_value(super().call_binop(context, operator, left, right))

        def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 (Jinja's names)
            _check_arguments([*args, *kwargs.values()])
            bound = getattr(__obj, "__wrapped__", __obj)  # Jinja wraps str.format
            method, owner = getattr(bound, "__name__", ""), getattr(bound, "__self__", None)
            if method in ("format", "format_map"):
                _check_format(owner)
            if method == "replace" and len(args) >= 2:
                _check_replace(owner, args[0], args[1])
            return _check_value(super().call(__context, __obj, *args, **kwargs))

    # Prompts are plain text for a language model, never HTML: escaping would corrupt the
    # dataset text the model reads. Reports escape prompts and answers when they show them.
    environment = Bounded(undefined=StrictUndefined, autoescape=False,
                          keep_trailing_newline=False)
    environment.filters = {name: _bounded_filter(name, function)
                           for name, function in environment.filters.items()}
    return environment


def _check_replace(text: Any, old: Any, new: Any) -> None:
    if isinstance(text, str) and isinstance(old, str) and isinstance(new, str):
        count = text.count(old) if old else len(text) + 1
        if len(text) + count * (len(new) - len(old)) > MAX_PROMPT_CHARS:
            raise TemplateLimit(f"a value of more than {MAX_PROMPT_CHARS:,} characters")


def _bounded_filter(name: str, function):
    def bounded(*args, **kwargs):
        values = [a for a in args if not _is_context(a)]
        _check_arguments([*values[1:], *kwargs.values()])
        if name == "format" and values:
            _check_format(values[0])
        if name == "replace" and len(values) >= 3:
            _check_replace(values[0], values[1], values[2])
        return _check_value(function(*args, **kwargs))

    if hasattr(function, "jinja_pass_arg"):  # Jinja passes the context or environment first
        bounded.jinja_pass_arg = function.jinja_pass_arg  # type: ignore[attr-defined]
    return bounded


def _is_context(value: Any) -> bool:
    from jinja2.environment import Environment
    from jinja2.nodes import EvalContext
    from jinja2.runtime import Context

    return isinstance(value, (Environment, EvalContext, Context))


def bounded_loops(tree) -> None:
    """Make every ``{% for %}`` of a parsed template iterate through :data:`LOOP_GUARD` (a
    :class:`LoopBudget` given at render time)."""
    from jinja2 import nodes

    for loop in tree.find_all(nodes.For):
        loop.iter = nodes.Call(nodes.Name(LOOP_GUARD, "load"), [loop.iter], [], None, None,
                               lineno=loop.lineno)


def render_bounded(template, fields: dict) -> str:
    """``template`` rendered with ``fields`` and a fresh loop budget, its output bounded."""
    pieces, size = [], 0
    for piece in template.generate(**fields, **{LOOP_GUARD: LoopBudget()}):
        size += len(piece)
        if size > MAX_PROMPT_CHARS:
            raise TemplateLimit(f"a prompt of more than {MAX_PROMPT_CHARS:,} characters")
        pieces.append(piece)
    return "".join(pieces)
