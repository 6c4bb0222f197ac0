"""Small in-memory datasets for the word-cue audit tests (no files, no real data), and the
BoW baseline's columns assembled as the scan builds them."""

from __future__ import annotations


import numpy as np

from cuelens.audit.results import LengthsSection
from cuelens.audit.counts import BigramColumns, TokenSequences, first_positions, kept_bigrams
from cuelens.data.dataset import MCQ_LABELS, Dataset, Split


def nli_split(name: str, hypotheses: list[str], labels: list[str]) -> Split:
    split = Split(name=name, path=f"{name}.jsonl", task="nli")
    for i, (hypothesis, label) in enumerate(zip(hypotheses, labels)):
        record = {"id": f"{name}{i}", "premise": "a premise", "hypothesis": hypothesis,
                  "label": label}
        split.append(record, raw=f"{{\"id\": \"{name}{i}\"}}", line=i + 1)
    return split


def mcq_split(name: str, choices: list[list[str]], labels: list[int]) -> Split:
    split = Split(name=name, path=f"{name}.jsonl", task="mcq")
    for i, (options, label) in enumerate(zip(choices, labels)):
        record = {"id": f"{name}{i}", "premise": "a context", "choices": options, "label": label}
        split.append(record, raw=f"{{\"id\": \"{name}{i}\"}}", line=i + 1)
    return split


def nli_dataset(train: tuple | None, test: tuple) -> Dataset:
    """``train``/``test``: (hypotheses, labels); ``train`` None → cross-validated file."""
    fit = nli_split("train", *train) if train is not None else None
    evaluate = nli_split("test" if train is not None else "all", *test)
    labels = sorted(set(test[1]) | (set(train[1]) if train is not None else set()))
    return Dataset(name="toy", format="jsonl", task="nli", train=fit, test=evaluate,
                   label_names=labels)


def mcq_dataset(train: tuple | None, test: tuple) -> Dataset:
    fit = mcq_split("train", *train) if train is not None else None
    evaluate = mcq_split("test" if train is not None else "all", *test)
    return Dataset(name="toy", format="jsonl", task="mcq", train=fit, test=evaluate,
                   label_names=list(MCQ_LABELS))


CONTRA_CUE, ENTAIL_CUE, CUE_RATE = "nobody", "outdoors", 0.6


def planted_nli(n: int, seed: int, n_fillers: int = 200, length: int = 5):
    """Uniform labels; a contradiction (entailment) hypothesis starts with ``nobody``
    (``outdoors``) with probability ``CUE_RATE``; the other words are uniform fillers."""
    rng = np.random.default_rng(seed)
    names = ["contradiction", "entailment", "neutral"]
    labels = [names[i] for i in rng.integers(0, 3, n)]
    hypotheses = []
    for label in labels:
        words = [f"w{j}" for j in rng.integers(0, n_fillers, length)]
        if label != "neutral" and rng.random() < CUE_RATE:
            words.insert(0, CONTRA_CUE if label == "contradiction" else ENTAIL_CUE)
        hypotheses.append(" ".join(words))
    return hypotheses, labels


def held(dataset, n_folds: int = 5, seed: int = 0, **config):
    """``dataset``'s token store held in memory and its grouped folds, as the exact scan has
    them (cuelens.audit.chunked_data.held_data)."""
    from cuelens.audit.chunked_data import held_data
    from cuelens.audit.config import ScanConfig

    data, folds = held_data(dataset, ScanConfig(folds=n_folds, seed=seed, **config))
    return data.store, folds


def store_words(store) -> TokenSequences:
    """Every instance's word ids in the store (fitting items first), repeats kept."""
    from cuelens.audit.passes import ragged

    return ragged([chunk.words for chunk in store.chunks()], store.words_vocab)


def _leakage_run(store, folds, options, n_folds, models, bow, **run):
    """The leakage run's passes over ``store`` in memory with its grouped ``folds``."""
    from cuelens.audit.fitting import ModelBank
    from cuelens.audit.passes import count_run, predict_run

    counts = count_run(store, folds, n_folds, options.seed, options.seed,
                       store.n_fitting == 0, options.max_fit_items)
    bank = ModelBank(options.seed)
    predict_run(store, counts, folds, n_folds, options.seed, options, bank, models, bow, **run)
    return bank


