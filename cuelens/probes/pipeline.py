"""The whole ``audit probe`` in one call, returned as a :class:`Probe` (docs/methods.md §6–7):
every section reuses the predictions of one :mod:`cuelens.probes.sources` source; nothing here
prints (problems that do not stop the probe come back as ``Probe.warnings``)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cuelens.audit.pipeline import Progress, Scan, scan_dataset
from cuelens.audit.results import ScanSections
from cuelens.audit.scan import ScanConfig
from cuelens.data.dataset import Dataset
from cuelens.errors import UserError
from cuelens.probes.config import ProbeConfig
from cuelens.probes.cues import probe_cues
from cuelens.probes.position import PositionBiasOptions
from cuelens.probes.predictions import Predictions
from cuelens.probes.sections import (ProbeContext, ProbeSection, ProbeSections, probe_sections,
                                     ShortCircuitOptions, probe_section)

PROBE_FILES = ("results.json", "predictions.jsonl", "run.json", "report.html")


def check_outputs(out_dir: str | Path, inputs: Iterable[str | Path | None]) -> None:
    """Refuse (``UserError``) a probe output in ``out_dir`` that would overwrite an input (or
    lie inside an input directory such as the model) or that cannot be written."""
    from cuelens.outputs import check_outputs as check

    check([Path(out_dir) / name for name in PROBE_FILES], inputs)


@dataclass(repr=False)  # bounded: never the whole results dict
class Probe:
    """A probe's results.json sections (the scan's plus ``probe``), the predictions and
    warnings."""

    dataset: Dataset
    sections: ProbeSections
    predictions: Predictions
    item_easy: np.ndarray | None  # the scan's easy mask over dataset.test (None: no split)
    warnings: list[str] = field(default_factory=list)
    extra_inputs: list[str] = field(default_factory=list)  # predictions file, scan results
    started: float = field(default_factory=time.time)

    @property
    def results(self) -> dict:
        """The results.json content (:meth:`~cuelens.probes.sections.ProbeSections.to_json`)."""
        return self.sections.to_json()

    @property
    def inputs(self) -> list[str]:
        """Files the probe read (its outputs never overwrite one of them)."""
        return [*self.dataset.input_paths, *self.extra_inputs]

    @property
    def section(self) -> ProbeSection:
        """results.json ``probe``: the model's accuracy and cue tests."""
        assert self.sections.probe is not None  # built by probe_dataset, always there
        return self.sections.probe

    @property
    def accuracy(self) -> float:
        """Accuracy on the test items (MCQ: per question)."""
        accuracy = self.section.accuracy
        assert accuracy is not None  # probe_section always computes it
        return accuracy

    def write(self, out_dir: str | Path) -> dict[str, Path]:
        """Write predictions.jsonl, results.json and run.json into ``out_dir``: all or none."""
        from cuelens.audit.scan_outputs import run_info
        from cuelens.atomic import output_set
        from cuelens.jsonio import write_json, write_jsonl

        out_dir = Path(out_dir)
        check_outputs(out_dir, self.inputs)
        files = {"predictions": out_dir / "predictions.jsonl",
                 "results": out_dir / "results.json", "run": out_dir / "run.json"}
        with output_set():  # the files appear together or not at all
            write_jsonl(files["predictions"], self.predictions.rows(self.dataset))
            write_json(files["results"], self.results)
            write_json(files["run"], run_info(self.started, inputs=self.dataset.input_paths))
        return files


def load_scan(directory: str | Path, dataset: Dataset) -> Scan:
    """The ``audit scan`` output in ``directory`` as a :class:`Scan` of ``dataset``
    (:func:`~cuelens.probes.scan_source.load_scan_dir`: results and easy/hard split)."""
    from cuelens.probes.scan_source import load_scan_dir

    results, item_easy = load_scan_dir(directory, dataset)
    return Scan(dataset=dataset, sections=ScanSections.from_json(results), item_easy=item_easy)


def probe_dataset(dataset: Dataset, predictions: Predictions, model_info: dict | None = None,
                  *, scan: Scan | None = None, config: ProbeConfig | None = None,
                  classifier=None, short_circuit: ShortCircuitOptions | None = None,
                  position_bias: PositionBiasOptions | None = None,
                  inputs: Sequence[str | Path] = (), progress: Progress | None = None
                  ) -> Probe:
    """Probe ``predictions`` on ``dataset.test`` for cue reliance (docs/methods.md §6).

    ``model_info`` defaults to ``predictions.info``, ``config`` to :class:`ProbeConfig`, ``scan`` to
    a word-only scan with the config's ``seed``. ``classifier``: the loaded model, for
    ``short_circuit`` and a local model's data map. ``predictions`` of some test items only
    (:attr:`Predictions.covered`, e.g. a ``--limit`` log): the probe runs on those, the scan on all.
    """
    started = time.time()
    config = config or ProbeConfig()
    config.validate()
    if predictions.covered is not None and position_bias is not None \
            and position_bias.picks is not None:
        raise UserError("--position-predictions needs a main log of every test item; this "
                        "one covers some items only (lm_eval --limit?)")
    if scan is None:
        scan = scan_dataset(dataset, ScanConfig(seed=config.seed), progress=progress)
    warnings: list[str] = list(predictions.notes)
    item_easy = scan.item_easy
    if predictions.covered is not None:  # a log of some test items: probe those (cues: all)
        covered = predictions.covered
        dataset, predictions = predictions.logged_subset(dataset)
        item_easy = None if item_easy is None else item_easy[covered]
    resolved = Path(classifier.resolved) if classifier is not None else None
    cues, selection = probe_cues(dataset, scan.sections, config, warnings)
    ctx = ProbeContext(dataset=dataset, predictions=predictions, cues=cues,
                       cue_selection=selection,
                       model_info=predictions.info if model_info is None else model_info,
                       item_easy=item_easy,
                       model_dir=resolved if resolved is not None and resolved.is_dir() else None,
                       classifier=classifier, seed=config.seed, n_boot=config.bootstrap,
                       min_items=config.min_items,
                       short_circuit=short_circuit, position_bias=position_bias,
                       warnings=warnings, progress=progress)
    probe = probe_section(ctx)
    warnings += (probe.sanity or {}).get("notes", [])
    return Probe(dataset=dataset, sections=probe_sections(scan.sections, probe=probe),
                 predictions=predictions, item_easy=item_easy, warnings=warnings,
                 extra_inputs=[str(p) for p in inputs], started=started)
