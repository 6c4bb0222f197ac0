"""Leakage-proof fold assignment: items that share text are kept in one fold (docs/methods.md
§11, "Groups", "Grouping unit per task", "Giant groups"; why: docs/data-hygiene.md, "Grouped
folds").

Groups are the connected components (:func:`connected_groups`) of the graph linking an item to
each of its keys (:func:`split_links`), compared in the normal form of
:func:`~cuelens.audit.text_keys.normal_form`; a giant group is broken up by :func:`break_giant`.
Folds are dealt by :func:`grouped_folds`, a deterministic function of (groups, strata, number of
folds, seed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from cuelens.audit.text_keys import SplitCache, as_keys, normal_form, text_key, text_keys
from cuelens.data.dataset import Task
from cuelens.errors import UserError, option_name
from cuelens.wording import plural

MIN_KEY_TOKENS = 3  # shorter texts ("bank", "a dog") are concepts reused by unrelated items
GIANT_SHARE = 1 / 3  # a group holding more items than this share is broken up (templates)
UNITS = {Task.NLI: "premise or hypothesis text",
         Task.MCQ: "premise, labelled premise part (e.g. an ARCT claim), option text or "
                   "option set"}
PART_MARKER = re.compile(r"(?:^|\s)(?=[A-Z][A-Za-z]*: )")  # "Reason: … Claim: …"


def split_links(split, first_item: int = 0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The linking keys of every item of ``split`` by kind: ``p`` premises and ``t`` hypothesis /
    choice texts of :data:`MIN_KEY_TOKENS`+ words, ``c`` (MCQ) the option set in any order,
    ``g`` the ``--group-field`` ids; each as (item numbers from ``first_item``, fingerprints of
    the normal forms, :mod:`cuelens.audit.text_keys`)."""
    keys = text_keys(split)
    items = np.arange(first_item, first_item + len(split))
    long_premise = keys.premise_words >= MIN_KEY_TOKENS
    long_text = keys.text_words >= MIN_KEY_TOKENS
    links = {"p": (items[long_premise], keys.premise[long_premise]),
             "t": (np.repeat(items, np.diff(keys.starts))[long_text], keys.text[long_text])}
    if split.task == Task.MCQ:  # the whole option set, whatever its length (mirrored items)
        links["c"] = (items, keys.text_sets())
    parts = premise_parts(split.premises, first_item)
    if len(parts[0]):
        links["s"] = parts
    user = [i for i, group in enumerate(split.groups) if group is not None]
    if user:
        links["g"] = (items[user], as_keys(b"".join(text_key(split.groups[i]) for i in user)))
    return links


