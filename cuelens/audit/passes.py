"""The word-cue statistics as passes over a token store's chunks (docs/methods.md §2–4,
docs/large-datasets.md "Statistics that stream"), one chunk in memory at a time, whichever memory
mode holds the store and whichever folds assign its items (:mod:`cuelens.audit.folds`).

The **token store** (:class:`TokenStore`) holds each chunk's token ids, labels and fold keys,
spilled to a directory (``.npy`` files read back memory-mapped) or held in memory, so memory is
bounded by the vocabulary, the chunk and the ``--max-fit-items`` cap:

- **counts** ``#(w, outer fold, inner fold, l)`` of a run are one pass (:func:`count_run`), with
  the fitting split in its own slot; a fit's counts are sums of slots;
- the **training sample** of every fit is drawn from candidates kept during that pass: per split
  and stratum, the items of lowest seeded priority (:class:`Candidates`), which hold the lowest
  ``quota`` of any fitting portion (whole items, label quotas by largest remainders,
  :func:`~cuelens.audit.fitting.stratum_quotas`);
- **predictions**: every outer fold's models are fitted in fold order, then one pass predicts
  each item with its fold's models (:func:`predict_run`), keeping per predictor only its number
  of correct items and, for the cue models, the moments of their per-item differences from the
  prior-matched baseline (the simultaneous test needs nothing more,
  :class:`~cuelens.audit.uncertainty.DifferenceMoments`).

Where the passes run: :class:`LocalPasses` (here) or Ray workers
(:class:`cuelens.audit.ray_passes.RayPasses`); their partial results merge by addition. With the
exact scan's grouped folds (:class:`~cuelens.audit.folds.GroupedFolds`) the passes give the
exact statistics; with hashed folds (:class:`~cuelens.audit.folds.HashedFolds`) they differ only
by the fold assignment.
"""

from __future__ import annotations

import copy
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Protocol

import numpy as np

from cuelens.atomic import size_text
from cuelens.audit.aggregators import one_blas_thread, representation_length_counted, \
    view_tokens
from cuelens.audit.bias_items import held_out_probabilities
from cuelens.audit.counts import BigramColumns, TokenSequences, first_positions, kept_bigrams, \
    row_starts
from cuelens.audit.evaluate import item_correct
from cuelens.audit.fitting import Fit, ModelBank, Sample, ScoringOptions, Trained, \
    instance_rows, score_items, stratum_quotas, train_models
from cuelens.audit.leakage import ANSWER_POSITION, BOW_MIN_COUNT, MAJORITY, PRIOR, BagOfWords, \
    add_differences
from cuelens.audit.uncertainty import DifferenceMoments
from cuelens.data.dataset import RIGHT, Task
from cuelens.engine.chunks import load_mapped, save_mapped
from cuelens.audit.folds import Folds
from cuelens.errors import UserError, option_name

COUNT_BINCOUNT_FACTOR = 16  # bincount while the count table has ≤ 16 cells per counted token
PREDICT_TABLE_BYTES = 512 * 2**20  # score tables of the folds predicted in one pass


@dataclass
class TokenChunk:
    """One chunk's statistics inputs: items ``first …`` of the scan (fitting split first), ``k``
    instances each (NLI 1, MCQ the choices)."""

    fitting: bool  # from the fitting split (else the evaluation split)
    first: int  # scan-wide index of its first item
    words: TokenSequences  # word ids per instance, repeats kept (the BoW input)
    seqs: TokenSequences  # cue features per instance (distinct, first-occurrence order)
    labels: np.ndarray  # label index per instance (MCQ: RIGHT or not)
    keys: np.ndarray  # fold key per item
    task: str
    k: int

    @property
    def items(self) -> np.ndarray:
        return np.arange(self.first, self.first + len(self.keys), dtype=np.int64)

    @property
    def answers(self) -> np.ndarray:
        """Per item: the NLI label, or the MCQ right choice's position."""
        return self.labels if self.task == Task.NLI else \
            np.argmax(self.labels.reshape(-1, self.k) == RIGHT, axis=1)

    @property
    def strata(self) -> np.ndarray:
        """Per item: its training-sample stratum (NLI: the label; MCQ: one stratum)."""
        return self.labels if self.task == Task.NLI else np.zeros(len(self.keys), np.int64)


