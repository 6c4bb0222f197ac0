"""Synthetic controversial sentences by word-replacement search, with candidate pruning for the
accepting model through :data:`PRUNERS` (docs/methods.md §9, Golan et al. 2023; docs/contrast.md,
"audit contrast synthetic"). ``s1`` is rejected by ``m1``; the contstim CSVs name it the reverse."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from cuelens.lm.scoring import SentenceScorer

CAUSAL_THRESHOLD = -10.0
MAX_MISSES = 5


def word_key(word: str) -> str:
    """How two words are compared: lower-cased, in NFC."""
    return unicodedata.normalize("NFC", word).lower()


@dataclass
class Vocabulary:
    """Candidate words: ``words`` (non-initial positions), ``initial`` (position 0; defaults to
    ``words``) and ``function_words`` (may repeat within a sentence); words are matched
    case-insensitively in NFC (:func:`word_key`: 'café' composed and decomposed is one word)."""

    words: list[str]
    initial: list[str] | None = None
    function_words: frozenset[str] = frozenset()

    def __post_init__(self):
        self._lists = {}
        for key, words in (("rest", self.words), ("initial", self.initial or self.words)):
            arr = np.asarray(words, dtype=object)
            lower = np.asarray([word_key(w) for w in words], dtype=object)
            self._lists[key] = (arr, lower)
        self._function = frozenset(word_key(w) for w in self.function_words)

    def candidates(self, words: list[str], position: int) -> list[str]:
        """Allowed replacements at ``position``: no repeat of another word of the sentence
        (function words excepted), not the current word."""
        arr, lower = self._lists["initial" if position == 0 else "rest"]
        present = {word_key(w) for i, w in enumerate(words) if i != position} - self._function
        present.add(word_key(words[position]))
        return arr[~np.isin(lower, list(present))].tolist()


def score_batched(scorer: SentenceScorer, sentences: list[str], batch_size: int) -> np.ndarray:
    """``scorer.score`` in chunks of ``batch_size`` (bounded memory), float64."""
    if not sentences:
        return np.zeros(0)
    return np.concatenate([np.asarray(scorer.score(sentences[i:i + batch_size]), dtype=np.float64)
                           for i in range(0, len(sentences), batch_size)])


def split_words(sentence: str, segmenter: str = "unicode") -> tuple[list[str], list[str]]:
    """The words the search replaces and the glue after each but the last (``" "`` between
    whitespace tokens, ``""`` inside one): runs of a script written without spaces (Chinese,
    Japanese, Thai) are cut by ``segmenter`` (a name of docs/languages.md; ``unicode`` keeps a
    run whole), so such a sentence is not one word. The cut is the word-level models' own
    (:class:`~cuelens.lm.text.WordSplitter`), read in NFC: a decomposed sentence's words keep
    their combining marks (a dakuten was cut off its kana)."""
    from cuelens.lm.text import WordSplitter, word_spans

    spans = word_spans(sentence, WordSplitter(lowercase=False, detach_punct=False,
                                              segmenter=segmenter))
    glue = [" " if start > end else "" for end, start in zip(spans[:-1, 1], spans[1:, 0])]
    return [sentence[start:end] for start, end in spans.tolist()], glue


def join_words(words: list[str], glue: list[str] | None = None) -> str:
    """The sentence of ``words`` with the ``glue`` of :func:`split_words` between them (``None``:
    spaces)."""
    if glue is None:
        return " ".join(words)
    return "".join(word + between for word, between in zip(words, [*glue, ""]))


def _replace(words: list[str], position: int, candidates: list[str],
             glue: list[str] | None = None) -> list[str]:
    return [join_words([*words[:position], c, *words[position + 1:]], glue) for c in candidates]


# A feasibility strategy returns (candidate sentences, their words, their accept scores)
# satisfying the accept constraint, using the accepting scorer (and its optional pruning
# method, which reads whitespace words: a word cut from a longer token is not pruned).
Feasible = Callable[[SentenceScorer, list[str], int, list[str], float, int, list[str] | None],
                    tuple[list[str], list[str], list[float]]]


def _feasible_all(accept, words, position, candidates, floor, batch_size, glue=None):
    sentences = _replace(words, position, candidates, glue)
    scores = score_batched(accept, sentences, batch_size)
    ok = scores >= floor
    return ([s for s, k in zip(sentences, ok) if k], [c for c, k in zip(candidates, ok) if k],
            scores[ok].tolist())


def _feasible_prefix(accept, words, position, candidates, floor, batch_size, glue=None):
    if position and glue is not None and not glue[position - 1]:   # it continues a word
        return _feasible_all(accept, words, position, candidates, floor, batch_size, glue)
    prefix = join_words(words[:position], None if glue is None else glue[:max(position - 1, 0)])
    cond = np.asarray(accept.next_word_logprobs(prefix, candidates), dtype=np.float64)
    kept = [c for c, lp in zip(candidates, cond) if lp >= CAUSAL_THRESHOLD]
    return _feasible_all(accept, words, position, kept, floor, batch_size, glue)


def _feasible_best_first(accept, words, position, candidates, floor, batch_size, glue=None):
    if glue is not None and "" in glue:    # its positions are whitespace words
        return _feasible_all(accept, words, position, candidates, floor, batch_size, glue)
    slot = np.asarray(accept.masked_word_logprobs(" ".join(words), position, candidates),
                      dtype=np.float64)
    order = [candidates[i] for i in np.argsort(-slot, kind="stable")]
    out_s, out_c, out_v, misses = [], [], [], 0
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        sentences = _replace(words, position, chunk, glue)
        scores = np.asarray(accept.score(sentences), dtype=np.float64)
        for s, c, v in zip(sentences, chunk, scores.tolist()):
            if v >= floor:
                out_s.append(s)
                out_c.append(c)
                out_v.append(v)
                misses = 0
            else:
                misses += 1
                if misses >= MAX_MISSES:
                    return out_s, out_c, out_v
    return out_s, out_c, out_v


PRUNERS: dict[str, Feasible] = {
    "next_word_logprobs": _feasible_prefix,
    "masked_word_logprobs": _feasible_best_first,
}


def feasibility_strategy(scorer: SentenceScorer) -> Feasible:
    """The pruning rule a scorer opts into (first method of :data:`PRUNERS` it has), else none."""
    for method, strategy in PRUNERS.items():
        if callable(getattr(scorer, method, None)):
            return strategy
    return _feasible_all


@dataclass
class SearchResult:
    sentence: str
    logprob_accept: float
    logprob_reject: float
    steps: int
    converged: bool


def search(natural: str, accept: SentenceScorer, reject: SentenceScorer, vocab: Vocabulary,
           rng: np.random.Generator, max_steps: int = 200, patience: int = 8,
           batch_size: int = 2048, on_step: Callable[[int], None] | None = None,
           segmenter: str = "unicode") -> SearchResult:
    """Minimise ``log p(s|reject)`` s.t. ``log p(s|accept) >= log p(natural|accept)``
    (docs/contrast.md). ``on_step(step)`` is called after every position (progress bars);
    ``segmenter`` cuts runs of unspaced scripts into words (:func:`split_words`)."""
    words, glue = split_words(natural, segmenter)
    floor = float(accept.score([natural])[0])
    current = float(reject.score([natural])[0])
    current_accept = floor
    feasible = feasibility_strategy(accept)
    order: list[int] = []
    fails = steps = 0
    failed_here: set[int] = set()  # positions that failed since the sentence last changed
    while fails < patience and steps < max_steps and words:
        if not order:
            order = rng.permutation(len(words)).tolist()
        position = order.pop(0)
        steps += 1
        improved = False
        if position not in failed_here:  # same sentence, same position: it would fail again
            sentences, chosen, accepted = feasible(accept, words, position,
                                                   vocab.candidates(words, position), floor,
                                                   batch_size, glue)
            if sentences:
                rejected = score_batched(reject, sentences, batch_size)
                best = int(np.argmin(rejected))
                if rejected[best] < current:
                    words[position] = chosen[best]
                    current = float(rejected[best])
                    current_accept = float(accepted[best])
                    improved = True
        if improved:
            fails, failed_here = 0, set()
        else:
            fails += 1
            failed_here.add(position)
        if on_step is not None:
            on_step(steps)
    return SearchResult(join_words(words, glue), current_accept, current, steps,
                        fails >= patience)


def synthesize_triplet(natural: str, m1: SentenceScorer, m2: SentenceScorer, vocab: Vocabulary,
                       seed: int, max_steps: int = 200, patience: int = 8,
                       batch_size: int = 2048,
                       on_step: Callable[[int, int], None] | None = None,
                       segmenter: str = "unicode") -> dict:
    """The triplet ``(n, s1, s2)`` for ``(m1, m2)`` with its controversiality (docs/contrast.md).
    ``on_step(search, step)``: progress of search 1 (for ``s1``) and 2 (for ``s2``);
    ``segmenter``: see :func:`split_words`.

    Each of the two searches gets its own generator derived from ``seed``, so results do not
    depend on the order in which triplets are computed.
    """
    rng1, rng2 = (np.random.default_rng([seed, k]) for k in (1, 2))
    steps1, steps2 = ((None if on_step is None else partial(on_step, k)) for k in (1, 2))
    s1 = search(natural, accept=m2, reject=m1, vocab=vocab, rng=rng1, max_steps=max_steps,
                patience=patience, batch_size=batch_size, on_step=steps1, segmenter=segmenter)
    s2 = search(natural, accept=m1, reject=m2, vocab=vocab, rng=rng2, max_steps=max_steps,
                patience=patience, batch_size=batch_size, on_step=steps2, segmenter=segmenter)
    n_m1, n_m2 = float(m1.score([natural])[0]), float(m2.score([natural])[0])
    drop1, drop2 = n_m1 - s1.logprob_reject, n_m2 - s2.logprob_reject
    return {
        "model_1": m1.name, "model_2": m2.name, "n": natural, "s1": s1.sentence,
        "s2": s2.sentence,
        "lp_n_m1": n_m1, "lp_n_m2": n_m2,
        "lp_s1_m1": s1.logprob_reject, "lp_s1_m2": s1.logprob_accept,
        "lp_s2_m1": s2.logprob_accept, "lp_s2_m2": s2.logprob_reject,
        "controversiality": drop1 + drop2,
        "controversial": bool(drop1 > 0 and drop2 > 0),
        "steps_s1": s1.steps, "steps_s2": s2.steps,
        "converged": bool(s1.converged and s2.converged),
    }
