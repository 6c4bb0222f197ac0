"""Short-circuit tests (SPEC §7): the white-box attention test (AW) and black-box pass rates.

**AW.** Each correctly answered question is encoded as the pair (premise, correct choice) with
the model's own special tokens (``[CLS] p [SEP] c [SEP]`` for BERT, ``<s> p </s></s> c </s>``
for RoBERTa). The last layer's attention maps are max-pooled over heads. Scores are taken
between *words*, not word pieces: the score from choice word ``w`` to premise word ``v`` is the
maximum over the pieces of ``w`` (rows) and of ``v`` (columns), so a word split into several
pieces counts once (words are the tokenizer's own ``word_ids``). Special tokens and words made
only of punctuation are excluded. With ``c1`` = #scores > ``t1`` and ``c2`` = #scores > ``t2``
the model *considers the premise* when ``c1 > 0`` or ``c2 ≥ 2``; AW = the fraction of questions
on which it does.

**Black box.** The operators of :mod:`cuelens.augment.operators` build stress questions from the
correctly answered questions; the pass rate of an operator is the fraction of its questions the
model still answers correctly. CO and AW are the headline numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from cuelens.augment.defaults import DEFAULT_STRESS_OPS as DEFAULT_OPS
from cuelens.augment.operators.text import is_punct
from cuelens.data.dataset import Split, Task
from cuelens.errors import UserError

T1, T2 = 0.14, 0.13


class AWUnavailable(Exception):
    """The model does not return attention maps."""


def considers_premise(scores: np.ndarray, t1: float = T1, t2: float = T2) -> bool:
    """SPEC §7 decision on a (choice word × premise word) score matrix."""
    return bool((scores > t1).sum() > 0 or (scores > t2).sum() >= 2)


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


@dataclass
class AWResult:
    score: float | None  # fraction of questions on which the model considers the premise
    considers: np.ndarray  # bool per question
    note: str = ""


def _use_eager_attention(model) -> None:
    """Fused attention kernels (SDPA, flash) return no attention maps; switch to eager."""
    setter = getattr(model, "set_attn_implementation", None)
    if setter is not None:
        try:
            setter("eager")
        except (ValueError, TypeError, AttributeError):
            pass


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


def aw_test(model, tokenizer, premises: Sequence[str], choices: Sequence[str], *,
            t1: float = T1, t2: float = T2, device: str = "cpu", batch_size: int = 32,
            max_length: int = 128, on_batch: Callable[[int], None] | None = None) -> AWResult:
    """The AW test on (premise, correct choice) pairs (SPEC §7); needs a fast tokenizer."""
    import torch

    n = len(premises)
    considers = np.zeros(n, dtype=bool)
    if n == 0:
        return AWResult(None, considers, "no correctly answered questions")
    if not getattr(tokenizer, "is_fast", False):
        raise UserError("the AW test needs a fast tokenizer (word ids and offsets)")
    _use_eager_attention(model)
    model.eval()
    order = np.argsort([len(p) + len(c) for p, c in zip(premises, choices)], kind="stable")
    try:
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
                    scores = word_scores(attention[b], choice_words, premise_words)
                    considers[i] = considers_premise(scores, t1, t2)
                if on_batch is not None:
                    on_batch(len(index))
    except AWUnavailable as exc:
        return AWResult(None, considers, f"AW not available: {exc}")
    return AWResult(float(considers.mean()), considers)


def pass_rates(stress_rows: Sequence[dict], predicted: np.ndarray) -> dict[str, dict]:
    """Per operator: number of stress questions and the fraction answered correctly."""
    per_op: dict[str, dict] = {}
    ops = np.asarray([row["op"] for row in stress_rows])
    right = predicted == np.asarray([row["label"] for row in stress_rows])
    for op in dict.fromkeys(ops.tolist()):
        mask = ops == op
        per_op[op] = {"n": int(mask.sum()), "pass_rate": round(float(right[mask].mean()), 6)}
    return per_op


def summary(aw: AWResult, per_op: dict[str, dict]) -> dict:
    """``probe.short_circuit`` (docs/results-schema.md): {aw, co, per_op}."""
    out = {"aw": None if aw.score is None else round(aw.score, 6),
           "co": per_op.get("co", {}).get("pass_rate"), "per_op": per_op}
    if aw.note:
        out["aw_note"] = aw.note
    return out


def short_circuit(split: Split, correct: np.ndarray, classifier, *, ops: str = DEFAULT_OPS,
                  t1: float = T1, t2: float = T2, seed: int = 0, batch_size: int | None = None,
                  progress=None) -> dict:
    """Both short-circuit tests of a loaded classifier on the correctly answered questions."""
    from cuelens.augment.operators import parse_ops
    from cuelens.augment.stress import build_stress, stress_split

    items = np.flatnonzero(correct)
    premises = [split.premise_context(int(i)) for i in items]
    right = [split.choices[i][split.labels[i]] for i in items]
    aw = aw_test(classifier.model, classifier.tokenizer, premises, right, t1=t1, t2=t2,
                 device=classifier.device, batch_size=batch_size or 32,
                 max_length=classifier.max_length, on_batch=progress)
    stress = build_stress(split, parse_ops(ops), seed=seed, items=items.tolist())
    if not stress.rows:
        return summary(aw, {})
    probs = classifier.predict_proba(stress_split(stress), batch_size=batch_size)
    return summary(aw, pass_rates(stress.rows, probs.argmax(axis=1)))


# --- the probe section ``short_circuit`` (listed in cuelens.probes.sections) ------------------

@dataclass
class ShortCircuitOptions:
    """Settings of the probe's short-circuit section (``audit probe --short-circuit``)."""

    t1: float = T1
    t2: float = T2
    ops: str = DEFAULT_OPS

    def validate(self) -> None:
        """Unknown operator names fail (``UserError``) before any model work."""
        from cuelens.augment.operators import parse_ops

        parse_ops(self.ops)


def section(ctx) -> dict | None:
    """``probe.short_circuit`` of a :class:`~cuelens.probes.sections.ProbeContext`: ``None``
    unless asked for (``ctx.short_circuit``); skipped with a warning without an MCQ dataset
    or a loaded model."""
    opts: ShortCircuitOptions | None = ctx.short_circuit
    if opts is None:
        return None
    if ctx.dataset.task != Task.MCQ:
        ctx.warnings.append("short-circuit tests are for multiple choice; skipped")
        return None
    if ctx.classifier is None:
        ctx.warnings.append("short-circuit tests need a model (they ask the model new "
                            "questions); skipped")
        return None
    correct = ctx.correct.astype(bool)
    total, done = max(int(correct.sum()), 1), 0

    def advance(k: int) -> None:
        nonlocal done
        done += k
        if ctx.progress is not None:
            ctx.progress("short-circuit tests", done / total)

    return short_circuit(ctx.dataset.test, correct, ctx.classifier, ops=opts.ops, t1=opts.t1,
                         t2=opts.t2, seed=ctx.seed, progress=advance)