@dataclass
class TokenStore:
    """The token chunks of a scan, spilled to ``directory`` (``.npy`` files, no pickle, read
    back memory-mapped: :func:`~cuelens.engine.chunks.save_mapped`) or, without one, held in
    memory; the shared vocabularies and the label index of each stored label code (known once
    every split is read)."""

    directory: Path | None
    task: str
    k: int
    n_labels: int
    vocab: list[str] = field(default_factory=list)  # cue features
    words_vocab: list[str] = field(default_factory=list)
    files: list[tuple[bool, int, Path | dict[str, np.ndarray]]] = field(default_factory=list)
    n_fitting: int = 0
    n_eval: int = 0
    max_length: int = 0
    label_map: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # code → label
    passes: ChunkPasses = field(default_factory=lambda: LocalPasses())  # where passes run

    def add(self, fitting: bool, words: TokenSequences, seqs: TokenSequences,
            labels: np.ndarray, keys: np.ndarray) -> None:
        arrays = token_arrays(words, seqs, labels, keys)
        source: Path | dict[str, np.ndarray] = arrays
        if self.directory is not None:
            source = save_mapped(token_path(self.directory, len(self.files)), arrays)
        self.add_file(fitting, len(keys), int(seqs.lengths.max(initial=0)), source)

    def add_file(self, fitting: bool, items: int, max_length: int,
                 source: Path | dict[str, np.ndarray]) -> None:
        """Count in the next chunk (``source``: its :func:`token_arrays` or their
        :func:`~cuelens.engine.chunks.save_mapped` directory)."""
        self.files.append((fitting, self.n_items, source))
        if fitting:
            self.n_fitting += items
        else:
            self.n_eval += items
        self.max_length = max(self.max_length, max_length)

    def chunks(self, fitting: bool | None = None) -> Iterator[TokenChunk]:
        """The chunks in scan order (``fitting``: only those of one split)."""
        for is_fitting, first, source in self.files:
            if fitting is not None and is_fitting != fitting:
                continue
            yield self._chunk(is_fitting, first,
                              source if isinstance(source, dict) else load_mapped(source))

    def chunk(self, file: tuple[bool, int, Path | dict[str, np.ndarray]]) -> TokenChunk:
        """The chunk of one entry of :attr:`files` (this store's or one it was copied from)."""
        (chunk,) = replace(self, files=[file]).chunks()
        return chunk

    def _chunk(self, fitting: bool, first: int, a) -> TokenChunk:
        return TokenChunk(fitting, first,
                          TokenSequences(a["words_indptr"], a["words"], self.words_vocab),
                          TokenSequences(a["seqs_indptr"], a["seqs"], self.vocab),
                          self.label_map[a["labels"]], a["keys"], self.task, self.k)

    @property
    def spilled(self) -> Path:
        """The directory of a spilled store (the scan's other work files go there too)."""
        assert self.directory is not None, "a store held in memory has no directory"
        return self.directory

    def candidates_kept(self, cap: int) -> int:
        """Training-sample candidates kept per (split, stratum) (:class:`Candidates`): twice
        the ``cap`` (a fitting portion misses one outer fold); every item without a cap."""
        return 2 * cap if cap > 0 else self.n_items

    def fitting_store(self) -> TokenStore:
        """The fitting split's chunks alone, as evaluation chunks (scan-wide item indices kept):
        a cross-validated run over them gives out-of-fold predictions of the fitting items."""
        files = [(False, first, path) for fitting, first, path in self.files if fitting]
        return replace(self, files=files, n_fitting=0, n_eval=self.n_fitting)

    def sizes(self) -> list[tuple[bool, int, int]]:
        """``(fitting, first item, items)`` of every chunk, in scan order."""
        ends = [first for _, first, _ in self.files[1:]] + [self.n_items]
        return [(fitting, first, end - first)
                for (fitting, first, _), end in zip(self.files, ends)]

    @property
    def n_items(self) -> int:
        return self.n_fitting + self.n_eval


def token_arrays(words: TokenSequences, seqs: TokenSequences, labels: np.ndarray,
                 keys: np.ndarray) -> dict[str, np.ndarray]:
    """A token chunk's arrays, as :meth:`TokenStore.chunks` reads them."""
    return {"words_indptr": words.indptr, "words": words.indices, "seqs_indptr": seqs.indptr,
            "seqs": seqs.indices, "labels": labels, "keys": keys}


def token_path(directory: Path, index: int) -> Path:
    """The directory of a spilled store's chunk ``index``
    (:func:`~cuelens.engine.chunks.save_mapped`)."""
    return directory / f"tokens-{index:06d}"


def ragged(parts: list[TokenSequences], vocab: list[str]) -> TokenSequences:
    indptr = row_starts(np.concatenate([p.lengths for p in parts]) if parts else [])
    indices = np.concatenate([p.indices for p in parts]) if parts else np.zeros(0, np.int32)
    return TokenSequences(indptr, indices.astype(np.int32, copy=False), vocab)


def subset(seqs: TokenSequences, rows: np.ndarray) -> TokenSequences:
    """The sequences ``rows`` of ``seqs``, as sequences of their own."""
    ids, lengths = seqs.take(rows)
    return TokenSequences(row_starts(lengths), ids, seqs.vocab)


