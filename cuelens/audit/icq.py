"""ICQ linguistic-feature cues (docs/methods.md §5): cueness of every feature value.

``cueness(f) = MSE(R_f) / exp(JSD(R_f, S_f))`` of the fitting / evaluation instances with f;
the support rule, the MCQ some-but-not-all rule (:func:`feature_masks` is per question) and the
cross-validated folds of a single file (:mod:`cuelens.audit.groups`) are in
docs/icq-features.md ("Cueness").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import repeat

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import jensenshannon

from cuelens.errors import option_name
from cuelens.audit.counts import TokenSequences
from cuelens.audit.features import Annotations, get_features
from cuelens.audit.features.annotate import annotate
from cuelens.audit.features.word import Word, word_annotations
from cuelens.audit.item_parts import ItemParts
from cuelens.audit.parse_cache import ParseCache
from cuelens.audit.results import FeatureRow, FeaturesSection
from cuelens.data.dataset import Dataset, Instances, Split, Task
from cuelens.errors import UserError

DIGITS = 6


def cueness(train_counts: np.ndarray, test_counts: np.ndarray) -> np.ndarray:
    """``MSE(R)/exp(JSD(R, S))`` per row of ``values × labels`` count matrices (rows > 0)."""
    train = train_counts / train_counts.sum(axis=1, keepdims=True)
    test = test_counts / test_counts.sum(axis=1, keepdims=True)
    mse = ((train - 1.0 / train.shape[1]) ** 2).mean(axis=1)
    jsd = jensenshannon(train, test, base=2, axis=1) ** 2
    return mse / np.exp(jsd)


class FeatureMatrix:
    """Instances × feature values of a dataset (binary CSR), with the MCQ rule applied.
    ``words``: the instances' words as a scan encoded them (WORD's values read from them,
    :func:`~cuelens.audit.features.word.word_annotations`, instead of tokenising again)."""

    def __init__(self, task: str, instances: Instances, names: Sequence[str] | None,
                 cache_dir=None, progress: Callable[[str, float], None] | None = None,
                 language: str = "en", words: TokenSequences | None = None):
        features = get_features(list(names) if names is not None else None, language)
        given = {Word.name: word_annotations(words)} if words is not None and any(
            f.name == Word.name for f in features) else {}
        annotations = annotate([f for f in features if f.name not in given], instances.texts,
                               instances.premises, ParseCache(cache_dir), progress) | given
        self.columns = [(f.label, value) for f in features for value in annotations[f.name].vocab]
        blocks = [annotations[f.name].matrix for f in features]
        matrix = sp.hstack(blocks, format="csr") if blocks else Annotations.empty(0).matrix
        self.instances = instances
        self.mcq = task == Task.MCQ
        self.items: sp.csr_matrix | None = None
        if self.mcq:
            self.items = self._item_matrix(matrix.astype(np.int64))
            self.matrix = matrix.multiply(self.items[instances.item]).tocsr().astype(bool)
        else:
            self.matrix = matrix.astype(bool)

    def _item_matrix(self, matrix: sp.csr_matrix) -> sp.csr_matrix:
        """Questions × values: the value is in some but not all of the question's choices."""
        item = self.instances.item
        n_items = int(item.max()) + 1 if len(item) else 0
        member = sp.csr_matrix((np.ones(len(item), dtype=np.int64), (item, np.arange(len(item)))),
                               shape=(n_items, len(item)))
        counts = (member @ matrix).tocsr()
        k = np.bincount(item, minlength=n_items)
        counts.data = counts.data < np.repeat(k, np.diff(counts.indptr))
        counts.eliminate_zeros()
        return counts.astype(bool)

    def label_counts(self, rows: np.ndarray, n_labels: int) -> np.ndarray:
        """``values × labels`` counts of the instances at ``rows``."""
        labels = self.instances.labels[rows]
        onehot = sp.csr_matrix((np.ones(len(rows)), (np.arange(len(rows)), labels)),
                               shape=(len(rows), n_labels))
        return np.asarray((self.matrix[rows].T.astype(np.float64) @ onehot).todense())

    def item_masks(self) -> dict[str, np.ndarray]:
        """``"FEATURE=value"`` → bool per item (MCQ: per question, by the some-not-all rule)."""
        table = self.items if self.items is not None else self.matrix
        dense = table.tocsc()
        return {f"{feature}={value}": dense[:, j].toarray().ravel()
                for j, (feature, value) in enumerate(self.columns)}


