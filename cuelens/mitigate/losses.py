"""Debiasing losses fed by a bias-only model's probabilities (docs/mitigation.md, "Debiased
training"; Clark et al. 2019, He et al. 2019, Karimi Mahabadi et al. 2020, Utama et al. 2020)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

from cuelens.data.dataset import Split, Task

EPS = 1e-6
FOCAL_GAMMA = 2.0


def _log_bias(bias_probs: torch.Tensor) -> torch.Tensor:
    return torch.log(bias_probs.float().clamp_min(EPS))


def cross_entropy(loss: "DebiasLoss", logits, labels, bias_probs, features) -> torch.Tensor:
    return F.cross_entropy(logits.float(), labels)


def product_of_experts(loss: "DebiasLoss", logits, labels, bias_probs, features) -> torch.Tensor:
    combined = F.log_softmax(logits.float(), dim=-1) + _log_bias(bias_probs)
    return F.cross_entropy(combined, labels)


def learned_mixin(loss: "DebiasLoss", logits, labels, bias_probs, features) -> torch.Tensor:
    if features is None:
        raise ValueError("learned-mixin needs the model's pooled hidden vector (features=)")
    assert loss.gate is not None
    gate = F.softplus(loss.gate(features.float()))  # n × 1, ≥ 0
    scaled = gate * _log_bias(bias_probs)
    value = F.cross_entropy(F.log_softmax(logits.float(), dim=-1) + scaled, labels)
    if loss.entropy_weight > 0:
        mixed = F.log_softmax(scaled, dim=-1)
        entropy = -(mixed.exp() * mixed).sum(dim=-1).mean()
        value = value + loss.entropy_weight * entropy
    return value


def debiased_focal(loss: "DebiasLoss", logits, labels, bias_probs, features) -> torch.Tensor:
    gold_bias = bias_probs.float().gather(1, labels[:, None])[:, 0]
    nll = F.cross_entropy(logits.float(), labels, reduction="none")
    return ((1.0 - gold_bias) ** loss.gamma * nll).mean()


def reweighted(loss: "DebiasLoss", logits, labels, bias_probs, features) -> torch.Tensor:
    gold_bias = bias_probs.float().gather(1, labels[:, None])[:, 0]
    nll = F.cross_entropy(logits.float(), labels, reduction="none")
    return ((1.0 - gold_bias) * nll).mean()


LossFn = Callable[..., torch.Tensor]
DEBIAS_LOSSES: dict[str, LossFn] = {
    "none": cross_entropy, "poe": product_of_experts, "learned-mixin": learned_mixin,
    "focal": debiased_focal, "reweight": reweighted,
}


LOSS_TITLES = {"none": "cross-entropy", "poe": "product of experts",
               "learned-mixin": "learned-mixin", "focal": "debiased focal loss",
               "reweight": "example reweighting"}


def loss_parameters(kind: str, *, gamma: float = FOCAL_GAMMA,
                    entropy_weight: float = 0.0) -> dict[str, float]:
    """The settings a :class:`DebiasLoss` of ``kind`` runs with (recorded with a trained model:
    docs/mitigation.md): the bias clip ``eps`` of every debiasing loss, focal's ``gamma``,
    learned-mixin's ``entropy_weight``."""
    own = {"focal": {"gamma": gamma}, "learned-mixin": {"entropy_weight": entropy_weight}}
    return {} if kind == "none" else {"eps": EPS, **own.get(kind, {})}


class DebiasLoss(nn.Module):
    """One of :data:`DEBIAS_LOSSES` as a module.

    >>> import torch
    >>> loss = DebiasLoss("poe")
    >>> logits = torch.tensor([[0.0, 0.0]])
    >>> round(float(loss(logits, torch.tensor([0]), torch.tensor([[0.8, 0.2]]))), 4)
    0.2231
    """

    def __init__(self, kind: str = "poe", *, hidden_size: int | None = None,
                 gamma: float = FOCAL_GAMMA, entropy_weight: float = 0.0) -> None:
        super().__init__()
        if kind not in DEBIAS_LOSSES:
            raise ValueError(f"unknown debiasing loss {kind!r}; choose from "
                             f"{', '.join(DEBIAS_LOSSES)}")
        self.kind, self.gamma, self.entropy_weight = kind, gamma, entropy_weight
        self.settings = loss_parameters(kind, gamma=gamma, entropy_weight=entropy_weight)
        self.gate: nn.Linear | None = None
        if kind == "learned-mixin":
            if hidden_size is None:
                raise ValueError("learned-mixin needs hidden_size (the width of features=)")
            self.gate = nn.Linear(hidden_size, 1)

    def forward(self, logits: torch.Tensor, labels: torch.Tensor,
                bias_probs: torch.Tensor | None = None,
                features: torch.Tensor | None = None) -> torch.Tensor:
        if bias_probs is None and self.kind != "none":
            raise ValueError(f"the {self.kind} loss needs the bias-only probabilities")
        return DEBIAS_LOSSES[self.kind](self, logits, labels, bias_probs, features)


def training_loss(kind: str, hidden_size: int, split: Split) -> DebiasLoss:
    """The :class:`DebiasLoss` ``kind`` for fine-tuning a model whose pooled hidden vector has
    ``hidden_size`` values on ``split`` (learned-mixin gates the item's ``k`` choice vectors
    side by side: MCQ ``k`` choices, NLI 1; :func:`cuelens.models.finetune.finetune`)."""
    k = (split.n_choices or 1) if split.task == Task.MCQ else 1
    return DebiasLoss(kind, hidden_size=hidden_size * k if kind == "learned-mixin" else None)
