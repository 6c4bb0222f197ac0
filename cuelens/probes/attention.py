"""The white-box attention test AW of the short-circuit probe (docs/methods.md §7, §13), with
thresholds either fixed (the paper's t1 = 0.14, t2 = 0.13) or calibrated per model against a null
of unrelated premises (the statistic and the calibration in full: docs/augmentation.md, "AW
decisions")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass

import numpy as np

from cuelens.audit.chance import wilson_interval
from cuelens.augment.operators.text import is_punct
from cuelens.errors import UserError

T1, T2 = 0.14, 0.13  # the paper's thresholds (BERT-base-sized models)
NULL_RATE = 0.05  # target "considers the premise" rate on the null
NULL_DRAWS = 5  # unrelated premises per question
MIN_NULL = 20  # null pairs needed for a 5% tail to exist
THRESHOLD_MODES = ("calibrated", "fixed")


class AWUnavailable(Exception):
    """The model does not return attention maps."""


def top_two(scores: np.ndarray) -> tuple[float, float]:
    """Largest and second-largest entry of a score matrix (0 where there are none)."""
    flat = np.sort(np.asarray(scores, dtype=np.float64).ravel())[::-1]
    padded = np.concatenate([flat[:2], np.zeros(max(0, 2 - flat.size))])
    return float(padded[0]), float(padded[1])


def considers(top: np.ndarray, t1: float, t2: float) -> np.ndarray:
    """docs/methods.md §7 decision per row of ``top`` = ``[m1, m2]``: ``m1 > t1`` or ``m2 > t2``."""
    top = np.asarray(top, dtype=np.float64).reshape(-1, 2)
    return (top[:, 0] > t1) | (top[:, 1] > t2)


def word_spans(sequence_ids: Sequence[int | None], word_ids: Sequence[int | None],
               offsets: Sequence[tuple[int, int]], texts: tuple[str, str]) -> list[list[list[int]]]:
    """Token positions of each non-punctuation word, per sequence (0 = premise, 1 = choice)."""
    words: list[dict[int, list[int]]] = [{}, {}]
    for pos, (seq, word) in enumerate(zip(sequence_ids, word_ids)):
        if seq is None or word is None:
            continue
        words[seq].setdefault(word, []).append(pos)
    out: list[list[list[int]]] = [[], []]
    for seq in (0, 1):
        for positions in words[seq].values():
            text = "".join(texts[seq][offsets[p][0]:offsets[p][1]] for p in positions)
            if text and not is_punct(text):
                out[seq].append(positions)
    return out


def word_scores(attention: np.ndarray, choice_words: list[list[int]],
                premise_words: list[list[int]]) -> np.ndarray:
    """Max-pooled (choice word → premise word) scores from a token attention map ``[L, L]``."""
    if not choice_words or not premise_words:
        return np.zeros((len(choice_words), len(premise_words)), dtype=attention.dtype)
    rows = np.concatenate(choice_words)
    cols = np.concatenate(premise_words)
    sub = attention[np.ix_(rows, cols)]
    row_starts = np.cumsum([0] + [len(w) for w in choice_words[:-1]])
    col_starts = np.cumsum([0] + [len(w) for w in premise_words[:-1]])
    return np.maximum.reduceat(np.maximum.reduceat(sub, row_starts, axis=0), col_starts, axis=1)


def last_layer_attention(model, batch: dict) -> np.ndarray:
    """Last encoder layer's attention maps, max over heads: ``[B, L, L]``."""
    encoder = getattr(model, "base_model", model)
    try:
        out = encoder(**batch, output_attentions=True)
    except TypeError as exc:
        raise AWUnavailable(str(exc)) from None
    attentions = getattr(out, "attentions", None)
    if not attentions or attentions[-1] is None:
        raise AWUnavailable(f"{type(model).__name__} returns no attention maps")
    return attentions[-1].float().amax(dim=1).cpu().numpy()


def pair_top_scores(model, tokenizer, premises: Sequence[str], choices: Sequence[str], *,
                    device: str = "cpu", batch_size: int = 32, max_length: int = 128,
                    on_batch: Callable[[int], None] | None = None) -> np.ndarray:
    """``[n, 2]``: the two largest (choice word → premise word) scores of each pair; raises
    :class:`AWUnavailable` when the model gives no attention maps."""
    import torch

    n = len(premises)
    top = np.zeros((n, 2), dtype=np.float64)
    if not getattr(tokenizer, "is_fast", False):
        raise UserError("the AW test needs a fast tokenizer (word ids and offsets)")
    # fused attention kernels (SDPA, flash) return no attention maps: eager where it can be set
    with suppress(ValueError, TypeError, AttributeError):
        model.set_attn_implementation("eager")
    model.eval()
    order = np.argsort([len(p) + len(c) for p, c in zip(premises, choices)], kind="stable")
    with torch.inference_mode():
        for start in range(0, n, batch_size):
            index = order[start:start + batch_size]
            pairs = [(premises[i], choices[i]) for i in index]
            enc = tokenizer([p for p, _ in pairs], [c for _, c in pairs], padding=True,
                            truncation=True, max_length=max_length,
                            return_offsets_mapping=True, return_tensors="pt")
            offsets = enc.pop("offset_mapping").tolist()
            attention = last_layer_attention(model, {k: v.to(device) for k, v in enc.items()})
            for b, i in enumerate(index):
                premise_words, choice_words = word_spans(
                    enc.sequence_ids(b), enc.word_ids(b), offsets[b], pairs[b])
                top[i] = top_two(word_scores(attention[b], choice_words, premise_words))
            if on_batch is not None:
                on_batch(len(index))
    return top


