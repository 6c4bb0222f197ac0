"""The one scan of chunked data (docs/large-datasets.md, "Statistics that stream").

Over :class:`~cuelens.audit.chunked_data.ChunkedData` (read by
:func:`~cuelens.audit.chunked_data.load_chunked`, or a loaded dataset held in memory),
:func:`scan_streaming` computes every section of results.json from passes over the chunks
(:mod:`cuelens.audit.passes`, :mod:`cuelens.audit.streamed_hygiene`) and returns a
:class:`~cuelens.audit.scan_result.Scan` that writes the usual outputs. What the memory mode
decides is a :class:`ScanMode`: :func:`streamed_mode` (``--stats streaming``: the exact scan's
grouped folds built from the chunks up to :data:`GROUPED_FOLD_INSTANCES`, hashed folds above;
``config.statistics`` ``"streaming"`` and a note saying which) or the exact
scan's (:func:`cuelens.audit.pipeline.scan_dataset`: a loaded dataset held as one chunk per
split, its grouped, stratified folds).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cuelens.audit.bias_items import CueNames, ItemsWriter, SpilledItems, TableLayout, \
    arrow_table, cue_ranks, item_columns, item_paths, jsonl_blocks, strongest_cues
from cuelens.audit.chunked_data import ChunkedData, Reader, fold_keys, load_chunked, read_local
from cuelens.audit.config import ScanConfig
from cuelens.audit.counts import TokenSequences
from cuelens.audit.examples import ExamplePicker, PartPicks
from cuelens.audit.groups import check_cross_validation_folds, check_fold_groups, grouping
from cuelens.audit.scan import EasyMask, Progress, WordAudit, add_mcq_baselines, fitting_fits, \
    headline, word_audit
from cuelens.audit.folds import Folds, GroupedFolds, HashedFolds
from cuelens.audit.item_parts import ItemParts
from cuelens.audit.scan_result import Scan
from cuelens.audit.passes import ChunkPasses, FoldModels, TokenChunk, TokenStore, \
    held_out_items
from cuelens.audit.results import ConfigSection, CueRow, ExamplesSection
from cuelens.data.dataset import Split, Task
from cuelens.data.schema import FieldMap
from cuelens.engine.chunks import ChunkDirectory, ChunkedSplit

if TYPE_CHECKING:
    from cuelens.audit.features.parse_ahead import ParseAhead
    from cuelens.audit.segmentation import ScanSegmentation
    from cuelens.audit.streamed_hygiene import ItemFlags

#: A streamed scan of at most this many instances (NLI items, MCQ choices; of its fitting and
#: evaluated splits) deals the exact scan's grouped folds (:func:`chunked_folds`: ~165 bytes
#: an NLI item while they are found, 27 held; a 1M-item scan peaks at 650 MB); above, hashed
#: folds in flat memory (docs/large-datasets.md, "Statistics that stream", 2)
GROUPED_FOLD_INSTANCES = 1_000_000

GROUPED_STREAMING_NOTE = (
    "statistics streamed over chunks (--stats streaming) with the exact statistics' grouped, "
    "stratified folds, which data of this size get: where the words are cut as the exact scan "
    "cuts them, the numbers are the exact statistics' (docs/large-datasets.md)")

STREAMING_NOTE = (
    "statistics streamed over chunks (--stats streaming): cross-validation folds follow a "
    "seeded hash of each item's premise (or its --group-field value), so items sharing a "
    "premise share a fold but copies of a hypothesis under different premises may not; the "
    "training samples are drawn in a seeded hash order. The numbers are those of the exact "
    "statistics up to this fold and sample assignment (docs/large-datasets.md)")


STREAMED_UNIT = "premise or group field (hashed fold key)"


ChunkFiles = tuple[ChunkedSplit, tuple]  # one chunk: the split of its file alone, its token file


def _chunk_calls(split: ChunkedSplit, store: TokenStore) -> list[tuple[ChunkFiles, int]]:
    """Each chunk of ``split`` with its token file among ``store``'s evaluation chunks, and its
    first item within ``split``."""
    tokens = [file for file in store.files if not file[0]]
    return [((chunk, token), first) for (first, chunk), token in zip(split.per_file(), tokens)]


def _opened(store: TokenStore, chunk_files: ChunkFiles) -> tuple[Split, TokenChunk]:
    """The chunk and token chunk of :data:`ChunkFiles`, read."""
    split, tokens = chunk_files
    return split.read(), store.chunk(tokens)


@dataclass(frozen=True)
class _ItemsShared:
    """What every chunk's part of the per-item table needs (shipped once): per role, the token
    store, the fold models and the folds of its held-out probabilities; the evaluated role, its
    easy mask and the hygiene flags."""

    held: dict[str, tuple[TokenStore, list[FoldModels], Folds]]
    evaluated: str
    easy: EasyMask
    flags: ItemFlags
    seed: int
    model: tuple[str, str]
    layout: TableLayout
    ranks: tuple[np.ndarray, np.ndarray]
    cues: CueNames
    files: dict[str, Path]


def _items_part(shared: _ItemsShared, role: str, chunk_files: ChunkFiles, first: int,
                against: bool) -> tuple[Path | None, Any]:
    """The per-item table's rows of one chunk of split ``role`` (items ``first …`` of it):
    held-out probabilities (:func:`~cuelens.audit.passes.held_out_items`), strongest cue, easy
    mask (evaluated items) and hygiene flags (:func:`~cuelens.audit.streamed_hygiene.flags_of`),
    both read here. The JSONL lines go to a part file next to items.jsonl (returned; None
    without items.jsonl, :func:`~cuelens.audit.bias_items.jsonl_blocks`); the Arrow table
    (:func:`~cuelens.audit.bias_items.arrow_table`; None without items.parquet) is returned."""
    from cuelens.audit.streamed_hygiene import flags_of

    store, kept, folds = shared.held[role]
    split, chunk = _opened(store, chunk_files)
    easy = shared.easy.of(first, len(split)) if role == shared.evaluated else None
    probs = held_out_items(store, kept, folds, shared.seed, shared.model, chunk)
    chosen, cue_z = strongest_cues(chunk.seqs, store.k, shared.ranks)
    columns = item_columns(shared.layout, list(split.ids), role, chunk.answers, probs,
                           (*shared.cues.columns(chosen), cue_z), easy,
                           flags_of(shared.flags.of(role, first, len(split)), against))
    piece = shared.files["items"].with_name(f"part-{chunk.first}.jsonl") \
        if "items" in shared.files else None
    if piece is not None:
        with open(piece, "wb") as handle:
            handle.writelines(jsonl_blocks(columns))
    return piece, arrow_table(columns, shared.layout) if "items_parquet" in shared.files \
        else None


def streamed_items(data: ChunkedData, config: ScanConfig, folds: Folds, audit: WordAudit,
                   flags: ItemFlags) -> SpilledItems:
    """The per-item bias table (docs/results-schema.md ``items``) written chunk by chunk under
    the work directory, each chunk's rows computed on ``store.passes`` (:func:`_items_part`):
    the evaluated items' probabilities from the leakage pass's fold fits (``audit.fits``), the
    fitting items' from the model refitted over the folds of the fitting split
    (``folds.fitting()``, :func:`~cuelens.audit.scan.fitting_fits`); the easy mask
    (``audit.easy``) and the hygiene ``flags`` read per chunk there."""
    store, model = data.store, headline(audit.leakage)
    layout = TableLayout.of(store.task, data.label_names, store.k, model)
    directory = data.work_dir / "items"
    directory.mkdir(exist_ok=True)
    files = item_paths(directory, sum(len(data.splits[role]) for role in data.scanned_roles))
    held = {data.evaluated: (store, audit.fits, folds)}
    if data.fitting is not None:
        assert audit.bank is not None
        view, fitting_folds = store.fitting_store(), folds.fitting()
        held[data.fitting] = (view, fitting_fits(view, fitting_folds, config, model, audit.bank),
                              fitting_folds)
    shared = _ItemsShared(held, data.evaluated, audit.easy, flags, config.seed, model, layout,
                          cue_ranks(store.vocab, audit.cues), CueNames.of(audit.cues), files)

    def calls() -> Iterator[tuple]:
        for role in data.scanned_roles:
            split, against = data.splits[role], role != data.fitting and data.fitting is not None
            for chunk_files, first in _chunk_calls(split, held[role][0]):
                yield role, chunk_files, first, against

    with ItemsWriter(files, layout) as writer:
        for piece, table in store.passes.map(_items_part, shared, calls()):
            writer.append_file(piece, table)
    return SpilledItems(files)


def _group_sizes(data: ChunkedData) -> dict:
    """:func:`~cuelens.audit.groups.sizes_summary` of the fold keys (items sharing one)."""
    from cuelens.audit.streamed_hygiene import KeySpill

    spill = KeySpill(data.work_dir / "group-keys")
    for chunk in data.store.chunks():
        spill.add(chunk.keys)
    return {**spill.spilled().group_summary(), "unit": STREAMED_UNIT}


@dataclass(frozen=True)
class _ExamplesShared:
    """What every evaluated chunk's example picks need (shipped once)."""

    store: TokenStore
    easy: EasyMask
    picker: ExamplePicker
    scan_words: bool  # the store's words are the instances' texts (no premise added)


