"""AFLite: adversarial filtering with linear models on fixed features (Sakaguchi et al. 2020,
WinoGrande; Le Bras et al. 2020; rounds, defaults and features: docs/mitigation.md, "AFLite")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from cuelens.audit.aggregators import quiet_single_thread
from cuelens.audit.counts import TokenSequences
from cuelens.errors import UserError
from cuelens.mitigate import CUTOFF, ENSEMBLE, THRESHOLD, TRAIN_SIZE
from cuelens.wording import plural

SMALL_CUTOFF = 0.05  # k at most this share of the current set


@dataclass
class AFLiteOptions:
    ensemble: int = ENSEMBLE
    cutoff: int = CUTOFF
    threshold: float = THRESHOLD
    train_size: int = TRAIN_SIZE
    target: int = 0  # stop at this many items (0: only the early stop)
    seed: int = 0

    def validate(self) -> None:
        """Refuse option values that filter nothing or everything (one line each): the
        predictability threshold τ is a share of right predictions, 0 < τ ≤ 1."""
        if not 0 < self.threshold <= 1:  # NaN fails both comparisons
            raise UserError(f"--threshold must be a predictability share in (0, 1] (the AFLite "
                            f"default is {THRESHOLD}); got {self.threshold}")
        for name, value, least in (("--ensemble", self.ensemble, 1), ("--cutoff", self.cutoff, 1),
                                   ("--train-size", self.train_size, 1),
                                   ("--target", self.target, 0)):
            if value < least:
                raise UserError(f"{name} must be at least {least}; got {value}")

    def check_items(self, n_items: int) -> None:
        """Refuse a ``--target`` that leaves nothing to remove from ``n_items`` training items
        (AFLite would stop at once and keep every item)."""
        if self.target >= n_items:
            raise UserError(f"--target {self.target:,} is not below the {plural(n_items, 'item')}"
                            " to filter: AFLite would remove none; give a smaller --target (0: "
                            "stop when fewer than --cutoff items reach --threshold)")


@dataclass
class AFLiteResult:
    kept: np.ndarray  # bool per item
    removed_round: np.ndarray  # per item: the round that removed it (0: kept)
    rounds: int


def _predict(model: LogisticRegression, X, k: int) -> np.ndarray:
    """Per item the predicted label (NLI) or choice (MCQ: arg-max of P(right), column 0)."""
    if k == 1:
        return model.predict(X)
    right = model.predict_proba(X)[:, list(model.classes_).index(0)]
    return right.reshape(-1, k).argmax(axis=1)


def aflite(X, y: np.ndarray, k: int = 1, options: AFLiteOptions | None = None,
           progress=None) -> AFLiteResult:
    """AFLite over ``n`` items: ``X`` has ``n·k`` rows (sparse or dense), ``y`` the item's gold
    label (NLI) or right choice (MCQ)."""
    o = options or AFLiteOptions()
    rng = np.random.default_rng(o.seed)
    n = len(y)
    alive = np.ones(n, dtype=bool)
    removed_round = np.zeros(n, dtype=np.int64)
    instance_labels = np.where(np.arange(k)[None, :] == y[:, None], 0, 1).ravel() if k > 1 \
        else y
    rounds = 0
    while alive.sum() > max(o.target, 1):
        rounds += 1
        current = np.flatnonzero(alive)
        size = min(o.train_size, len(current) // 2)
        cutoff = min(o.cutoff, max(1, int(SMALL_CUTOFF * len(current))))
        correct, seen = np.zeros(n), np.zeros(n)
        with quiet_single_thread():
            for m in range(o.ensemble):
                train = np.zeros(len(current), dtype=bool)
                train[rng.choice(len(current), size, replace=False)] = True
                fit_items, held = current[train], current[~train]
                rows = (fit_items[:, None] * k + np.arange(k)).ravel()
                labels = instance_labels[rows]
                if len(np.unique(labels)) < 2:
                    continue
                model = LogisticRegression(max_iter=200).fit(X[rows], labels)
                held_rows = (held[:, None] * k + np.arange(k)).ravel()
                correct[held] += _predict(model, X[held_rows], k) == y[held]
                seen[held] += 1
                if progress is not None:
                    progress(f"aflite round {rounds}", (m + 1) / o.ensemble)
        score = np.divide(correct, seen, out=np.zeros(n), where=seen > 0)
        candidates = current[score[current] >= o.threshold]
        order = candidates[np.lexsort((rng.random(len(candidates)), -score[candidates]))]
        room = len(current) - o.target if o.target else len(current)
        drop = order[:min(cutoff, room)]
        alive[drop] = False
        removed_round[drop] = rounds
        if len(candidates) < cutoff:
            break
    return AFLiteResult(kept=alive, removed_round=removed_round, rounds=rounds)


def cue_features(seqs: TokenSequences, min_count: int):
    """Binary ``instances × V'`` matrix of the instances' cue features ``seqs`` with
    ``#(w) ≥ min_count`` over them (the scan's listed-cue vocabulary)."""
    X = seqs.matrix()
    support = np.asarray(X.sum(axis=0)).ravel()
    return X[:, np.flatnonzero(support >= min_count)].tocsr()


@dataclass
class Encoder:
    """A sentence encoder loaded by :func:`load_encoder`: its name as given, tokenizer, model."""

    name: str
    tokenizer: Any
    model: Any


def load_encoder(model: str) -> Encoder:
    """Load ``model`` (e.g. ``minilm``, a local directory, a hub id) for
    :func:`embedding_features`; an unknown or unloadable model is a
    :class:`~cuelens.errors.UserError` (load it before any long work)."""
    from transformers import AutoModel, AutoTokenizer

    from cuelens.models.hub import from_pretrained, pick_device, resolve_model_name

    name = resolve_model_name(model)
    return Encoder(model, from_pretrained(AutoTokenizer, name),
                   from_pretrained(AutoModel, name).eval().to(pick_device("auto")))


def embedding_features(texts: list[str], model: str | Encoder, batch_size: int = 64,
                       max_length: int = 64, progress=None) -> np.ndarray:
    """Mean-pooled, L2-normalised last hidden states of ``model`` (e.g. ``minilm``, or one
    loaded by :func:`load_encoder`) for ``texts`` (the sentence-transformers recipe of
    all-MiniLM-L6-v2)."""
    import torch

    loaded = model if isinstance(model, Encoder) else load_encoder(model)
    tokenizer, encoder = loaded.tokenizer, loaded.model
    order = np.argsort([len(t) for t in texts], kind="stable")
    out = np.zeros((len(texts), encoder.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            index = order[start:start + batch_size]
            batch = tokenizer([texts[i] for i in index], padding=True, truncation=True,
                              max_length=max_length, return_tensors="pt").to(encoder.device)
            hidden = encoder(**batch).last_hidden_state
            mask = batch["attention_mask"][..., None].float()
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp_min(1.0)
            out[index] = torch.nn.functional.normalize(pooled, dim=-1).cpu().numpy()
            if progress is not None:
                progress("embeddings", min(1.0, (start + batch_size) / len(texts)))
    return out