def null_partners(premises: Sequence[str], draws: int = NULL_DRAWS,
                  seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Seeded derangement: ``(question, partner)`` index pairs, ``draws`` per question (fewer
    when there are few questions), never a question with itself or with a premise of the same
    text (compared case- and space-insensitively)."""
    n = len(premises)
    cycle = np.random.default_rng(seed).permutation(n)
    shifts = range(1, min(draws, n - 1) + 1)
    if not shifts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    question = np.tile(cycle, len(shifts))
    partner = np.concatenate([np.roll(cycle, -shift) for shift in shifts])
    norm = [" ".join(p.lower().split()) for p in premises]
    keep = np.fromiter((norm[q] != norm[p] for q, p in zip(question, partner)), dtype=bool,
                       count=len(question))
    return question[keep], partner[keep]


@dataclass
class Thresholds:
    """AW thresholds and their null "considers the premise" rate."""

    mode: str  # "calibrated" | "fixed"
    t1: float
    t2: float
    null_rate: float | None  # achieved on the null pairs (None: no null was computed)
    n_null: int

    def as_dict(self) -> dict:
        return {"mode": self.mode, "t1": round(self.t1, 6), "t2": round(self.t2, 6),
                "null_rate": None if self.null_rate is None else round(self.null_rate, 6),
                "target_null_rate": NULL_RATE if self.mode == "calibrated" else None,
                "n_null": self.n_null}


def calibrate(null_top: np.ndarray, rate: float = NULL_RATE) -> Thresholds:
    """Joint thresholds from the null's ``[N, 2]`` top scores (module docstring): the largest
    ``k`` such that ``t1`` = the ``(k+1)``-th largest ``m1``, ``t2`` = the ``(k+1)``-th largest
    ``m2`` flag at most ``⌊rate·N⌋`` null pairs by the union rule."""
    n = len(null_top)
    if n < MIN_NULL:
        raise ValueError(f"{n} null pairs; at least {MIN_NULL} are needed")
    m1 = np.sort(null_top[:, 0])[::-1]
    m2 = np.sort(null_top[:, 1])[::-1]
    budget = int(np.floor(rate * n + 1e-9))
    best = 0
    for k in range(1, n):
        if considers(null_top, m1[k], m2[k]).sum() > budget:
            break
        best = k
    flagged = considers(null_top, m1[best], m2[best]).sum()
    return Thresholds("calibrated", float(m1[best]), float(m2[best]), float(flagged / n), n)


@dataclass
class AWResult:
    score: float | None  # fraction of questions on which the model considers the premise
    considers: np.ndarray  # bool per question
    note: str = ""
    ci: tuple[float, float] | None = None  # 95% Wilson interval of the score
    thresholds: Thresholds | None = None


def check_threshold_mode(mode: str) -> None:
    if mode not in THRESHOLD_MODES:
        raise UserError(f"unknown AW thresholds '{mode}' (use {' or '.join(THRESHOLD_MODES)})")


def check_thresholds(t1: float, t2: float) -> None:
    """Fixed thresholds are attention weights: a number from 0 to 1 each (:class:`UserError`
    naming ``--t1``/``--t2`` otherwise; NaN flagged no question, a negative one every one)."""
    for name, value in (("t1", t1), ("t2", t2)):
        if not 0 <= value <= 1:
            raise UserError(f"--{name} is an attention weight: give a number from 0 to 1, "
                            f"not {value}")


def aw_test(model, tokenizer, premises: Sequence[str], choices: Sequence[str], *,
            thresholds: str = "calibrated", t1: float = T1, t2: float = T2,
            null_draws: int = NULL_DRAWS, seed: int = 0, device: str = "cpu",
            batch_size: int = 32, max_length: int = 128,
            on_batch: Callable[[int], None] | None = None) -> AWResult:
    """The AW test on (premise, correct choice) pairs (docs/methods.md §7); ``thresholds`` is
    ``"calibrated"`` (from the null, module docstring) or ``"fixed"`` (``t1``, ``t2``; the
    null rate at those thresholds is still measured and reported). Needs a fast tokenizer."""
    check_threshold_mode(thresholds)
    check_thresholds(t1, t2)
    n = len(premises)
    flags = np.zeros(n, dtype=bool)
    if n == 0:
        return AWResult(None, flags, "no correctly answered questions")
    question, partner = null_partners(premises, null_draws, seed)
    def scores(first: Sequence[str], second: Sequence[str], progress=None) -> np.ndarray:
        return pair_top_scores(model, tokenizer, first, second, device=device,
                               batch_size=batch_size, max_length=max_length, on_batch=progress)

    try:
        top = scores(premises, choices, on_batch)
        null_top = scores([premises[p] for p in partner], [choices[q] for q in question])
    except AWUnavailable as exc:
        return AWResult(None, flags, f"AW not available: {exc}")
    if thresholds == "fixed":
        null_rate = float(considers(null_top, t1, t2).mean()) if len(null_top) else None
        chosen = Thresholds("fixed", t1, t2, null_rate, len(null_top))
    elif len(null_top) < MIN_NULL:
        return AWResult(None, flags, f"AW not calibrated: {len(null_top)} null pairs from {n} "
                                     f"questions (need {MIN_NULL}); use --aw-thresholds fixed")
    else:
        chosen = calibrate(null_top)
    flags = considers(top, chosen.t1, chosen.t2)
    return AWResult(float(flags.mean()), flags, ci=wilson_interval(int(flags.sum()), n),
                    thresholds=chosen)
