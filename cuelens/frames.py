"""pandas views and the Jupyter summary of a scan or probe result, every view computed from the
exact results.json content and the dataset, so a table never disagrees with the file."""

from __future__ import annotations

import copy
import html
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from cuelens.audit.results import CueRow, DatasetSummary, LeakageSection

if TYPE_CHECKING:
    import pandas as pd

    from cuelens.audit.results import ScanSections
    from cuelens.data.dataset import EvaluatedItems


def records_frame(rows: list[dict], empty_columns: list[str] | None = None) -> pd.DataFrame:
    """A DataFrame of ``rows``; ``empty_columns`` name the columns when there are no rows."""
    import pandas as pd

    return pd.DataFrame(rows) if rows else pd.DataFrame(columns=empty_columns)


def cues_frame(cues: list[CueRow]) -> pd.DataFrame:
    """One row per (token, label): count, label_count, every metric, significant."""
    rows = [{"token": c.token, "label": c.label, "count": c.count,
             "label_count": c.label_count, **c.metrics, "significant": c.significant}
            for c in cues]
    return records_frame(rows, ["token", "label", "count", "label_count", "significant"])


TOP_CUES_PER_LABEL = 5  # as the terminal summary (audit scan --top)
MAX_FINDINGS_SHOWN = 5


def conclusion_line(results: dict) -> str | None:
    """``Inconclusive: <reason>`` — the dataset's conclusion (docs/methods.md §17) for the
    notebook views; None for results without a scan."""
    from cuelens.audit.conclusion import conclusion_of

    if not any(key in results for key in ("leakage", "mcq_baselines", "preference")):
        return None
    return conclusion_of(results).headline


def summary_text(results: dict) -> str:
    """A one-line plain repr of a result: dataset (or model), the conclusion, headline D and
    verdict, the number of significant cues; bounded (dataset strings are cut), never the whole
    results."""
    from cuelens.audit.conclusion import conclusion_of
    from cuelens.audit.findings import d_points
    from cuelens.data.display import one_line, shown

    data = DatasetSummary.in_results(results)
    head = shown((data.name if data is not None else None) or "results")
    for key in ("probe", "llm_probe"):
        model = (results.get(key) or {}).get("model", {}).get("name")
        if model:
            head = f"{shown(model)} on {head}"
    facts = [conclusion_of(results).status] if conclusion_line(results) else []
    leak = LeakageSection.in_results(results)
    if leak is not None:
        facts.append(f"D {d_points(leak.best['D'])} ({leak.verdict or 'n/a'})")
    if "cues" in results:
        facts.append(f"{sum(c.significant for c in CueRow.rows_in(results)):,} significant cues")
    return one_line(head + (f": {', '.join(facts)}" if facts else ""))


def summary_html(results: dict) -> str:
    """A short HTML summary for Jupyter (a few KB at most): dataset, headline D, the ranked
    findings and the strongest cues per label by z (the terminal summary's ranking); every value
    from the data is escaped and cut to a bounded length."""
    from cuelens.audit.examples import top_cues_by_label
    from cuelens.audit.conclusion import measurable
    from cuelens.audit.findings import d_with_ci, findings
    from cuelens.data.display import shown_html as esc
    from cuelens.jsonio import format_number

    data = DatasetSummary.in_results(results)
    splits = data.splits if data is not None else {}
    sizes = ", ".join(f"{esc(role)} {s.items:,}" for role, s in splits.items())
    # the headline is bounded already (its dataset strings are cut): cut again, it lost its D
    parts = [f"<div class='cuelens-summary'><b>{html.escape(summary_text(results))}</b><br>"
             f"{esc((data.task if data is not None else '').upper())}; {sizes}<br>"]
    line = conclusion_line(results)
    if line is not None:
        parts.append(f"<p class='cuelens-conclusion'><b>{html.escape(line[:400])}</b></p>")
    leak = LeakageSection.in_results(results)
    if leak is not None and measurable(results):
        best = leak.best
        parts.append(f"{esc(leak.reference['name'])} "
                     f"{leak.reference['accuracy'] * 100:.1f}% · best cue-only accuracy "
                     f"{best['accuracy'] * 100:.1f}% ({esc(best['metric'])}/"
                     f"{esc(best['aggregator'])}) · D = {d_with_ci(best)}<br>")
    found = findings(results)
    if found:
        parts.append("<ol>" + "".join(f"<li>{html.escape(f.title[:300])}</li>"
                                      for f in found[:MAX_FINDINGS_SHOWN]) + "</ol>")
    cues = CueRow.rows_in(results)
    if cues:
        rows = "".join(
            f"<tr><td>{esc(label)}</td><td>" + ", ".join(
                f"{esc(c.token)} (z={format_number(c.metrics.get('z'), 1)}"
                f"{'*' if c.significant else ''})" for c in group)
            + "</td></tr>"
            for label, group in top_cues_by_label(cues, TOP_CUES_PER_LABEL).items())
        parts.append(f"<table><tr><th>label</th><th>strongest cues by z "
                     f"(* significant)</th></tr>{rows}</table>")
    parts.append("</div>")
    return "".join(parts)


class ResultViews:
    """Tables, dict and HTML summary of a result holding ``dataset``, ``results`` (its typed
    scan ``sections``, docs/results-schema.md) and ``item_easy``."""

    results: dict
    item_easy: np.ndarray | None  # None: no easy/hard split (e.g. MCQ with varying choices)

    if TYPE_CHECKING:  # read only here: the result's own (dataset: a Dataset, or chunks)
        @property
        def dataset(self) -> EvaluatedItems: ...

        @property
        def sections(self) -> ScanSections: ...

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the results.json content."""
        return copy.deepcopy(self.results)

    def _repr_html_(self) -> str:
        return summary_html(self.results)

    def __repr__(self) -> str:  # bounded: never the whole results dict (MBs on SNLI)
        return f"<{type(self).__name__} {summary_text(self.results)}>"

    @property
    def D(self) -> float:
        """Headline cue leakage D (fraction; docs/methods.md §3); NaN when the result has no
        word-cue statistics (MCQ items with different numbers of choices: see its notes)."""
        leak = self.sections.leakage
        return float(leak.best["D"]) if leak else math.nan

    @property
    def cues(self) -> pd.DataFrame:
        """Every listed cue (docs/methods.md §2), sorted by label then the headline metric;
        empty without word-cue statistics."""
        return cues_frame(self.sections.cues or [])

    @property
    def leakage(self) -> pd.DataFrame:
        """The metric × aggregator cue-only accuracy table and its D (docs/methods.md §3);
        empty without word-cue statistics."""
        leak = self.sections.leakage
        return records_frame(leak.table if leak else [], ["metric", "aggregator", "accuracy", "D"])

    @property
    def features(self) -> pd.DataFrame:
        """ICQ feature cues by cueness (docs/methods.md §5); empty when features were not
        scanned."""
        return records_frame([row.to_json() for row in self.sections.features or []],
                             ["feature", "value", "cueness"])

    @property
    def easy(self) -> pd.DataFrame:
        """Test items the cue-only classifier gets right (docs/methods.md §4); empty without a
        split."""
        return self.dataset.evaluated_frame(self._split_mask(True))

    @property
    def hard(self) -> pd.DataFrame:
        """Test items the cue-only classifier gets wrong (docs/methods.md §4); empty without a
        split."""
        return self.dataset.evaluated_frame(self._split_mask(False))

    def _split_mask(self, easy: bool) -> np.ndarray:
        if self.item_easy is None:
            return np.zeros(0, dtype=bool)
        mask = np.asarray(self.item_easy, dtype=bool)
        return mask if easy else ~mask