@dataclass
class Candidates:
    """Per (split, stratum), the ``keep`` items of lowest priority seen so far, with their
    instances' labels and tokens (``k`` per item): every fitting portion's training sample is
    among them (docs/large-datasets.md)."""

    keep: int
    n_strata: int
    k: int
    priority: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    item: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    fitting: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    stratum: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    key: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    label: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # per instance
    seqs: TokenSequences | None = None
    words: TokenSequences | None = None

    def _take(self, rows: np.ndarray) -> None:
        for name in ("priority", "item", "fitting", "stratum", "key"):
            setattr(self, name, getattr(self, name)[rows])
        instances = instance_rows(rows, self.k)
        self.label = self.label[instances]
        assert self.seqs is not None and self.words is not None
        self.seqs, self.words = subset(self.seqs, instances), subset(self.words, instances)

    def _bounds(self) -> np.ndarray:
        """Per group, the priority a later item must be below to be kept: a full group's
        highest kept priority (a tie goes to the earlier item), no bound otherwise."""
        group = _group(self.stratum, self.fitting)
        full = np.bincount(group, minlength=2 * self.n_strata) >= self.keep
        bound = np.zeros(len(full), dtype=np.uint64)
        np.maximum.at(bound, group, self.priority)
        bound[~full] = np.iinfo(np.uint64).max
        return bound

    def add(self, chunk: TokenChunk, priority: np.ndarray) -> None:
        """Merge ``chunk``'s items, keeping the ``keep`` lowest priorities per group."""
        strata = chunk.strata
        mine = np.flatnonzero(priority < self._bounds()[_group(strata, chunk.fitting)])
        mine = mine[_lowest(priority[mine], strata[mine], self.keep)]
        instances = instance_rows(mine, self.k)
        self._append(Candidates(self.keep, self.n_strata, self.k, priority[mine],
                                chunk.items[mine], np.full(len(mine), chunk.fitting),
                                strata[mine], chunk.keys[mine], chunk.labels[instances],
                                subset(chunk.seqs, instances), subset(chunk.words, instances)),
                     slack=1)

    def merge(self, other: Candidates) -> None:
        """Merge the candidates of later items (``other``), keeping at least the ``keep``
        lowest priorities per group: the candidates of any split of the chunks into parts,
        merged in chunk order and then compacted (:meth:`compact`), are those of one pass
        (docs/large-datasets.md)."""
        if other.seqs is None or other.words is None:
            return
        later = copy.copy(other)  # less those it cannot keep: a merge costs what it keeps
        later._take(np.flatnonzero(later.priority
                                   < self._bounds()[_group(later.stratum, later.fitting)]))
        self._append(later, slack=2)

    def _append(self, later: Candidates, slack: int) -> None:
        """Add ``later`` candidates (none above a full group's bound); the groups are cut back
        to ``keep`` once one holds more than ``slack × keep``: a pass's own chunks at once
        (memory), the parts of a merge every few parts (a sort after each would cost more)."""
        assert later.seqs is not None and later.words is not None
        for name in ("priority", "item", "fitting", "stratum", "key", "label"):
            setattr(self, name, np.concatenate([getattr(self, name), getattr(later, name)]))
        self.seqs = ragged([s for s in (self.seqs, later.seqs) if s is not None],
                           later.seqs.vocab)
        self.words = ragged([w for w in (self.words, later.words) if w is not None],
                            later.words.vocab)
        if np.bincount(_group(self.stratum, self.fitting)).max(initial=0) > slack * self.keep:
            self.compact()

    def compact(self) -> None:
        """Keep the ``keep`` lowest priorities of each group, in item order."""
        self._take(_lowest(self.priority, _group(self.stratum, self.fitting), self.keep))


def _group(strata: np.ndarray, fitting: np.ndarray | bool) -> np.ndarray:
    """The candidates' group of each item: its stratum, in the fitting or evaluated split."""
    return strata * 2 + fitting


def _lowest(priority: np.ndarray, group: np.ndarray, keep: int) -> np.ndarray:
    """Indices of the ``keep`` lowest priorities of each group (ties: the earlier index), in
    index order: per group, a partition finds the ``keep``-th lowest priority, and the kept
    rows are read off a mask (no sort of the hundreds of thousands of candidates a pass holds)."""
    chosen = np.zeros(len(priority), dtype=bool)
    if keep <= 0:
        return np.flatnonzero(chosen)
    for g in np.flatnonzero(np.bincount(group)):
        rows = np.flatnonzero(group == g)
        if len(rows) > keep:
            mine = priority[rows]
            bound = np.partition(mine, keep - 1)[keep - 1]
            below = mine < bound
            below[np.flatnonzero(mine == bound)[:keep - int(below.sum())]] = True
            rows = rows[below]
        chosen[rows] = True
    return np.flatnonzero(chosen)


