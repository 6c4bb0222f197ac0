"""The whole ``audit scan`` in one call: word cues, leakage, easy/hard and ICQ features
(docs/methods.md §1–5), returned as a :class:`Scan`: the results and what its files are written
from (the pandas views and the report: :class:`cuelens.results.ScanResult`, above).

``audit scan``, ``audit demo``, ``audit probe`` (without ``--scan``) and :func:`cuelens.scan`
all call :func:`scan_dataset`; nothing here prints. ``progress(stage, fraction)`` receives the
word-audit stages and then ``features: parse`` / ``features: score``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from cuelens.audit.counts import TokenSequences
from cuelens.audit.scan import Progress, ScanConfig, run_word_audit
from cuelens.data.dataset import Dataset, Split, Task

if TYPE_CHECKING:
    import pandas as pd

    from cuelens.audit.bias_items import ItemTable
    from cuelens.audit.results import ItemLines, ScanSections
    from cuelens.audit.segmentation import ScanSegmentation


class ChunkedItems(Protocol):
    """Scanned data kept on disk in chunks (:class:`~cuelens.audit.streamed_scan.ChunkedData`):
    what a :class:`Scan` reads of its evaluated items."""

    @property
    def input_paths(self) -> list[str]: ...

    def evaluated_frame(self, mask: np.ndarray) -> pd.DataFrame: ...

    def item_lines(self, item_easy: np.ndarray) -> ItemLines: ...


@dataclass(repr=False)  # bounded: never the whole results dict (MBs on SNLI)
class Scan:
    """A scan's results.json sections plus the easy mask of the evaluated items, whatever the
    memory mode: ``dataset`` is the scanned data, loaded (a :class:`~cuelens.data.Dataset`) or
    kept on disk in chunks (:class:`ChunkedItems`, ``--stats streaming``)."""

    dataset: Dataset | ChunkedItems
    sections: ScanSections
    item_easy: np.ndarray | None  # bool per evaluated item; None: no word-cue statistics
    started: float = field(default_factory=time.time)
    bias: ItemTable | None = None  # per-item bias outputs (cuelens.audit.bias_items)

    @property
    def results(self) -> dict:
        """The results.json content (:meth:`~cuelens.audit.results.ScanSections.to_json`)."""
        return self.sections.to_json()

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
        :func:`~cuelens.audit.results.write_scan_outputs`; streamed from the chunks of a
        streamed scan), run.json and the per-item bias table: all of them or none."""
        from cuelens.audit.metrics import METRICS
        from cuelens.audit.results import run_info, write_scan_outputs
        from cuelens.atomic import output_set

        items = None if self.item_easy is None else self.dataset.item_lines(self.item_easy)
        out_dir = Path(out_dir)
        with output_set():
            files = write_scan_outputs(out_dir, self.results,
                                       run_info(self.started, inputs=self.inputs), self.inputs,
                                       items, 0 if self.item_easy is None else
                                       len(self.item_easy), item_files,
                                       metric_names=list(METRICS))
            if self.bias is not None:
                files.update(self.bias.write(out_dir, self.inputs))
        return files


def check_scan_outputs(inputs: list[str], n_evaluated: int, out_dir: str | Path,
                       report: str | Path | None = None, *, cache_dir: str | Path | None = None,
                       uses_cache: bool = True, item_files: str = "auto") -> None:
    """Before any computation (docs/robustness.md): the scan's files in ``out_dir`` (with
    ``item_files`` for ``n_evaluated`` items) and the report (default ``out_dir/report.html``)
    are writable, distinct and overwrite none of the ``inputs``; the parse cache
    (``cache_dir``, else the default) is writable when the scan ``uses_cache``."""
    from cuelens.audit.parse_cache import default_cache_dir
    from cuelens.audit.results import item_files_mode, scan_output_paths
    from cuelens.outputs import check_outputs, check_writable_dir

    out_dir = Path(out_dir)
    paths = scan_output_paths(out_dir, item_files_mode(item_files, n_evaluated))
    check_outputs([*paths.values(), report or out_dir / "report.html"], inputs)
    if uses_cache:
        check_writable_dir(cache_dir or default_cache_dir())


def feature_sections(names: Sequence[str] | None, parts: Iterable[tuple[Split, np.ndarray]], *,
                     task: str, label_names: list[str], cross_validated: bool, folds: int,
                     cache_dir: str | Path | None = None,
                     progress: Progress | None = None, language: str = "en") -> dict:
    """The ICQ ``features``/``features_config`` sections (docs/methods.md §5) of ``parts``
    (:func:`~cuelens.audit.icq.feature_audit_of_parts`: a dataset's splits, or a streamed
    scan's chunks); ``{}`` when ``names`` is empty, every registered feature when it is
    ``None``. Text not in English (``language``): the features that cannot run on it are
    skipped and listed in ``features_config`` (docs/languages.md)."""
    from cuelens.audit.features import get_features
    from cuelens.audit.icq import feature_audit_of_parts
    from cuelens.audit.parse_cache import default_cache_dir
    from cuelens.audit.results import FeaturesSection

    if names is not None and not names:
        return {}
    asked = [f.name for f in get_features(None if names is None else list(names))]
    run = [f.name for f in get_features(asked, language)]
    skipped: dict[str, Any] = {"language": language, "skipped": [
        {"feature": name, "reason": f"needs English text (the text is {language})"}
        for name in asked if name not in run]} if language != "en" else {}
    if not run:
        return {"features_config": FeaturesSection(features=[], **skipped)}
    stage = None if progress is None else (
        lambda name, fraction: progress(f"features: {name}", fraction))
    sections = feature_audit_of_parts(parts, task=task, label_names=label_names, features=run,
                                      cross_validated=cross_validated, folds=folds,
                                      cache_dir=cache_dir or default_cache_dir(), progress=stage,
                                      language=language)
    return {**sections, "features_config": replace(sections["features_config"], **skipped)}