def premise_parts(premises: Sequence[str], first_item: int = 0
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The labelled parts of structured premises (``"Reason: … Claim: …"``, two or more
    ``Label:`` segments) of :data:`MIN_KEY_TOKENS`+ words, as (item numbers, fingerprints of
    their normal forms, label included): items sharing a claim share a key."""
    items: list[int] = []
    keys = bytearray()
    for i, premise in enumerate(premises):
        if premise.count(": ") < 2:
            continue
        segments = [normal_form(part) for part in PART_MARKER.split(premise)]
        segments = [part for part in segments if part.count(" ") + 1 >= MIN_KEY_TOKENS]
        if len(segments) >= 2:
            items += [first_item + i] * len(segments)
            keys += b"".join(text_key(part) for part in segments)
    return np.asarray(items, dtype=np.int64), as_keys(keys)


def connected_groups(n: int, links: dict[str, tuple[np.ndarray, np.ndarray]],
                     limit: int | None = None) -> np.ndarray:
    """A group id per item: connected components of the graph linking items that share a key of
    the same kind (``links``: kind → (items, 64-bit keys)), numbered in order of each group's
    first item (so ids do not depend on hashing). A key held more than ``limit`` times (None:
    no limit) is a template and links nothing, except the user's group ids (kind ``g``)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    rows, cols, m = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], 0
    for kind, (items, col) in _key_columns(links).items():
        if kind != "g" and limit is not None:
            keep = np.bincount(col)[col] <= limit
            items, col = items[keep], col[keep]
        rows.append(items)
        cols.append(col + n + m)
        m += int(col.max()) + 1 if len(col) else 0
    row, col = np.concatenate(rows), np.concatenate(cols)
    edges = sp.coo_matrix((np.ones(len(row)), (row, col)), shape=(n + m, n + m))
    _, component = connected_components(edges, directed=False)
    return first_of_each(component[:n])[1]


def first_of_each(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first position of each distinct value of ``values`` (ascending), and each position's
    index into that array (the distinct values numbered in order of first appearance)."""
    _, first, group = np.unique(values, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[group.ravel()]


def _key_columns(links: dict[str, tuple[np.ndarray, np.ndarray]]
                 ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each kind's (items, dense key numbers)."""
    return {kind: (items, np.unique(keys, return_inverse=True)[1].ravel())
            for kind, (items, keys) in links.items()}


@dataclass
class Grouping:
    """Group ids per item and how they were formed: ``template_limit`` is None when every
    shared key links its items, else the most items a key may be shared by before it counts as
    a template (a giant group was broken up; ``warning`` says how)."""

    groups: np.ndarray
    unit: str
    template_limit: int | None = None
    warning: str | None = None


def _largest(groups: np.ndarray) -> int:
    return int(np.bincount(groups).max()) if len(groups) else 0


def break_giant(n: int, links: dict[str, tuple[np.ndarray, np.ndarray]], unit: str) -> Grouping:
    """:func:`connected_groups` with every shared key linking; when that leaves a group of more
    than :data:`GIANT_SHARE` of the items (templated data: a few premises and hypotheses
    recombined), the most-shared keys are treated as templates: the largest template limit
    (a binary search over the keys' multiplicities) whose largest group fits
    (docs/methods.md §11). The user's group ids always link."""
    groups = connected_groups(n, links)
    giant = max(2, int(GIANT_SHARE * n))
    if _largest(groups) <= giant:
        return Grouping(groups, unit)
    columns = _key_columns({kind: pair for kind, pair in links.items() if kind != "g"})
    sizes = np.unique(np.concatenate([np.bincount(col) for _, col in columns.values()]
                                     + [np.ones(1, np.int64)]))
    low, high = 0, len(sizes) - 1  # sizes[0] == 1: no shared text links
    while low < high:
        middle = (low + high + 1) // 2
        if _largest(connected_groups(n, links, int(sizes[middle]))) <= giant:
            low = middle
        else:
            high = middle - 1
    limit = int(sizes[low])
    split = connected_groups(n, links, limit)
    warning = (f"shared texts join {_largest(groups)} of the {n} items into one group "
               f"(templated data): texts shared by more than {plural(limit, 'item')} are treated "
               f"as templates and link nothing, leaving {plural(int(split.max()) + 1, 'group')} of "
               f"at most {plural(_largest(split), 'item')}")
    return Grouping(split, unit, limit, warning)


def grouping(splits: Iterable) -> Grouping:
    """The :class:`Grouping` of the items of ``splits`` concatenated in order (train first, then
    test; or the chunks of one split, read one at a time: only their links are kept); splits
    loaded with ``--group-field`` (``split.groups`` filled in) add the user's ids."""
    links: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    first, task = 0, None
    for split in splits:
        task = task or split.task
        for kind, pair in split_links(split, first).items():
            links.setdefault(kind, []).append(pair)
        first += len(split)
    merged = {kind: (np.concatenate([items for items, _ in pairs]),
                     np.concatenate([keys for _, keys in pairs]))
              for kind, pairs in links.items()}
    unit = UNITS[task or Task.NLI] + (" or group field" if "g" in merged else "")
    return break_giant(first, merged, unit)


_GROUPINGS = SplitCache[Grouping]()


def split_grouping(split) -> Grouping:
    """:func:`grouping` of one split, computed once while the split lives (the leakage folds,
    the length baseline's and the MCQ baselines' all group the evaluated split)."""
    return _GROUPINGS.get(split) or _GROUPINGS.keep(split, grouping([split]))


def split_folds(split, label_names: list[str], n_folds: int, seed: int) -> np.ndarray:
    """The grouped folds of one split's items (:func:`split_grouping`, strata: their labels),
    as the leakage table deals a cross-validated file's."""
    return grouped_folds(split_grouping(split).groups, split.item_labels(label_names), n_folds,
                         seed)


def n_groups(groups: np.ndarray) -> int:
    """The number of distinct ids in ``groups`` (via :func:`_ranks`: a bare ``np.unique`` is
    ~10× slower on a million ids)."""
    return int(_ranks(np.asarray(groups)).max()) + 1 if len(groups) else 0


def check_cross_validation_folds(cross_validated: bool, n_folds: int) -> None:
    """A single file is cross-validated (docs/methods.md §3): over 2 folds or more (one error
    whatever the memory mode)."""
    if cross_validated and n_folds < 2:
        raise UserError(f"cross-validating a single file needs {option_name('folds')} of 2 or "
                        "more (or give train= and test= (--train/--test))")


def check_fold_groups(n_folds: int, n_items: int, n_groups: int, what: str = "items") -> None:
    """Folds hold whole groups: ``n_items`` forming ``n_groups`` groups cannot fill ``n_folds``
    folds when ``n_groups < n_folds`` (one error whatever the fold strategy)."""
    if n_groups < n_folds:
        raise UserError(f"cannot make {n_folds} folds: the {n_items} {what} form only "
                        f"{plural(n_groups, 'group')} of items sharing a premise or text "
                        f"(lower {option_name('folds')})")


def grouped_folds(groups: np.ndarray, strata: np.ndarray, n_folds: int, seed: int) -> np.ndarray:
    """A fold id per item; every group lies in one fold, strata balanced (docs/methods.md §11,
    "Groups": groups of one *type*, their items per stratum, dealt out evenly, largest types
    first, the rest to the folds holding the least of the type's strata, then the fewest items,
    then a seeded order). A few vectorised passes plus one small step per distinct type
    (scikit-learn's ``StratifiedGroupKFold`` balances the same way but loops over every group
    and fold in Python, which took minutes per call on a million items)."""
    return GroupTypes.of(groups, strata, n_folds, "items").folds(n_folds, seed)


@dataclass(frozen=True)
class GroupTypes:
    """What :func:`grouped_folds` deals without its seed, found once for a run of seeds (the
    re-seeded and easy/hard runs of a scan): each item's group rank, the group types (items
    per stratum) largest first, each group's type and the items per stratum."""

    group: np.ndarray  # per item: its group's rank (:func:`narrowed`)
    types: np.ndarray  # type × stratum: items of each stratum in a group of the type
    type_of: np.ndarray  # per group: its type (the smallest integer type that holds it)
    type_order: np.ndarray  # the types, largest groups first
    stratum_sizes: np.ndarray

    @classmethod
    def of(cls, groups: np.ndarray, strata: np.ndarray, n_folds: int,
           what: str = "items") -> GroupTypes:
        """The types of ``groups`` (checked to fill ``n_folds`` folds) over ``strata``."""
        group = _ranks(np.asarray(groups))
        n_groups = int(group.max()) + 1 if len(group) else 0
        check_fold_groups(n_folds, len(groups), n_groups, what)
        stratum = _ranks(np.asarray(strata))
        n_strata = int(stratum.max()) + 1
        composition = np.bincount(group * n_strata + stratum,
                                  minlength=n_groups * n_strata).reshape(n_groups, n_strata)
        types, type_of = _unique_rows(composition)
        # a stable sort of small integers is a radix sort: the same order, faster
        type_of = type_of.astype(np.min_scalar_type(max(len(types) - 1, 0)))
        return cls(narrowed(group), types, type_of,
                   np.lexsort((*types.T[::-1], -types.sum(axis=1))),
                   np.bincount(stratum, minlength=n_strata))

    def folds(self, n_folds: int, seed: int) -> np.ndarray:
        """A fold id per item under ``seed`` (:func:`grouped_folds`)."""
        types, type_of, n_groups = self.types, self.type_of, len(self.type_of)
        rng = np.random.default_rng(seed % 2**32)
        shuffled = rng.permutation(n_groups)
        members = shuffled[np.argsort(type_of[shuffled], kind="stable")]  # by type, shuffled
        starts = np.concatenate([[0], np.cumsum(np.bincount(type_of))])
        fill = np.zeros((n_folds, len(self.stratum_sizes)), dtype=np.int64)  # dealt so far
        fold_of_group = np.empty(n_groups, dtype=np.int64)
        for t in self.type_order:
            start, end = starts[t], starts[t + 1]
            rounds, left = divmod(end - start, n_folds)
            share = (fill / self.stratum_sizes)[:, types[t] > 0].sum(axis=1)
            lightest = np.lexsort((rng.random(n_folds), fill.sum(axis=1), share))
            dealt = np.concatenate([np.tile(np.arange(n_folds), rounds), lightest[:left]])
            fold_of_group[members[start:end]] = dealt
            fill += np.bincount(dealt, minlength=n_folds)[:, None] * types[t][None, :]
        return fold_of_group[self.group]


def narrowed(values: np.ndarray) -> np.ndarray:
    """Non-negative integers in the narrowest unsigned type that holds them (per-item arrays
    held for a whole scan)."""
    return values.astype(np.min_scalar_type(int(values.max()) if len(values) else 0))


def _ranks(values: np.ndarray) -> np.ndarray:
    """Each value's rank among the distinct values (``np.unique``'s inverse), in O(n) for
    non-negative integers below ``2n`` (group ids, labels) and by sorting otherwise."""
    if values.dtype.kind in "iu" and len(values) and 0 <= values.min() \
            and values.max() < 2 * len(values):
        present = np.bincount(values) > 0
        return (np.cumsum(present) - 1)[values]
    return np.unique(values, return_inverse=True)[1].ravel()


def _unique_rows(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(counts, axis=0, return_inverse=True)`` for non-negative integer rows, each
    row read as one base-``max + 1`` number (its first column most significant, so the order
    is the same) when that fits in 63 bits — a 1-D sort instead of a sort of row views."""
    base = int(counts.max()) + 1 if counts.size else 1
    if counts.shape[1] * np.log2(base) >= 63:
        types, inverse = np.unique(counts, axis=0, return_inverse=True)
        return types, inverse.ravel()
    weights = base ** np.arange(counts.shape[1] - 1, -1, -1, dtype=np.int64)
    _, first, inverse = np.unique(counts @ weights, return_index=True, return_inverse=True)
    return counts[first], inverse.ravel()


EASY_HARD, FOLD_SEEDS = 0, 1  # streams of iteration_seed


def iteration_seed(seed: int, iteration: int, stream: int = EASY_HARD) -> int:
    """The fold seed of run ``iteration`` of ``stream`` (easy/hard iterations, or the re-seeded
    runs of the headline's interval): independent, reproducible seeds from one user seed."""
    entropy = [seed % 2**32, stream, iteration]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0])


def groups_summary(groupings: list[Grouping], names: list[str]) -> dict:
    """``leakage.groups`` of results.json: the sizes of the groups of every split (each grouped
    on its own: a train/test scan never needs folds over both), the grouping unit, and any
    split's template limit and warning (prefixed by the split's name when there are two)."""
    out = {**sizes_summary(np.concatenate([np.bincount(g.groups) for g in groupings])),
           "unit": groupings[0].unit}
    limits = [g.template_limit for g in groupings if g.template_limit is not None]
    if limits:
        out["template_limit"] = min(limits)
    warnings = [f"{name}: {g.warning}" if len(groupings) > 1 else g.warning
                for name, g in zip(names, groupings) if g.warning]
    if warnings:
        out["warning"] = "; ".join(warnings)
    return out


def sizes_summary(sizes: np.ndarray) -> dict:
    """Summary of a grouping for results.json from the size of each group (any order): number
    of groups, largest, items in groups > 1."""
    return {"groups": int(len(sizes)), "largest": int(sizes.max()) if len(sizes) else 0,
            "grouped_items": int(sizes[sizes > 1].sum())}