def _example_picks(shared: _ExamplesShared, chunk_files: ChunkFiles, first: int) -> PartPicks:
    """One evaluated chunk's :meth:`~cuelens.audit.examples.ExamplePicker.part` (items
    ``first …`` of the split, their easy mask read here)."""
    split, chunk = _opened(shared.store, chunk_files)
    return shared.picker.part(split, first, shared.easy.of(first, len(split)),
                              chunk.words if shared.scan_words else None)


def streamed_examples(data: ChunkedData, cues: list[CueRow], easy: EasyMask,
                      config: ScanConfig) -> ExamplesSection:
    """The ``examples`` section of the chunks (:class:`~cuelens.audit.examples.ExamplePicker`,
    the exact scan's picker): each chunk's picks on ``store.passes``, merged."""
    picker = ExamplePicker.of(cues, data.label_names, config.seed)
    shared = _ExamplesShared(data.store, easy, picker, not config.include_premise)
    calls = _chunk_calls(data.splits[data.evaluated], data.store)
    return picker.section(data.store.passes.map(_example_picks, shared, calls))


def chunked_summary(data: ChunkedData, min_label_items: int) -> dict:
    """results.json ``dataset`` of chunked splits (docs/results-schema.md)."""
    from cuelens.data.summary import split_summary, summary_of

    task = data.store.task
    return summary_of(data.name, data.format, task, data.store.k if task == Task.MCQ else None,
                      data.label_names,
                      {role: (s, split_summary(s.path, task, len(s), s.label_counts,
                                               s.choice_counts, s.skipped, data.label_names))
                       for role, s in data.splits.items()},
                      data.fitting or data.evaluated, min_label_items, data.split_roles)


