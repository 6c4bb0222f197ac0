"""Hygiene keys (docs/methods.md §11): every item's input, pair-text, premise and answer keys
(:class:`ItemKeys`), the groups of equal keys (:class:`Groups`) and the copy flags of the per-item
table; the normal form is :func:`cuelens.audit.text_keys.normal_form`, so case, punctuation and
spacing never hide a copy."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from itertools import accumulate, chain, combinations, pairwise

import numpy as np

from cuelens.audit.groups import MIN_KEY_TOKENS
from cuelens.audit.text_keys import TextKeys, as_keys, combine, text_key, text_keys
from cuelens.audit.tokenize import normal_forms
from cuelens.data.compact import LabelColumn
from cuelens.data.dataset import Split, Task

MAX_EXAMPLES = 5


def near_parts(split: Split, items: np.ndarray) -> list[list[str]]:
    """The inputs of ``items`` as indexed for near duplicates, part by part: their normalised
    premises (+ question) and their normalised hypotheses / sorted choice sets (two lists, in
    ``items`` order; texts normalised a batch at a time, :func:`normal_forms`)."""
    order = items.tolist()
    premises = list(normal_forms(split.premise_context(i) for i in order))
    if split.task == Task.NLI:
        return [premises, list(normal_forms(split.hypotheses[i] for i in order))]
    choices = list(normal_forms(choice for i in order for choice in split.choices[i]))
    ends = accumulate(len(split.choices[i]) for i in order)
    return [premises, [" | ".join(sorted(choices[start:end]))
                       for start, end in pairwise(chain([0], ends))]]


def label_keys(labels: Sequence[str]) -> np.ndarray:
    """NLI label values as 64-bit fingerprints (:func:`~cuelens.audit.text_keys.text_key`), each
    distinct value hashed once: equal labels, equal keys, whatever chunk they are in (two values
    collide with probability 2⁻⁶⁴); a compact split's label column is read by its codes."""
    if isinstance(labels, LabelColumn):
        table = np.asarray([as_keys(text_key(label))[0] for label in labels.values],
                           dtype=np.uint64)
        return table[np.frombuffer(labels.codes, dtype=np.int16)] if len(labels) else \
            np.zeros(0, np.uint64)
    known = {label: as_keys(text_key(label))[0] for label in set(labels)}
    return np.fromiter((known[label] for label in labels), dtype=np.uint64, count=len(labels))


@dataclass(frozen=True)
class ItemKeys:
    """Compact per-item keys of one split (docs/methods.md §11): 64-bit hashes of the normalised
    input, the input as shown (MCQ: the choices in their order), premise, mirrored / contrastive
    pair text and answer (MCQ: the right choice's text key; NLI: :func:`label_keys`); ``has_pair``
    marks items with a pair text (NLI: hypotheses of 3+ tokens). Answers are only ever compared
    for equality."""

    inputs: np.ndarray
    shown: np.ndarray
    premises: np.ndarray
    pairs: np.ndarray
    has_pair: np.ndarray
    answers: np.ndarray

    @classmethod
    def of(cls, split: Split, keys: TextKeys | None = None) -> "ItemKeys":
        """From the split's :class:`~cuelens.audit.text_keys.TextKeys` (default: the cached
        :func:`~cuelens.audit.text_keys.text_keys`; no text is normalised again). Every key
        depends on its item alone, so the chunks of a split can be keyed apart."""
        keys = text_keys(split) if keys is None else keys
        if split.task == Task.NLI:
            pairs, has_pair = keys.text, keys.text_words >= MIN_KEY_TOKENS
            answers, shown = label_keys(split.labels), pairs
        else:
            pairs, has_pair = keys.text_sets(), np.ones(len(split), dtype=bool)
            answers = keys.text[keys.starts[:-1] + np.asarray(split.labels, dtype=np.int64)]
            shown = keys.text_sequences()
        return cls(combine(keys.context, pairs), combine(keys.context, shown), keys.context,
                   pairs, has_pair, answers)

    def take(self, items: np.ndarray) -> "ItemKeys":
        """The keys of ``items`` (positions)."""
        return ItemKeys(**{f.name: getattr(self, f.name)[items] for f in fields(self)})

    @classmethod
    def concat(cls, parts: list["ItemKeys"]) -> "ItemKeys":
        """The keys of consecutive ``parts`` (e.g. chunks) one after the other."""
        return cls(**{f.name: np.concatenate([getattr(p, f.name) for p in parts])
                      for f in fields(cls)})


