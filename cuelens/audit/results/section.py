"""The base of every typed results.json section (docs/results-schema.md): a dataclass in the
file's key order, written by ``to_json`` and read back, field by field, by ``from_json``;
inside :func:`typed_reads`, each section of a results.json content is read once however many
readers ask for it."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import fields

from cuelens.errors import UserError


class Section:
    """A results.json section as a dataclass (docs/results-schema.md): its fields in the file's
    key order, ``None`` ones absent from it (but those of :attr:`nullable`, written as null);
    its repr one line per field, never the rows."""

    key: typing.ClassVar[str] = ""  # the section's results.json key (a top-level one)
    nullable: typing.ClassVar[tuple[str, ...]] = ()  # fields written even when None (null)

    def to_json(self) -> dict:
        """The section as results.json holds it (its lists and dicts shared, not copied, but
        those holding sections)."""
        nested = _nested(typing.cast(type, type(self)))
        return {key: _json(value) if key in nested else value for key, value in vars(self).items()
                if value is not None or key in self.nullable}

    @classmethod
    def from_json(cls: type[S], data: dict) -> S:
        """The section of a results.json content (keys it does not know left out; a nested
        section, or a list or dict of them, read by its own ``from_json``)."""
        try:
            return cls(**{name: data[name] if read is None else read(data[name], name)
                          for name, read in _readers(typing.cast(type, cls)) if name in data})
        except TypeError as error:  # its keys are another cuelens version's
            raise UserError(f"this results.json is not one this version writes ({error}): "
                            "scan the data again") from error

    @classmethod
    def in_results(cls: type[S], results: dict) -> S | None:
        """This section (results.json key :attr:`key`) of a results.json content; ``None``
        when the file has none (or an empty one)."""
        data = results.get(cls.key)
        return _read_once(cls, data, lambda: cls.from_json(data)) if data else None

    @classmethod
    def required_in(cls: type[S], results: dict) -> S:
        """:meth:`in_results` of a results.json content that must have this section (a scan's
        ``dataset``); one :class:`UserError` when it has none."""
        section = cls.in_results(results)
        if section is None:
            raise UserError(f"this results.json has no {cls.key} section: scan the data again")
        return section

    @classmethod
    def rows_in(cls: type[S], results: dict) -> list[S]:
        """The rows of a section that results.json holds as a list (key :attr:`key`), each
        one of these; none when the file has none."""
        rows = results.get(cls.key) or []
        return _read_once(cls, rows, lambda: [cls.from_json(row) for row in rows])

    def __repr__(self) -> str:  # bounded: one line per field, never the rows (MBs on SNLI)
        lines = [f"  {key}={_brief(value)}," for key, value in vars(self).items()
                 if value is not None]
        return "\n".join([f"{type(self).__name__}(", *lines, ")"])


S = typing.TypeVar("S", bound=Section)
T = typing.TypeVar("T")
Reader = Callable[[object, str], object]
# (section class, id of a results.json value) → (that value, its typed form), inside typed_reads
_READS: contextvars.ContextVar[dict[tuple[type, int], tuple[object, object]] | None] = \
    contextvars.ContextVar("typed_reads", default=None)


@contextlib.contextmanager
def typed_reads() -> Iterator[None]:
    """Inside this block (or a function it decorates), each section of a results.json content
    is read once: findings, the conclusion, the next steps, the card and the report pages ask
    for the same sections many times (SNLI's cue rows a dozen). The contents must not change
    inside it (their readers only read); a block inside another shares the outer one's reads,
    and sections written by ``to_json`` inside it need no reading at all."""
    if _READS.get() is not None:
        yield
        return
    token = _READS.set({})
    try:
        yield
    finally:
        _READS.reset(token)


def _read_once(cls: type, data: object, read: Callable[[], T]) -> T:
    """``read()`` — ``data`` read as ``cls`` —, once per ``data`` inside :func:`typed_reads`
    (held with its typed form, so its id is never another value's there)."""
    reads = _READS.get()
    if reads is None:
        return read()
    hit = reads.get((cls, id(data)))
    if hit is None:
        hit = reads[(cls, id(data))] = (data, read())
    return typing.cast(T, hit[1])


def _remember(typed: object, data: object) -> None:
    """Inside :func:`typed_reads`: ``data``, written from ``typed`` (a section or a list of
    them), reads as ``typed``."""
    reads = _READS.get()
    if reads is not None:
        kind = type(typed[0]) if isinstance(typed, list) else type(typed)
        reads[(kind, id(data))] = (data, typed)


def remember_written(section: Section, data: dict) -> None:
    """Inside :func:`typed_reads`: the parts of ``data``, ``section.to_json()`` written before
    the block, read as ``section``'s own (as if written inside it: never parsed back)."""
    for name in _nested(typing.cast(type, type(section))):
        value = getattr(section, name)
        if isinstance(value, Section) or isinstance(value, list) and value:
            _remember(value, data[name])


def _json(value: object) -> object:
    """A field's value as results.json holds it: a section (or a list or dict of them) by its
    ``to_json``, anything else as it is."""
    if isinstance(value, dict) and value and isinstance(next(iter(value.values())), Section):
        return {key: row.to_json() for key, row in value.items()}
    if isinstance(value, Section):
        data: object = value.to_json()
    elif isinstance(value, list) and value and isinstance(value[0], Section):
        data = [row.to_json() for row in value]
    else:
        return value
    _remember(value, data)
    return data


@functools.cache
def _readers(cls: type[Section]) -> tuple[tuple[str, Reader | None], ...]:
    """Each field of ``cls`` with the function reading it from its results.json value (None:
    taken as it is; the type hints resolved once per class)."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, _reader(hints[f.name])) for f in fields(cls))  # type: ignore[arg-type]


@functools.cache
def _nested(cls: type[Section]) -> frozenset[str]:
    """The fields of ``cls`` that hold sections (or lists or dicts of them)."""
    return frozenset(name for name, read in _readers(typing.cast(type, cls)) if read is not None)


def _section_in(hint: object) -> type[Section] | None:
    kinds = typing.get_args(hint) or (hint,)
    return next((k for k in kinds if isinstance(k, type) and issubclass(k, Section)), None)


def _reader(hint: object) -> Reader | None:
    """How a field typed ``hint`` is read: a :class:`Section` from its dict, a ``list`` or
    ``dict`` of sections member by member, anything else as it is (None)."""
    optional = isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union
    inner = next(a for a in typing.get_args(hint) if a is not type(None)) if optional else hint
    origin, args = typing.get_origin(inner), typing.get_args(inner)
    row = _section_in(args[-1]) if origin in (list, dict) and args else None
    section = _section_in(hint)
    if row is not None and origin is list:
        return lambda value, name: None if value is None else [
            row.from_json(_object(v, name)) for v in _typed(value, list, name)]
    if row is not None:
        return lambda value, name: None if value is None else {
            k: row.from_json(_object(v, name)) for k, v in _typed(value, dict, name).items()}
    if section is not None:
        return lambda value, name: None if value is None else section.from_json(
            _object(value, name))
    return None


def _typed(value: object, kind: type, name: str) -> typing.Any:
    if not isinstance(value, kind):
        raise UserError(f"the {name} section of this results.json is not "
                        f"{'a list' if kind is list else 'an object'}: scan the data again")
    return value


def _object(value: object, name: str) -> dict:
    return typing.cast(dict, _typed(value, dict, name))


def _brief(value: object) -> str:
    """One short line for a field's value: a nested section's name, a list's length, a dict's
    first keys, a scalar (shortened: a text cut in the middle, still quoted)."""
    from cuelens.data.display import short

    if isinstance(value, Section):
        return f"{type(value).__name__}(…)"
    if isinstance(value, list):
        return f"[{len(value)} item{'s' * (len(value) != 1)}]"
    if isinstance(value, dict):
        keys = list(value)
        return "{" + ", ".join(map(repr, keys[:4])) + (", …" if len(keys) > 4 else "") + "}"
    text = repr(value)
    if len(text) <= 60:
        return text
    return repr(short(value, 56)) if isinstance(value, str) else text[:57] + "…"
