"""Leakage-proof fold assignment: items that share text are kept in one fold (docs/methods.md §3–4).

Plain k-fold lets an item and its near-copy land on both sides of a fold boundary. Debiased
datasets do this on purpose: Balanced COPA mirrors every question (the same two choices, once with
the first right, once with the second), so plain folds put a choice's *right* occurrence in the
fitting portion and its *wrong* one in the held-out fold, and cue scores become anti-predictive.

Groups are the connected components of the graph linking an item to each of its *keys*
(:func:`item_keys`): its normalised premise, each of its normalised hypothesis / choice texts,
for MCQ its whole set of choices (in any order) and, with ``--group-field``, the user's group id. Two items sharing any key — a premise, a
choice or hypothesis text, or being exact duplicates — are in one group, transitively (union-find
over exact normalised text, computed with :func:`scipy.sparse.csgraph.connected_components`).
The normal form (:func:`normal_form`) is the cue tokenizer's lower-cased word tokens joined by a
space: case, punctuation and spacing do not separate two texts. Texts of fewer than
:data:`MIN_KEY_TOKENS` = 3 tokens link nothing: a one- or two-word answer ("bank", "the dog") is
a concept that unrelated questions reuse (CommonsenseQA's answer options would otherwise join
almost every question into one group), not a copied item. Likewise a text shared by more than
:data:`MAX_KEY_SHARE` = 5% of the items (and by more than 2) is a template — a fixed context or
instruction repeated everywhere — and links nothing; otherwise it would put the whole file in one
group and leave nothing to cross-validate.

Folds are dealt by :func:`grouped_folds` (strata: the NLI label, the MCQ gold position): a
group never straddles two folds and every stratum is spread evenly over the folds. The
assignment is a deterministic function of (groups, strata, number of folds, seed).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from hashlib import blake2b
from itertools import chain

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from cuelens.audit.tokenize import word_tokens
from cuelens.data.dataset import Task
from cuelens.errors import UserError

MIN_KEY_TOKENS = 3  # shorter texts ("bank", "a dog") are concepts reused by unrelated items
MAX_KEY_SHARE = 0.05  # a text in more than 5% of the items is a template (a fixed context)


def normal_form(text: str) -> str:
    """Lower-cased word tokens (punctuation dropped, repeats and order kept) joined by spaces."""
    return " ".join(word_tokens(text))


def item_keys(split, user_groups: Sequence[str | None] | None = None) -> Iterator[list[str]]:
    """The linking keys of every item of ``split`` (tagged by kind so kinds never collide),
    one list per item, generated lazily."""
    texts = split.hypotheses if split.task == Task.NLI else split.choices
    for i, premise in enumerate(split.premises):
        own = [texts[i]] if split.task == Task.NLI else texts[i]
        keys = [f"{kind}:{form}" for kind, text in [("p", premise)] + [("t", t) for t in own]
                if len((form := normal_form(text)).split()) >= MIN_KEY_TOKENS]
        if split.task == Task.MCQ:  # the whole option set, whatever its length (mirrored items)
            keys.append("c:" + "|".join(sorted(normal_form(t) for t in own)))
        if user_groups is not None and user_groups[i] is not None:
            keys.append(f"g:{user_groups[i]}")
        yield keys


def text_key(text: str) -> bytes:
    """A text's 64-bit fingerprint: 8-byte BLAKE2b, the same on every run and machine (Python's
    ``hash`` is salted)."""
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()


def as_keys(buffer: bytes | bytearray) -> np.ndarray:
    """Concatenated :func:`text_key` fingerprints as a ``uint64`` array."""
    return np.frombuffer(bytes(buffer), dtype="<u8")


def connected_groups(keys: Iterable[Iterable[str]]) -> np.ndarray:
    """A group id per item: connected components of the item–key graph, numbered in order of
    each group's first item (so ids do not depend on hashing). A key shared by more than
    ``max(2, MAX_KEY_SHARE · n)`` items is a template and links nothing.

    Keys are held as 64-bit fingerprints (:func:`text_key`), 17 bytes per key, never as strings;
    two different keys would be merged only on a fingerprint collision (odds about
    ``keys² / 2⁶⁵``: 3 in 10,000 for a hundred million keys)."""
    hashes, owners, user = bytearray(), array("q"), array("b")
    n = 0
    for i, item in enumerate(keys):
        n = i + 1
        for key in item:
            hashes += text_key(key)
            owners.append(i)
            user.append(key.startswith("g:"))
    rows = np.frombuffer(owners, dtype=np.int64) if owners else np.zeros(0, np.int64)
    _, cols = np.unique(as_keys(hashes), return_inverse=True)
    cols = cols.ravel()
    m = int(cols.max()) + 1 if len(cols) else 0
    if len(cols):
        user_key = np.zeros(m, dtype=bool)  # the user's group ids are never capped
        user_key[cols[np.frombuffer(user, dtype=np.int8).astype(bool)]] = True
        keep = (np.bincount(cols)[cols] <= max(2, int(MAX_KEY_SHARE * n))) | user_key[cols]
        rows, cols = rows[keep], cols[keep]
    edges = sp.coo_matrix((np.ones(len(rows)), (rows, cols + n)), shape=(n + m, n + m))
    _, component = connected_components(edges, directed=False)
    _, first, inverse = np.unique(component[:n], return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse]


def dataset_groups(splits: Sequence) -> np.ndarray:
    """Group ids over the items of ``splits`` concatenated in order (train first, then test);
    splits loaded with ``--group-field`` (``split.groups`` filled in) add the user's ids."""
    return connected_groups(chain.from_iterable(
        item_keys(split, split.groups if any(g is not None for g in split.groups) else None)
        for split in splits))