VARYING_CHOICES = ("items have different numbers of choices: only the MCQ artifact baselines "
                   "were computed (the word-cue statistics and ICQ features need the same "
                   "number in every item)")


def scan_dataset(dataset: Dataset, config: ScanConfig | None = None, *,
                 features: Sequence[str] | None = (), cache_dir: str | Path | None = None,
                 progress: Progress | None = None, tokens: TokenSequences | None = None,
                 subset_field: str | None = None) -> Scan:
    """Word-cue audit of ``dataset`` plus the ICQ ``features`` (``None``: all; ``()``: none) and
    the ``subsets`` table of ``subset_field`` (docs/methods.md §16), every word cut by the
    segmenter of ``config.segmenter`` (:mod:`cuelens.audit.segmentation`); the conclusion and
    next steps computed once, from every section (:func:`~cuelens.audit.advice.advise`).

    ``tokens``: the instance texts already encoded by an engine (see ``run_word_audit``)."""
    from cuelens.audit.advice import advise

    scan = scan_sections(dataset, config, features=features, cache_dir=cache_dir,
                         progress=progress, tokens=tokens, subset_field=subset_field)
    return replace(scan, sections=advise(scan.sections))


def scan_sections(dataset: Dataset, config: ScanConfig | None = None, *,
                  features: Sequence[str] | None = (), cache_dir: str | Path | None = None,
                  progress: Progress | None = None, tokens: TokenSequences | None = None,
                  subset_field: str | None = None) -> Scan:
    """:func:`scan_dataset` without the conclusion and next steps: for a scan that adds
    sections of its own before advising (:mod:`cuelens.audit.preference_scan`)."""
    from cuelens.audit.segmentation import scan_segmentation
    from cuelens.audit.subsets import dataset_subsets
    from cuelens.audit.tokenize import segmenting
    from cuelens.data.loading import check_dataset_scannable

    started = time.time()
    config = config or ScanConfig()
    config.validate()
    check_dataset_scannable(dataset)  # one clear error for 1 item or a single label
    segmentation = scan_segmentation(dataset, config.segmenter)
    if segmentation.segmenter.name != "unicode":
        tokens = None  # an engine encoded them with the default segmenter: encode them again
    with segmenting(segmentation.segmenter):
        scan = _scan_segmented(dataset, config, segmentation, features=features,
                               cache_dir=cache_dir, progress=progress, tokens=tokens)
        subsets = None if subset_field is None else dataset_subsets(dataset, subset_field,
                                                                    config)
    return replace(scan, sections=replace(scan.sections, subsets=subsets), started=started)


def _scan_segmented(dataset: Dataset, config: ScanConfig, segmentation: ScanSegmentation, *,
                    features: Sequence[str] | None, cache_dir: str | Path | None,
                    progress: Progress | None, tokens: TokenSequences | None) -> Scan:
    """:func:`scan_dataset` once its segmenter is the active one."""
    from cuelens.audit.examples import sample_examples
    from cuelens.audit.icq import dataset_parts
    from cuelens.audit.hygiene import data_hygiene
    from cuelens.audit.lengths import length_section
    from cuelens.audit.mcq_baselines import mcq_baselines
    from cuelens.audit.results import DatasetSummary, ScanSections
    from cuelens.data.summary import dataset_summary

    chosen, warnings = segmentation.to_json(), segmentation.warnings or None
    if dataset.task == Task.MCQ and dataset.n_choices is None:  # the MCQ artifact baselines only
        return Scan(dataset, ScanSections(
            config=asdict(config), dataset=DatasetSummary.from_json(dataset_summary(dataset)),
            segmentation=chosen,
            warnings=warnings, notes=[VARYING_CHOICES],
            mcq_baselines=mcq_baselines(dataset, config.folds, config.seed)), None)
    audit = run_word_audit(dataset, config, progress=progress, tokens=tokens)
    parts = dataset_parts(dataset, config.folds, config.seed) if features is None or features \
        else []  # the folds only when features are audited
    examples = sample_examples(dataset, audit.cues, audit.item_easy, config.seed, audit.words)
    hygiene = data_hygiene(dataset, config.seed)
    if progress is not None:
        progress("hygiene", 1.0)
    sections = ScanSections(
        config=asdict(config),
        dataset=DatasetSummary.from_json(dataset_summary(dataset, config.min_label_items)),
        segmentation=chosen, warnings=warnings, hygiene=hygiene, **audit.sections(),
        examples=examples, **feature_sections(
            features, parts, task=dataset.task,
            label_names=dataset.label_names, cross_validated=dataset.train is None,
            folds=config.folds, cache_dir=cache_dir, progress=progress,
            language=segmentation.language),
        **length_section(dataset, config.folds, config.seed))
    return Scan(dataset=dataset, sections=sections, item_easy=audit.item_easy,
                bias=audit.items)