def scan_files(data: str | None = None, *, train: str | None = None, test: str | None = None,
               config: ScanConfig | None = None, fields: FieldMap = FieldMap(),
               skip_bad: bool = False, work_dir: str | Path | None = None,
               features: Sequence[str] | None = (), cache_dir: str | Path | None = None,
               progress: Progress | None = None, reader: Reader = read_local,
               passes: ChunkPasses | None = None,
               loaded: Callable[[ChunkedData], None] | None = None) -> Scan:
    """Read the data arguments into chunks in a temporary directory (under ``work_dir``,
    removed with the result; ``reader``: where; read here, chunks that fit
    :data:`~cuelens.engine.chunks.MEMORY_BUDGET` stay in memory) and scan them with statistics
    that stream
    (``features``, ``cache_dir``: the ICQ features, see :func:`scan_streaming`), their passes
    on ``passes`` (default: here). ``loaded`` sees the data once read, before any statistic
    (``audit scan`` checks its outputs there). The one entry from files of ``audit scan
    --stats streaming`` and :func:`cuelens.scan`."""
    from cuelens.engine.chunks import chunk_space, held_in_memory
    from cuelens.atomic import disk_space

    from cuelens.audit.segmentation import check_streamable as check_segmenter
    from cuelens.audit.tokenize import segmenting

    config = config or ScanConfig()
    local = reader is read_local and passes is None
    if not local:  # before validate() loads an hf: tokenizer that no worker would be given
        check_segmenter(config.segmenter)
    config.validate()
    work = ChunkDirectory(work_dir)
    space = chunk_space([s for s in (data, train, test) if s])
    held = held_in_memory(space) and local
    try:
        segmentation = read_ahead_segmentation(data, train, test, fields, skip_bad, config)
        with disk_space(Path(work.name).parent, space), segmenting(segmentation.segmenter):
            data_ = load_chunked(data, train, test, fields, skip_bad, config,
                                 None if held else Path(work.name), progress=progress,
                                 reader=reader)
            data_.work = work
            if passes is not None:
                data_.store.passes = passes
            if loaded is not None:
                loaded(data_)
            return scan_streaming(data_, config, features=features, cache_dir=cache_dir,
                                  progress=progress,
                                  mode=streamed_mode(data_, config, segmentation=segmentation))
    except BaseException:
        work.cleanup()  # now, not when the traceback's frames are collected
        raise