def item_correctness(dataset, options, n_folds, models, with_baselines=False) -> dict:
    """Per evaluated item, the correctness of every predictor of the leakage run."""
    from cuelens.audit.leakage import bow_name

    store, folds = held(dataset, n_folds, options.seed)
    out: dict = {}

    def sink(chunk_first, call, positions, results):
        for name, correct in results.items():
            out.setdefault(name, np.zeros(store.n_eval))[
                chunk_first - store.n_fitting + positions] = correct

    _leakage_run(store, folds, options, n_folds, models,
                 bow_name(store.task) if with_baselines else None, sink=sink)
    return out


def bias_probabilities(dataset, config, model) -> np.ndarray:
    """Every item's bias-only probabilities under ``model`` (fitting items first), as a scan
    whose headline it is gets them (cuelens.audit.chunk_scan.streamed_items): the evaluated
    items' from the leakage run's fold fits, the fitting items' refitted over their folds."""
    from cuelens.audit.leakage import all_models
    from cuelens.audit.scan import fitting_fits
    from cuelens.audit.passes import held_out_items, keep_model

    kept: list = []
    store, folds = held(dataset, config.folds, config.seed)
    bank = _leakage_run(store, folds, config.scoring, config.folds, all_models(), None,
                        kept=kept)
    parts = []
    if store.n_fitting:
        view, fitting = store.fitting_store(), folds.fitting()
        refit = fitting_fits(view, fitting, config, model, bank)
        parts += [held_out_items(view, refit, fitting, config.seed, model, chunk)
                  for chunk in view.chunks()]
    parts += [held_out_items(store, keep_model(kept, model), folds, config.seed, model, chunk)
              for chunk in store.chunks(fitting=False)]
    return np.concatenate(parts)


def bigram_columns(words: TokenSequences, fitted: np.ndarray, weights: np.ndarray,
                   min_count: int, rows: np.ndarray, chunk: int) -> BigramColumns:
    """The bag-of-words baseline's uni+bigram columns, computed from word ids.

    ``words``: :func:`encode` of the texts with ``repeats=True``. Kept: :func:`kept_bigrams`;
    columns numbered by first appearance over ``rows`` (which hold ``fitted``), read ``chunk``
    rows at a time. :meth:`BigramColumns.matrix` of ``rows`` then equals
    ``encode([texts[r] for r in rows], ngrams=2).matrix()`` restricted to the kept columns,
    while memory stays bounded by ``fitted`` and ``chunk`` (docs/methods.md §3).
    """
    kept = kept_bigrams(words, fitted, weights, min_count)
    first = np.full(len(kept), np.iinfo(np.int64).max)
    for start in range(0, len(rows), chunk):
        piece = rows[start:start + chunk]
        first = np.minimum(first, first_positions(words, piece, start + np.arange(len(piece)),
                                                  kept))
    return BigramColumns.ordered(kept, first)


def exact_mode(dataset, config):
    """The exact scan's :class:`~cuelens.audit.chunk_scan.ScanMode` of ``dataset`` (its
    grouped folds, their groups, the segmentation of the whole data), for chunks spilled to
    disk (cuelens.audit.pipeline.held_in_memory)."""
    from cuelens.audit.pipeline import held_in_memory
    from cuelens.audit.segmentation import scan_segmentation

    return held_in_memory(dataset, config, scan_segmentation(dataset, config.segmenter))[1]


def without_the_mode(results: dict) -> dict:
    """A scan's results.json but what names the memory mode (``config.statistics``, the note)."""
    config = {key: value for key, value in results["config"].items() if key != "statistics"}
    return {**{key: value for key, value in results.items() if key != "notes"},
            "config": config}


def length_section(dataset: Dataset, folds: int = 5, seed: int = 0) -> LengthsSection:
    """The ``lengths`` section of a dataset held in memory, the reference of the scan's
    (cuelens.audit.lengths.lengths_of_parts over its chunks; MCQ: nothing is fitted, so no
    folds are dealt)."""
    from cuelens.audit.item_parts import ItemParts
    from cuelens.audit.lengths import lengths_of_parts

    unfitted = np.zeros(len(dataset.test), dtype=np.int64) if dataset.task == "mcq" else None
    return lengths_of_parts(ItemParts.of_dataset(dataset, folds, seed, unfitted), dataset.task,
                            dataset.label_names)
