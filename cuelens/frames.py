"""pandas views and the Jupyter summary of a result (the ``results.json`` sections as tables).

:class:`ResultViews` is shared by :class:`~cuelens.audit.pipeline.ScanResult` and
:class:`~cuelens.probes.pipeline.ProbeResult`: every view is computed from ``results`` (the
exact results.json content) and the dataset, so a table never disagrees with the file.
"""

from __future__ import annotations

import copy
import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cuelens.data.dataset import Dataset, Split, Task

if TYPE_CHECKING:
    import pandas as pd

TOP_CUES_SHOWN = 10


def records_frame(rows: list[dict], empty_columns: list[str] | None = None) -> pd.DataFrame:
    """A DataFrame of ``rows``; ``empty_columns`` name the columns when there are no rows."""
    import pandas as pd

    return pd.DataFrame(rows) if rows else pd.DataFrame(columns=empty_columns)


def cues_frame(cues: list[dict]) -> pd.DataFrame:
    """One row per (token, label): count, label_count, every metric, significant."""
    rows = [{"token": c["token"], "label": c["label"], "count": c["count"],
             "label_count": c["label_count"], **c["metrics"], "significant": c["significant"]}
            for c in cues]
    return records_frame(rows, ["token", "label", "count", "label_count", "significant"])


def items_frame(split: Split, mask: np.ndarray) -> pd.DataFrame:
    """The items of ``split`` selected by the boolean ``mask`` (id, premise, hypothesis/choices,
    label)."""
    index = np.flatnonzero(mask)
    columns: dict[str, list] = {"id": [split.ids[i] for i in index],
                                "premise": [split.premises[i] for i in index]}
    if split.task == Task.MCQ:
        columns["choices"] = [split.choices[i] for i in index]
    else:
        columns["hypothesis"] = [split.hypotheses[i] for i in index]
    columns["label"] = [split.labels[i] for i in index]
    import pandas as pd

    return pd.DataFrame(columns)


def summary_html(results: dict) -> str:
    """A short HTML summary (dataset, headline D, top cues; probe accuracy): every value from
    the data is escaped."""
    esc = html.escape
    data, leak = results["dataset"], results["leakage"]
    best = leak["best"]
    sizes = ", ".join(f"{esc(role)} {s['items']}" for role, s in data["splits"].items())
    parts = [f"<div class='cuelens-summary'><b>{esc(data['name'])}</b> "
             f"({esc(data['task'].upper())}; {sizes})<br>",
             f"majority {leak['majority'] * 100:.1f}% · best cue-only accuracy "
             f"{best['accuracy'] * 100:.1f}% ({esc(best['metric'])}/{esc(best['aggregator'])}) "
             f"· D = {best['D'] * 100:+.1f} points"
             f"{' (significant cue leakage)' if leak['flagged'] else ''}<br>"]
    eh = results["easy_hard"]
    parts.append(f"easy/hard: {eh['easy']} easy, {eh['hard']} hard<br>")
    probe = results.get("probe")
    if probe:
        parts.append(f"model {esc(str(probe['model'].get('name')))}: accuracy "
                     f"{probe['accuracy'] * 100:.1f}%<br>")
    top = cues_frame(results["cues"]).head(TOP_CUES_SHOWN)
    parts.append(top.to_html(escape=True, index=False))  # pandas escapes every cell
    parts.append("</div>")
    return "".join(parts)


class ResultViews:
    """Tables, dict and HTML of a result holding ``dataset``, ``results`` and ``item_easy``."""

    dataset: Dataset
    results: dict
    item_easy: np.ndarray | None  # None: no easy/hard split (e.g. MCQ with varying choices)

    @property
    def inputs(self) -> list[str]:
        """Files the result was computed from (outputs never overwrite one of them)."""
        return self.dataset.input_paths

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the results.json content."""
        return copy.deepcopy(self.results)

    def to_html(self, path: str | Path) -> Path:
        """Render the HTML report (docs/methods.md §10) to ``path``; returns the written path."""
        from cuelens.reports import render_report

        return render_report(self.results, Path(path), inputs=self.inputs)

    def _repr_html_(self) -> str:
        return summary_html(self.results)

    @property
    def D(self) -> float:
        """Headline cue leakage D (fraction; docs/methods.md §3)."""
        return float(self.results["leakage"]["best"]["D"])

    @property
    def cues(self) -> pd.DataFrame:
        """Every listed cue (docs/methods.md §2), sorted by label then the headline metric."""
        return cues_frame(self.results["cues"])

    @property
    def leakage(self) -> pd.DataFrame:
        """The metric × aggregator cue-only accuracy table and its D (docs/methods.md §3)."""
        return records_frame(self.results["leakage"]["table"])

    @property
    def features(self) -> pd.DataFrame:
        """ICQ feature cues by cueness (docs/methods.md §5); empty when features were not scanned."""
        return records_frame(self.results.get("features", []), ["feature", "value", "cueness"])

    @property
    def easy(self) -> pd.DataFrame:
        """Test items the cue-only classifier gets right (docs/methods.md §4); empty without a split."""
        return items_frame(self.dataset.test, self._split_mask(True))

    @property
    def hard(self) -> pd.DataFrame:
        """Test items the cue-only classifier gets wrong (docs/methods.md §4); empty without a split."""
        return items_frame(self.dataset.test, self._split_mask(False))

    def _split_mask(self, easy: bool) -> np.ndarray:
        if self.item_easy is None:
            return np.zeros(len(self.dataset.test), dtype=bool)
        mask = np.asarray(self.item_easy, dtype=bool)
        return mask if easy else ~mask
