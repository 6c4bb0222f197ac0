"""Applying operators to MCQ questions (docs/methods.md §7–8): parsing once, seeding, validity checks.

Shared by stress tests (:mod:`cuelens.augment.stress`) and augmentation
(:mod:`cuelens.augment.augmentation`).
"""

from __future__ import annotations

import json
import unicodedata
import zlib
from collections.abc import Iterable

import numpy as np

from cuelens.augment.operators import CORRECT, WRONG, OpContext, Operator
from cuelens.augment.operators.text import normalise
from cuelens.data.dataset import Split
from cuelens.data.schema import other_fields

SPACY_COMPONENTS = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "ner")
#: why the source items' ids must be unique (:meth:`~cuelens.data.dataset.Split.positions`)
SOURCE_IDS = "so that each written question's id and source_id name one source item"


def unique_id(new_id: str, taken: set[str]) -> str:
    """``new_id``, followed by ``'`` until it is none of the ``taken`` ids (source items' and
    earlier questions'), then taken too."""
    while new_id in taken:
        new_id += "'"
    taken.add(new_id)
    return new_id


def item_rng(seed: int, name: str, item: int, attempt: int = 0) -> np.random.Generator:
    """A generator fixed by (seed, operator, item): adding an operator changes no other output."""
    return np.random.default_rng([seed % 2**32, zlib.crc32(name.encode()), item, attempt])


def parse_texts(texts: Iterable[str], progress=None) -> dict[str, object]:
    """spaCy Docs of the unique ``texts`` (one batched pass through the shared pipeline), each
    parsed in its composed form (NFC): spaCy's English model cuts and tags a decomposed accent
    apart from its letter ("café." one token, "Renée" no name)."""
    from cuelens.models.spacy_pipeline import load_spacy

    unique = list(dict.fromkeys(texts))
    nlp = load_spacy(SPACY_COMPONENTS)
    docs = {}
    composed = (unicodedata.normalize("NFC", text) for text in unique)
    for text, doc in zip(unique, nlp.pipe(composed, batch_size=256)):
        docs[text] = doc
        if progress is not None:
            progress(1)
    return docs


def needed_texts(split: Split, ops: list[Operator]) -> list[str]:
    """Choices the parse-needing operators will read (correct ones, and wrong ones for adv/syn)."""
    sources = {op.source for op in ops if op.needs_parse}
    return [c for choices, label in zip(split.choices, split.labels)
            for j, c in enumerate(choices) if (CORRECT if j == label else WRONG) in sources]


def is_valid(choices: list[str]) -> bool:
    """No choice empty, none equal to another (so no wrong choice equals the correct one)."""
    keys = [normalise(c) for c in choices]
    return all(keys) and len(set(keys)) == len(keys)


def apply_operator(op: Operator, split: Split, i: int, ctx: OpContext, docs: dict,
                   target: int | None = None) -> list[str] | None:
    """The choices of question ``i`` with one wrong choice replaced by ``op``'s output, or None.

    ``target`` is the wrong choice to replace (default: drawn from ``ctx.rng``).
    """
    choices, label = split.choices[i], split.labels[i]
    wrong = [j for j in range(len(choices)) if j != label]
    j = target if target is not None else ctx.pick(wrong)
    text = choices[label] if op.source == CORRECT else choices[j]
    ctx.taken = frozenset(normalise(c) for c in choices)
    new = op.fn(docs[text] if op.needs_parse else text, ctx)
    if new is not None and op.needs_parse and not unicodedata.is_normalized("NFC", text):
        new = unicodedata.normalize("NFD", new)  # back to the source's decomposed form
    if new is None or normalise(new) in ctx.taken:
        return None
    out = list(choices)
    out[j] = new
    return out if is_valid(out) else None


def question_record(split: Split, i: int, choices: list[str] | None = None, **extra) -> dict:
    """A normalised MCQ record (docs/methods.md §1) for question ``i``, optionally with new choices,
    then its source record's other fields (:func:`~cuelens.data.schema.other_fields`: ids,
    metadata) and ``extra``."""
    record = {"id": split.ids[i], "premise": split.premises[i],
              "choices": list(choices if choices is not None else split.choices[i]),
              "label": int(split.labels[i])}
    if split.questions[i]:
        record["question"] = split.questions[i]
    if split.raw and split.raw[i]:
        record.update(other_fields(json.loads(split.raw[i]), split.overrides))
    record.update(extra)
    return record
