"""From audit to fix (docs/mitigation.md): per-item bias outputs, debiased subsets (z-filtering,
AFLite), debiasing losses fed by the bias-only model, and dataset-card sections."""
