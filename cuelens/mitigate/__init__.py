"""From audit to fix (docs/mitigation.md): per-item bias outputs, debiased subsets (z-filtering,
AFLite), debiasing losses fed by the bias-only model, and dataset-card sections."""

# the names of cuelens.mitigate.losses.DEBIAS_LOSSES, readable without importing torch
# (``audit train --help``); tests/test_mitigate_losses.py checks they agree
LOSS_NAMES = ("none", "poe", "learned-mixin", "focal", "reweight")

# AFLite's defaults (docs/mitigation.md), readable without importing scikit-learn (``audit filter
# --help``): ensemble size, items removed per round, predictability threshold, training size
ENSEMBLE, CUTOFF, THRESHOLD, TRAIN_SIZE = 64, 500, 0.75, 10_000
