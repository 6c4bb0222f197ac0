"""Data hygiene: duplicates, train/test overlap, mirrored pairs and label-noise candidates.

The ``hygiene`` section of results.json: what each count means, the near-duplicate MinHash LSH
and its scale in docs/data-hygiene.md ("Data hygiene") and docs/methods.md §11. All comparisons
use the normal form of :func:`cuelens.audit.text_keys.normal_form` (lower-cased word tokens), so
case, punctuation and spacing never hide a copy. ``warnings`` are plain sentences, values for
the caller to show.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cache, reduce
from itertools import combinations
from operator import add
from typing import Any, TypeVar

import numpy as np
from scipy import sparse

from cuelens.audit.groups import MIN_KEY_TOKENS
from cuelens.audit.text_keys import GOLDEN, TextKeys, as_keys, combine, mix64, text_key, \
    text_keys
from cuelens.audit.tokenize import normal_forms
from cuelens.data.dataset import Dataset, Split, Task, role_names

NEAR_THRESHOLD = 0.8
NUM_PERM = 64
FN_WEIGHT = 100  # weight of the false-negative integral in lsh_bands: b = 12 bands of r = 5 rows
NEAR_MAX_ITEMS = 200_000  # near duplicates of a larger split are counted on a sample this size
PRIME = (1 << 31) - 1  # the modulus of the MinHash permutations (a Mersenne prime)
CHUNK_WORDS = 1 << 16  # shingles hashed at a time: temporaries of 8 · NUM_PERM · this bytes
MAX_EXAMPLES = 5
TEXT_CHARS = 240


def near_parts(split: Split, items: np.ndarray) -> list[list[str]]:
    """The inputs of ``items`` as indexed for near duplicates, part by part: their normalised
    premises (+ question) and their normalised hypotheses / sorted choice sets (two lists, in
    ``items`` order; texts normalised a batch at a time, :func:`normal_forms`)."""
    order = items.tolist()
    premises = list(normal_forms(split.premise_context(i) for i in order))
    if split.task == Task.NLI:
        return [premises, list(normal_forms(split.hypotheses[i] for i in order))]
    return [premises, [" | ".join(sorted(normal_forms(split.choices[i]))) for i in order]]


def label_keys(labels: Sequence[str]) -> np.ndarray:
    """NLI label values as 64-bit fingerprints (:func:`~cuelens.audit.text_keys.text_key`), each
    distinct value hashed once: equal labels, equal keys, whatever chunk they are in (two values
    collide with probability 2⁻⁶⁴)."""
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


@cache
def lsh_bands(threshold: float, num_perm: int, fn_weight: float) -> tuple[int, int]:
    """The LSH bands ``b`` and rows per band ``r`` (``b · r`` ≤ ``num_perm``) minimising the
    false-positive probability integral of ``1 − (1 − s^r)^b`` below ``threshold`` plus
    ``fn_weight`` times the false-negative one above it (docs/methods.md §11)."""
    from scipy.integrate import quad

    def error(b: int, r: int) -> float:
        fp = quad(lambda s: 1 - (1 - s ** r) ** b, 0.0, threshold)[0]
        fn = quad(lambda s: (1 - s ** r) ** b, threshold, 1.0)[0]
        return fp + fn_weight * fn

    return min(((b, r) for b in range(1, num_perm + 1) for r in range(1, num_perm // b + 1)),
               key=lambda br: error(*br))


class _WordKeys(dict[str, bytes]):
    """Word → its 8-byte BLAKE2b digest, computed once per distinct word."""

    def __missing__(self, word: str) -> bytes:
        self[word] = digest = text_key(word)
        return digest


def _shingle_hashes(words: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 64-bit shingle hashes of items whose words have the keys ``words``, ``lengths[i]``
    words for item ``i``, and each item's number of shingles. A bigram hashes to
    ``mix64(w1 · K + w2)``, a one-word item's word to ``mix64(w)``."""
    last = np.cumsum(lengths)[lengths > 0] - 1
    values = words * GOLDEN  # wraps mod 2**64
    values[:-1] += words[1:]
    keep = np.ones(len(words), dtype=bool)
    keep[last] = False  # an item's last word starts no bigram ...
    single = last[lengths[lengths > 0] == 1]
    keep[single], values[single] = True, words[single]  # ... but is a 1-word item's shingle
    return mix64(values[keep]), np.maximum(lengths - 1, lengths > 0)


