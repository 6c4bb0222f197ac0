"""Near duplicates (docs/methods.md §11, docs/data-hygiene.md "Data hygiene"): MinHash LSH over
word bigrams of the items' inputs, confirmed with exact Jaccard (:class:`NearIndex`), and a
split's sampled items indexed with it (:class:`NearSample`, :func:`near_items`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy import sparse

from cuelens.audit.groups import first_of_each
from cuelens.audit.hygiene_keys import ItemKeys
from cuelens.audit.segmenters import string_bytes
from cuelens.audit.text_keys import GOLDEN, as_keys, mix64, text_key
from cuelens.audit.tokenize import batches

NEAR_THRESHOLD = 0.8
NUM_PERM = 64
FN_WEIGHT = 100  # weight of the false-negative integral in lsh_bands: b = 12 bands of r = 5 rows
NEAR_MAX_ITEMS = 200_000  # near duplicates of a larger split are counted on a sample this size
PRIME = (1 << 31) - 1  # the modulus of the MinHash permutations (a Mersenne prime)
OTHER_SPACE = r"[\t-\r\x1c-\x1f\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}" \
    r"\x{205f}\x{3000}]"  # the characters other than " " that str.split() splits on (RE2)
CHUNK_WORDS = 1 << 13  # shingles hashed at a time: temporaries of 8 · NUM_PERM · this bytes (4 MiB)


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


def _printable_ascii(array) -> bool:
    """Whether an Arrow ``large_string`` array holds printable ASCII alone (no :data:`OTHER_SPACE`
    to look for)."""
    data = string_bytes(array)[1]
    return not len(data) or bool(data.min() >= 0x20 and data.max() < 0x80)


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


def _band_orders(table: np.ndarray) -> list[np.ndarray]:
    """Each band's sort order of the band keys ``table`` (rows × bands)."""
    return [np.argsort(table[:, band], kind="stable") for band in range(table.shape[1])]


def _band_runs(queries: np.ndarray, table: np.ndarray, same: bool,
               orders: list[np.ndarray]) -> Iterator[tuple[np.ndarray, ...]]:
    """For each band of the band keys ``queries`` and ``table`` (``orders``: the table's
    :func:`_band_orders`): the table's sort order, and for each query the start and length of its
    run of equal keys in the sorted table (``searchsorted``; when the queries are the table
    (``same``), read off the sorted keys' runs)."""
    for band, order in enumerate(orders):
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
    orders = [_band_orders(t) for t in table]
    matches = [sum(int(count.sum()) for _, _, count in _band_runs(q, t, same, o))
               for q, t, o in zip(queries, table, orders)]
    cheapest = int(np.argmin(matches))
    pairs = _band_pairs(_band_runs(queries[cheapest], table[cheapest], same, orders[cheapest]),
                        table.shape[1], upper)
    for part, (q, t) in enumerate(zip(queries, table)):
        if part != cheapest and len(pairs):
            pairs = pairs[(q[pairs[:, 0]] == t[pairs[:, 1]]).any(axis=1)]
    return pairs


@dataclass(frozen=True)
class ShingleSets:
    """Each text's 64-bit shingle hashes (:func:`_shingle_hashes`; a repeated bigram repeats),
    row ``k`` being ``hashes[starts[k]:starts[k + 1]]``."""

    hashes: np.ndarray
    starts: np.ndarray

    @classmethod
    def of(cls, texts: Iterable[str]) -> ShingleSets:
        """The shingle hashes of ``texts`` (their words: ``str.split()``'s), a batch of texts at
        a time, split and numbered by Arrow, each distinct word hashed once."""
        import pyarrow as pa
        import pyarrow.compute as pc

        words, hashes, counts = _WordKeys(), [], []
        for batch in batches(texts):
            array = pa.array(batch, pa.large_string())
            if not _printable_ascii(array):
                array = pc.replace_substring_regex(array, OTHER_SPACE, " ")
            split = pc.split_pattern(array, " ")
            flat = pc.list_flatten(split)
            nonempty = pc.binary_length(flat).to_numpy() > 0  # "" and runs of spaces: no word
            encoded = pc.dictionary_encode(flat)
            keys = as_keys(b"".join([words[w] for w in encoded.dictionary.to_pylist()]))
            owner = pc.list_parent_indices(split).to_numpy()[nonempty]
            chunk, n = _shingle_hashes(keys[encoded.indices.to_numpy()[nonempty]],
                                       np.bincount(owner, minlength=len(batch)))
            hashes.append(chunk)
            counts.append(n)
        return cls(np.concatenate([*hashes, np.zeros(0, dtype=np.uint64)]),
                   np.r_[0, np.cumsum(np.concatenate([*counts, np.zeros(0, dtype=np.int64)]))])

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
    for column in range(width):  # every band's column at once
        bands = mix64(bands * GOLDEN + signatures[:, column:n_bands * width:width])
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
        first, group = first_of_each(inputs)
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
        first = first_of_each(inputs)[0]
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
        return items_of(self.items, self.items, [
            (k, m) for k, m in self.index.near_pairs(keys.inputs)
            if keys.answers[k] == keys.answers[m]
            or not (keys.premises[k] == keys.premises[m] or paired(k, m))])

    def first_near(self, evaluated: NearSample, unmatched: np.ndarray) -> list[tuple[int, int]]:
        """For each sampled item of ``evaluated`` where ``unmatched`` (by sample position) that is
        near a sampled item of this split, ``(that item, the first such item here)``."""
        return items_of(evaluated.items, self.items,
                         self.index.first_near(evaluated.index, np.flatnonzero(unmatched),
                                               self.keys.inputs))


def items_of(left: np.ndarray, right: np.ndarray,
              pairs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Position pairs ``(k, m)`` as item pairs ``(left[k], right[m])``."""
    return [(int(left[k]), int(right[m])) for k, m in pairs]


def near_items(n: int, seed: int) -> np.ndarray:
    """The items of an ``n``-item split indexed for near duplicates: all of them, or a seeded
    random sample of :data:`NEAR_MAX_ITEMS` (sorted) when the split is larger."""
    if n <= NEAR_MAX_ITEMS:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, NEAR_MAX_ITEMS, replace=False))
