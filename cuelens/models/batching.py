"""Tokenise premise/text pairs once and serve them in padded batches: inference sorted longest
first and dynamically padded, training bucketed (docs/inference.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cuelens.data.dataset import Split, Task
from cuelens.errors import UserError


@dataclass
class EncodedUnits:
    """Token ids of every unit: ``ids[u]`` is a list of ``k`` id arrays (``k = 1`` for NLI)."""

    ids: list[list[np.ndarray]]
    type_ids: list[list[np.ndarray]] | None
    pad_id: int
    multiple_choice: bool

    @property
    def lengths(self) -> np.ndarray:
        return np.fromiter((max(len(a) for a in unit) for unit in self.ids), dtype=np.int64,
                           count=len(self.ids))

    def collate(self, index: np.ndarray) -> dict[str, np.ndarray]:
        """Pad the units at ``index`` to their longest member: arrays ``[B, T]`` or
        ``[B, k, T]``."""
        units = [self.ids[i] for i in index]
        shape = (len(units), len(units[0]), max(len(a) for unit in units for a in unit))
        batch = {"input_ids": np.full(shape, self.pad_id, dtype=np.int64),
                 "attention_mask": np.zeros(shape, dtype=np.int64)}
        if self.type_ids:
            batch["token_type_ids"] = np.zeros(shape, dtype=np.int64)
        for row, i in enumerate(index):
            for j, ids in enumerate(units[row]):
                batch["input_ids"][row, j, :len(ids)] = ids
                batch["attention_mask"][row, j, :len(ids)] = 1
                if self.type_ids:
                    batch["token_type_ids"][row, j, :len(ids)] = self.type_ids[i][j]
        if not self.multiple_choice:
            batch = {key: value[:, 0] for key, value in batch.items()}
        return batch


def encode_split(tokenizer, split: Split, max_length: int) -> EncodedUnits:
    """Tokenise every (premise, hypothesis/choice) pair of ``split`` in one fast-tokenizer call."""
    n = len(split)
    contexts = [split.premise_context(i) for i in range(n)]
    if split.task == Task.MCQ:
        k = split.n_choices
        if k is None:
            raise UserError("a multiple-choice model needs the same number of choices in every "
                            "item; this split's items vary", path=split.path)
        firsts = [c for c in contexts for _ in range(k)]
        seconds = [choice for choices in split.choices for choice in choices]
    else:
        k = 1
        firsts, seconds = contexts, list(split.hypotheses)
    encoded = tokenizer(firsts, seconds, truncation=True, max_length=max_length,
                        return_attention_mask=False)
    ids = [np.asarray(x, dtype=np.int64) for x in encoded["input_ids"]]
    types = encoded.get("token_type_ids")
    types = [np.asarray(x, dtype=np.int64) for x in types] if types is not None else None
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    return EncodedUnits(ids=[ids[u * k:(u + 1) * k] for u in range(n)],
                        type_ids=[types[u * k:(u + 1) * k] for u in range(n)] if types else None,
                        pad_id=pad_id, multiple_choice=split.task == Task.MCQ)


def sorted_batches(lengths: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Inference batches of units sorted by length, longest first."""
    order = np.argsort(-lengths, kind="stable")
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def bucketed_batches(lengths: np.ndarray, batch_size: int,
                     rng: np.random.Generator, chunk_batches: int = 50) -> list[np.ndarray]:
    """Training batches: shuffled, length-sorted within chunks, batch order shuffled (seeded)."""
    order = rng.permutation(len(lengths))
    chunk = batch_size * chunk_batches
    batches: list[np.ndarray] = []
    for start in range(0, len(order), chunk):
        part = order[start:start + chunk]
        part = part[np.argsort(lengths[part], kind="stable")]
        batches.extend(part[i:i + batch_size] for i in range(0, len(part), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]
