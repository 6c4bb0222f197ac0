"""Options of the probe (docs/methods.md §6): :class:`ProbeConfig`, the one place that holds their
defaults, names and checks, read by ``cuelens.probe``, ``audit probe`` and ``audit probe --llm``.
Light on purpose (numpy only): ``audit probe --help`` reads it.

The default cue ranking ``z`` tests significant scan cues only (docs/data-hygiene.md, "Probe
sanity").
"""

from __future__ import annotations

from dataclasses import dataclass

from cuelens.audit.metrics import METRICS
from cuelens.errors import UserError

MIN_SUPPORT = 20  # fitting instances a tested word cue needs


@dataclass
class ProbeConfig:
    """Options of a probe; the defaults here are the CLI's and the API's defaults.

    >>> ProbeConfig().rank_by, ProbeConfig().top
    ('z', 5)
    """

    top: int = 5  # word cues per label
    rank_by: str = "z"  # cue metric ranking them; z: significant cues only
    min_support: int = MIN_SUPPORT  # fitting instances of a tested word cue
    bootstrap: int = 1000  # resamples of the ΔAcc intervals
    min_items: int = 10  # test items with and without a cue
    seed: int = 0

    def validate(self) -> None:
        """Raise :class:`UserError` naming the offending field's CLI option."""
        if self.rank_by not in METRICS:
            raise UserError(f"unknown --rank-by metric {self.rank_by!r} (choose from "
                            f"{METRICS.choices()})")
        for name in ("top", "bootstrap", "min_items", "min_support"):
            if getattr(self, name) < 1:
                raise UserError(f"--{name.replace('_', '-')} must be at least 1")
