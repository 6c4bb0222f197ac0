"""Rendering options of the HTML report (docs/report.md)."""

from __future__ import annotations

from dataclasses import dataclass

from cuelens.errors import UserError, option_name

PLOTLY_MODES = ("inline", "cdn", "directory")


@dataclass(frozen=True)
class ReportOptions:
    """``plotly``: how the page gets plotly.js — ``inline`` (embedded: one offline file),
    ``cdn`` (a ``<script src>`` on cdn.plot.ly: small page, needs the network) or ``directory``
    (``plotly-<version>.min.js`` written next to the page, shared by the pages of a folder).
    ``rank_by``: the cue metric the cue table is ranked by (default z: significance)."""

    plotly: str = "inline"
    rank_by: str = "z"

    def __post_init__(self) -> None:
        from cuelens.audit.metrics import METRICS

        if self.plotly not in PLOTLY_MODES:
            raise UserError(f"{option_name('plotly')}: unknown mode {self.plotly!r}; choose "
                            f"from {', '.join(PLOTLY_MODES)}")
        if self.rank_by not in METRICS:
            raise UserError(f"{option_name('rank_by')}: unknown metric {self.rank_by!r}; "
                            f"choose from {', '.join(METRICS)}")
