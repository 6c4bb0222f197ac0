"""Chunked data: the loaded splits held as chunks (on disk or in memory) with the token store of
the statistics' splits (docs/large-datasets.md). :func:`load_chunked` reads the data arguments
chunk by chunk into a work directory, :func:`held_data` holds a loaded dataset as one chunk per
split; both encode the chunks into a :class:`~cuelens.audit.passes.TokenStore` the same way
(:meth:`Loading.add`, :func:`encode_chunk`); :mod:`cuelens.audit.chunk_scan` scans the result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cuelens.audit.config import ScanConfig
from cuelens.audit.counts import Encoder, TokenSequences, first_occurrences, form_sequences, \
    instance_texts
from cuelens.audit.folds import GroupedFolds
from cuelens.audit.groups import check_cross_validation_folds
from cuelens.audit.passes import TokenStore, check_streamable, subset
from cuelens.audit.text_keys import as_keys, text_forms, text_key, text_keys
from cuelens.data.compact import CompactSplit, SourceRecords
from cuelens.data.dataset import MCQ_LABELS, RIGHT, Dataset, EvaluatedItems, Split, Task, \
    inferred_roles, statistics_roles
from cuelens.data.loading import check_scannable, split_roles, unseen_label
from cuelens.data.schema import FieldMap
from cuelens.data.splits import ROLES
from cuelens.engine.chunks import CHUNK_ITEMS, ChunkDirectory, ChunkedSplit, read_chunked
from cuelens.engine.options import Progress
from cuelens.errors import UserError
from cuelens.wording import plural


@dataclass
class ChunkedData(EvaluatedItems):
    """The loaded splits (role → chunked split, in results.json order), which two the
    statistics use, and the token store; held in memory, the dataset they hold
    (``loaded``)."""

    name: str
    format: str
    splits: dict[str, ChunkedSplit]
    fitting: str | None
    evaluated: str
    label_names: list[str]
    store: TokenStore
    work: ChunkDirectory | None = None  # holding the chunks, kept alive with the data
    split_roles: dict | None = None  # a role given to a file whose name does not say it
    loaded: Dataset | None = None

    @property
    def work_dir(self) -> Path:
        """Where the scan's work files go: the spilled store's directory, else the work
        directory's."""
        if self.store.directory is not None:
            return self.store.directory
        assert self.work is not None, "chunks held in memory need a work directory"
        return Path(self.work.name)

    @property
    def scanned_roles(self) -> list[str]:
        """The roles of the splits the statistics use: the fitting one (if any), then the
        evaluated one."""
        return [role for role in (self.fitting, self.evaluated) if role is not None]

    def close(self) -> None:
        """Remove the work directory of the chunks now (else when garbage-collected)."""
        if self.work is not None:
            self.work.cleanup()

    def evaluated_parts(self, mask: np.ndarray) -> Iterator[tuple[Split, np.ndarray]]:
        """Each evaluated chunk with its part of the per-item ``mask``."""
        for chunk in self.splits[self.evaluated]:
            yield chunk.split, mask[chunk.first:chunk.first + len(chunk.split)]

    def item_lines(self, item_easy: np.ndarray
                   ) -> Callable[[str], Iterator[tuple[str, bool]]]:
        """:meth:`EvaluatedItems.item_lines`, but the records of chunks read from the source
        (spilled or held) come from one pass over it
        (:meth:`~cuelens.data.compact.SourceRecords.joined`), not one from its start per chunk."""
        by_chunk = super().item_lines(item_easy)

        def lines(mode: str) -> Iterator[tuple[str, bool]]:
            records: list[object] = [chunk.split.raw for chunk in self.splits[self.evaluated]] \
                if mode == "records" else []  # the line numbers alone
            joinable = [part for part in records if isinstance(part, SourceRecords)]
            if not records or len(joinable) < len(records):
                yield from by_chunk(mode)
                return
            yield from zip(SourceRecords.joined(joinable), item_easy.tolist())

        return lines


