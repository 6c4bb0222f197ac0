"""Named tables of one kind of thing: the one helper every registry uses (docs/ARCHITECTURE.md,
"One registry per kind of name").

>>> units = Registry("unit", {"m": 1.0, "km": 1000.0}, option="--unit")
>>> units.get("km"), units.names()
(1000.0, ['m', 'km'])
>>> units.get("mile")
Traceback (most recent call last):
...
cuelens.errors.UserError: unknown unit 'mile' (--unit); choose from m, km
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TypeVar

from cuelens.errors import UserError, option_name

T = TypeVar("T")
E = TypeVar("E")


class Registry(Mapping[str, T]):
    """Name → entry, in the order the entries were added (the order choices are listed in).

    ``kind`` names the entries in messages ("segmenter"); ``option`` (e.g. ``--solver``) is
    the CLI option that takes the name, quoted in the unknown-name error; ``field`` (e.g.
    ``segmenter``), for a name the API's keyword and the CLI's option both take, names them
    both instead (:func:`~cuelens.errors.option_name`); ``also``: names its callers resolve
    before a lookup (``auto``), listed in that error too. A
    :class:`~collections.abc.Mapping` whose entries are only ever added: ``name in registry``,
    ``registry[name]``, iteration over the names, ``keys()``/``values()``/``items()`` (but
    :meth:`get` raises on an unknown name instead of returning a default)."""

    def __init__(self, kind: str, entries: Mapping[str, T] | Iterable[tuple[str, T]] = (),
                 *, option: str | None = None, field: str | None = None,
                 also: tuple[str, ...] = ()) -> None:
        self.kind, self.option, self.field, self.also = kind, option, field, also
        self._entries: dict[str, T] = {}
        for name, entry in (entries.items() if isinstance(entries, Mapping) else entries):
            self.add(name, entry)

    def add(self, name: str, entry: T) -> T:
        """Add ``entry`` under ``name`` (a name is registered once); returns ``entry``."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = entry
        return entry

    def register(self, name: str) -> Callable[[E], E]:
        """Decorator adding the decorated function or class under ``name`` (for a registry whose
        entries are the decorated objects themselves)."""
        def add(entry: E) -> E:
            self.add(name, entry)  # type: ignore[arg-type]
            return entry
        return add

    def get(self, name: str) -> T:  # type: ignore[override]  # no default: an unknown name fails
        """The entry called ``name``; an unknown name is a :class:`UserError` naming the kind,
        the name and the known names."""
        if name not in self._entries:
            raise self.unknown(name)
        return self._entries[name]

    def unknown(self, name: str, option: str | None = None) -> UserError:
        """The error for a name this registry lacks (``option``: the option that took it, when
        not the registry's own): ``field (--field): unknown …`` for a registry of a ``field``."""
        choices = ", ".join([*self._entries, *self.also])
        if option is None and self.field is not None:
            return UserError(f"{option_name(self.field)}: unknown {self.kind} {name!r}; choose "
                             f"from {choices}")
        option = option or self.option
        where = f" ({option})" if option else ""
        return UserError(f"unknown {self.kind} {name!r}{where}; choose from {choices}")

    def names(self) -> list[str]:
        """The registered names, in registration order."""
        return list(self._entries)

    def choices(self, separator: str = ", ") -> str:
        """The names joined for help text and messages (``a, b, c``; ``a | b | c``)."""
        return separator.join(self._entries)

    def __getitem__(self, name: str) -> T:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {self.choices()})"