def chunk_parts(data: ChunkedData, folds: Folds, config: ScanConfig) -> ItemParts:
    """The :class:`~cuelens.audit.item_parts.ItemParts` of the chunks (read one at a time, on
    each pass): the fitting items in plane 0, the evaluated ones in plane 1 or, when
    cross-validated, in their outer fold under the config's seed (the headline's folds)."""
    def evaluated() -> Iterator[tuple[Split, np.ndarray]]:
        for chunk in data.splits[data.evaluated]:
            n = len(chunk.split)
            yield chunk.split, np.ones(n, dtype=np.int64) if data.fitting is not None else \
                folds.outer(np.arange(chunk.first, chunk.first + n), fold_keys(chunk.split),
                            config.seed)

    if data.fitting is None:
        return ItemParts(evaluated, evaluated, True, config.folds)
    fitting = data.splits[data.fitting]
    return ItemParts(lambda: ((chunk.split, np.zeros(len(chunk.split), dtype=np.int64))
                              for chunk in fitting), evaluated, False, config.folds)


def feature_sections(names: Sequence[str] | None, parts: Iterable[tuple[Split, np.ndarray]], *,
                     task: str, label_names: list[str], cross_validated: bool, folds: int,
                     cache_dir: str | Path, progress: Progress | None = None, language: str = "en",
                     words: Sequence[TokenSequences] | None = None,
                     parsing: ParseAhead | None = None, total: int | None = None) -> dict:
    """The ICQ ``features``/``features_config`` sections (docs/methods.md §5) of ``parts``
    (:func:`~cuelens.audit.icq.feature_audit_of_parts`: the chunks, :func:`chunk_parts`,
    with their ``words`` as the scan encoded them when it kept them);
    ``{}`` when ``names`` is empty, every registered feature when it is ``None``. Text not in
    English (``language``): the features that cannot run on it are skipped and listed in
    ``features_config`` (docs/languages.md). ``parsing``: the parse started ahead, waited for
    before the audit reads the parse cache. ``total``: the items of all parts (the progress of
    the parse runs once from 0 to 1 over them)."""
    from cuelens.audit.features import get_features
    from cuelens.audit.icq import feature_audit_of_parts
    from cuelens.audit.results import FeaturesSection

    if names is not None and not names:
        return {}
    asked = [f.name for f in get_features(None if names is None else list(names))]
    run = [f.name for f in get_features(asked, language)]
    text = "not English" if language == "other" else language  # other: text_language's rest
    skipped: dict[str, Any] = {"language": language, "skipped": [
        {"feature": name, "reason": f"needs English text (the text is {text})"}
        for name in asked if name not in run]} if language != "en" else {}
    if not run:
        return {"features_config": FeaturesSection(features=[], **skipped)}
    stage = None if progress is None else (
        lambda name, fraction: progress(f"features: {name}", fraction))
    if parsing is not None:
        parsing.wait(stage)
    sections = feature_audit_of_parts(parts, task=task, label_names=label_names, features=run,
                                      cross_validated=cross_validated, folds=folds,
                                      cache_dir=cache_dir, progress=stage,
                                      language=language, words=words, total=total)
    return {**sections, "features_config": replace(sections["features_config"], **skipped)}


def _parse_ahead(names: Sequence[str] | None, parts: ItemParts, data: ChunkedData,
                 language: str, cache_dir: str | Path) -> ParseAhead | None:
    """The spaCy features' parse of ``parts`` started ahead of the word audit
    (:func:`~cuelens.audit.features.parse_ahead.parse_ahead`, its job files in the scan's work
    directory) when the chunks are held in memory; ``None`` otherwise (``names``: as
    :func:`feature_sections`)."""
    from cuelens.audit.features import get_features
    from cuelens.audit.features.parse_ahead import parse_ahead

    if data.store.directory is not None or (names is not None and not names):
        return None
    features = get_features(None if names is None else list(names), language)
    return parse_ahead(features, (split.instances(data.label_names) for split, _ in parts.all()),
                       cache_dir, data.work_dir)