def instance_labels(split, label_names: list[str]) -> np.ndarray:
    """Per instance: the NLI label index, or whether the MCQ choice is right (``RIGHT``)."""
    if split.task == Task.NLI:
        return split.item_labels(label_names)
    k = split.n_choices or 1
    gold = split.item_labels(label_names)
    return np.where(np.arange(k)[None, :] == gold[:, None], RIGHT, 1 - RIGHT).ravel()


def choice_count_error(choice_counts: Sequence[int]) -> UserError:
    """The word-cue statistics lay out ``k`` instances per MCQ item: one ``k`` for all."""
    return UserError("the word-cue statistics need the same number of choices in every item; "
                     "this dataset's items have "
                     f"{', '.join(map(str, sorted(set(choice_counts))))} choices")


def fold_keys(split: Split) -> np.ndarray:
    """Fold keys: the fingerprint of the ``--group-field`` value, else of the premise's normal
    form (MCQ: with the question), so that an item's siblings (the other hypotheses written for
    its premise) share its folds (docs/large-datasets.md)."""
    if split.groups and split.groups[0] is not None:
        return as_keys(b"".join(text_key(str(group)) for group in split.groups))
    return text_keys(split).context


def _check_known_labels(split: Split, fitting: ChunkedSplit) -> None:
    """A label of ``split`` that the (fully read) fitting split lacks is an error."""
    known = set(fitting.label_counts)
    for i, label in enumerate(split.labels):
        if label not in known:
            assert isinstance(split, CompactSplit)  # a loaded dataset's labels are checked
            raise unseen_label(label, fitting.path, sorted(known),
                               str(split.raw.paths[split.shard_of[i]]),  # type: ignore
                               split.line_of[i])


def check_chunk(split: Split, k: int, known: ChunkedSplit | None) -> None:
    """A chunk's items fit the statistics: MCQ ``k`` choices each (else
    :func:`choice_count_error`); NLI labels ``known`` to the fitting split (when there is
    one)."""
    if split.task == Task.MCQ:
        if set(split.choice_counts) - {k}:
            raise choice_count_error([k, *split.choice_counts])
    elif known is not None:
        _check_known_labels(split, known)


def encode_chunk(split: Split, include_premise: bool, words: Encoder,
                 features: Encoder | None, registry: dict
                 ) -> tuple[TokenSequences, TokenSequences, np.ndarray]:
    """A chunk's words (repeats kept; without the premise, from the normal forms its text keys
    kept, :func:`~cuelens.audit.text_keys.text_forms`), cue features (``features``; None:
    distinct words) and label codes (NLI: ``registry`` numbers values by first appearance; MCQ:
    whether right), the vocabularies growing in the order of first appearance."""
    texts = instance_texts(split, include_premise)
    forms = None if include_premise else text_forms(split)
    if forms is None:
        tokens = words.add(texts).flush()
    else:  # the hypotheses (choices) as the text keys cut them
        for batch in forms:
            words.add_encoded(form_sequences(batch))
        tokens = words.flush()
    seqs = first_occurrences(tokens) if features is None else features.add(texts).flush()
    if split.task == Task.MCQ:
        return tokens, seqs, instance_labels(split, MCQ_LABELS).astype(np.int16)
    codes = np.fromiter((registry.setdefault(v, len(registry)) for v in split.labels),
                        dtype=np.int16, count=len(split))
    return tokens, seqs, codes


