"""Natural controversial sentence pairs (Golan et al. 2023's "minsum" program) solved exactly as a
pruned minimum-cost assignment (docs/methods.md §9; docs/contrast.md, "audit contrast natural")."""

from __future__ import annotations

import itertools
import unicodedata
from dataclasses import dataclass

import numpy as np
import scipy.optimize
import scipy.sparse
import scipy.stats

from cuelens.audit.segmenters import (DICTIONARY_OF, UNSPACED_RE, Segmenter, choose_segmenter,
                                      get_segmenter, script_of)
from cuelens.errors import UserError, check_at_least_1
from cuelens.lm.text import SAMPLE
from cuelens.registry import Registry

FUNCTION_WORDS = frozenset("""
a an the of in on at by for with from into onto upon about above across after against along
alongside amid amidst among amongst around atop before behind below beneath beside besides
between beyond despite down during except inside like minus near off out outside over past per
since than through throughout till to toward towards under underneath unlike until up via
within without betwixt""".split())


def fractional_ranks(logprobs: np.ndarray) -> np.ndarray:
    """Per-column fractional ranks in ``[0, 1]``, ties averaged, ``0`` = the least probable sentence
    (``-inf`` included); NaN raises :class:`UserError` (docs/contrast.md, "Ranks")."""
    x = np.asarray(logprobs, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if np.isnan(x).any():
        col = int(np.argwhere(np.isnan(x))[0, 1])
        raise UserError(f"log-probabilities contain NaN (column {col})")
    n = x.shape[0]
    if n < 2:
        raise UserError("need at least two sentences to rank")
    return (scipy.stats.rankdata(x, method="average", axis=0) - 1.0) / (n - 1)


@dataclass(frozen=True)
class SlotType:
    """A slot where model ``reject`` should rank the sentence low and ``accept`` high."""

    reject: int
    accept: int


def slot_types(n_models: int) -> list[SlotType]:
    """All ordered model pairs ``(reject, accept)``, in ``combinations`` order, both directions."""
    return [SlotType(reject, accept) for a, b in itertools.combinations(range(n_models), 2)
            for reject, accept in ((a, b), (b, a))]


def prune_candidates(ranks: np.ndarray, kind: SlotType, keep: int, threshold: float) -> np.ndarray:
    """Indices of the ``keep`` cheapest feasible sentences for a slot type (all if fewer).

    Cheapest = lowest ``ranks[:, kind.reject]`` among sentences with
    ``ranks[:, kind.accept] >= threshold``; returned sorted by (cost, index).
    """
    feasible = np.flatnonzero(ranks[:, kind.accept] >= threshold)
    cost = ranks[feasible, kind.reject]
    if len(feasible) > keep:
        part = np.argpartition(cost, keep - 1)[:keep]
        feasible, cost = feasible[part], cost[part]
    order = np.lexsort((feasible, cost))
    return feasible[order]


@dataclass
class Selection:
    """An exact selection: ``trials[t] = (a, b, s1, s2)`` (model indices, sentence indices)."""

    trials: list[tuple[int, int, int, int]]
    objective: float
    n_candidates: int


def _type_costs(ranks, types, columns, threshold):
    """Dense ``(len(types), len(columns))`` cost matrix; ``inf`` where a sentence is infeasible."""
    sub = ranks[columns]
    accept, reject = [kind.accept for kind in types], [kind.reject for kind in types]
    return np.where(sub[:, accept] >= threshold, sub[:, reject], np.inf).T


def _solve_lsa(ranks, types, per_pair, columns, threshold):
    cost = np.repeat(_type_costs(ranks, types, columns, threshold), per_pair, axis=0)
    if cost.shape[1] < cost.shape[0]:
        raise UserError(f"no feasible selection: only {cost.shape[1]} candidate sentences for "
                        f"{cost.shape[0]} slots")
    try:
        row, col = scipy.optimize.linear_sum_assignment(cost)
    except ValueError as exc:  # raised when no complete assignment exists
        raise UserError(f"no feasible selection: {exc}") from None
    return columns[col[np.argsort(row)]]


def _solve_milp(ranks, types, per_pair, columns, threshold):
    """The type-collapsed transportation MILP: ``x[t, s]`` = sentence ``s`` fills a type-``t`` slot.

    ``sum_s x[t, s] = per_pair`` for every type, ``sum_t x[t, s] <= 1`` for every sentence.
    """
    costs = _type_costs(ranks, types, columns, threshold)
    var_type, var_col = np.nonzero(np.isfinite(costs))     # type by type, columns ascending
    var_cost = costs[var_type, var_col]
    n_var = len(var_cost)
    a_type = scipy.sparse.csr_matrix((np.ones(n_var), (var_type, np.arange(n_var))),
                                     shape=(len(types), n_var))
    a_sent = scipy.sparse.csr_matrix((np.ones(n_var), (var_col, np.arange(n_var))),
                                     shape=(len(columns), n_var))
    constraints = [scipy.optimize.LinearConstraint(a_type, per_pair, per_pair),
                   scipy.optimize.LinearConstraint(a_sent, 0, 1)]
    res = scipy.optimize.milp(var_cost, constraints=constraints, integrality=np.ones(n_var),
                              bounds=scipy.optimize.Bounds(0, 1))
    if res.status != 0:
        raise UserError(f"no feasible selection: {res.message}")
    chosen = np.flatnonzero(res.x > 0.5)
    return columns[var_col[chosen[np.argsort(var_type[chosen], kind="stable")]]]


SOLVERS = Registry("solver", {"lsa": _solve_lsa, "milp": _solve_milp}, option="--solver")


def select_natural_pairs(ranks: np.ndarray, per_pair: int = 10, threshold: float = 0.5,
                         solver: str = "lsa", prune: bool = True) -> Selection:
    """Select ``per_pair`` controversial pairs for every model pair, exactly (why pruning keeps the
    optimum: docs/contrast.md); ``prune=False`` solves the unpruned problem (small instances)."""
    ranks = np.asarray(ranks, dtype=np.float64)
    n_sent, n_models = ranks.shape
    if n_models < 2:
        raise UserError("need log-probabilities of at least two models")
    check_at_least_1(per_pair=per_pair)
    types = slot_types(n_models)
    n_slots = per_pair * len(types)
    if n_slots > n_sent:
        raise UserError(f"{n_slots} sentences are needed but the corpus has only {n_sent}")
    if prune:
        columns = np.unique(np.concatenate(
            [prune_candidates(ranks, kind, n_slots, threshold) for kind in types]))
    else:
        columns = np.arange(n_sent)
    assigned = SOLVERS.get(solver)(ranks, types, per_pair, columns, threshold)
    trials, objective = [], 0.0
    for k in range(0, len(types), 2):
        fwd, back = types[k], types[k + 1]
        s1 = _sorted_by_cost(assigned[k * per_pair:(k + 1) * per_pair], ranks[:, fwd.reject])
        s2 = _sorted_by_cost(assigned[(k + 1) * per_pair:(k + 2) * per_pair],
                             ranks[:, back.reject])
        for x, y in zip(s1, s2):
            trials.append((fwd.reject, fwd.accept, int(x), int(y)))
            objective += ranks[x, fwd.reject] + ranks[y, back.reject]
    return Selection(trials=trials, objective=float(objective), n_candidates=len(columns))


def _sorted_by_cost(indices: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Most controversial first (lowest cost), ties by sentence index: a deterministic order."""
    return indices[np.lexsort((indices, cost[indices]))]


def check_selection(ranks: np.ndarray, selection: Selection, threshold: float = 0.5) -> list[str]:
    """Problems with a selection (empty list = feasible): constraints and uniqueness."""
    problems = []
    used = [i for _, _, s1, s2 in selection.trials for i in (s1, s2)]
    if len(set(used)) != len(used):
        problems.append("a sentence is used more than once")
    for a, b, s1, s2 in selection.trials:
        if ranks[s1, b] < threshold or ranks[s2, a] < threshold:
            problems.append(f"trial ({a}, {b}, {s1}, {s2}) violates the accept threshold")
    return problems


def without_repeated_words(texts: list[str], allowed: frozenset[str] = FUNCTION_WORDS
                           ) -> np.ndarray:
    """Boolean mask: the sentences in which no word other than an ``allowed`` one (read as the
    words are) occurs twice.

    Words are whitespace words, lower-cased in NFC, edge punctuation stripped; a run of a
    script written without spaces (Chinese, Japanese, Thai) is cut into words by the dictionary
    segmenter a scan of ``texts`` would choose, when it has one for that script (otherwise the
    run stays one word: characters are no words), punctuation between them left out
    (docs/contrast.md)."""
    allowed = frozenset(unicodedata.normalize("NFC", word).lower() for word in allowed)
    choice = choose_segmenter(texts[:SAMPLE])
    segmenter = get_segmenter(choice.name) if choice.name in DICTIONARY_OF.values() else None
    keep = np.ones(len(texts), dtype=bool)
    for i, text in enumerate(texts):
        words = [w for token in text.split() for w in _words(token, segmenter)
                 if w and w not in allowed]
        keep[i] = len(words) == len(set(words))
    return keep


EDGE_MARKS = ".,;:!?\"'()[]"
"""The ASCII marks the published pre-filter strips from a word's edges; other scripts' and
typographic punctuation (“ ” « » ¡ ¿ । 。) is stripped too (:func:`strip_edge_punctuation`)."""


def _edge_mark(char: str) -> bool:
    return char in EDGE_MARKS or (not char.isascii() and unicodedata.category(char)[0] == "P")


def strip_edge_punctuation(token: str) -> str:
    """``token`` without the punctuation at its edges: :data:`EDGE_MARKS` and any non-ASCII
    punctuation (“cat” and cat, नमस्ते। and नमस्ते, ¡hola! and hola are one word)."""
    start, end = 0, len(token)
    while start < end and _edge_mark(token[start]):
        start += 1
    while end > start and _edge_mark(token[end - 1]):
        end -= 1
    return token[start:end]


def _words(token: str, segmenter: Segmenter | None) -> list[str]:
    """The words of one whitespace token for :func:`without_repeated_words`."""
    word = unicodedata.normalize("NFC", strip_edge_punctuation(token)).lower()
    if segmenter is None or segmenter.split_run is None or not UNSPACED_RE.search(word):
        return [word]
    pieces, position = [], 0
    for run in UNSPACED_RE.finditer(word):
        pieces.append(word[position:run.start()])
        cut = script_of(run.group()) in segmenter.runs
        pieces += segmenter.split_run(run.group()) if cut else [run.group()]
        position = run.end()
    pieces.append(word[position:])
    return [piece for piece in pieces if any(c.isalnum() for c in piece)]


def pair_records(selection: Selection, models: list[str], logprobs: np.ndarray,
                 ranks: np.ndarray, texts: list[str] | None,
                 index: np.ndarray | None = None) -> list[dict]:
    """Output lines (docs/contrast.md, "Output line"; ``-inf`` log-probabilities become ``null``);
    ``index`` maps rows of ``logprobs``/``ranks``/``texts`` to corpus indices (pre-filter)."""
    def lp(i, m):
        value = float(logprobs[i, m])
        return value if np.isfinite(value) else None

    return [{
        "model_1": models[a], "model_2": models[b],
        "s1_index": s1 if index is None else int(index[s1]),
        "s2_index": s2 if index is None else int(index[s2]),
        "s1": texts[s1] if texts is not None else None,
        "s2": texts[s2] if texts is not None else None,
        "s1_rank_model_1": float(ranks[s1, a]), "s1_rank_model_2": float(ranks[s1, b]),
        "s2_rank_model_1": float(ranks[s2, a]), "s2_rank_model_2": float(ranks[s2, b]),
        "s1_logprob_model_1": lp(s1, a), "s1_logprob_model_2": lp(s1, b),
        "s2_logprob_model_1": lp(s2, a), "s2_logprob_model_2": lp(s2, b),
    } for a, b, s1, s2 in selection.trials]
