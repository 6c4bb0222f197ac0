"""The result objects the Python API and the commands hand out (docs/api.md, "Results"): the
statistics' own result plus the pandas views (:mod:`cuelens.frames`) and the HTML report, which
the statistics do not import (docs/ARCHITECTURE.md, "Layers"); :meth:`Viewed.of` adds them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from cuelens.audit.config import ARGUMENT_KINDS, checked_with
from cuelens.audit.pipeline import Scan
from cuelens.audit.results import typed_reads
from cuelens.frames import ResultViews, records_frame, summary_text
from cuelens.probes.llm.pipeline import LLMProbe
from cuelens.probes.pipeline import Probe
from cuelens.reports.options import ReportOptions

if TYPE_CHECKING:
    import pandas as pd

V = TypeVar("V", bound="Viewed")
#: The results' methods check their arguments as the API's functions, a report's options too.
checked = checked_with({**ARGUMENT_KINDS, "ReportOptions": (
    (ReportOptions,), "a cuelens.reports.options.ReportOptions (ReportOptions(plotly='cdn'))")})


class Viewed:
    """A statistics result (a dataclass) seen from above: :meth:`of`, :meth:`to_html` and a
    ``save`` that adds the report."""

    results: dict
    inputs: list[str]  # files the result was computed from (outputs never overwrite one)
    write: Callable[..., dict[str, Path]]  # the statistics result's own files

    @classmethod
    def of(cls: type[V], result: Any) -> V:
        """``result`` (an instance of this class's statistics result) with views: the same
        fields, nothing copied."""
        return cls(**{f.name: getattr(result, f.name) for f in fields(result)})

    @checked
    def to_html(self, path: str | Path, options: ReportOptions | None = None, *,
                validate: bool = True) -> Path:
        """Render the HTML report (docs/methods.md §10) to ``path`` (``options``: plotly.js
        inline, from the CDN or beside the page; the cue ranking); returns the written path.
        ``validate=False`` skips the schema check (:func:`~cuelens.reports.render_report`)."""
        from cuelens.reports import render_report

        return render_report(self.results, Path(path), inputs=self.inputs, options=options,
                             validate=validate)

    @checked
    def save(self, out_dir: str | Path, *, report: bool = True,
             report_options: ReportOptions | None = None) -> dict[str, Path]:
        """Write the result's files (:meth:`write`: results.json, run.json, the predictions)
        and report.html, rendered with ``report_options``, into ``out_dir``: all or none."""
        return self._save(out_dir, self.write, report, report_options)

    def _save(self, out_dir: str | Path, write: Callable[[Path], dict[str, Path]], report: bool,
              options: ReportOptions | None, *, validate: bool = True) -> dict[str, Path]:
        """The files ``write(out_dir)`` writes plus (``report``) report.html rendered with
        ``options`` (:meth:`to_html`): all of them or none, the sections written read by the
        report as themselves (never parsed back)."""
        from cuelens.atomic import output_set

        out_dir = Path(out_dir)
        with output_set(), typed_reads():
            files = write(out_dir)
            if report:
                files["report"] = self.to_html(out_dir / "report.html", options,
                                               validate=validate)
        return files


@dataclass(repr=False)  # ResultViews.__repr__: bounded
class ScanResult(Viewed, Scan, ResultViews):
    """A scan (:class:`~cuelens.audit.pipeline.Scan`) with its views (docs/api.md, "Results")."""

    @checked
    def save(self, out_dir: str | Path, *, report: bool = True, item_files: str = "auto",
             report_options: ReportOptions | None = None) -> dict[str, Path]:
        """Write the scan's files (:meth:`~cuelens.audit.pipeline.Scan.write`, ``item_files``)
        and report.html, rendered with ``report_options``: all of them or none."""
        return self._save(out_dir, lambda out: self.write(out, item_files), report,
                          report_options, validate=False)  # just built: no schema check


@dataclass(repr=False)  # ResultViews.__repr__: bounded
class ProbeResult(Viewed, Probe, ResultViews):
    """A probe (:class:`~cuelens.probes.pipeline.Probe`) with its views (docs/api.md, "Results")."""

    @property
    def cue_effects(self) -> pd.DataFrame:
        """Accuracy test (docs/methods.md §6): per cue, accuracy with/without it and ΔAcc with its
        CI."""
        return records_frame(self.section.tested_cues,
                             ["cue", "kind", "n_with", "n_without", "acc_with", "acc_without",
                              "delta", "ci_low", "ci_high"])

    @property
    def distribution(self) -> pd.DataFrame:
        """Distribution test (docs/methods.md §6): per cue, training vs predicted label
        distribution."""
        return records_frame((self.section.distribution_test or {}).get("cues", []),
                             ["cue", "train_dist", "predicted_dist", "n", "score"])


@dataclass(repr=False)
class LLMProbeResult(Viewed, LLMProbe):
    """An LLM prompt probe (:class:`~cuelens.probes.llm.pipeline.LLMProbe`) that saves its
    report."""

    def __repr__(self) -> str:  # bounded: never the whole results dict
        summary = summary_text(self.results or {"llm_probe": self.section})
        return f"<{type(self).__name__} {summary}>"
