"""Probing a model for reliance on dataset cues (docs/methods.md §6): accuracy test, distribution
test, easy/hard gap, training-dynamics data map. Sections are registered in
:mod:`cuelens.probes.sections`."""