def grouped_folds(groups: np.ndarray, strata: np.ndarray, n_folds: int, seed: int,
                  what: str = "items") -> np.ndarray:
    """A fold id per item; every group lies in one fold, strata balanced (docs/methods.md §11).

    Groups of the same *type* (their count of items per stratum) are dealt out evenly: each fold
    gets ``m // n_folds`` of a type's ``m`` groups, and the ``m % n_folds`` left over go to the
    folds holding the smallest share of that type's strata (then the fewest items, then a seeded
    random order). Types are dealt largest groups first; which group of a type lands in which
    fold is a seeded shuffle. So every stratum's fold counts differ by at most about the largest
    group size, and the whole assignment costs a few vectorised passes plus one small step per
    distinct type (scikit-learn's ``StratifiedGroupKFold`` balances the same way but loops over
    every group and fold in Python, which took minutes per call on a million items).
    """
    _, group = np.unique(np.asarray(groups), return_inverse=True)
    group = group.ravel()
    n_groups = int(group.max()) + 1 if len(group) else 0
    if n_groups < n_folds:
        raise UserError(f"cannot make {n_folds} folds: the {len(groups)} {what} form only "
                        f"{n_groups} group(s) of items sharing a premise or text "
                        "(lower --folds, or give a separate --train/--test)")
    _, stratum = np.unique(np.asarray(strata), return_inverse=True)
    stratum = stratum.ravel()
    n_strata = int(stratum.max()) + 1
    composition = np.bincount(group * n_strata + stratum,
                              minlength=n_groups * n_strata).reshape(n_groups, n_strata)
    types, type_of = np.unique(composition, axis=0, return_inverse=True)
    type_of = type_of.ravel()
    stratum_sizes = np.bincount(stratum, minlength=n_strata)
    rng = np.random.default_rng(seed % 2**32)
    shuffled = rng.permutation(n_groups)
    members = shuffled[np.argsort(type_of[shuffled], kind="stable")]  # by type, shuffled within
    starts = np.concatenate([[0], np.cumsum(np.bincount(type_of))])
    fill = np.zeros((n_folds, n_strata), dtype=np.int64)  # items dealt per fold and stratum
    fold_of_group = np.empty(n_groups, dtype=np.int64)
    for t in np.lexsort((*types.T[::-1], -types.sum(axis=1))):  # largest groups first
        start, end = starts[t], starts[t + 1]
        rounds, left = divmod(end - start, n_folds)
        share = (fill / stratum_sizes)[:, types[t] > 0].sum(axis=1)
        lightest = np.lexsort((rng.random(n_folds), fill.sum(axis=1), share))
        dealt = np.concatenate([np.tile(np.arange(n_folds), rounds), lightest[:left]])
        fold_of_group[members[start:end]] = dealt
        fill += np.bincount(dealt, minlength=n_folds)[:, None] * types[t][None, :]
    return fold_of_group[group]


EASY_HARD, FOLD_SEEDS = 0, 1  # streams of iteration_seed


def iteration_seed(seed: int, iteration: int, stream: int = EASY_HARD) -> int:
    """The fold seed of run ``iteration`` of ``stream`` (easy/hard iterations, or the re-seeded
    runs of the headline's interval): independent, reproducible seeds from one user seed."""
    entropy = [seed % 2**32, stream, iteration]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0])


def group_sizes(groups: np.ndarray) -> dict:
    """Summary of a grouping for results.json: number of groups, largest, items in groups > 1."""
    sizes = np.bincount(groups) if len(groups) else np.zeros(0, dtype=np.int64)
    return {"groups": int(len(sizes)), "largest": int(sizes.max()) if len(sizes) else 0,
            "grouped_items": int(sizes[sizes > 1].sum())}
