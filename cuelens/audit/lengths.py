"""Text length per label: word counts per hypothesis (NLI) or per choice (MCQ) and the NLI
length-only baseline (docs/methods.md §4b).

>>> from cuelens.data.dataset import Split
>>> split = Split("toy", "toy.jsonl", "nli", hypotheses=["a dog", "a big dog runs"],
...               labels=["entailment", "neutral"])
>>> word_counts(split.hypotheses).tolist()
[2, 4]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from cuelens.audit.chance import exact_interval
from cuelens.audit.item_parts import ItemParts
from cuelens.audit.results import LengthBaseline, LengthsSection, LengthSummary
from cuelens.audit.text_keys import cached_text_keys
from cuelens.audit.tokenize import active_segmenter, text_length
from cuelens.data.dataset import Split, Task

MAX_WORDS = 40  # longer texts are counted in the last bin ("40 or more")
MAX_LEAVES = 8  # leaves of the length-only tree: a handful of length ranges
MIN_LEAF = 20  # fitting instances per leaf (no leaf for a few odd lengths)


def word_counts(texts: Sequence[str]) -> np.ndarray:
    """Word tokens per text (the tokenizer of the cue statistics, repeats counted; characters
    for scripts without spaces: :func:`~cuelens.audit.tokenize.text_length`)."""
    return np.fromiter(map(text_length, texts), dtype=np.int64, count=len(texts))


def length_unit(text: str) -> str:
    """What :func:`word_counts` counts per ``text`` with the active segmenter: ``words per
    hypothesis``, or ``characters per hypothesis`` (letters and digits) with a segmenter of
    scripts without spaces (docs/languages.md, "Lengths")."""
    return f"{'words' if active_segmenter().spaced else 'characters'} per {text}"


def text_word_counts(split: Split) -> np.ndarray:
    """:func:`word_counts` of the hypotheses (MCQ: of every choice, item by item), read off the
    split's :func:`~cuelens.audit.text_keys.text_keys` when they are computed already (the scan's
    grouping and hygiene compute them): no text is tokenised again."""
    keys = cached_text_keys(split)
    if keys is not None:
        return keys.text_words
    if split.task == Task.NLI:
        return word_counts(split.hypotheses)
    return word_counts([choice for choices in split.choices for choice in choices])


def _summary(counts: np.ndarray) -> LengthSummary:
    """n, histogram (texts with 0, 1, …, MAX_WORDS − 1 and at least MAX_WORDS words), mean and
    median of the texts counted in ``counts`` (texts per word count)."""
    n = int(counts.sum())
    wide = np.zeros(max(len(counts), MAX_WORDS + 1), dtype=np.int64)
    wide[:len(counts)] = counts
    histogram = [*wide[:MAX_WORDS].tolist(), int(wide[MAX_WORDS:].sum())]
    if not n:
        return LengthSummary(n=0, histogram=histogram)
    ranks = np.cumsum(counts)
    low, high = np.searchsorted(ranks, [(n - 1) // 2, n // 2], side="right")
    return LengthSummary(n=n, histogram=histogram,
                         mean=round(int(np.dot(np.arange(len(counts)), counts)) / n, 4),
                         median=(int(low) + int(high)) / 2)


def length_predictions(fit: np.ndarray, width: int) -> np.ndarray:
    """The label code that the hypothesis length alone predicts for each word count below
    ``width``: a decision tree fitted on ``fit`` (fitting instances per word count × label
    code; docs/methods.md §4b), i.e. on the distinct (length, label) pairs weighted by their
    counts, a leaf weighing at least MIN_LEAF − ½ (whole counts: MIN_LEAF instances): the
    splits of the tree on the instances, found in a few dozen rows. With fewer than 2 × MIN_LEAF
    instances (no split leaves MIN_LEAF a side) the tree is its root: the majority label (ties:
    the lowest code)."""
    from sklearn.tree import DecisionTreeClassifier

    n = int(fit.sum())
    if n < 2 * MIN_LEAF:
        return np.full(width, np.argmax(fit.sum(axis=0)), dtype=np.int64)
    lengths, labels = np.nonzero(fit)  # the pairs in (length, label) order
    tree = DecisionTreeClassifier(max_leaf_nodes=MAX_LEAVES, random_state=0,
                                  min_weight_fraction_leaf=(MIN_LEAF - 0.5) / n)
    tree.fit(lengths[:, None], labels, sample_weight=fit[lengths, labels])
    return tree.predict(np.arange(width)[:, None]).astype(np.int64)


@dataclass
class LengthTally:
    """Texts per plane × word count × label (:mod:`cuelens.audit.item_parts`), of the fitting
    and of the evaluated items, counted part by part: the lengths section's only state."""

    planes: int
    labels: int
    fitting: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 0), dtype=np.int64))
    evaluated: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 0), dtype=np.int64))

    def add(self, fitting: bool, words: np.ndarray, labels: np.ndarray,
            planes: np.ndarray) -> None:
        """Count texts of ``words`` words with label codes ``labels``, each in its plane."""
        width = max(self.evaluated.shape[1], int(words.max(initial=-1)) + 1)
        shape = (self.planes, width, self.labels)
        counts = np.bincount((planes * width + words) * self.labels + labels,
                             minlength=int(np.prod(shape))).reshape(shape)
        self.fitting, self.evaluated = (self._grown(table, width)
                                        for table in (self.fitting, self.evaluated))
        if fitting:
            self.fitting += counts
        else:
            self.evaluated += counts

    def _grown(self, table: np.ndarray, width: int) -> np.ndarray:
        out = np.zeros((self.planes, width, self.labels), dtype=np.int64)
        out[:table.shape[0], :table.shape[1], :table.shape[2]] = table
        return out

    def by_label(self) -> list[np.ndarray]:
        """Evaluated texts per word count, one array per label code."""
        whole = self.evaluated.sum(axis=0)
        return [whole[:, label] for label in range(self.labels)]

    def baseline_hits(self) -> tuple[int, int, int]:
        """Evaluated items whose label the length-only tree predicts, whose label is the
        majority label, and all evaluated items; each plane's tree fitted on the fitting items
        outside it (label codes: the sorted label names)."""
        hits = majority = 0
        fitted = self.fitting.sum(axis=0)
        for plane, held in enumerate(self.evaluated):
            rest = fitted - self.fitting[plane]
            if held.any() and rest.any():
                predicted = length_predictions(rest, len(held))
                hits += int(held[np.arange(len(held)), predicted].sum())
                majority += int(held[:, np.argmax(rest.sum(axis=0))].sum())
        return hits, majority, int(self.evaluated.sum())


