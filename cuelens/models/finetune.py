"""Fine-tune a :class:`Classifier` on a split and record its training dynamics (Dataset
Cartography, Swayamdipta et al. 2020; docs/methods.md §6; training: docs/inference.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from cuelens.data.dataset import Split
from cuelens.models.batching import bucketed_batches, encode_split
from cuelens.models.classifier import Classifier

if TYPE_CHECKING:
    from torch import nn


@dataclass
class TrainConfig:
    epochs: int = 3
    lr: float = 2e-5
    batch_size: int = 16
    seed: int = 0
    warmup: float = 0.1
    weight_decay: float = 0.01
    debias: str = "none"  # a cuelens.mitigate.losses.DEBIAS_LOSSES name (docs/mitigation.md)


@dataclass
class Dynamics:
    """Per epoch and training example: logits ``[E, n, C]``, gold index ``[n]``."""

    guids: list[str]
    logits: np.ndarray
    gold: np.ndarray
    loss: dict = field(default_factory=dict)  # the loss that ran: name and settings

    @property
    def gold_probs(self) -> np.ndarray:
        """``[E, n]`` softmax probability of the gold label."""
        import scipy.special

        probs = scipy.special.softmax(self.logits, axis=-1)
        return np.take_along_axis(probs, self.gold[None, :, None], axis=-1)[..., 0]

    @property
    def correct(self) -> np.ndarray:
        """``[E, n]`` whether the arg-max prediction was the gold label."""
        return self.logits.argmax(axis=-1) == self.gold[None, :]


def finetune(clf: Classifier, split: Split, gold: np.ndarray, config: TrainConfig,
             criterion: nn.Module, on_step: Callable[[int, float, int], None] | None = None,
             bias: np.ndarray | None = None) -> Dynamics:
    """Train ``clf.model`` in place on ``split`` (``gold``: label column per item, or the correct
    choice for MCQ) with the loss module ``criterion`` (a
    :class:`cuelens.mitigate.losses.DebiasLoss`, built for this model and split by
    :func:`cuelens.mitigate.losses.training_loss`; a debiasing one is fed ``bias``: per item, the
    bias-only probabilities over the logits' columns). ``on_step(n_items, loss, epoch)`` reports
    progress."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    encoded = encode_split(clf.tokenizer, split, clf.max_length)
    lengths = encoded.lengths
    n_batches = -(-len(split) // config.batch_size)
    model = clf.model
    criterion = criterion.to(clf.device)
    bias_t = None if bias is None else torch.as_tensor(bias, dtype=torch.float32)
    optimizer = torch.optim.AdamW([*model.parameters(), *criterion.parameters()], lr=config.lr,
                                  weight_decay=config.weight_decay)
    total = n_batches * config.epochs
    schedule = get_linear_schedule_with_warmup(optimizer, int(config.warmup * total), total)
    on_gpu = clf.device.startswith("cuda")
    scaler = torch.amp.GradScaler("cuda", enabled=on_gpu and not torch.cuda.is_bf16_supported())
    logits_out: np.ndarray | None = None
    gold_t = torch.as_tensor(gold, dtype=torch.long)
    model.train()
    for epoch in range(config.epochs):
        for index in bucketed_batches(lengths, config.batch_size, rng):
            batch = clf.to_device(encoded.collate(index))
            labels = gold_t[index].to(clf.device)
            with clf.autocast():
                output = model(**batch, output_hidden_states=criterion.gate is not None)
            logits = output.logits
            pooled = None if criterion.gate is None else \
                output.hidden_states[-1][:, 0].float().reshape(len(index), -1)
            loss = criterion(logits, labels, None if bias_t is None else
                             bias_t[index].to(clf.device), pooled)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            schedule.step()
            values = logits.detach().float().cpu().numpy()
            if logits_out is None:
                logits_out = np.empty((config.epochs, len(split), values.shape[1]), np.float32)
            logits_out[epoch, index] = values
            if on_step is not None:
                on_step(len(index), loss.item(), epoch)
    model.eval()
    if logits_out is None:  # no training item
        logits_out = np.zeros((config.epochs, 0, 0), np.float32)
    return Dynamics(guids=list(split.ids), logits=logits_out, gold=np.asarray(gold),
                    loss={"name": criterion.kind, **criterion.settings})