def parse_feature_option(value: str) -> list[str] | None:
    """``--features`` text → names: ``all`` → ``None`` (every feature), ``none`` → ``[]`` (skip
    the ICQ audit), else the comma-separated names (checked against the registry); a text naming
    nothing (``""``) is a :class:`UserError`, as it meant no features to the API and the default
    set to the CLI."""
    names = [name.strip().lower() for name in value.split(",") if name.strip()]
    if not names:
        raise UserError(f"{option_name('features')} names no feature: give feature names, "
                        f"'all' or 'none'")
    if names == ["all"]:
        return None
    if names == ["none"]:
        return []
    return [f.name for f in get_features(names)]


class FeatureTally:
    """``planes × values × labels`` counts of feature values summed over parts (splits, chunks)
    whose value vocabularies differ: a value's row is fixed by its ``(feature, value)`` column."""

    def __init__(self, planes: int, n_labels: int) -> None:
        self.index: dict[tuple[str, str], int] = {}
        self.counts = np.zeros((planes, 0, n_labels))

    def add(self, fm: FeatureMatrix, plane_of_instance: np.ndarray) -> None:
        """Add the label counts of ``fm``'s instances, each to its plane."""
        rows = [self.index.setdefault(column, len(self.index)) for column in fm.columns]
        grow = len(self.index) - self.counts.shape[1]
        if grow:
            self.counts = np.pad(self.counts, ((0, 0), (0, grow), (0, 0)))
        for plane in np.unique(plane_of_instance):
            self.counts[plane, rows] += fm.label_counts(np.flatnonzero(plane_of_instance == plane),
                                                        self.counts.shape[2])


def _dist(counts: np.ndarray, labels: list[str]) -> dict[str, float]:
    total = counts.sum()
    return {label: round(float(c / total), DIGITS) for label, c in zip(labels, counts)}


def _scores(counts: np.ndarray, cross_validated: bool, min_support: int):
    """Candidates, cueness, fitting and evaluation counts (docs/methods.md §5). Cross-validated:
    ``counts`` holds each fold's counts, R = the other folds, S = the fold, and a value needs the
    support in every fold; else ``counts`` is (fitting, evaluated)."""
    support = max(min_support, 1)
    if cross_validated:
        total = counts.sum(axis=0)
        pairs = [(total - c, c) for c in counts]
        ok = np.all([(r.sum(1) >= support) & (s.sum(1) >= support) for r, s in pairs], axis=0)
        score = np.mean([cueness(r[ok], s[ok]) for r, s in pairs], axis=0)
        return ok, score, total[ok], total[ok]
    train, test = counts
    ok = (train.sum(1) >= support) & (test.sum(1) >= support)
    return ok, cueness(train[ok], test[ok]), train[ok], test[ok]


def _part_progress(progress: Callable[[str, float], None] | None, split: Split, before: int,
                   total: int) -> Callable[[str, float], None] | None:
    """The progress of one part: its stage named after its split (``parse dev``) and, when the
    item count of all parts is known (``total``), its fraction counted over all of them, so
    that the stage runs once from 0 to 1 across the splits."""
    if progress is None:
        return None
    start, share = (before / total, len(split) / total) if total else (0.0, 1.0)
    return lambda stage, fraction: progress(f"{stage} {split.name}", start + share * fraction)