def _nli_tally(parts: ItemParts, label_names: list[str]) -> LengthTally:
    """Hypotheses of ``parts`` by plane, word count and label code (the sorted
    ``label_names``, which order as the labels do: ties break as on the strings); a
    cross-fitted item counts as fitting too (for the other planes' trees)."""
    tally = LengthTally(parts.planes, len(label_names))
    codes = sorted(label_names)
    if not parts.cross_fitted:
        for split, planes in parts.fitting():
            tally.add(True, text_word_counts(split), split.item_labels(codes), planes)
    for split, planes in parts.evaluated():
        words, labels = text_word_counts(split), split.item_labels(codes)
        tally.add(False, words, labels, planes)
        if parts.cross_fitted:
            tally.add(True, words, labels, planes)
    return tally


def _mcq_tally(parts: ItemParts) -> LengthTally:
    """Choices of the evaluated parts by word count, label 0 the correct choice, 1 the others."""
    tally = LengthTally(1, 2)
    for split, _ in parts.evaluated():
        words = text_word_counts(split)
        starts = np.cumsum([0, *map(len, split.choices)])[:-1]
        other = np.ones(len(words), dtype=np.int64)
        other[starts + np.asarray(split.labels, dtype=np.int64)] = 0
        tally.add(False, words, other, np.zeros(len(words), dtype=np.int64))
    return tally


def length_baseline(tally: LengthTally, parts: ItemParts) -> LengthBaseline:
    """NLI: out-of-fold accuracy (exact Clopper–Pearson 95% interval) of the length-only tree,
    the majority label's on the same protocol and D, their difference
    (:meth:`LengthTally.baseline_hits`). Fitted on train, or on the other folds of the leakage
    table's folds."""
    hits, majority_hits, n = tally.baseline_hits()
    accuracy, majority = hits / n, majority_hits / n
    low, high = exact_interval(accuracy, n)
    return LengthBaseline(name="hypothesis length only", accuracy=round(accuracy, 6),
                          ci_low=round(float(low), 6), ci_high=round(float(high), 6),
                          majority=round(majority, 6), D=round(accuracy - majority, 6),
                          protocol=f"{parts.folds}-fold cross-fit" if parts.cross_fitted
                          else "train→test")


def lengths_of_parts(parts: ItemParts, task: str, label_names: list[str]) -> LengthsSection:
    """The ``lengths`` section (docs/results-schema.md) of the evaluated items of ``parts``
    (``task``'s texts: hypotheses, or choices),
    counted part by part: the in-memory scan's and the streamed scan's."""
    if task == Task.MCQ:
        correct, others = _mcq_tally(parts).by_label()
        return LengthsSection(unit=length_unit("choice"), max_words=MAX_WORDS,
                              by_label={"correct choice": _summary(correct),
                                        "other choices": _summary(others)})
    tally = _nli_tally(parts, label_names)
    per_code = dict(zip(sorted(label_names), tally.by_label()))
    by_label = {name: _summary(per_code[name]) for name in label_names if per_code[name].any()}
    return LengthsSection(unit=length_unit("hypothesis"), max_words=MAX_WORDS, by_label=by_label,
                          baseline=length_baseline(tally, parts))
