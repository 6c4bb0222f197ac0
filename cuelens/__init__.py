"""cuelens: audit NLP datasets for annotation artifacts ("cues") and test whether models exploit
them.

Python API (docs/api.md): :func:`load_dataset`, :func:`scan`, :func:`probe`, :func:`stress`,
:func:`augment_dataset`, returning :class:`ScanResult` / :class:`ProbeResult`. They are imported
on first use, so ``import cuelens`` stays light. Sub-packages: ``data`` (loading and normalising
datasets), ``audit`` (cue statistics, leakage, easy/hard, ICQ), ``models`` (shared model
loading), ``probes`` (model cue-reliance tests), ``augment`` (perturbation operators),
``reports`` (HTML reports).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cuelens.version import __version__

_PUBLIC = {"load_dataset": "cuelens.api", "scan": "cuelens.api", "probe": "cuelens.api",
           "stress": "cuelens.api", "augment_dataset": "cuelens.api",
           "ScanResult": "cuelens.results", "ProbeResult": "cuelens.results",
           "Dataset": "cuelens.data.dataset", "UserError": "cuelens.errors"}
__all__ = ["__version__", *_PUBLIC]

if TYPE_CHECKING:
    from cuelens.api import augment_dataset, load_dataset, probe, scan, stress
    from cuelens.data.dataset import Dataset
    from cuelens.errors import UserError
    from cuelens.results import ProbeResult, ScanResult


def __getattr__(name: str) -> Any:
    """Import the public API lazily (PEP 562)."""
    if name not in _PUBLIC:
        raise AttributeError(f"module 'cuelens' has no attribute {name!r}")
    return getattr(importlib.import_module(_PUBLIC[name]), name)


def __dir__() -> list[str]:
    return sorted(__all__)
