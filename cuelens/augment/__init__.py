"""Perturbation operators and training-data augmentation (docs/methods.md §7–8)."""
