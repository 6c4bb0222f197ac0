"""z-filtering (Wu et al. 2022, on Gardner et al. 2021's z statistic): the greedy removal, or
``balance`` re-sampling, of docs/mitigation.md, "z-filtering"; z as docs/methods.md §2."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from cuelens.audit.fitting import stratum_quotas
from cuelens.audit.metrics import CountTable, bonferroni_z, z as z_score
from cuelens.audit.passes import TokenChunk

SIGNIFICANCE = 0.05  # the scan's level (cuelens.audit.scan.SIGNIFICANCE)
SHARES = "label shares"
MAX_ROUNDS = 20_000


@dataclass
class Incidence:
    """Items as per-label item × word counts: ``X[l][i, w]`` = instances of item ``i`` with
    label ``l`` holding ``w`` (NLI: its one instance under its label; MCQ: the right choice under
    ``right``, the others under ``wrong``); ``sizes[l][i]`` = its instances with label ``l``."""

    X: list[sp.csr_matrix]
    sizes: list[np.ndarray]
    strata: np.ndarray  # NLI label / MCQ gold position per item
    vocab: list[str]
    label_names: list[str]

    @classmethod
    def of(cls, chunk: TokenChunk, strata: np.ndarray, label_names: list[str]) -> "Incidence":
        """The items of the scan's token ``chunk`` (their ``strata``; labels ``label_names``)."""
        seqs, n_items = chunk.seqs, len(strata)
        item_of_row = np.arange(len(chunk.labels)) // chunk.k
        item = np.repeat(item_of_row, seqs.lengths)
        labels = np.repeat(chunk.labels, seqs.lengths)
        shape = (n_items, len(seqs.vocab))
        X = [sp.csr_matrix((np.ones(int((labels == l).sum())),
                            (item[labels == l], seqs.indices[labels == l])), shape=shape)
             for l in range(len(label_names))]
        sizes = [np.bincount(item_of_row[chunk.labels == l], minlength=n_items).astype(float)
                 for l in range(len(label_names))]
        return cls(X, sizes, strata, seqs.vocab, label_names)

    @property
    def n_items(self) -> int:
        return self.X[0].shape[0]

    def counts(self, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``#(w,l)`` (``V × L``) and ``#(l)`` with item ``i`` counted ``weight[i]`` times."""
        return (np.stack([X.T @ weight for X in self.X], axis=1),
                np.array([s @ weight for s in self.sizes]))

    def holding(self, word: int, label: int) -> np.ndarray:
        """Items with an instance under ``label`` holding ``word``."""
        return self.X[label][:, word].nonzero()[0]

    def net(self, word: int, label: int, items: np.ndarray) -> np.ndarray:
        """Per item of ``items``: its instances under ``label`` holding ``word`` minus the share
        of its other instances holding it that the prior expects (NLI: 1 for every holder)."""
        mine = np.asarray(self.X[label][items, word].todense()).ravel()
        others = sum(np.asarray(X[items, word].todense()).ravel()
                     for l, X in enumerate(self.X) if l != label)
        return mine / np.maximum(self.sizes[label][items], 1) - others / np.maximum(
            sum(s[items] for l, s in enumerate(self.sizes) if l != label), 1)


@dataclass
class ZTable:
    z: np.ndarray  # V × L; −inf for pairs not tested (#(w) < min_count)
    threshold: float
    n_tests: int


def z_table(joint: np.ndarray, labels: np.ndarray, min_count: int, z_prior: str) -> ZTable:
    """z of every tested pair and the Bonferroni threshold over them (docs/methods.md §2)."""
    tested = joint.sum(axis=1) >= min_count
    out = np.full(joint.shape, -np.inf)
    if tested.any():
        with np.errstate(all="ignore"):
            out[tested] = np.nan_to_num(z_score(CountTable(joint[tested], labels,
                                                           z_prior=z_prior)), nan=-np.inf)
    n_tests = int(tested.sum()) * joint.shape[1]
    return ZTable(out, bonferroni_z(n_tests, SIGNIFICANCE), n_tests)


@dataclass
class ZFilterResult:
    """Per fitting item its new multiplicity (0 = removed; > 1 = copies added with
    ``balance``), and per (cue, label) and per label what changed."""

    weight: np.ndarray
    threshold: float
    cues: list[dict] = field(default_factory=list)  # token, label, z, items removed/copies kept
    rounds: int = 0
    converged: bool = True


def _excess(inc: Incidence, table: ZTable) -> np.ndarray:
    """Per item the cue excess ``Σ max(z − threshold, 0)`` over its words under its labels."""
    above = np.where(np.isfinite(table.z), np.maximum(table.z - table.threshold, 0.0), 0.0)
    return sum(X @ above[:, l] for l, X in enumerate(inc.X))


def _fewest(c: float, n_w: float, p0: float, threshold: float, min_count: int) -> int:
    """Smallest ``r`` such that removing ``r`` of the pair's items brings its z to the threshold
    (or its support below ``min_count``, where it is no longer tested)."""
    if p0 <= 0 or p0 >= 1:
        return 1
    r = np.arange(1, int(c) + 1, dtype=np.float64)
    n = n_w - r
    z = ((c - r) / np.maximum(n, 1e-12) - p0) / np.sqrt(p0 * (1 - p0) / np.maximum(n, 1e-12))
    done = (z <= threshold) | (n < min_count)
    return int(r[np.argmax(done)]) if done.any() else max(int(c), 1)


def _order(candidates: np.ndarray, excess: np.ndarray, rng: np.random.Generator,
           most: bool) -> np.ndarray:
    """``candidates`` by cue excess (largest first when ``most``), ties in a seeded order."""
    shuffled = rng.permutation(candidates)
    key = -excess[shuffled] if most else excess[shuffled]
    return shuffled[np.argsort(key, kind="stable")]


def share_targets(original: np.ndarray, current: np.ndarray, grow: bool) -> np.ndarray:
    """Per stratum the counts, in the original shares (largest remainders), of the largest
    total that ``current`` can give (``grow`` False) or of the smallest total holding it
    (``grow`` True); ``current`` itself when it already has the shares."""
    def quotas(n: int) -> np.ndarray:
        return stratum_quotas(original, n) if n > 0 else np.zeros_like(original)

    n = int(current.sum())
    step = 1 if grow else -1
    while 0 < n and (quotas(n) < current if grow else quotas(n) > current).any():
        n += step
    return quotas(n).astype(float)


def z_filter(inc: Incidence, min_count: int, z_prior: str = "empirical", balance: bool = False,
             seed: int = 0) -> ZFilterResult:
    """The z-filtered multiplicities of the items of ``inc`` (docs/mitigation.md, "z-filtering")."""
    rng = np.random.default_rng(seed)
    weight = np.ones(inc.n_items)
    n_strata = int(inc.strata.max()) + 1 if inc.n_items else 0
    original = np.bincount(inc.strata, minlength=n_strata).astype(float)
    changes: dict[tuple[str, str], dict] = {}
    prior = inc.counts(weight)[1]  # the label counts whose shares the output keeps
    converged = False
    for rounds in range(1, MAX_ROUNDS + 1):
        joint = inc.counts(weight)[0]
        table = z_table(joint, prior, min_count, z_prior)
        w, l = np.unravel_index(int(np.argmax(table.z)), table.z.shape)
        if table.z[w, l] > table.threshold:
            _fix_cue(inc, table, weight, int(w), int(l), joint, prior, min_count, z_prior,
                     rng, changes)
            continue
        current = np.bincount(inc.strata, weights=weight, minlength=n_strata)
        target = share_targets(original, current, balance)
        if np.array_equal(target, current):
            converged = True
            break
        excess = _excess(inc, table)
        for s in np.flatnonzero(target != current):
            mine = np.flatnonzero((inc.strata == s) & (weight > 0))
            n = int(abs(current[s] - target[s]))
            entry = changes.setdefault((SHARES, str(s)), {"token": None, "label": int(s),
                                                           "z": None, "removed": 0, "added": 0})
            if balance:
                picks = np.resize(_order(mine, excess, rng, most=False), n)
                np.add.at(weight, picks, 1.0)
                entry["added"] += n
            else:
                weight[_order(mine, excess, rng, most=True)[:n]] = 0.0
                entry["removed"] += n
    return ZFilterResult(weight=weight, threshold=table.threshold, rounds=rounds,
                         converged=converged,
                         cues=sorted((c for c in changes.values() if c["removed"] or c["added"]),
                                     key=lambda c: -(c["removed"] + c["added"])))


def _fix_cue(inc: Incidence, table: ZTable, weight: np.ndarray, w: int, l: int,
             joint: np.ndarray, labels: np.ndarray, min_count: int, z_prior: str,
             rng: np.random.Generator, changes: dict) -> None:
    """Remove the fewest items so that cue ``(w, l)`` is no longer significant."""
    c, n_w = joint[w, l], joint[w].sum()
    p0 = labels[l] / labels.sum() if z_prior == "empirical" else 1.0 / len(labels)
    excess = _excess(inc, table)
    entry = changes.setdefault((inc.vocab[w], inc.label_names[l]), {
        "token": inc.vocab[w], "label": inc.label_names[l], "z": round(float(table.z[w, l]), 6),
        "removed": 0, "added": 0})
    holders = inc.holding(w, l)
    holders = holders[weight[holders] > 0]
    net = inc.net(w, l, holders)  # MCQ: items holding w under l more than under the others
    holders = holders[net > 0] if (net > 0).any() else holders
    r = _fewest(c, n_w, p0, table.threshold, min_count)
    picked = _order(holders, excess, rng, most=True)[:max(r, 1)]
    entry["removed"] += len(picked)
    copies = np.bincount(inc.strata[picked], weights=weight[picked] - 1)  # balance's copies
    for s in np.flatnonzero(copies):  # go with their item: no longer added
        changes[(SHARES, str(s))]["added"] -= int(copies[s])
    weight[picked] = 0.0
