"""Sampled example instances for the report's cue explorer and easy/hard section.

Only a bounded sample is embedded (≤ ``per_cue`` instances for each listed cue, ≤ ``per_group``
easy and hard items), so reports stay small on SNLI-size data. Sampling is seeded and the
same in both memory modes (:class:`ExamplePicker`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from cuelens.audit.results import CueRow, ExamplesSection
from cuelens.data.dataset import Instances, Split, Task
from cuelens.jsonio import read_number

if TYPE_CHECKING:
    from cuelens.audit.counts import TokenSequences


def sort_value(encoded) -> float:
    """A results.json metric value for ranking: ±∞ as such, undefined (null) last."""
    x = read_number(encoded)
    return -math.inf if math.isnan(x) else x


RANK_BY = "z"  # default cue ranking: significance (docs/methods.md §2)
LISTED_PER_LABEL = 20  # strongest cues of each label listed besides the significant ones
MAX_LISTED_CUES = 2000  # cap on the significant cues listed (report table, examples)
EXAMPLE_BUDGET = 4000  # sampled instances for the explorer in all (per cue: 5 to ``per_cue``)


def cue_rank_key(rank_by: str = RANK_BY):
    """Sort key of a cue: ``rank_by`` descending, then z, support, token and label (ties are
    frequent with cp, where many rare words score 1.0: z puts the significant ones first)."""

    def key(c: CueRow) -> tuple:
        m = c.metrics
        return (-sort_value(m.get(rank_by)), -sort_value(m.get("z")), -c.count, c.token,
                c.label)

    return key


def top_cues_by_label(cues: list[CueRow], per_label: int,
                      rank_by: str = RANK_BY) -> dict[str, list[CueRow]]:
    """The ``per_label`` strongest cues of each label by ``rank_by`` (:func:`cue_rank_key`),
    among the words pointing to it (``z > 0``: more frequent with the label than without); a
    label no word points to is absent."""
    by_label: dict[str, list[CueRow]] = {}
    for cue in cues:
        if sort_value(cue.metrics.get("z")) > 0:
            by_label.setdefault(cue.label, []).append(cue)
    key = cue_rank_key(rank_by)  # nsmallest: sorted(...)[:per_label] without the whole sort
    return {label: heapq.nsmallest(per_label, group, key=key)
            for label, group in sorted(by_label.items())}


def listed_cues(cues: list[CueRow], per_label: int = LISTED_PER_LABEL,
                rank_by: str = RANK_BY) -> list[CueRow]:
    """The cues a report lists, strongest first by ``rank_by``: every significant cue (at most
    :data:`MAX_LISTED_CUES`, by z) and the ``per_label`` strongest of each label."""
    significant = sorted((c for c in cues if c.significant),
                         key=cue_rank_key("z"))[:MAX_LISTED_CUES]
    top = [c for group in top_cues_by_label(cues, per_label, rank_by).values() for c in group]
    chosen = {(c.token, c.label): c for c in significant + top}
    return sorted(chosen.values(), key=cue_rank_key(rank_by))


def token_ids(vocab: list[str], tokens: list[str]) -> list[int]:
    """The id of each of ``tokens`` in ``vocab`` (−1: not a word of it)."""
    index = {word: i for i, word in enumerate(vocab)}
    return [index.get(token, -1) for token in tokens]


def holders(words: TokenSequences, ids: list[int]) -> list[np.ndarray]:
    """Per word id of ``ids`` (:func:`token_ids`), the instances of ``words``
    (:func:`~cuelens.audit.counts.encode` with repeats) that hold it, in order: one lookup over
    all their word ids."""
    # word id → index in ids; the ids −1 land in the unused last slot
    wanted = np.full(len(words.vocab) + 1, -1, dtype=np.int64)
    wanted[np.asarray(ids, dtype=np.int64)] = np.arange(len(ids))
    which, n = wanted[words.indices], max(len(words), 1)
    held = which >= 0
    owner = np.repeat(np.arange(len(words), dtype=np.int64), words.lengths)[held]
    pairs = np.unique(which[held] * n + owner)  # sorted by id, then instance
    ends = np.searchsorted(pairs // n, np.arange(len(ids) + 1))
    return [pairs[start:end] % n for start, end in zip(ends, ends[1:])]


PartPicks = tuple[list[list], list[list]]  # per listed cue, then easy and hard: sorted entries


@dataclass
class Picks:
    """The ``size`` instances of lowest priority offered so far, with their example rows."""

    size: int
    priority: list = field(default_factory=list)  # (priority, instance, row) sorted

    def offer(self, priorities: np.ndarray, instances: np.ndarray, local: np.ndarray,
              row: Callable[[int], dict]) -> None:
        """Offer ``instances`` (``local``: their indices in the part ``row`` reads)."""
        order = np.argsort(priorities, kind="stable")[:self.size]
        self.merge([(int(priorities[i]), int(instances[i]), row(int(local[i]))) for i in order])

    def merge(self, entries: list) -> None:
        """Offer sorted ``entries`` (another :class:`Picks`' ``priority``)."""
        self.priority = sorted(self.priority + entries, key=lambda entry: entry[0])[:self.size]

    def chosen(self) -> list[tuple[int, dict]]:
        return sorted((instance, row) for _, instance, row in self.priority)


@dataclass(frozen=True)
class ExamplePicker:
    """The one seeded example picker of both memory modes: per listed cue (``tokens``) at most
    ``per_cue`` evaluated instances holding it, at most ``per_group`` easy and hard items (MCQ:
    their right choice), each set the lowest of a seeded hash of the instances' positions in
    the evaluated split. A part of the split (the whole split held in memory, or one chunk)
    gives its picks (:meth:`part`), merged by :meth:`section`: the same examples however the
    split is cut."""

    tokens: list[str]
    label_names: list[str]
    per_cue: int
    per_group: int
    seed: int

    @classmethod
    def of(cls, cues: list[CueRow], label_names: list[str], seed: int,
           per_label: int = LISTED_PER_LABEL, per_cue: int = 20,
           per_group: int = 10) -> ExamplePicker:
        """The picker of the distinct tokens of the :func:`listed_cues` (default ranking), each
        with ``per_cue`` examples, fewer when many cues share the :data:`EXAMPLE_BUDGET`."""
        tokens = list(dict.fromkeys(c.token for c in listed_cues(cues, per_label)))
        per_cue = max(5, min(per_cue, EXAMPLE_BUDGET // max(len(tokens), 1)))
        return cls(tokens, label_names, per_cue, per_group, seed)

    def part(self, split: Split, first: int, item_easy: np.ndarray,
             words: TokenSequences | None = None) -> PartPicks:
        """The picks of ``split`` (items ``first …`` of the evaluated split; ``item_easy`` theirs):
        ``words``, its instances' words (repeats kept) when the scan encoded them, else they
        are encoded here."""
        from cuelens.audit.counts import encode
        from cuelens.audit.folds import seeded_hash

        shown = split.instances(self.label_names)
        words = encode(shown.texts, repeats=True) if words is None else words
        k = len(words) // max(len(split), 1)
        instances = first * k + np.arange(len(words), dtype=np.int64)
        priority = seeded_hash(instances, self.seed)
        row = partial(example_row, split, shown, self.label_names, item_easy=item_easy)
        by_cue = [Picks(self.per_cue) for _ in self.tokens]
        for picks, held in zip(by_cue, holders(words, token_ids(words.vocab, self.tokens))):
            picks.offer(priority[held], instances[held], held, row)
        gold = shown_instances(split, shown)
        groups = [Picks(self.per_group) for _ in range(2)]
        for picks, members in zip(groups, (gold[item_easy], gold[~item_easy])):
            picks.offer(priority[members], instances[members], members, row)
        return [p.priority for p in by_cue], [p.priority for p in groups]

    def section(self, parts: Iterable[PartPicks]) -> ExamplesSection:
        """The ``examples`` section (:func:`examples_section`) of the parts' picks merged."""
        by_cue = [Picks(self.per_cue) for _ in self.tokens]
        groups = [Picks(self.per_group) for _ in range(2)]
        for cue_entries, group_entries in parts:
            for picks, entries in zip((*by_cue, *groups), (*cue_entries, *group_entries)):
                picks.merge(entries)
        chosen = [picks.chosen() for picks in (*by_cue, *groups)]
        rows = dict(chain.from_iterable(chosen))  # an instance's row is the same wherever listed
        return examples_section(self.tokens,
                                [[instance for instance, _ in entries] for entries in chosen],
                                rows.__getitem__)


def examples_section(tokens: list[str], pools: list[list[int]],
                     row: Callable[[int], dict]) -> ExamplesSection:
    """The ``examples`` section from the instances chosen for each of ``tokens``, then for the
    easy and the hard items (``pools``): every distinct instance one ``items`` row (``row``),
    in order of first listing, and the lists as indices into them."""
    index: dict[int, int] = {}
    for instance in chain.from_iterable(pools):
        index.setdefault(instance, len(index))
    items = [row(instance) for instance in index]
    listed = [[index[instance] for instance in pool] for pool in pools]
    return ExamplesSection(items=items, by_cue=dict(zip(tokens, listed)), easy=listed[-2],
                           hard=listed[-1])


def example_row(split: Split, instances: Instances, label_names: list[str], instance: int,
                item_easy: np.ndarray) -> dict:
    """An ``examples.items`` row: ``instances[instance]`` of ``split`` with its item's id and
    easy flag (docs/results-schema.md)."""
    item = int(instances.item[instance])
    return {"id": split.ids[item], "premise": instances.premises[instance],
            "text": instances.texts[instance],
            "label": label_names[int(instances.labels[instance])], "easy": bool(item_easy[item])}


def shown_instances(split: Split, instances: Instances) -> np.ndarray:
    """Per item of ``split``, the instance its easy/hard example shows: the first of its
    ``instances`` (MCQ: its right choice)."""
    first = np.searchsorted(instances.item, np.arange(len(split)))
    return first + split.item_labels([]) if split.task == Task.MCQ else first