def _band_runs(queries: np.ndarray, table: np.ndarray,
               same: bool) -> Iterator[tuple[np.ndarray, ...]]:
    """For each band of the band keys ``queries`` and ``table``: the table's sort order, and for
    each query the start and length of its run of equal keys in the sorted table (``searchsorted``;
    when the queries are the table (``same``), read off the sorted keys' runs)."""
    for band in range(table.shape[1]):
        order = np.argsort(table[:, band], kind="stable")
        keys = table[order, band]
        if same:
            new = np.r_[True, keys[1:] != keys[:-1]] if len(keys) else np.zeros(0, dtype=bool)
            first = np.flatnonzero(new)
            run = np.cumsum(new) - 1
            low, count = np.empty_like(order), np.empty_like(order)
            low[order] = first[run]
            count[order] = np.diff(np.r_[first, len(keys)])[run]
        else:
            low = np.searchsorted(keys, queries[:, band], "left")
            count = np.searchsorted(keys, queries[:, band], "right") - low
        yield order, low, count


def _band_pairs(runs: Iterable[tuple[np.ndarray, ...]], n_table: int, upper: bool) -> np.ndarray:
    """The distinct pairs ``(q, t)``, sorted, read off :func:`_band_runs`: query ``q`` and table
    row ``t`` equal in at least one band; ``upper``: only ``q < t``."""
    codes = []
    for order, low, count in runs:
        q = np.repeat(np.arange(len(low)), count)
        offset = np.arange(len(q)) - np.repeat(np.cumsum(count) - count, count)
        t = order[np.repeat(low, count) + offset]
        codes.append((q * n_table + t)[t > q] if upper else q * n_table + t)
    found = np.sort(np.concatenate(codes))  # np.unique hashes: 20x slower on distinct codes
    found = found[np.r_[True, found[1:] != found[:-1]]] if len(found) else found
    return np.stack(np.divmod(found, max(n_table, 1)), axis=1)


def _band_matches(queries: np.ndarray, table: np.ndarray, upper: bool = False) -> np.ndarray:
    """The candidate pairs ``(q, t)``, sorted, of the rows of ``queries`` and ``table`` (band
    keys, one array per part: parts × rows × bands) equal in at least one band of *every* part;
    ``upper``: only ``q < t`` (``queries`` is ``table``). The pairs are read off the part with
    the fewest band matches, then kept where each other part matches too: a shared premise alone
    (templated data) makes no candidate, and no part's matches are listed if another's are
    fewer."""
    same = queries is table
    matches = [sum(int(count.sum()) for _, _, count in _band_runs(q, t, same))
               for q, t in zip(queries, table)]
    cheapest = int(np.argmin(matches))
    pairs = _band_pairs(_band_runs(queries[cheapest], table[cheapest], same), table.shape[1],
                        upper)
    for part, (q, t) in enumerate(zip(queries, table)):
        if part != cheapest and len(pairs):
            pairs = pairs[(q[pairs[:, 0]] == t[pairs[:, 1]]).any(axis=1)]
    return pairs


