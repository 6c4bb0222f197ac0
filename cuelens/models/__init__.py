"""Shared model loading: name resolution, device choice, safe ``from_pretrained`` (one place for
probes, augment and LM scoring)."""
