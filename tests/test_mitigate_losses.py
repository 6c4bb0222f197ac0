"""The debiasing losses against hand computations on a 2-item batch (docs/mitigation.md)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from cuelens.mitigate import LOSS_NAMES  # noqa: E402
from cuelens.mitigate.losses import DEBIAS_LOSSES, DebiasLoss  # noqa: E402

LOGITS = [[2.0, 0.0], [0.0, 1.0]]
LABELS = [0, 1]
BIAS = [[0.9, 0.1], [0.5, 0.5]]
E = math.e
CE = [math.log(1 + E ** -2), math.log(1 + E ** -1)]  # −log p_y of each item


def value(kind: str, **options) -> float:
    loss = DebiasLoss(kind, **options)
    return float(loss(torch.tensor(LOGITS), torch.tensor(LABELS), torch.tensor(BIAS),
                      torch.tensor([[1.0, -2.0], [0.5, 3.0]])).detach())


def test_names_readable_without_torch_match_the_registry():
    assert LOSS_NAMES == tuple(DEBIAS_LOSSES)


def test_cross_entropy():
    assert value("none") == pytest.approx((CE[0] + CE[1]) / 2, abs=1e-6)


def test_product_of_experts():
    # softmax(log p + log p_b)_y = p_y p_b,y / Σ_j p_j p_b,j
    first = 0.9 * E ** 2 / (0.9 * E ** 2 + 0.1)
    second = E / (1 + E)
    assert value("poe") == pytest.approx(-(math.log(first) + math.log(second)) / 2, abs=1e-6)


def test_focal_and_reweight():
    assert value("focal") == pytest.approx((0.1 ** 2 * CE[0] + 0.5 ** 2 * CE[1]) / 2, abs=1e-6)
    assert value("focal", gamma=1.0) == pytest.approx((0.1 * CE[0] + 0.5 * CE[1]) / 2, abs=1e-6)
    assert value("reweight") == pytest.approx((0.1 * CE[0] + 0.5 * CE[1]) / 2, abs=1e-6)


def test_learned_mixin_with_a_fixed_gate():
    # gate weights 0, bias log(e² − 1): g(x) = softplus(...) = 2 for every item, so the
    # combined probability is p_y p_b,y² / Σ_j p_j p_b,j²
    loss = DebiasLoss("learned-mixin", hidden_size=2, entropy_weight=0.5)
    with torch.no_grad():
        loss.gate.weight.zero_()
        loss.gate.bias.fill_(math.log(E ** 2 - 1))
    got = float(loss(torch.tensor(LOGITS), torch.tensor(LABELS), torch.tensor(BIAS),
                     torch.tensor([[1.0, -2.0], [0.5, 3.0]])).detach())
    first = 0.81 * E ** 2 / (0.81 * E ** 2 + 0.01)
    second = E / (1 + E)
    nll = -(math.log(first) + math.log(second)) / 2
    q = [81 / 82, 1 / 82]  # softmax(2 log p_b) of item 1; item 2: uniform
    entropy = (-(q[0] * math.log(q[0]) + q[1] * math.log(q[1])) + math.log(2)) / 2
    assert got == pytest.approx(nll + 0.5 * entropy, abs=1e-5)


def test_gate_is_trainable_and_errors_are_clear():
    loss = DebiasLoss("learned-mixin", hidden_size=2)
    assert sum(p.numel() for p in loss.parameters()) == 3
    with pytest.raises(ValueError, match="hidden_size"):
        DebiasLoss("learned-mixin")
    with pytest.raises(ValueError, match="unknown debiasing loss"):
        DebiasLoss("magic")
    with pytest.raises(ValueError, match="bias-only probabilities"):
        DebiasLoss("poe")(torch.tensor(LOGITS), torch.tensor(LABELS))