def _first_of_each(inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first position of each distinct key of ``inputs`` (ascending), and each position's
    index into that array."""
    _, first, group = np.unique(inputs, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[group.ravel()]


@dataclass(frozen=True)
class ShingleSets:
    """Each text's 64-bit shingle hashes (:func:`_shingle_hashes`; a repeated bigram repeats),
    row ``k`` being ``hashes[starts[k]:starts[k + 1]]``."""

    hashes: np.ndarray
    starts: np.ndarray

    @classmethod
    def of(cls, texts: Iterable[str]) -> ShingleSets:
        """The shingle hashes of ``texts``, hashed about :data:`CHUNK_WORDS` words at a time."""
        words, hashes, counts = _WordKeys(), [], []
        keys, lengths = bytearray(), []
        for text in texts:
            split = text.split()
            keys += b"".join([words[w] for w in split])
            lengths.append(len(split))
            if len(keys) >= 8 * CHUNK_WORDS:
                chunk, n = _shingle_hashes(np.frombuffer(keys, dtype=np.uint64), np.array(lengths))
                hashes.append(chunk)
                counts.append(n)
                keys, lengths = bytearray(), []
        chunk, n = _shingle_hashes(np.frombuffer(keys, dtype=np.uint64),
                                   np.array(lengths, dtype=np.int64))
        counts.append(n)
        return cls(np.concatenate([*hashes, chunk]), np.r_[0, np.cumsum(np.concatenate(counts))])

    def take(self, rows: np.ndarray) -> ShingleSets:
        """The rows ``rows`` only, in that order."""
        counts = self.starts[rows + 1] - self.starts[rows]
        within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        return ShingleSets(self.hashes[np.repeat(self.starts[rows], counts) + within],
                           np.r_[0, np.cumsum(counts)])

    def signature_chunks(self, a: np.ndarray, b: np.ndarray) -> Iterator[np.ndarray]:
        """The MinHash signatures (texts × :data:`NUM_PERM`), some texts at a time: the minima
        of ``(a·x + b) mod PRIME`` over the hashes ``x`` mod ``PRIME`` of each text's shingles,
        about :data:`CHUNK_WORDS` shingles at a time (a text without words has ``PRIME``
        everywhere)."""
        n, start = len(self.starts) - 1, 0
        while start < n:
            stop = max(int(np.searchsorted(self.starts, self.starts[start] + CHUNK_WORDS,
                                           "right")) - 1, start + 1)
            low, high = self.starts[start], self.starts[stop]
            hashed = a[:, None] * (self.hashes[low:high] % np.uint64(PRIME))
            hashed += b[:, None]  # permutation × shingle: reduceat along contiguous rows
            hashed %= np.uint64(PRIME)
            signatures = np.full((stop - start, NUM_PERM), PRIME, dtype=np.uint32)
            filled = np.diff(self.starts[start:stop + 1]) > 0
            if filled.any():
                signatures[filled] = np.minimum.reduceat(
                    hashed, self.starts[start:stop][filled] - low, axis=1).T
            yield signatures
            start = stop

    def signatures(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """All :meth:`signature_chunks` at once."""
        return np.concatenate([*self.signature_chunks(a, b),
                               np.zeros((0, NUM_PERM), dtype=np.uint32)])

    def band_keys(self, seed: int) -> np.ndarray:
        """The :func:`_band_keys` of the signatures under the seeded :func:`permutations`,
        computed chunk by chunk (the whole signature matrix is never held)."""
        return np.concatenate([*map(_band_keys, self.signature_chunks(*permutations(seed))),
                               _band_keys(np.zeros((0, NUM_PERM), dtype=np.uint32))])


def _shingle_matrices(left: ShingleSets,
                      right: ShingleSets) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """``left`` and ``right`` as binary texts × shingles matrices over the hashes of both."""
    both = np.concatenate([left.hashes, right.hashes])
    _, ids = np.unique(both, return_inverse=True)
    ids = ids.ravel()
    width = int(ids.max(initial=-1)) + 1

    def matrix(sets: ShingleSets, columns: np.ndarray) -> sparse.csr_matrix:
        x = sparse.csr_matrix((np.ones(len(columns), dtype=np.int32), columns, sets.starts),
                              shape=(len(sets.starts) - 1, width))
        x.sum_duplicates()
        x.data[:] = 1
        return x

    return matrix(left, ids[:len(left.hashes)]), matrix(right, ids[len(left.hashes):])


def _confirmed(pairs: np.ndarray, left: list[ShingleSets], right: list[ShingleSets],
               first_only: bool = False) -> list[tuple[int, int]]:
    """The candidate ``pairs`` ``(i, j)`` (sorted) whose texts have, part by part, an exact
    word-bigram Jaccard similarity ≥ :data:`NEAR_THRESHOLD` (two empty parts are equal);
    ``first_only``: only the first such pair of each ``i``."""
    i, j = pairs[:, 0], pairs[:, 1]
    near = np.ones(len(pairs), dtype=bool)
    rows_i, at_i = np.unique(i, return_inverse=True)
    rows_j, at_j = np.unique(j, return_inverse=True)
    for a, b in zip(left, right):
        if not len(pairs):
            break
        x, y = _shingle_matrices(a.take(rows_i), b.take(rows_j))
        inter = np.asarray(x[at_i].multiply(y[at_j]).sum(axis=1)).ravel()
        union = x.getnnz(axis=1)[at_i] + y.getnnz(axis=1)[at_j] - inter
        near &= (inter >= NEAR_THRESHOLD * union) | (union == 0)
    i, j = i[near], j[near]
    if first_only:
        keep = np.unique(i, return_index=True)[1]
        i, j = i[keep], j[keep]
    return list(zip(i.tolist(), j.tolist()))


def permutations(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The seeded MinHash permutations ``(a·x + b) mod PRIME``: ``a`` and ``b``
    (:data:`NUM_PERM` each)."""
    rng = np.random.default_rng(seed)
    return (rng.integers(1, PRIME, NUM_PERM, dtype=np.uint64),
            rng.integers(0, PRIME, NUM_PERM, dtype=np.uint64))


def _band_keys(signatures: np.ndarray) -> np.ndarray:
    """64-bit keys of the :func:`lsh_bands` bands of each signature (rows × bands)."""
    n_bands, width = lsh_bands(NEAR_THRESHOLD, NUM_PERM, FN_WEIGHT)
    bands = np.zeros((len(signatures), n_bands), dtype=np.uint64)
    for band in range(n_bands):
        for column in signatures[:, band * width:(band + 1) * width].T:
            bands[:, band] = mix64(bands[:, band] * GOLDEN + column)
    return bands


class NearIndex:
    """MinHash LSH over the parts of item inputs (word bigrams), confirmed with exact Jaccard
    part by part (docs/methods.md §11, "Hygiene"). ``parts[p][k]`` is part ``p`` of the input at
    position ``k`` (:func:`near_parts`); ``bands[p, k]`` are the keys of its :func:`lsh_bands`
    bands, and ``self.parts[p]`` keeps its shingle hashes to confirm candidates."""

    def __init__(self, parts: Sequence[Sequence[str]], seed: int = 0) -> None:
        self.seed = seed
        self.parts = [ShingleSets.of(texts) for texts in parts]
        self.bands = np.stack([part.band_keys(seed) for part in self.parts])

    def near_pairs(self, inputs: np.ndarray) -> list[tuple[int, int]]:
        """Position pairs ``(k, m)``, ``k < m``, of different inputs (keys ``inputs`` by
        position) that are near each other, in order. Only the first position of each distinct
        input is hashed into buckets; a near pair of inputs stands for all their copies."""
        first, group = _first_of_each(inputs)
        bands = self.bands[:, first]
        found = _confirmed(first[_band_matches(bands, bands, True)], self.parts, self.parts)
        order = np.argsort(group, kind="stable")
        bounds = np.r_[0, np.cumsum(np.bincount(group, minlength=len(first)))]
        copies = lambda k: order[bounds[group[k]]:bounds[group[k] + 1]].tolist()  # noqa: E731
        return sorted((min(i, j), max(i, j)) for k, m in found
                      for i in copies(k) for j in copies(m))

    def first_near(self, other: NearIndex, wanted: np.ndarray,
                   inputs: np.ndarray) -> list[tuple[int, int]]:
        """For each position ``k`` of ``other`` in ``wanted`` (ascending) that is near a text of
        this index (keys ``inputs`` by position), ``(k, m)`` with ``m`` the first such position."""
        if other.seed != self.seed:
            raise ValueError("near-duplicate indexes with different seeds cannot be compared")
        first = _first_of_each(inputs)[0]
        pairs = _band_matches(other.bands[:, wanted], self.bands[:, first])
        return _confirmed(np.stack([wanted[pairs[:, 0]], first[pairs[:, 1]]], axis=1),
                          other.parts, self.parts, first_only=True)


@dataclass(frozen=True)
class NearSample:
    """A split's items indexed for near duplicates (:func:`near_items`, ascending), their
    :class:`ItemKeys` and the :class:`NearIndex` of their inputs (:func:`near_parts`)."""

    items: np.ndarray
    keys: ItemKeys
    index: NearIndex

    def pairs(self) -> list[tuple[int, int]]:
        """Item pairs ``(i, j)``, ``i < j``, of near duplicates within the sample, in order.
        Near pairs with different answers that share the premise (sibling hypotheses, minimally
        edited) or the pair text (mirrored / contrastive pairs) are a deliberate construction,
        not near duplicates."""
        keys = self.keys
        paired = lambda k, m: keys.has_pair[k] and keys.pairs[k] == keys.pairs[m]  # noqa: E731
        return _items_of(self.items, self.items, [
            (k, m) for k, m in self.index.near_pairs(keys.inputs)
            if keys.answers[k] == keys.answers[m]
            or not (keys.premises[k] == keys.premises[m] or paired(k, m))])

    def first_near(self, evaluated: NearSample, unmatched: np.ndarray) -> list[tuple[int, int]]:
        """For each sampled item of ``evaluated`` where ``unmatched`` (by sample position) that is
        near a sampled item of this split, ``(that item, the first such item here)``."""
        return _items_of(evaluated.items, self.items,
                         self.index.first_near(evaluated.index, np.flatnonzero(unmatched),
                                               self.keys.inputs))


def _items_of(left: np.ndarray, right: np.ndarray,
              pairs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Position pairs ``(k, m)`` as item pairs ``(left[k], right[m])``."""
    return [(int(left[k]), int(right[m])) for k, m in pairs]


Part = dict[str, np.ndarray]
"""Columns of some items of a split: their ``key`` and ``item`` (ascending), for inputs and
pair texts their ``answer``, for inputs the input as ``shown``. A split's keys come as one or more parts; all items holding one key
are in the same part (docs/methods.md §11)."""

T = TypeVar("T", bound="Tally")


@dataclass(frozen=True)
class Tally:
    """Counts over the parts of a split's keys and example pairs ``(item, other item)``: adding
    two tallies adds the counts and keeps the :data:`MAX_EXAMPLES` pairs of the smallest items
    (in one part: those of its first groups, whose first items are distinct)."""

    def __add__(self: T, other: T) -> T:
        def merged(a: Any, b: Any) -> Any:
            return sorted(a + b)[:MAX_EXAMPLES] if isinstance(a, list) else a + b
        return type(self)(**{f.name: merged(getattr(self, f.name), getattr(other, f.name))
                             for f in fields(self)})


def _total(tallies: Iterable[T]) -> T:
    return reduce(add, tallies)


@dataclass(frozen=True)
class Copies(Tally):
    """Items sharing an input key: redundant copies (the same input as shown and the same
    answer as an earlier item) and the groups holding them, permuted copies (the same answer
    with the choices in another order), label-conflict groups (more than one answer) and their
    items, and example pairs of each kind."""

    redundant: int
    groups: int
    permuted: int
    conflict_groups: int
    conflict_items: int
    duplicates: list[tuple[int, int]]
    permutations: list[tuple[int, int]]
    conflicts: list[tuple[int, int]]

    @classmethod
    def of(cls, part: Part) -> Copies:
        groups, items = Groups.of(part["key"]), part["item"]
        answer, shown = part["answer"], part["shown"]
        mixed = groups.mixed(answer)
        variants = groups.distinct(shown, answer)  # distinct (input as shown, answer)
        redundant = groups.sizes - variants
        permuted = variants - groups.distinct(answer)
        same = lambda i, j: answer[i] == answer[j]  # noqa: E731
        return cls(int(redundant.sum()), int((redundant > 0).sum()), int(permuted.sum()),
                   int(mixed.sum()), int(groups.sizes[mixed].sum()),
                   _items_of(items, items, groups.example_pairs(
                       redundant > 0, lambda i, j: same(i, j) and shown[i] == shown[j])),
                   _items_of(items, items, groups.example_pairs(
                       permuted > 0, lambda i, j: same(i, j) and shown[i] != shown[j])),
                   _items_of(items, items, groups.example_pairs(mixed, lambda i, j: True)))


@dataclass(frozen=True)
class Contrasts(Tally):
    """Pairs of items sharing a pair text with different answers, and for the first groups
    holding one its first item and that item's first partner."""

    pairs: int
    shown: list[tuple[int, int]]

    @classmethod
    def of(cls, part: Part) -> Contrasts:
        groups, answers = Groups.of(part["key"]), part["answer"]
        shown = groups.example_pairs(groups.mixed(answers), lambda i, j: answers[i] != answers[j])
        return cls(groups.discordant_pairs(answers), _items_of(part["item"], part["item"], shown))


@dataclass(frozen=True)
class Matches(Tally):
    """Evaluation items whose input occurs in the fitting split, and the first few with the
    first fitting item holding it."""

    count: int
    shown: list[tuple[int, int]]


@dataclass(frozen=True)
class Keyed:
    """What the statistics read of one split on the driver: its size, task and near-duplicate
    sample (its keys, :data:`Partition` s, are read where :func:`partition_findings` runs)."""

    items: int
    task: str
    sample: NearSample


Partition = dict[str, dict[str, Part]]
"""One key partition of every split (role → ``inputs``, ``pairs``, ``premises`` → its
:data:`Part`): input keys with answers and inputs as shown, pair-text keys with answers (items
with a pair text only), premise keys."""

FLAG_BITS = {"duplicate": 1, "label_conflict": 2, "overlap": 4, "shared_premise": 8}
Flags = list[tuple[np.ndarray, np.ndarray]]
"""Per-item :data:`FLAG_BITS` found in one partition: ``(items, bits)`` pairs, the items of
each pair distinct, only those with a bit set."""


def overlap_pairs(roles: Iterable[str], evaluated: str) -> list[tuple[str, str]]:
    """``(fitting role, evaluated role)`` of each overlap row: the evaluated split against each
    fitting split, then the fitting splits against each other."""
    fitting = [role for role in roles if role != evaluated]
    return [(f, evaluated) for f in fitting] + list(combinations(fitting, 2))


@dataclass(frozen=True)
class Exact:
    """One partition's share of an overlap row: its exact matches, the near-sample positions of
    the evaluated items matched, and the evaluated items whose premise occurs in the fitting
    split (every matched item's too: an input key combines the premise key with the rest)."""

    matches: Matches
    sampled: np.ndarray
    shared_premise: int


@dataclass(frozen=True)
class PartFindings:
    """One key partition's share of the :func:`findings`: per split (in order) its
    :class:`Copies`, :class:`Contrasts` and items in premise groups, per overlap row
    (:func:`overlap_pairs`) its :class:`Exact`, per flagged role its :data:`Flags`."""

    copies: list[Copies]
    contrasts: list[Contrasts]
    premise_grouped: list[int]
    exact: list[Exact]
    flags: dict[str, Flags]


def _matches(fit: dict[str, Part], evaluate: dict[str, Part]) -> tuple[np.ndarray, np.ndarray]:
    """Per input row of ``evaluate``, the first input row of ``fit`` holding its key (-1: none);
    per premise row, whether ``fit`` holds its premise."""
    return (first_match(evaluate["inputs"]["key"], fit["inputs"]["key"]),
            first_match(evaluate["premises"]["key"], fit["premises"]["key"]) >= 0)


def _exact(fit: Part, evaluate: dict[str, Part], sample: np.ndarray,
           found: tuple[np.ndarray, np.ndarray]) -> Exact:
    """The :class:`Exact` of ``found`` (:func:`_matches`); ``sample``: the evaluated split's
    near-sample items (sorted)."""
    (match, premised), items = found, evaluate["inputs"]["item"]
    hit = np.flatnonzero(match >= 0)
    shown = hit[:MAX_EXAMPLES]
    return Exact(Matches(len(hit), _items_of(items, fit["item"], zip(shown, match[shown]))),
                 np.flatnonzero(np.isin(sample, items[hit])), int(premised.sum()))


def _flags(split: dict[str, Part], found: tuple[np.ndarray, np.ndarray] | None) -> Flags:
    """One split's :data:`Flags` in a partition: duplicates and label conflicts among its
    inputs and, with ``found`` against the fitting split (:func:`_matches`), overlap and shared
    premises."""
    inputs, premises = split["inputs"], split["premises"]
    duplicate, conflict = copy_flags(inputs["key"], inputs["answer"])
    rows = [(inputs["item"], (duplicate * FLAG_BITS["duplicate"]
                              | conflict * FLAG_BITS["label_conflict"]).astype(np.uint8))]
    if found is not None:
        match, premised = found
        rows[0][1][match >= 0] |= np.uint8(FLAG_BITS["overlap"])
        rows.append((premises["item"],
                     np.where(premised, FLAG_BITS["shared_premise"], 0).astype(np.uint8)))
    return [(items[bits > 0], bits[bits > 0]) for items, bits in rows]


def partition_findings(partition: Partition, evaluated: str, samples: dict[str, np.ndarray],
                       flagged: Sequence[str] = (), fitting: str | None = None) -> PartFindings:
    """One key partition's :class:`PartFindings` (``samples``: each split's near-sample items);
    :data:`Flags` for the ``flagged`` roles, overlap and shared premises of ``evaluated``
    against ``fitting``."""
    pairs = overlap_pairs(partition, evaluated)
    found: dict[tuple[str | None, str], tuple[np.ndarray, np.ndarray]] = {
        (f, e): _matches(partition[f], partition[e]) for f, e in pairs}
    splits = partition.values()
    return PartFindings(
        [Copies.of(split["inputs"]) for split in splits],
        [Contrasts.of(split["pairs"]) for split in splits],
        [int(Groups.of(split["premises"]["key"]).sizes.sum()) for split in splits],
        [_exact(partition[f]["inputs"], partition[e], samples[e], found[f, e])
         for f, e in pairs],
        {role: _flags(partition[role], found.get((fitting, role))) for role in flagged})


@dataclass(frozen=True)
class SplitFindings:
    """One split's counts and example pairs."""

    role: str
    items: int
    task: str
    copies: Copies
    contrasts: Contrasts
    near: list[tuple[int, int]]
    shared_premise: int

    def counts(self) -> dict:
        return {"items": self.items, "duplicate_items": self.copies.redundant,
                "duplicate_groups": self.copies.groups, "near_duplicate_pairs": len(self.near),
                "label_conflict_groups": self.copies.conflict_groups,
                "label_conflict_items": self.copies.conflict_items,
                ("mirrored_pairs" if self.task == Task.MCQ else "contrastive_pairs"):
                    self.contrasts.pairs,
                "permuted_copies": self.copies.permuted,
                "shared_premise_items": self.shared_premise}

    def examples(self) -> dict[str, list[tuple[int, int]]]:
        return {"duplicates": self.copies.duplicates, "near_duplicates": self.near[:MAX_EXAMPLES],
                "label_conflicts": self.copies.conflicts, "mirrored": self.contrasts.shown,
                "permuted": self.copies.permutations}


@dataclass(frozen=True)
class OverlapFindings:
    """Evaluation items found (exactly or nearly) in a fitting split, or sharing a premise."""

    fit: str
    eval: str
    eval_items: int
    exact: Matches
    near: list[tuple[int, int]]
    shared_premise: int

    def row(self) -> dict:
        n, found = self.eval_items, self.exact.count + len(self.near)
        return {"fit": self.fit, "eval": self.eval, "eval_items": n, "exact": self.exact.count,
                "near": len(self.near), "shared_premise": self.shared_premise,
                "fraction": round(found / n, 6) if n else 0.0}

    def examples(self) -> dict[str, list[tuple[int, int]]]:
        return {"exact": self.exact.shown, "near": self.near[:MAX_EXAMPLES]}


def _overlap(fit_role: str, fit: Keyed, eval_role: str, evaluate: Keyed,
             parts: Sequence[Exact]) -> OverlapFindings:
    """An overlap row from its partitions' :class:`Exact` (in partition order); near copies are
    looked for among the sampled evaluation items without an exact one, in the sampled fitting
    items."""
    unmatched = np.ones(len(evaluate.sample.items), dtype=bool)
    for part in parts:
        unmatched[part.sampled] = False
    near = fit.sample.first_near(evaluate.sample, unmatched)
    return OverlapFindings(fit_role, eval_role, evaluate.items,
                           _total(part.matches for part in parts), near,
                           sum(part.shared_premise for part in parts))


def findings(keyed: dict[str, Keyed], evaluated: str, parts: Sequence[PartFindings]
             ) -> tuple[list[SplitFindings], list[OverlapFindings]]:
    """Every split's findings, then the overlap of the evaluated split with each fitting split
    and of the fitting splits with each other (docs/methods.md §11), the partitions' shares
    (:func:`partition_findings`, in partition order) totalled."""
    found = [SplitFindings(role, k.items, k.task, _total(p.copies[s] for p in parts),
                           _total(p.contrasts[s] for p in parts), k.sample.pairs(),
                           sum(p.premise_grouped[s] for p in parts))
             for s, (role, k) in enumerate(keyed.items())]
    return found, [_overlap(f, keyed[f], e, keyed[e], [p.exact[o] for p in parts])
                   for o, (f, e) in enumerate(overlap_pairs(keyed, evaluated))]


Ref = tuple[str, int]  # (role, item)
Describe = Callable[[str, int], dict]


def example_refs(found: list[SplitFindings], overlaps: list[OverlapFindings]
                 ) -> dict[str, list[tuple[str | None, Ref, Ref]]]:
    """Per list of examples, ``(overlap kind or None, item, other item)`` of each example."""
    out: dict[str, list[tuple[str | None, Ref, Ref]]] = {}
    for f in found:
        for name, pairs in f.examples().items():
            out.setdefault(name, []).extend((None, (f.role, i), (f.role, j)) for i, j in pairs)
    for o in overlaps:
        out.setdefault("overlap", []).extend((kind, (o.eval, i), (o.fit, j))
                                             for kind, pairs in o.examples().items()
                                             for i, j in pairs)
    return out


def clip(text: str, limit: int = TEXT_CHARS) -> str:
    """``text``, or its first words within ``limit`` characters followed by "…" (cut inside a
    word only when the first word alone is longer)."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    space = cut.rfind(" ") if not text[limit - 1].isspace() else len(cut)
    return (cut[:space] if space > 0 else cut).rstrip() + "…"


def describe(role: str, split: Split, i: int) -> dict:
    """Item ``i`` of ``split`` as an example shows it."""
    shown = split.hypotheses[i] if split.task == Task.NLI else " / ".join(split.choices[i])
    return {"split": role, "id": split.ids[i], "line": split.lines[i],
            "text": clip(f"{split.premise_context(i)} → {shown}")}


def _example(show: Describe, kind: str | None, item: Ref, other: Ref) -> dict:
    """An example pair: the first item as :func:`describe` gives it, the other (``other``) with
    its text too."""
    row, shown = show(*item), show(*other)
    row["other"] = {key: shown[key] for key in ("split", "id", "line", "text")}
    return {**row, "kind": kind} if kind else row


def hygiene_section(keyed: dict[str, Keyed], found: list[SplitFindings],
                    overlaps: list[OverlapFindings], cross_validated: bool,
                    show: Describe, names: Mapping[str, str] | None = None) -> dict:
    """The ``hygiene`` section of results.json from the :func:`findings`, with each example item
    as ``show(role, item)`` gives it (:func:`describe`); ``names``: how the warnings name a
    split role (e.g. "train" → "dev.jsonl (used as train)"; default: the role)."""
    section: dict = {"near_threshold": NEAR_THRESHOLD, "num_perm": NUM_PERM,
                     "splits": {f.role: f.counts() for f in found},
                     "overlap": [o.row() for o in overlaps],
                     "examples": {name: [_example(show, *ref) for ref in refs]
                                  for name, refs in example_refs(found, overlaps).items()}}
    sampled = {role: len(k.sample.items) for role, k in keyed.items()
               if len(k.sample.items) < k.items}
    if sampled:
        section["near_sample"] = sampled
    section["warnings"] = _warnings(section, cross_validated, names or {})
    return section


def _warnings(section: dict, cross_validated: bool, names: Mapping[str, str]) -> list[str]:
    out = []
    for row in section["overlap"]:
        if row["exact"] or row["near"]:
            out.append(f"the evaluation split ({names.get(row['eval'], row['eval'])}) shares "
                       f"{row['exact']} exact and {row['near']} near-duplicate item(s) with the "
                       f"fitting split ({names.get(row['fit'], row['fit'])}), "
                       f"{100 * row['fraction']:.1f}% of its "
                       f"{row['eval_items']} items: scores on it are inflated by memorisation")
    for role, counts in section["splits"].items():
        name = names.get(role, role)
        if counts["duplicate_items"]:
            kept = " (cross-validation keeps copies in one fold)" if cross_validated else ""
            out.append(f"{name}: {counts['duplicate_items']} redundant exact duplicate item(s) "
                       f"in {counts['duplicate_groups']} group(s){kept}")
        if counts["label_conflict_groups"]:
            out.append(f"{name}: {counts['label_conflict_groups']} group(s) of identical inputs "
                       f"carry different labels ({counts['label_conflict_items']} items; "
                       "label-noise candidates)")
    for role, size in section.get("near_sample", {}).items():
        out.append(f"{names.get(role, role)}: near-duplicate counts come from a random sample of {size} of its "
                   f"{section['splits'][role]['items']} items (near overlap: sampled evaluation "
                   "items against sampled fitting items); exact counts cover every item")
    return out


def near_items(n: int, seed: int) -> np.ndarray:
    """The items of an ``n``-item split indexed for near duplicates: all of them, or a seeded
    random sample of :data:`NEAR_MAX_ITEMS` (sorted) when the split is larger."""
    if n <= NEAR_MAX_ITEMS:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, NEAR_MAX_ITEMS, replace=False))


def _in_memory(split: Split, seed: int) -> tuple[Keyed, dict[str, Part]]:
    """A loaded split's :class:`Keyed` and its keys as one partition."""
    keys, items = ItemKeys.of(split), np.arange(len(split))
    has = keys.has_pair
    sample = near_items(len(split), seed)
    return (Keyed(len(split), split.task, NearSample(sample, keys.take(sample),
                                                     NearIndex(near_parts(split, sample), seed))),
            {"inputs": {"key": keys.inputs, "item": items, "answer": keys.answers,
                        "shown": keys.shown},
             "pairs": {"key": keys.pairs[has], "item": items[has], "answer": keys.answers[has]},
             "premises": {"key": keys.premises, "item": items}})


def data_hygiene(dataset: Dataset, seed: int = 0) -> dict:
    """The ``hygiene`` section of results.json for every loaded split of ``dataset``
    (docs/methods.md §11): exact counts over all items, near duplicates on at most
    :data:`NEAR_MAX_ITEMS` items per split."""
    splits, evaluated = dataset.splits, "test" if dataset.train is not None else "all"
    loaded = {role: _in_memory(split, seed) for role, split in splits.items()}
    keyed = {role: k for role, (k, _) in loaded.items()}
    partition = {role: part for role, (_, part) in loaded.items()}
    samples = {role: k.sample.items for role, k in keyed.items()}
    found, overlaps = findings(keyed, evaluated,
                               [partition_findings(partition, evaluated, samples)])
    return hygiene_section(keyed, found, overlaps, dataset.cross_validated,
                           lambda role, i: describe(role, splits[role], i),
                           role_names(dataset.split_roles))
