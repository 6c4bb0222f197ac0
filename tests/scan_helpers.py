"""Small in-memory datasets for the word-cue audit tests (no files, no real data)."""

from __future__ import annotations

import numpy as np

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