def feature_audit_of_parts(parts: Iterable[tuple[Split, np.ndarray]], *, task: str,
                           label_names: list[str], features: list[str] | None,
                           cross_validated: bool, folds: int, min_support: int = 10,
                           cache_dir=None,
                           progress: Callable[[str, float], None] | None = None,
                           language: str = "en",
                           words: Sequence[TokenSequences] | None = None,
                           total: int | None = None) -> dict:
    """The ``features`` and ``features_config`` sections of results.json (docs/methods.md §5)
    from ``parts``: splits (a whole split, or a chunk of one) of whole items, each with the
    plane of every item — its outer fold when ``cross_validated``, else 0 (fitting) or 1
    (evaluated). The one core of the in-memory scan (:func:`run_feature_audit`) and the
    streaming one (each chunk parsed on its own, counts summed). ``language``: the features
    that run on it (:meth:`~cuelens.audit.features.base.Feature.for_language`). ``words``:
    each part's instances' words as the scan encoded them for its cue table (WORD's values,
    docs/icq-features.md), else WORD tokenises the texts. ``total``: the items of all parts,
    for a progress that runs once from 0 to 1 over them (counted when ``parts`` is a
    sequence; parts read one at a time, e.g. chunks, need it given)."""
    chosen = [f.name for f in get_features(features, language)]
    labels = list(label_names)
    tally = FeatureTally(folds if cross_validated else 2, len(labels))
    if total is None:
        total = sum(len(split) for split, _ in parts) if isinstance(parts, Sequence) else 0
    done = 0
    for (split, plane_of_item), part_words in zip(parts, words or repeat(None)):
        instances = split.instances(labels)
        tally.add(FeatureMatrix(task, instances, chosen, cache_dir,
                                _part_progress(progress, split, done, total), language,
                                part_words), plane_of_item[instances.item])
        done += len(split)
    ok, score, train_counts, test_counts = _scores(tally.counts, cross_validated, min_support)
    columns = [c for c, keep in zip(tally.index, ok) if keep]
    order = sorted(range(len(columns)), key=lambda i: (-round(float(score[i]), DIGITS),
                                                       columns[i][0], columns[i][1]))
    rows_out = [FeatureRow(feature=columns[i][0], value=columns[i][1],
                           cueness=round(float(score[i]), DIGITS),
                           train_support=int(train_counts[i].sum()),
                           test_support=int(test_counts[i].sum()),
                           train_dist=_dist(train_counts[i], labels),
                           test_dist=_dist(test_counts[i], labels)) for i in order]
    if progress:
        progress("score", 1.0)
    return {"features": rows_out,
            "features_config": FeaturesSection(features=chosen, min_support=min_support,
                                               cv_folds_used=cross_validated)}


def run_feature_audit(dataset: Dataset, features: list[str] | None = None, min_support: int = 10,
                      cache_dir=None, progress: Callable[[str, float], None] | None = None, *,
                      folds: int = 5, seed: int = 0) -> dict:
    """:func:`feature_audit_of_parts` of a dataset in memory, its parts those of
    :meth:`ItemParts.of_dataset <cuelens.audit.item_parts.ItemParts.of_dataset>`: the fitting
    split (plane 0) and evaluated split (plane 1), or without a fitting split the evaluated items
    in ``folds`` seeded, grouped item-level folds (items sharing a premise or text stay in one
    fold, :mod:`cuelens.audit.groups`). ``features``: names from the registry (``None``: all).
    ``cache_dir``: parse cache directory (``None``: in-memory only). ``progress(stage,
    fraction)`` is called with stages ``parse <split name>`` (one fraction over all splits) and
    ``score``."""
    return feature_audit_of_parts(list(ItemParts.of_dataset(dataset, folds, seed).all()),
                                  task=dataset.task, label_names=dataset.label_names,
                                  features=features, cross_validated=dataset.train is None,
                                  folds=folds, min_support=min_support, cache_dir=cache_dir,
                                  progress=progress)


def feature_masks(dataset: Dataset, split_role: str, features: list[str],
                  cache_dir=None) -> dict[str, np.ndarray]:
    """``"FEATURE=value"`` → bool array over the items of ``dataset.splits[split_role]``.

    ``features`` holds feature names (``negation``: every value of the feature) and/or single
    cues (``NEGATION=present``, ``WORD=nobody``); a requested cue that never occurs maps to an
    all-false mask. MCQ: an item has the cue when some but not all of its choices do.
    """
    splits = dataset.splits
    if split_role not in splits:
        raise UserError(f"no split {split_role!r}; this dataset has {', '.join(splits)}")
    split = splits[split_role]
    whole = [f for f in features if "=" not in f]
    cues = [tuple(f.split("=", 1)) for f in features if "=" in f]
    names = list(dict.fromkeys(n.lower() for n in whole + [label for label, _ in cues]))
    masks = FeatureMatrix(dataset.task, split.instances(dataset.label_names), names,
                          cache_dir).item_masks()
    labels = {f.label for f in get_features(whole)} if whole else set()
    out = {key: mask for key, mask in masks.items() if key.split("=", 1)[0] in labels}
    for label, value in cues:
        key = f"{label.upper()}={value}"
        out[key] = masks.get(key, np.zeros(len(split), dtype=bool))
    return out
