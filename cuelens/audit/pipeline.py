"""The whole exact ``audit scan`` in one call: word cues, leakage, easy/hard and ICQ features
(docs/methods.md §1–5) of a loaded dataset, held in memory as chunks and run through the one
scan of chunked data (:func:`~cuelens.audit.chunk_scan.chunk_sections`) in the exact mode;
returned as a :class:`~cuelens.audit.scan_result.Scan`: the results and what its files are
written from (the pandas views and the report: :class:`cuelens.results.ScanResult`, above).

``audit scan``, ``audit demo``, ``audit probe`` (without ``--scan``) and :func:`cuelens.scan`
all call :func:`scan_dataset`; nothing here prints. ``progress(stage, fraction)`` receives the
word-audit stages and then ``features: parse`` / ``features: score``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING

from cuelens.audit.counts import TokenSequences
from cuelens.audit.scan import Progress, ScanConfig
from cuelens.audit.scan_result import Scan
from cuelens.audit.chunked_data import ChunkedData, held_data
from cuelens.audit.chunk_scan import ScanMode, chunk_sections
from cuelens.audit.results import ConfigSection
from cuelens.data.dataset import Dataset, Task
from cuelens.engine.chunks import ChunkDirectory

if TYPE_CHECKING:
    from cuelens.audit.segmentation import ScanSegmentation

__all__ = ["Scan", "check_parse_cache", "check_scan_outputs", "scan_dataset", "scan_sections"]


def check_scan_outputs(inputs: list[str], n_evaluated: int, out_dir: str | Path,
                       report: str | Path | None = None, *, cache_dir: str | Path | None = None,
                       uses_cache: bool = True, item_files: str = "auto") -> None:
    """Before any computation (docs/robustness.md): the scan's files in ``out_dir`` (with
    ``item_files`` for ``n_evaluated`` items) and the report (default ``out_dir/report.html``)
    are writable, distinct and overwrite none of the ``inputs``; the parse cache
    (``cache_dir``, else the default) is writable when the scan ``uses_cache``."""
    from cuelens.audit.scan_outputs import item_files_mode, scan_output_paths
    from cuelens.outputs import check_outputs

    out_dir = Path(out_dir)
    paths = scan_output_paths(out_dir, item_files_mode(item_files, n_evaluated))
    check_outputs([*paths.values(), report or out_dir / "report.html"], inputs)
    if uses_cache:
        check_parse_cache(cache_dir)


def check_parse_cache(cache_dir: str | Path | None) -> None:
    """Before any computation: the parse cache (``cache_dir``, else the default) is writable and
    ``$CUELENS_CACHE_MAX_BYTES`` readable (a file as ``cache_dir`` failed with
    NotADirectoryError once the texts were parsed)."""
    from cuelens.audit.parse_cache import default_cache_dir, default_max_bytes
    from cuelens.outputs import check_writable_dir

    check_writable_dir(cache_dir or default_cache_dir())
    default_max_bytes()


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
    return scan_sections(dataset, config, features=features, cache_dir=cache_dir,
                         progress=progress, tokens=tokens, subset_field=subset_field).advised()


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
        # first, so a field the records lack is one error before the scan's work
        subsets = None if subset_field is None else dataset_subsets(dataset, subset_field,
                                                                    config)
        scan = _scan_segmented(dataset, config, segmentation, features=features,
                               cache_dir=cache_dir, progress=progress, tokens=tokens)
    return replace(scan, sections=replace(scan.sections, subsets=subsets), started=started)


def held_in_memory(dataset: Dataset, config: ScanConfig, segmentation: ScanSegmentation,
                   tokens: TokenSequences | None = None) -> tuple[ChunkedData, ScanMode]:
    """``dataset`` as chunked data held in memory (:func:`~cuelens.audit.chunked_data.held_data`;
    the work files in a temporary directory removed with the scan) and the exact scan's
    :class:`ScanMode`: the grouped, stratified folds (docs/methods.md §3–4) and their groups,
    the ``segmentation`` chosen over the whole data, the config as given, the words of the
    store (the instances' texts alone, without ``include_premise``)."""
    held, folds = held_data(dataset, config, tokens)
    held.work = ChunkDirectory()
    words = None if config.include_premise else [chunk.words for chunk in held.store.chunks()]
    return held, ScanMode(folds, folds.summary, segmentation,
                          ConfigSection(**asdict(config)), words=words)


def _scan_segmented(dataset: Dataset, config: ScanConfig, segmentation: ScanSegmentation, *,
                    features: Sequence[str] | None, cache_dir: str | Path | None,
                    progress: Progress | None, tokens: TokenSequences | None) -> Scan:
    """:func:`scan_dataset` once its segmenter is the active one: the one scan of chunked
    data (:func:`~cuelens.audit.chunk_scan.chunk_sections`) over ``dataset`` held in
    memory (:func:`held_in_memory`), but for items with varying numbers of choices."""
    from cuelens.audit.mcq_baselines import mcq_baselines
    from cuelens.audit.results import DatasetSummary, ScanSections
    from cuelens.data.summary import dataset_summary

    if dataset.task == Task.MCQ and dataset.n_choices is None:  # the MCQ artifact baselines only
        return Scan(dataset, ScanSections(
            config=ConfigSection(**asdict(config)),
            dataset=DatasetSummary.from_json(dataset_summary(dataset)),
            segmentation=segmentation.section(), warnings=segmentation.warnings or None,
            notes=[VARYING_CHOICES],
            mcq_baselines=mcq_baselines(dataset, config.folds, config.seed)), None)
    report = progress or (lambda stage, fraction: None)
    report("tokenise", 0.0)
    held, mode = held_in_memory(dataset, config, segmentation, tokens)
    report("tokenise", 1.0)
    return chunk_sections(held, config, mode, features=features, cache_dir=cache_dir,
                          progress=progress)
