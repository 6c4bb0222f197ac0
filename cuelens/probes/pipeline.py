"""The whole ``audit probe`` in one call (docs/methods.md §6–7), returned as a :class:`ProbeResult`.

The model is run once on the test items (:func:`model_predictions`) or its predictions are read
from a file (:func:`file_predictions`); every section (accuracy test, distribution test,
easy/hard gap, short-circuit pass rates) reuses those predictions. Nothing here prints:
problems that do not stop the probe come back as ``ProbeResult.warnings``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cuelens.audit.advice import next_steps
from cuelens.audit.pipeline import ScanResult, scan_dataset
from cuelens.audit.scan import ScanConfig
from cuelens.data.dataset import Dataset
from cuelens.errors import UserError
from cuelens.frames import ResultViews, records_frame
from cuelens.probes.position import PositionBiasOptions
from cuelens.probes.predictions import Predictions
from cuelens.probes.sanity import MIN_SUPPORT, select_word_cues
from cuelens.probes.sections import ProbeContext, ShortCircuitOptions, run_sections

if TYPE_CHECKING:
    import pandas as pd

    from cuelens.reports.options import ReportOptions

Progress = Callable[[str, float], None]
PROBE_FILES = ("results.json", "predictions.jsonl", "run.json", "report.html")


def check_outputs(out_dir: str | Path, inputs: Iterable[str | Path | None]) -> None:
    """Refuse (``UserError``) a probe output in ``out_dir`` that would overwrite an input (or
    lie inside an input directory such as the model) or that cannot be written."""
    from cuelens.io import check_outputs as check

    check([Path(out_dir) / name for name in PROBE_FILES], inputs)


@dataclass(repr=False)  # ResultViews.__repr__: bounded
class ProbeResult(ResultViews):
    """results.json content (scan sections plus ``probe``), the predictions and warnings.

    pandas views: ``cue_effects`` (ΔAcc per cue), ``distribution`` and the scan's ``cues``,
    ``leakage``, ``features``, ``easy``, ``hard``; ``accuracy``; ``to_dict()``,
    ``save(out_dir)``, ``to_html(path)``; a summary in Jupyter.
    """

    dataset: Dataset
    results: dict
    predictions: Predictions
    item_easy: np.ndarray | None  # the scan's easy mask over dataset.test (None: no split)
    warnings: list[str] = field(default_factory=list)
    extra_inputs: list[str] = field(default_factory=list)  # predictions file, scan results
    started: float = field(default_factory=time.time)

    @property
    def inputs(self) -> list[str]:
        return [*self.dataset.input_paths, *self.extra_inputs]

    @property
    def accuracy(self) -> float:
        """Accuracy on the test items (MCQ: per question)."""
        return float(self.results["probe"]["accuracy"])

    @property
    def cue_effects(self) -> pd.DataFrame:
        """Accuracy test (docs/methods.md §6): per cue, accuracy with/without it and ΔAcc with its CI."""
        return records_frame(self.results["probe"]["accuracy_test"]["cues"],
                      ["cue", "kind", "n_with", "n_without", "acc_with", "acc_without", "delta",
                       "ci_low", "ci_high"])

    @property
    def distribution(self) -> pd.DataFrame:
        """Distribution test (docs/methods.md §6): per cue, training vs predicted label distribution."""
        return records_frame(self.results["probe"]["distribution_test"]["cues"],
                      ["cue", "train_dist", "predicted_dist", "n", "score"])

    def save(self, out_dir: str | Path, *, report: bool = True,
             report_options: ReportOptions | None = None) -> dict[str, Path]:
        """Write predictions.jsonl, results.json, run.json (and report.html, rendered with
        ``report_options``) into ``out_dir``."""
        from cuelens.audit.results import run_info
        from cuelens.io import output_set, write_json, write_jsonl

        out_dir = Path(out_dir)
        check_outputs(out_dir, self.inputs)
        files = {"predictions": out_dir / "predictions.jsonl",
                 "results": out_dir / "results.json", "run": out_dir / "run.json"}
        with output_set():  # the files appear together or not at all
            write_jsonl(files["predictions"], self.predictions.rows(self.dataset))
            write_json(files["results"], self.results)
            write_json(files["run"], run_info(self.started, inputs=self.dataset.input_paths))
            if report:
                files["report"] = self.to_html(out_dir / "report.html", report_options)
        return files


def file_predictions(path: str | Path, dataset: Dataset, id_field: str | None = None,
                     norm: str = "none", require_all: bool = False
                     ) -> tuple[Predictions, dict]:
    """Predictions read from a JSONL file or an evaluation log (``id_field``, ``norm``,
    ``require_all``: :func:`~cuelens.probes.evallogs.read_eval_log`), and the ``probe.model``
    section (with the log's facts under ``log``)."""
    from cuelens.probes.predictions import read_predictions

    path = Path(path)
    info: dict = {"name": path.name, "resolved": str(path), "source": "predictions"}
    predictions = read_predictions(path, dataset, id_field, norm, require_all=require_all)
    if predictions.log is not None:
        info["log"] = predictions.log
    return predictions, info


def model_predictions(classifier, name: str, dataset: Dataset, batch_size: int | None = None,
                      on_batch: Callable[[int], None] | None = None, predict_proba=None
                      ) -> tuple[Predictions, dict]:
    """One pass of a loaded classifier over the test items, and the ``probe.model`` section
    (``predict_proba``: another runner of the classifier, e.g. the Ray engine's)."""
    from cuelens.probes.predictions import classifier_predictions

    info = {"name": name, "resolved": classifier.resolved, "source": "model"}
    return classifier_predictions(classifier, dataset, batch_size, on_batch=on_batch,
                                  predict_proba=predict_proba), info


def probe_cues(dataset: Dataset, scan_results: dict, top: int, rank_by: str,
               warnings: list[str], min_support: int = MIN_SUPPORT):
    """The word cues chosen by :func:`~cuelens.probes.sanity.select_word_cues` plus the scan's
    ICQ feature cues, and the ``cue_selection`` record."""
    from cuelens.probes.cues import feature_cues, word_cues

    if "cues" not in scan_results:
        warnings.extend(scan_results.get("notes", []))
        return [], None
    tokens, selection = select_word_cues(scan_results["cues"], rank_by, top, min_support)
    if not tokens:
        warnings.append(f"no word cue passes the selection ({selection['rule']}): "
                        "no word cue is tested")
    cues = word_cues(dataset, tokens, scan_results["config"]["ngrams"])
    try:
        cues += feature_cues(dataset, scan_results.get("features", []))
    except ImportError:
        warnings.append("ICQ features unavailable; testing word cues only")
    return cues, selection


def probe_dataset(dataset: Dataset, predictions: Predictions, model_info: dict, *,
                  scan: ScanResult | None = None, classifier=None, top: int = 5,
                  rank_by: str = "z", min_support: int = MIN_SUPPORT, n_boot: int = 1000,
                  min_items: int = 10, seed: int = 0,
                  short_circuit: ShortCircuitOptions | None = None,
                  position_bias: PositionBiasOptions | None = None,
                  inputs: Sequence[str | Path] = (), progress: Progress | None = None
                  ) -> ProbeResult:
    """Probe ``predictions`` on ``dataset.test`` for cue reliance (docs/methods.md §6).

    ``scan``: a previous scan of the same data (default: a word-only scan with ``seed``).
    ``classifier``: the loaded model, needed by white-box / new-question sections
    (``short_circuit``) and for the training data map of a local model directory.
    ``position_bias``: run the position-bias probe (:mod:`cuelens.probes.position`).
    ``predictions`` of some test items only (an evaluation log run with ``--limit``,
    :attr:`Predictions.covered`): the probe runs on those items, the scan on all of them.
    """
    started = time.time()
    if predictions.covered is not None and position_bias is not None \
            and position_bias.picks is not None:
        raise UserError("--position-predictions needs a main log of every test item; this "
                        "one covers some items only (lm_eval --limit?)")
    if scan is None:
        scan = scan_dataset(dataset, ScanConfig(seed=seed), progress=progress)
    results = dict(scan.results)
    warnings: list[str] = list(predictions.notes)
    item_easy = scan.item_easy
    if predictions.covered is not None:  # a log of some test items: probe those (cues: all)
        covered = predictions.covered
        dataset, predictions = predictions.logged_subset(dataset)
        item_easy = None if item_easy is None else item_easy[covered]
    resolved = Path(classifier.resolved) if classifier is not None else None
    cues, selection = probe_cues(dataset, results, top, rank_by, warnings, min_support)
    ctx = ProbeContext(dataset=dataset, predictions=predictions, cues=cues,
                       cue_selection=selection,
                       model_info=model_info, item_easy=item_easy,
                       model_dir=resolved if resolved is not None and resolved.is_dir() else None,
                       classifier=classifier, seed=seed, n_boot=n_boot, min_items=min_items,
                       short_circuit=short_circuit, position_bias=position_bias,
                       warnings=warnings, progress=progress)
    results["probe"] = run_sections(ctx)
    results.pop("next_steps", None)  # the scan's: a probe's steps are about the model
    results["next_steps"] = next_steps(results)
    warnings += results["probe"]["sanity"]["notes"]
    return ProbeResult(dataset=dataset, results=results, predictions=predictions,
                       item_easy=item_easy, warnings=warnings,
                       extra_inputs=[str(p) for p in inputs], started=started)
