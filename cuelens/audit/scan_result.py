"""A scan's result, whatever its memory mode: :class:`Scan`, its results.json sections, the easy
mask of the evaluated items and the per-item bias table, and the files written from them (the
pandas views and the report: :class:`cuelens.results.ScanResult`, above)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cuelens.audit.results.section import remember_written
from cuelens.data.dataset import EvaluatedItems

if TYPE_CHECKING:
    import pandas as pd

    from cuelens.audit.bias_items import SpilledItems
    from cuelens.audit.results import ScanSections
    from cuelens.engine.chunks import ChunkDirectory


@dataclass(repr=False)  # bounded: never the whole results dict (MBs on SNLI)
class Scan:
    """A scan's results.json sections plus the easy mask of the evaluated items, whatever the
    memory mode: ``dataset`` is the scanned data, loaded (a :class:`~cuelens.data.Dataset`) or
    kept on disk in chunks (:class:`~cuelens.audit.chunked_data.ChunkedData`,
    ``--stats streaming``)."""

    dataset: EvaluatedItems
    sections: ScanSections
    item_easy: np.ndarray | None  # bool per evaluated item; None: no word-cue statistics
    started: float = field(default_factory=time.time)
    bias: SpilledItems | None = None  # per-item bias outputs (cuelens.audit.bias_items)
    work: ChunkDirectory | None = None  # holding the bias table's files, kept with the scan
    # the results.json content of ``sections`` (:attr:`results`), kept when the views wrap it
    _results: tuple[ScanSections, dict] | None = field(default=None, repr=False)

    @property
    def results(self) -> dict:
        """The results.json content (:meth:`~cuelens.audit.results.ScanSections.to_json`), built
        once per ``sections`` (the command, the writers and the report all read it; a big
        scan's cue table is long); inside :func:`~cuelens.audit.results.typed_reads`, its
        sections read as themselves."""
        if self._results is None or self._results[0] is not self.sections:
            self._results = (self.sections, self.sections.to_json())
        remember_written(*self._results)
        return self._results[1]

    def advised(self) -> Scan:
        """This scan with its conclusion and next steps (:func:`~cuelens.audit.advice.advise`:
        call it once every section is in), their results.json content built with them."""
        from cuelens.audit.advice import advise

        sections, results = advise(self.sections)
        return replace(self, sections=sections, _results=(sections, results))

    @property
    def inputs(self) -> list[str]:
        """Files the scan read (its outputs never overwrite one of them)."""
        return self.dataset.input_paths

    @property
    def items(self) -> pd.DataFrame:
        """Per-item bias outputs (docs/results-schema.md ``items``): out-of-fold bias-only
        probabilities, strongest cue, easy flag, duplicate/overlap flags; keyed by ``id``."""
        import pandas as pd

        return self.bias.frame() if self.bias is not None else pd.DataFrame(columns=["id"])

    def write(self, out_dir: str | Path, item_files: str = "auto") -> dict[str, Path]:
        """Write results.json, cues.csv, the easy/hard item files (``item_files``, see
        :func:`~cuelens.audit.scan_outputs.write_scan_outputs`; streamed from the chunks of a
        streamed scan), run.json and the per-item bias table: all of them or none."""
        from cuelens.audit.metrics import METRICS
        from cuelens.audit.scan_outputs import run_info, write_scan_outputs
        from cuelens.atomic import output_set

        items = None if self.item_easy is None else self.dataset.item_lines(self.item_easy)
        out_dir = Path(out_dir)
        with output_set():
            files = write_scan_outputs(out_dir, self.results,
                                       run_info(self.started, inputs=self.inputs), self.inputs,
                                       items, 0 if self.item_easy is None else
                                       len(self.item_easy), item_files,
                                       metric_names=list(METRICS), cues=self.sections.cues)
            if self.bias is not None:
                files.update(self.bias.write(out_dir, self.inputs))
        return files