@dataclass
class RunCounts:
    """One run's counts. Slot ``o < O`` holds the evaluation items of outer fold ``o`` (all of
    them in slot 0 without outer folds, where they are not fitted on), slot ``O`` the fitting
    split: ``joint`` ``V × (O+1) × K × L``, ``labels`` ``(O+1) × K × L`` (instances),
    ``lengths`` ``(O+1) × (max length + 1)``, ``answers`` ``(O+1) × A`` (items per
    :attr:`TokenChunk.answers` value)."""

    joint: np.ndarray
    labels: np.ndarray
    lengths: np.ndarray
    answers: np.ndarray
    candidates: Candidates
    outer: bool

    def slots(self, fold: int | None) -> list[int]:
        """The slots of the fitting portion of outer fold ``fold`` (None: the fitting split)."""
        slots = [len(self.labels) - 1]
        if fold is not None:
            slots += [o for o in range(len(self.labels) - 1) if o != fold]
        return slots

    def portion(self, fold: int | None) -> tuple[np.ndarray, np.ndarray, int]:
        """Counts (``V × K × L``), label counts (``K × L``) and ``d`` of the fitting portion of
        outer fold ``fold`` (None: the fitting split alone): an outer fold's portion is every
        slot but its own, the counts summed over all slots (once per run) less that slot's
        (integers: exactly the sum over the others)."""
        slots = self.slots(fold)
        joint = self.joint[:, slots[0]] if fold is None else self.joint_total - self.joint[:, fold]
        return (joint.astype(np.float64), self.labels[slots].sum(axis=0).astype(np.float64),
                representation_length_counted(self.lengths[slots].sum(axis=0)))

    @cached_property
    def joint_total(self) -> np.ndarray:
        """``joint`` summed over every slot (``V × K × L``; after the last :meth:`merge`)."""
        return self.joint.sum(axis=1)

    def merge(self, other: RunCounts) -> None:
        """Add the counts of later chunks (``other``, same run): counts are sums over items."""
        self.__dict__.pop("joint_total", None)
        self.joint += other.joint
        self.labels += other.labels
        self.lengths += other.lengths
        self.answers += other.answers
        self.candidates.merge(other.candidates)


def _count(cells: np.ndarray, size: int) -> np.ndarray:
    """How often each of ``size`` cells occurs in ``cells``."""
    if size <= COUNT_BINCOUNT_FACTOR * max(len(cells), 1):
        return np.bincount(cells, minlength=size)
    found, counts = np.unique(cells, return_counts=True)
    out = np.zeros(size, dtype=np.int64)
    out[found] = counts
    return out


def count_chunks(store: TokenStore, folds: Folds, n_folds: int, fold_seed: int,
                 sample_seed: int, outer: bool, keep: int) -> RunCounts:
    """Pass 1 of a run over every chunk of ``store`` (all of a scan's, or some of them: the
    partial counts of a split of the chunks merge by :meth:`RunCounts.merge`)."""
    n_slots = (n_folds if outer else 1) + 1
    K, L, V, k = folds.inner_folds, store.n_labels, len(store.vocab), store.k
    A = L if store.task == Task.NLI else k
    counts = RunCounts(_count_table((V, n_slots, K, L)),
                       np.zeros((n_slots, K, L), dtype=np.int64),
                       np.zeros((n_slots, store.max_length + 1), dtype=np.int64),
                       np.zeros((n_slots, A), dtype=np.int64),
                       Candidates(keep, L if store.task == Task.NLI else 1, k), outer)
    joint, labels, lengths = counts.joint.reshape(-1), counts.labels.reshape(-1), counts.lengths
    answers, candidates, width = counts.answers.reshape(-1), counts.candidates, len(labels)
    for chunk in store.chunks():
        items = chunk.items
        slot = np.full(len(items), n_slots - 1) if chunk.fitting else \
            _assigned(folds, chunk, fold_seed, outer)
        answers += np.bincount(slot * A + chunk.answers, minlength=len(answers))
        column = np.repeat((slot * K + folds.inner(items, chunk.keys)) * L, k) + chunk.labels
        labels += np.bincount(column, minlength=width)
        seq_lengths = chunk.seqs.lengths
        lengths += np.bincount(np.repeat(slot, k) * lengths.shape[1] + seq_lengths,
                               minlength=lengths.size).reshape(lengths.shape)
        cells = chunk.seqs.indices.astype(np.int64) * width + np.repeat(column, seq_lengths)
        joint += _count(cells, len(joint))
        candidates.add(chunk, folds.priority(items, sample_seed))
    return counts


def _count_table(shape: tuple[int, int, int, int]) -> np.ndarray:
    """The zeroed ``V × slots × K × L`` count table; one it cannot hold in memory (it grows with
    the square of ``--folds``: outer × inner folds) is one error naming its size."""
    try:
        return np.zeros(shape, dtype=np.int64)
    except MemoryError:
        V, slots, K, L = shape
        raise UserError(f"the word counts of {slots - 1} outer × {K} inner folds ({V:,} words, "
                        f"{L} labels) need {size_text(8 * V * slots * K * L)} of memory; lower "
                        f"{option_name('folds')}, 5 by default") from None