@dataclass
class Loading:
    """What reading the data arguments builds up, whichever reader reads them: the chunked
    splits (``loaded``), the token store of the statistics' splits (``fitting``,
    ``evaluated``; spilled under ``directory``, else held in memory), their shared
    vocabularies and label registry (value → code)."""

    config: ScanConfig
    directory: Path | None
    fitting: str | None
    evaluated: str
    fields: FieldMap = FieldMap()
    skip_bad: bool = False
    chunk_items: int = CHUNK_ITEMS
    progress: Progress | None = None
    loaded: list[ChunkedSplit] = field(default_factory=list)
    store: TokenStore | None = None
    words: Encoder = field(default_factory=lambda: Encoder(repeats=True))
    features: Encoder | None = None
    registry: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.config.ngrams > 1:
            self.features = Encoder(self.config.ngrams)

    @property
    def work(self) -> Path:
        """Where a reader that spills (:meth:`cuelens.audit.ray_passes.RayPasses.read`) writes
        the chunks it reads."""
        assert self.directory is not None, "this reader spills its chunks"
        return self.directory

    def encodes(self, role: str) -> bool:
        return role in (self.fitting, self.evaluated)

    def known(self, role: str) -> ChunkedSplit | None:
        """The fitting split, whose labels the chunks of ``role`` must have (else None)."""
        return self.loaded[0] if role == self.evaluated and self.fitting is not None else None

    def open_store(self, task: str, k: int) -> TokenStore:
        """The token store, created for the first chunk of the statistics' splits."""
        if self.store is None:
            self.store = TokenStore(self.directory, task, k, 0)
        return self.store

    def add(self, role: str, split: Split, seqs: TokenSequences | None = None) -> None:
        """Encode one chunk of a statistics split (:func:`encode_chunk`, checked by
        :func:`check_chunk`; ``seqs``: its cue features already encoded) into the store, with
        its :func:`fold_keys`."""
        if split.task == Task.MCQ and split.n_choices is None:  # before a store with k = 1
            raise choice_count_error(split.choice_counts)
        store = self.open_store(split.task, split.n_choices or 1)
        check_chunk(split, store.k, self.known(role))
        # first, so that the words reuse their normal forms (not cut from them with the premise)
        text_keys(split, keep_forms=not self.config.include_premise)
        words, encoded, codes = encode_chunk(split, self.config.include_premise, self.words,
                                             self.features, self.registry)
        store.add(role == self.fitting, words, encoded if seqs is None else seqs, codes,
                  fold_keys(split))

    def finished(self, label_names: list[str]) -> TokenStore:
        """The store once every chunk is in: its label index of each registered label code
        (``label_names``: the statistics' labels; MCQ: :data:`MCQ_LABELS`) and vocabularies."""
        store = self.store
        assert store is not None
        registry = {name: name for name in MCQ_LABELS} if store.task == Task.MCQ \
            else self.registry  # MCQ instance labels are stored as MCQ_LABELS indices
        store.n_labels = len(label_names)
        store.label_map = np.asarray([label_names.index(v) if v in label_names else -1
                                      for v in registry], dtype=np.int64)
        store.words_vocab[:] = list(self.words.vocab)
        store.vocab[:] = store.words_vocab if self.features is None \
            else list(self.features.vocab)
        return store

    def report(self, role: str, items: int) -> None:
        if self.progress is not None:
            self.progress(f"{role}: {plural(items, 'item')}", 0.0)


#: Reads one data argument (source, role, task or None) into a :class:`Loading`.
Reader = Callable[[Loading, str, str, "str | None"], None]


def read_local(loading: Loading, source: str, role: str, task: str | None) -> None:
    """:data:`Reader` in this process: chunk by chunk (one in memory at a time, spilled under
    the loading's directory; without one, every chunk held in memory)."""
    for chunk in read_chunked(source, role, loading.fields, task, loading.skip_bad,
                              loading.directory, loading.chunk_items, loading.loaded):
        if loading.encodes(role):
            loading.add(role, chunk.split)
            loading.report(role, chunk.first + len(chunk.split))


