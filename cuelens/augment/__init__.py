"""Perturbation operators and training-data augmentation (SPEC §7–8)."""