def count_run(store: TokenStore, folds: Folds, n_folds: int, fold_seed: int, sample_seed: int,
              outer: bool, cap: int) -> RunCounts:
    """Pass 1 of a run on ``store.passes``: its :class:`RunCounts` (outer folds of
    ``fold_seed`` when ``outer``) and the sample candidates under ``sample_seed`` for a training
    cap of ``cap`` instances (:meth:`TokenStore.candidates_kept`)."""
    return store.passes.count(store, folds, n_folds, fold_seed, sample_seed, outer,
                              store.candidates_kept(cap))


def training_sample(counts: RunCounts, folds: Folds, fold: int | None, fold_seed: int,
                    cap: int, fold_labels: np.ndarray) -> tuple[Sample, np.ndarray]:
    """The capped training sample of a fitting portion (whole items of lowest priority per
    stratum, :func:`~cuelens.audit.fitting.stratum_quotas` by largest remainders: at most ``cap``
    instances), and its instance rows in the candidates, in item order."""
    c = counts.candidates
    assert c.seqs is not None
    member = c.fitting.copy()
    if fold is not None:
        evaluated = ~c.fitting
        member[evaluated] = folds.outer(c.item[evaluated], c.key[evaluated], fold_seed) != fold
    instances = fold_labels.sum(axis=0).astype(np.int64)
    # items per stratum: NLI one per label; MCQ one stratum of k instances per item
    sizes = instances if c.n_strata > 1 else np.asarray([instances.sum() // c.k])
    if 0 < cap < instances.sum():
        present = np.flatnonzero(sizes)
        quota = np.zeros(len(sizes), dtype=np.int64)
        quota[present] = stratum_quotas(sizes[present], max(1, cap // c.k))
    else:
        quota = sizes
    chosen = []
    for label in np.flatnonzero(quota):
        rows = np.flatnonzero(member & (c.stratum == label))
        if len(rows) < quota[label]:  # one fold holds most of a label's candidates
            raise UserError("too few distinct fold keys for streaming statistics: one fold "
                            "holds most items of a label (see --group-field); use --stats "
                            "exact")
        chosen.append(rows[_lowest(c.priority[rows], np.zeros(len(rows), np.int64),
                                   quota[label])])
    rows = np.concatenate(chosen) if chosen else np.zeros(0, np.int64)
    rows = rows[np.argsort(c.item[rows], kind="stable")]
    inner = np.repeat(folds.inner(c.item[rows], c.key[rows]), c.k)
    rows = instance_rows(rows, c.k)
    return Sample(c.seqs, rows, c.label[rows], inner), rows


@dataclass
class Tally:
    """Per predictor: evaluated items and correct items; for the cue ``models``, the moments of
    their per-item differences from the prior-matched baseline (all the simultaneous test
    needs, :func:`~cuelens.audit.leakage.add_differences`)."""

    models: list[tuple[str, str]]
    n: int = 0
    correct: dict = field(default_factory=dict)
    moments: DifferenceMoments = field(init=False)

    def __post_init__(self) -> None:
        self.moments = DifferenceMoments(len(self.models))

    def add(self, results: dict) -> None:
        self.n += len(results[MAJORITY])
        for name, correct in results.items():
            self.correct[name] = self.correct.get(name, 0.0) + float(np.sum(correct))
        add_differences(self.moments, results, self.models)

    def merge(self, other: Tally) -> None:
        """Add the tally of other items (``other``, same predictors): sums of 0/1 values,
        exact in any order."""
        self.n += other.n
        for name, correct in other.correct.items():
            self.correct[name] = self.correct.get(name, 0.0) + correct
        self.moments.merge(other.moments)

    def accuracy(self, name) -> float:
        return self.correct[name] / self.n


# (a chunk's first item, the tally call's key, positions, results): once per chunk and call
ItemSink = Callable[[int, str, np.ndarray, dict], None]


@dataclass(frozen=True)
class EasyCounters:
    """The easy/hard counters ``C[q]`` of a store's evaluated chunks (docs/methods.md §4): per
    chunk (by its first item), how often ``model`` predicted each item right, in a file of its
    own under ``directory`` (None: arrays in memory, ``held``). :meth:`add` is the
    :data:`ItemSink` of the easy/hard runs, called where the chunk is predicted (a Ray worker,
    or this process), so no per-item result reaches the driver; each chunk is one task of a
    tally call and the calls run one after another: one writer of a file at a time. A chunk's
    file is named by the calls added into it and the last one's key (``4.2.<key>.bin``)."""

    directory: Path | None
    dtype: str
    model: tuple[str, str]
    held: dict[int, np.ndarray] = field(default_factory=dict)

    @classmethod
    def zeros(cls, store: TokenStore, dtype: type, model: tuple[str, str]) -> EasyCounters:
        """Zero counters of ``store``'s evaluated chunks (a spilled store's in a new directory
        of its own there: sparse files, nothing written per item)."""
        evaluated = [(first, size) for fitting, first, size in store.sizes() if not fitting]
        if store.directory is None:
            return cls(None, np.dtype(dtype).str, model,
                       {first: np.zeros(size, dtype=dtype) for first, size in evaluated})
        counters = cls(Path(tempfile.mkdtemp(prefix="easy-", dir=store.directory)),
                       np.dtype(dtype).str, model)
        for first, size in evaluated:
            with open(counters._file(first, 0, "zeros"), "wb") as file:
                file.truncate(size * np.dtype(dtype).itemsize)
        return counters

    def _file(self, first: int, added: int, call: str) -> Path:
        assert self.directory is not None
        return self.directory / f"{first}.{added}.{call}.bin"

    def _files(self, first: int) -> list[tuple[int, str, Path]]:
        """Chunk ``first``'s counter files as (calls added, last call's key, path), newest
        last (an older one is left only by a worker that died between its write and its
        removal)."""
        assert self.directory is not None
        found = []
        for path in self.directory.glob(f"{first}.*.bin"):
            _, added, call = path.name[:-len(".bin")].split(".", 2)
            found.append((int(added), call, path))
        return sorted(found)

    def counter(self, first: int) -> np.ndarray:
        """The counters of chunk ``first`` (a spilled store's memory-mapped, read-only)."""
        return self.held[first] if self.directory is None else \
            np.memmap(self._files(first)[-1][2], dtype=self.dtype, mode="r")

    def add(self, first: int, call: str, positions: np.ndarray, results: dict) -> None:
        """Add ``model``'s correctness of items ``positions`` of chunk ``first`` in the tally
        call ``call``. A spilled store's add is made once per call, however often a task is
        rerun (Ray reruns one whose worker died): the sum goes to a new file, renamed into
        place, and an add whose call is the newest file's adds nothing."""
        if self.directory is None:
            if len(positions):
                self.held[first][positions] += results[self.model]
            return
        files = self._files(first)
        added, last, newest = files[-1]
        if last == call:
            return
        counter = np.fromfile(newest, dtype=self.dtype)
        if len(positions):
            counter[positions] += results[self.model]
        target = self._file(first, added + 1, call)
        counter.tofile(target.with_suffix(".part"))
        os.replace(target.with_suffix(".part"), target)
        for _, _, old in files:
            old.unlink(missing_ok=True)


def _bag_of_words(store: TokenStore, counts: RunCounts, folds: Folds, fold: int | None,
                  fold_seed: int, rows: np.ndarray, labels: np.ndarray) -> BagOfWords:
    """The BoW baseline fitted on sample ``rows`` of the candidates, its columns numbered by
    first appearance over the sample and the items it predicts in scan order (one pass over
    the evaluated chunks on ``store.passes``, :func:`_first_positions_part`)."""
    c, k = counts.candidates, store.k
    assert c.words is not None
    kept = kept_bigrams(c.words, rows, np.ones(len(rows)), BOW_MIN_COUNT)
    first = first_positions(c.words, rows, c.item[rows // k] * k + rows % k, kept)
    # the words' vocabulary is shipped: a bigram's key is computed from its size
    shared = (replace(store, vocab=[], files=[], passes=LocalPasses()), folds,
              fold_seed, counts.outer, fold, kept, first)
    for part in store.passes.map(_first_positions_part, shared,
                                 ((chunk,) for chunk in store.files if not chunk[0])):
        first = np.minimum(first, part)
    return BagOfWords.fit(BigramColumns.ordered(kept, first), c.words, rows, labels)


def _first_positions_part(shared: tuple[TokenStore, Folds, int, bool, int | None, np.ndarray,
                                        np.ndarray], chunk_file: tuple) -> np.ndarray:
    """Where each ``kept`` bigram key first appears among the items of one evaluated chunk
    that the outer fold ``fold`` predicts (:func:`~cuelens.audit.counts.first_positions`,
    bounded by the sample's positions ``first``; the minimum over chunks and the sample is
    the scan's)."""
    store, folds, fold_seed, outer, fold, kept, first = shared
    chunk = store.chunk(chunk_file)
    predicted = np.flatnonzero(_assigned(folds, chunk, fold_seed, outer) == (fold or 0))
    instances = instance_rows(predicted, store.k)
    return first_positions(chunk.words, instances, chunk.first * store.k + instances, kept,
                           first)


@dataclass
class FoldModels:
    """Everything fitted on one fitting portion, ready to predict its outer fold's items."""

    fold: int | None
    fit: Fit
    trained: Trained
    bow: BagOfWords | None
    prior_label: int  # the most frequent label of the items it predicts (PRIOR; NLI)
    position: int  # the most frequent right-answer position it was fitted on (MCQ)


def fit_fold(store: TokenStore, counts: RunCounts, folds: Folds, fold: int | None,
             fold_seed: int, options: ScoringOptions, bank: ModelBank,
             models: list[tuple[str, str]], with_bow: bool = False) -> FoldModels:
    """Every model (and the BoW baseline ``with_bow``) fitted on the fitting portion of outer
    fold ``fold`` (None: the fitting split) of a run's ``counts``."""
    inner, fold_labels, d = counts.portion(fold)
    sample, rows = training_sample(counts, folds, fold, fold_seed, options.max_fit_items,
                                   fold_labels)
    fit = Fit(inner, fold_labels, d, sample, options)
    # the bank's models are refitted (warm start) for the next fold: keep this fold's copy
    trained = copy.deepcopy(train_models(fit, models, bank, store.n_labels))
    bow = _bag_of_words(store, counts, folds, fold, fold_seed, rows, sample.labels) \
        if with_bow else None
    predicted = counts.labels[0 if fold is None else fold].sum(axis=0)
    position = counts.answers[counts.slots(fold)].sum(axis=0)
    return FoldModels(fold, fit, trained, bow, int(np.argmax(predicted)),
                      int(np.argmax(position)))


def _predict(store: TokenStore, chunk: TokenChunk, positions: np.ndarray, fitted: FoldModels,
             bow_name: str | None) -> dict:
    """Per-item results of ``fitted``'s predictors on items ``positions`` of ``chunk``: the cue
    models, the BoW baseline (given ``bow_name``; MCQ also the answer-position baseline), the
    majority and prior-matched baselines (MCQ: 1/k, docs/methods.md §3)."""
    fit, rows = fitted.fit, instance_rows(positions, store.k)
    labels = chunk.labels[rows]
    results: dict = score_items(fit, fitted.trained, labels,
                                view_tokens(chunk.seqs, rows, fit.seen), store.task, store.k)
    if fitted.bow is not None:
        decision = fitted.bow.decision(chunk.words, rows, store.n_labels)
        results[bow_name] = item_correct(decision, labels, store.task, store.k,
                                         fit.label_order)
    if store.task == Task.MCQ:
        if fitted.bow is not None:
            results[ANSWER_POSITION] = (chunk.answers[positions] == fitted.position).astype(
                np.float64)
        results[MAJORITY] = results[PRIOR] = np.full(len(positions), 1.0 / store.k)
    else:
        results[MAJORITY] = (labels == fit.label_order[0]).astype(np.float64)
        results[PRIOR] = (labels == fitted.prior_label).astype(np.float64)
    return results


def _assigned(folds: Folds, chunk: TokenChunk, fold_seed: int, outer: bool) -> np.ndarray:
    """Per item of ``chunk``: its outer fold under ``fold_seed`` (0 without ``outer`` folds)."""
    return folds.outer(chunk.items, chunk.keys, fold_seed) if outer else \
        np.zeros(len(chunk.keys), dtype=np.int64)


def fold_positions(folds: Folds, chunk: TokenChunk, fold_seed: int,
                   fitted: list[FoldModels], outer: bool
                   ) -> Iterator[tuple[FoldModels, np.ndarray]]:
    """Each of the ``fitted`` fold models with the positions of ``chunk``'s items it predicts
    (its outer fold under ``fold_seed``; every item when there are no ``outer`` folds), folds
    without an item skipped."""
    assigned = _assigned(folds, chunk, fold_seed, outer)
    for models in fitted:
        positions = np.flatnonzero(assigned == (models.fold or 0))
        if len(positions):
            yield models, positions


def _joined(fed: list[tuple[np.ndarray, dict]]) -> tuple[np.ndarray, dict]:
    """One chunk's (positions, results) of several fold models as one."""
    if not fed:
        return np.zeros(0, dtype=np.int64), {}
    return (np.concatenate([positions for positions, _ in fed]),
            {name: np.concatenate([results[name] for _, results in fed]) for name in fed[0][1]})


def tally_chunks(store: TokenStore, batch: list[FoldModels], folds: Folds, fold_seed: int,
                 outer: bool, models: list[tuple[str, str]], bow_name: str | None,
                 sink: ItemSink | None = None) -> Tally:
    """Pass 2 of a run over the evaluation chunks of ``store`` (all of a scan's, or some of
    them: partial tallies merge by :meth:`Tally.merge`): each item predicted by the fold models
    of ``batch`` that hold its outer fold, every predictor tallied, ``sink`` fed once per chunk
    with the call's key (its fold seed and folds).
    One BLAS thread: its matrix products (the cross moments, ``items × M`` by ``M``) are too
    small for a second, which only spins (several times the CPU time on a loaded machine)."""
    tally = Tally(models)
    call = "-".join(map(str, [fold_seed, *(fitted.fold for fitted in batch)]))
    with one_blas_thread():
        for chunk in store.chunks(fitting=False):
            fed = []
            for fitted, positions in fold_positions(folds, chunk, fold_seed, batch, outer):
                results = _predict(store, chunk, positions, fitted, bow_name)
                tally.add(results)
                if sink is not None:
                    fed.append((positions, results))
            if sink is not None:
                sink(chunk.first, call, *_joined(fed))
    return tally


class ChunkPasses(Protocol):
    """Where a run's two passes over the chunks of a store execute: :class:`LocalPasses`, or
    Ray workers (:class:`cuelens.audit.ray_passes.RayPasses`) whose partial results merge by
    addition (docs/large-datasets.md)."""

    def count(self, store: TokenStore, folds: Folds, n_folds: int, fold_seed: int,
              sample_seed: int, outer: bool, keep: int) -> RunCounts: ...

    def tally(self, store: TokenStore, batch: list[FoldModels], folds: Folds, fold_seed: int,
              outer: bool, models: list[tuple[str, str]], bow_name: str | None,
              sink: ItemSink | None) -> Tally: ...

    def map(self, part: Callable, shared: object, calls: Iterable[tuple]) -> Iterator:
        """``part(shared, *call)`` for each of ``calls`` (one per chunk), the results in order."""


class LocalPasses:
    """:class:`ChunkPasses` in this process, one chunk in memory at a time."""

    count = staticmethod(count_chunks)
    tally = staticmethod(tally_chunks)

    def map(self, part: Callable, shared: object, calls: Iterable[tuple]) -> Iterator:
        return (part(shared, *call) for call in calls)


def predict_run(store: TokenStore, counts: RunCounts, folds: Folds, n_folds: int,
                fold_seed: int, options: ScoringOptions, bank: ModelBank,
                models: list[tuple[str, str]], bow_name: str | None,
                sink: ItemSink | None = None, progress: Callable[[float], None] | None = None,
                kept: list[FoldModels] | None = None) -> Tally:
    """Pass 2 of a run: fit on each outer fold's portion (or on the fitting split) in fold
    order, then predict every evaluation item with its fold's models, chunk by chunk, and tally
    every predictor (cue models, the majority baseline, and the BoW baseline when ``bow_name``
    is given). Linear models warm-start from ``bank``. Folds whose score tables fit in
    :data:`PREDICT_TABLE_BYTES` together share one pass (on ``store.passes``).
    ``sink(first, call, positions, results)`` receives each chunk's per-item results once per
    tally call (``first``: the chunk's first item; ``call``: the call's key; ``positions``
    within the chunk) where the chunk is predicted (on a
    Ray worker: a picklable sink that writes files, :meth:`EasyCounters.add`); ``kept`` receives
    every fold's fitted models (without the BoW baseline), for :func:`held_out_decisions` of a
    model chosen after the pass."""
    tally = Tally(models)
    fold_list: list[int | None] = [None]
    if counts.outer:  # an empty outer fold has nothing to predict: nothing is fitted for it
        fold_list = [f for f in range(n_folds) if counts.labels[f].sum() > 0]
    metrics = len({metric for metric, _ in models})
    table_bytes = (len(store.vocab) + 1) * store.n_labels * 8 * metrics
    per_pass = max(1, PREDICT_TABLE_BYTES // max(table_bytes, 1))
    for start in range(0, len(fold_list), per_pass):
        batch = [fit_fold(store, counts, folds, fold, fold_seed, options, bank, models,
                          bow_name is not None) for fold in fold_list[start:start + per_pass]]
        if kept is not None:
            kept += [replace(fitted, bow=None) for fitted in batch]
        tally.merge(store.passes.tally(store, batch, folds, fold_seed, bool(counts.outer),
                                       models, bow_name, sink))
        if progress is not None:
            progress(min(start + per_pass, len(fold_list)) / len(fold_list))
    return tally


def keep_model(kept: list[FoldModels], model: tuple[str, str]) -> list[FoldModels]:
    """``kept`` fold models with only ``model`` left (the others' score tables freed)."""
    out = []
    for fitted in kept:
        full, mine = fitted.trained[model[0]]
        out.append(replace(fitted, trained={model[0]: (full, {model: mine[model]})}))
    return out


def held_out_items(store: TokenStore, kept: list[FoldModels], folds: Folds, fold_seed: int,
                   model: tuple[str, str], chunk: TokenChunk) -> np.ndarray:
    """The ``items × L`` bias-only probabilities of ``model`` on every item of ``chunk``
    (:func:`~cuelens.audit.bias_items.held_out_probabilities`), each from the models of its
    outer fold under ``fold_seed`` (``kept`` by :func:`predict_run`; one fit without outer
    folds): the held-out decisions behind that run's tallies, no refit."""
    out = np.zeros((len(chunk.keys), store.k if store.task == Task.MCQ else store.n_labels))
    outer = any(fitted.fold is not None for fitted in kept)
    for fitted, positions in fold_positions(folds, chunk, fold_seed, kept, outer):
        out[positions] = held_out_probabilities(fitted.fit, fitted.trained, model, chunk.seqs,
                                                instance_rows(positions, store.k), store.task,
                                                store.k, store.n_labels)
    return out


def check_streamable(max_fit_items: int) -> None:
    """Streaming statistics need a capped training sample."""
    if max_fit_items <= 0:
        raise UserError(f"streaming statistics ({option_name('stats')} streaming) need a "
                        f"training cap: {option_name('max_fit_items')} must be at least 1, not "
                        f"{max_fit_items}")