@dataclass(frozen=True)
class ScanMode:
    """What a memory mode decides in :func:`scan_streaming`: the folds (their ``fitting()``
    ones: the per-item table's folds of the fitting items), the ``leakage.groups`` summary of
    their units, the segmentation, the results.json ``config`` section and ``notes``."""

    folds: Folds
    groups: dict
    segmentation: ScanSegmentation
    config: ConfigSection
    notes: list[str] | None = None
    # each feature part's instance words as encoded for the cue table (the ICQ WORD feature
    # reads them, docs/methods.md §5); None: the features tokenise the texts themselves
    words: list[TokenSequences] | None = None


def chunked_folds(data: ChunkedData, config: ScanConfig) -> GroupedFolds:
    """The exact scan's grouped, stratified folds (:meth:`GroupedFolds.over`, docs/methods.md
    §3–4) of the statistics' splits of ``data``, read chunk by chunk: each split's groups from
    the links of its chunks' saved text keys (:func:`~cuelens.audit.groups.grouping`, which
    keeps only the links), its strata from their labels."""
    splits = [data.splits[role] for role in data.scanned_roles]
    return GroupedFolds.over(
        [grouping(chunk.split for chunk in split) for split in splits],
        [np.concatenate([chunk.split.item_labels(data.label_names) for chunk in split])
         for split in splits], data.scanned_roles, config.folds, config.seed)


def _sample_texts(data: ChunkedData) -> list[str]:
    """The exact scan's segmentation sample (:func:`~cuelens.audit.segmentation.sample_texts`)
    of the statistics' splits, from their first chunks."""
    from cuelens.audit.segmentation import SAMPLE_TEXTS, parts_texts

    texts = []
    for role in data.scanned_roles:
        parts = []
        for chunk in data.splits[role]:
            parts.append(chunk.split)
            if chunk.first + len(chunk.split) >= SAMPLE_TEXTS:
                break
        texts += parts_texts(parts)
    return texts


def read_ahead_segmentation(data: str | None, train: str | None, test: str | None,
                            fields: FieldMap, skip_bad: bool,
                            config: ScanConfig) -> ScanSegmentation:
    """The exact scan's segmentation of the data arguments, chosen from the same sample (the
    first :data:`~cuelens.audit.segmentation.SAMPLE_TEXTS` texts of the statistics' splits),
    read ahead so the chunks are encoded with it (docs/languages.md)."""
    from cuelens.audit.segmentation import SAMPLE_TEXTS, chosen_segmentation, parts_texts
    from cuelens.audit.segmenters import choose_segmenter
    from cuelens.data.loading import split_roles
    from cuelens.data.splits import ROLES
    from cuelens.engine.chunks import read_chunked
    from cuelens.engine.streaming import resolve_sources

    sources = resolve_sources(data, train, test)[0]
    texts: list[str] = []
    for role in split_roles([role for role in ROLES if role in sources]):
        if role is not None:
            first = next(read_chunked(sources[role], role, fields, None, skip_bad, None,
                                      SAMPLE_TEXTS), None)
            texts += parts_texts([first.split]) if first is not None else []
    return chosen_segmentation(texts, choose_segmenter(texts, config.segmenter))


def streamed_mode(data: ChunkedData, config: ScanConfig, folds: Folds | None = None, *,
                  segmentation: ScanSegmentation | None = None) -> ScanMode:
    """``--stats streaming``: up to :data:`GROUPED_FOLD_INSTANCES` instances, the exact scan's
    grouped, stratified folds and their groups (:func:`chunked_folds`); above, or given ``folds``,
    those (default :class:`~cuelens.audit.folds.HashedFolds` of the config) and the groups of
    the hashed fold keys; ``segmentation`` (default: ``unicode``, checked on a sample,
    :func:`_sample_texts`), ``config.statistics`` and a note saying which folds."""
    from cuelens.audit.segmentation import streamed_segmentation

    segmentation = segmentation or streamed_segmentation(_sample_texts(data), config.segmenter)
    check_cross_validation_folds(data.fitting is None, config.folds)
    streamed = ConfigSection(**asdict(config), statistics="streaming")
    if folds is None and data.store.n_items * data.store.k <= GROUPED_FOLD_INSTANCES:
        grouped = chunked_folds(data, config)
        return ScanMode(grouped, grouped.summary, segmentation, streamed, [GROUPED_STREAMING_NOTE])
    groups = _group_sizes(data)
    if data.fitting is None:  # cross-validated: the grouped folds' error (docs/methods.md §3)
        check_fold_groups(config.folds, data.store.n_eval, groups["groups"],
                          "evaluation items")
    folds = folds or HashedFolds(max(2, config.folds), config.folds, config.seed)
    return ScanMode(folds, groups, segmentation, streamed, [STREAMING_NOTE])