def load_chunked(data: str | None, train: str | None, test: str | None, fields: FieldMap,
                 skip_bad: bool, config: ScanConfig, directory: Path | None,
                 chunk_items: int = CHUNK_ITEMS, progress: Progress | None = None,
                 reader: Reader = read_local) -> ChunkedData:
    """Read the data arguments into chunks under ``directory`` and encode the statistics'
    splits chunk by chunk (``reader``; locally one chunk in memory at a time, plus the
    vocabulary); without a ``directory`` the chunks and their tokens stay in memory
    (:func:`~cuelens.engine.chunks.held_in_memory`, :func:`read_local` only)."""
    from cuelens.engine.streaming import resolve_sources

    check_streamable(config.max_fit_items)
    sources, name, fmt = resolve_sources(data, train, test)
    roles = [role for role in ROLES if role in sources]
    fitting, evaluated = split_roles(roles)
    loading = Loading(config, directory, fitting, evaluated, fields, skip_bad, chunk_items,
                      progress)
    task = None
    for role in roles:
        reader(loading, sources[role], role, task)
        task = task or loading.loaded[-1].task
    loaded = loading.loaded
    splits = {split.name: split for split in loaded}
    if len({s.task for s in loaded}) > 1:
        raise UserError("the splits mix NLI and multiple-choice items", path=loaded[-1].path)
    fitted = splits[fitting or evaluated]
    check_scannable(fitted.task, fitted.label_counts, len(fitted), fitted.path)
    label_names = list(MCQ_LABELS) if fitted.task == Task.MCQ else sorted(fitted.label_counts)
    store = loading.finished(label_names)
    other = {role: split for role, split in splits.items() if role not in (fitting, evaluated)}
    roles_given = inferred_roles(fitting, evaluated,
                                 {role: Path(s.path).name for role, s in splits.items()})
    # keyed by the roles the statistics give the splits, as the exact scan's dataset keys them
    return ChunkedData(name, fmt, statistics_roles(splits[fitting] if fitting else None,
                                                   splits[evaluated], other),
                       "train" if fitting else None, "test" if fitting else "all", label_names,
                       store, split_roles=roles_given)


def held_data(dataset: Dataset, config: ScanConfig,
              tokens: TokenSequences | None = None) -> tuple[ChunkedData, GroupedFolds]:
    """What the exact statistics run on: ``dataset`` held in memory (:func:`held_store`) and its
    grouped, stratified folds (:class:`~cuelens.audit.folds.GroupedFolds`, docs/methods.md
    §3–4)."""
    check_cross_validation_folds(dataset.train is None, config.folds)
    return held_store(dataset, config, tokens), GroupedFolds.of(dataset, config.folds,
                                                               config.seed)


def held_store(dataset: Dataset, config: ScanConfig,
               tokens: TokenSequences | None = None) -> ChunkedData:
    """A loaded ``dataset`` as chunked data held in memory: one chunk per split
    (:meth:`~cuelens.engine.chunks.ChunkedSplit.held`), the statistics' splits encoded into a
    store in memory as :func:`load_chunked` encodes its chunks (:meth:`Loading.add`).

    ``tokens``: the cue features of the fitting-then-evaluated instance texts already encoded
    by an engine (e.g. shard by shard on Ray workers); they must equal what the config's
    n-grams encode."""
    if dataset.task == Task.MCQ and dataset.n_choices is None:
        raise choice_count_error(dataset.test.choice_counts)
    fitting = None if dataset.train is None else "train"
    loading = Loading(config, None, fitting, "all" if fitting is None else "test")
    loading.loaded = [ChunkedSplit.held(role, split) for role, split in dataset.splits.items()]
    if tokens is not None:
        loading.features = None  # the engine's features take the place of the n-grams
    first = 0
    for role in [fitting, loading.evaluated] if fitting else [loading.evaluated]:
        split = dataset.splits[role]
        n = len(split) * (dataset.n_choices or 1)
        loading.add(role, split, None if tokens is None else subset(tokens,
                                                                    np.arange(first, first + n)))
        first += n
    store = loading.finished(dataset.label_names)
    if tokens is not None:
        store.vocab[:] = list(tokens.vocab)
    return ChunkedData(dataset.name, dataset.format, {s.name: s for s in loading.loaded},
                       fitting, loading.evaluated, dataset.label_names, store,
                       split_roles=dataset.split_roles, loaded=dataset)
