"""Text length per label (docs/methods.md §4b): words per hypothesis (NLI) or per choice (MCQ).

Annotators often write hypotheses of a typical length per label (SNLI: entailments are short,
neutral hypotheses add detail): a cue that no word list shows. The ``lengths`` section holds the
histograms and, for NLI, the length-only baseline that docs/methods.md §4b describes.

Example:
    >>> from cuelens.data.dataset import Split
    >>> split = Split("toy", "toy.jsonl", "nli", hypotheses=["a dog", "a big dog runs"],
    ...               labels=["entailment", "neutral"])
    >>> word_counts(split.hypotheses).tolist()
    [2, 4]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cuelens.audit.chance import exact_interval
from cuelens.audit.groups import split_folds
from cuelens.audit.text_keys import cached_text_keys
from cuelens.audit.tokenize import text_length
from cuelens.data.dataset import Dataset, Split, Task

MAX_WORDS = 40  # longer texts are counted in the last bin ("40 or more")
MAX_LEAVES = 8  # leaves of the length-only tree: a handful of length ranges
MIN_LEAF = 20  # fitting instances per leaf (no leaf for a few odd lengths)


def word_counts(texts: Sequence[str]) -> np.ndarray:
    """Word tokens per text (the tokenizer of the cue statistics, repeats counted; characters
    for scripts without spaces: :func:`~cuelens.audit.tokenize.text_length`)."""
    return np.fromiter(map(text_length, texts), dtype=np.int64, count=len(texts))


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


def histogram(counts: np.ndarray) -> list[int]:
    """Texts with 0, 1, …, MAX_WORDS − 1 and at least MAX_WORDS words."""
    return np.bincount(np.minimum(counts, MAX_WORDS), minlength=MAX_WORDS + 1).tolist()


def _summary(counts: np.ndarray) -> dict:
    return {"n": int(len(counts)), "histogram": histogram(counts),
            "mean": round(float(counts.mean()), 4) if len(counts) else None,
            "median": float(np.median(counts)) if len(counts) else None}


def _length_only(x_fit: np.ndarray, y_fit: np.ndarray, x_eval: np.ndarray,
                 y_eval: np.ndarray) -> np.ndarray:
    """1.0 per evaluated item whose label the hypothesis length alone predicts (a decision
    tree fitted on the fitting lengths ``x_fit`` and label codes ``y_fit``; docs/methods.md
    §4b). The tree is fitted on the distinct (length, label) pairs weighted by their counts
    (:func:`_pair_counts`), a leaf weighing at least MIN_LEAF − ½ (whole counts: MIN_LEAF
    instances): the splits of the tree on the instances, found in a few dozen rows."""
    from sklearn.tree import DecisionTreeClassifier

    if len(x_fit) < 2 * MIN_LEAF:  # no split leaves MIN_LEAF a side: the tree is its root
        return _majority(y_fit, y_eval)
    lengths, labels, weights = _pair_counts(x_fit, y_fit)
    tree = DecisionTreeClassifier(max_leaf_nodes=MAX_LEAVES, random_state=0,
                                  min_weight_fraction_leaf=(MIN_LEAF - 0.5) / len(x_fit))
    tree.fit(lengths[:, None], labels, sample_weight=weights)
    predicted = tree.predict(np.arange(x_eval.max(initial=0) + 1)[:, None])
    return (predicted[x_eval] == y_eval).astype(np.float64)


def _pair_counts(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (length, label code) pairs of ``x`` and ``y`` and how often each occurs."""
    n_labels = int(y.max()) + 1
    counts = np.bincount(x * n_labels + y)
    pairs = np.flatnonzero(counts)
    return pairs // n_labels, pairs % n_labels, counts[pairs]


def _majority(y_fit: np.ndarray, y_eval: np.ndarray) -> np.ndarray:
    """1.0 per evaluated item of the most frequent fitting label (ties: the lowest code)."""
    return (y_eval == np.argmax(np.bincount(y_fit))).astype(np.float64)


def _lengths_and_labels(split: Split, label_names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Word counts and label codes: indices into the sorted ``label_names``, which order as the
    labels do (ties break as on the strings)."""
    return text_word_counts(split), split.item_labels(sorted(label_names))


def length_baseline(dataset: Dataset, folds: int = 5, seed: int = 0) -> dict:
    """NLI: out-of-fold accuracy (exact Clopper–Pearson 95% interval) of the length-only tree,
    the majority label's on the same protocol and D, their difference. Fitted on train, or on
    the other folds of the leakage table's grouped folds; computed on length and label arrays
    (no per-fold copies of the items)."""
    x, y = _lengths_and_labels(dataset.test, dataset.label_names)
    if dataset.train is not None:
        x_fit, y_fit = _lengths_and_labels(dataset.train, dataset.label_names)
        hits, majority_hits = _length_only(x_fit, y_fit, x, y), _majority(y_fit, y)
    else:
        fold = split_folds(dataset.test, dataset.label_names, folds, seed)
        hits, majority_hits = np.zeros(len(y)), np.zeros(len(y))
        for j in range(folds):
            held, rest = fold == j, fold != j
            if held.any() and rest.any():
                hits[held] = _length_only(x[rest], y[rest], x[held], y[held])
                majority_hits[held] = _majority(y[rest], y[held])
    accuracy, majority = float(hits.mean()), float(majority_hits.mean())
    low, high = exact_interval(accuracy, len(hits))
    return {"name": "hypothesis length only", "accuracy": round(accuracy, 6),
            "ci_low": round(float(low), 6), "ci_high": round(float(high), 6),
            "majority": round(majority, 6), "D": round(accuracy - majority, 6),
            "protocol": "train→test" if dataset.train is not None else f"{folds}-fold cross-fit"}


def length_section(dataset: Dataset, folds: int = 5, seed: int = 0) -> dict:
    """results.json ``lengths`` (docs/results-schema.md) of the evaluated split."""
    split = dataset.test
    counts = text_word_counts(split)
    if dataset.task == Task.MCQ:
        starts = np.cumsum([0, *map(len, split.choices)])[:-1]
        is_correct = np.zeros(len(counts), dtype=bool)
        is_correct[starts + np.asarray(split.labels, dtype=np.int64)] = True
        correct, others = counts[is_correct], counts[~is_correct]
        return {"lengths": {"unit": "words per choice", "max_words": MAX_WORDS,
                            "by_label": {"correct choice": _summary(correct),
                                         "other choices": _summary(others)}}}
    labels = split.item_labels(dataset.label_names)
    by_label = {name: _summary(counts[labels == i]) for i, name in enumerate(dataset.label_names)
                if (labels == i).any()}
    return {"lengths": {"unit": "words per hypothesis", "max_words": MAX_WORDS,
                        "by_label": by_label,
                        "baseline": length_baseline(dataset, folds, seed)}}