def scan_streaming(data: ChunkedData, config: ScanConfig, *, mode: ScanMode | None = None,
                   features: Sequence[str] | None = (), cache_dir: str | Path | None = None,
                   progress: Progress | None = None) -> Scan:
    """Every results.json section of ``data`` from passes over its chunks, with the ICQ
    ``features`` (``None``: all; ``()``: none) counted chunk by chunk; the folds, groups,
    segmentation and what names the mode from ``mode`` (default :func:`streamed_mode`). The
    one scan of both memory modes: the conclusion and next steps computed once, from every
    section (:func:`~cuelens.audit.advice.advise`) by :func:`scan_dataset` or here."""
    return chunk_sections(data, config, mode, features=features, cache_dir=cache_dir,
                          progress=progress).advised()


def chunk_sections(data: ChunkedData, config: ScanConfig, mode: ScanMode | None = None, *,
                   features: Sequence[str] | None = (), cache_dir: str | Path | None = None,
                   progress: Progress | None = None) -> Scan:
    """:func:`scan_streaming` without the conclusion and next steps."""
    from cuelens.audit.lengths import lengths_of_parts
    from cuelens.audit.parse_cache import default_cache_dir
    from cuelens.audit.results import DatasetSummary, ScanSections
    from cuelens.audit.streamed_hygiene import ChunkedRoles, ItemFlags, streamed_hygiene
    from cuelens.data.dataset import role_names

    started = time.time()
    config.validate()
    mode = mode or streamed_mode(data, config)
    folds, segmentation = mode.folds, mode.segmentation
    parts = chunk_parts(data, folds, config)  # the headline's folds
    cache_dir = cache_dir or default_cache_dir()
    parsing = _parse_ahead(features, parts, data, segmentation.language, cache_dir)
    try:
        audit = word_audit(data.store, data.label_names, config, folds, mode.groups, progress)
        if data.store.task == Task.MCQ:
            add_mcq_baselines(audit, parts)
        examples = streamed_examples(data, audit.cues, audit.easy, config)
        flags = ItemFlags.under(data.work_dir)
        hygiene = streamed_hygiene(ChunkedRoles(data.splits, data.evaluated, data.fitting,
                                                role_names(data.split_roles)),
                                   config.seed, data.work_dir, flags=flags,
                                   passes=data.store.passes)
        if progress is not None:
            progress("hygiene", 1.0)
        sections = ScanSections(
            config=mode.config,
            dataset=DatasetSummary.from_json(chunked_summary(data, config.min_label_items)),
            segmentation=segmentation.section(), warnings=segmentation.warnings or None,
            hygiene=hygiene, **audit.sections(), examples=examples, **feature_sections(
                features, parts.all(), task=data.store.task,
                label_names=data.label_names, cross_validated=data.fitting is None,
                folds=config.folds, cache_dir=cache_dir, progress=progress,
                language=segmentation.language, words=mode.words, parsing=parsing,
                total=sum(len(data.splits[role]) for role in data.scanned_roles)),
            lengths=lengths_of_parts(parts, data.store.task, data.label_names),
            notes=mode.notes)
    finally:
        if parsing is not None:
            parsing.stop()
    items = streamed_items(data, config, folds, audit, flags)
    if progress is not None:
        progress("bias items", 1.0)
    if data.loaded is not None:  # the exact scan: its dataset, its work files kept alive
        return Scan(data.loaded, sections, audit.item_easy, started, bias=items, work=data.work)
    return Scan(data, sections, audit.item_easy, started, bias=items)