@dataclass(frozen=True)
class Groups:
    """Items sharing a key, groups of two or more only, in order of their first item, members
    ascending: group ``g`` is ``members[bounds[g]:bounds[g + 1]]``."""

    members: np.ndarray
    bounds: np.ndarray

    @classmethod
    def of(cls, keys: np.ndarray) -> "Groups":
        """Group the positions of ``keys`` by key."""
        items = np.argsort(keys, kind="stable")  # equal keys: ascending positions
        starts = _run_starts(keys[items])
        sizes = np.diff(np.r_[starts, len(items)])
        shared = np.repeat(sizes > 1, sizes)
        first = np.repeat(items[starts], sizes)[shared]  # the first item of each one's group
        order = np.lexsort((items[shared], first))
        return cls(items[shared][order], np.r_[_run_starts(first[order]), order.size])

    def __len__(self) -> int:
        return len(self.bounds) - 1

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.bounds)

    def __getitem__(self, g: int) -> np.ndarray:
        return self.members[self.bounds[g]:self.bounds[g + 1]]

    def mixed(self, answers: np.ndarray) -> np.ndarray:
        """Whether each group's members carry more than one distinct answer."""
        if not len(self):
            return np.zeros(0, dtype=bool)
        values, starts = answers[self.members], self.bounds[:-1]
        return np.minimum.reduceat(values, starts) != np.maximum.reduceat(values, starts)

    def distinct(self, *columns: np.ndarray) -> np.ndarray:
        """Per group, the number of distinct rows of ``columns`` (by position) among its
        members."""
        group = np.repeat(np.arange(len(self)), self.sizes)
        values = [column[self.members] for column in columns]
        order = np.lexsort((*values[::-1], group))
        starts = _run_starts(group[order], *(v[order] for v in values))
        return np.bincount(group[order][starts], minlength=len(self))

    def example_pairs(self, which: np.ndarray,
                      partners: Callable[[int, int], bool]) -> list[tuple[int, int]]:
        """In the first :data:`MAX_EXAMPLES` groups where ``which``, the first two members
        ``(i, j)`` (positions) for which ``partners(i, j)``; ``which`` only marks groups that
        have such a pair."""
        return [next((int(i), int(j)) for i, j in combinations(self[g], 2) if partners(i, j))
                for g in np.flatnonzero(which)[:MAX_EXAMPLES]]

    def discordant_pairs(self, answers: np.ndarray) -> int:
        """Pairs of members of one group whose answers differ."""
        group, values = np.repeat(np.arange(len(self)), self.sizes), answers[self.members]
        order = np.lexsort((values, group))
        same = np.diff(np.r_[_run_starts(group[order], values[order]), order.size])
        return int((self.sizes * (self.sizes - 1) // 2).sum() - (same * (same - 1) // 2).sum())


def _run_starts(*columns: np.ndarray) -> np.ndarray:
    """Where each run of equal rows of the (sorted) ``columns`` starts."""
    changed = np.zeros(len(columns[0]), dtype=bool)
    changed[:1] = True
    for column in columns:
        changed[1:] |= column[1:] != column[:-1]
    return np.flatnonzero(changed)


def first_match(keys: np.ndarray, table: np.ndarray) -> np.ndarray:
    """For each key, the first position in ``table`` holding it (-1: none)."""
    values, first = np.unique(table, return_index=True)
    at = np.searchsorted(values, keys)
    inside = np.flatnonzero(at < len(values))
    hit = inside[values[at[inside]] == keys[inside]]
    out = np.full(len(keys), -1, dtype=np.int64)
    out[hit] = first[at[hit]]
    return out


def copy_flags(inputs: np.ndarray, answers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item of one split (or of one partition holding every copy of its keys): whether its
    input key occurs again (``duplicate``) and whether those copies carry different answers
    (``label_conflict``); the per-item columns of the bias table (docs/results-schema.md)."""
    values, inverse, counts = np.unique(inputs, return_inverse=True, return_counts=True)
    low = np.full(len(values), np.iinfo(np.uint64).max, dtype=np.uint64)
    high = np.zeros(len(values), dtype=np.uint64)
    np.minimum.at(low, inverse, answers)
    np.maximum.at(high, inverse, answers)
    return counts[inverse] > 1, (low != high)[inverse]
