"""One normalising pass over a split's texts, shared by grouping and data hygiene
(docs/methods.md §11, "Hygiene").

:func:`text_keys` normalises each text of a split once (:func:`normal_form`; a batch at a time,
compiled where the segmenter can: :meth:`~cuelens.audit.segmenters.Segmenter.form_array`),
hashes each distinct normal form of a batch once and keeps only its 64-bit fingerprint and word
count (~20 bytes per text), cached for the split's lifetime. A collision between different texts
has odds of about ``texts² / 2⁶⁵``.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain
from hashlib import blake2b
from typing import Generic, TypeVar

import numpy as np

from cuelens.audit.counts import row_starts
from cuelens.audit.tokenize import active_segmenter, batches, text_length, word_tokens
from cuelens.data.dataset import Task


T = TypeVar("T")


def normal_form(text: str) -> str:
    """Lower-cased word tokens (punctuation dropped, repeats and order kept) joined by spaces."""
    return " ".join(word_tokens(text))


KEY_BYTES = 8  # a text key's BLAKE2b digest size (a uint64)


def text_key(text: str) -> bytes:
    """A text's 64-bit fingerprint: 8-byte BLAKE2b of its UTF-8 bytes, the same on every run and
    machine (Python's ``hash`` is salted)."""
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES).digest()


def _keys_and_words(texts: Iterable[str], forms_kept: list | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The :func:`text_key` of each text's normal form as a ``uint64`` array, and its
    :func:`text_length` as an ``int64`` array; texts cut a batch at a time (compiled where the
    segmenter can, :meth:`~cuelens.audit.segmenters.Segmenter.form_array`), kept as compact
    buffers (no list of pairs). ``forms_kept``: receives each batch's Arrow normal forms (None
    for a batch cut one text at a time)."""
    segmenter = active_segmenter()
    keys, words = [], []
    counts: Sequence[int] | np.ndarray
    for batch in batches(texts):
        forms = segmenter.form_array(batch)
        if forms_kept is not None:
            forms_kept.append(forms)
        if forms is None:
            listed = segmenter.normal_forms(batch)
            keys.append(as_keys(b"".join(map(text_key, listed))))
            counts = [form.count(" ") + 1 if form else 0 for form in listed]
        else:
            keys.append(_array_keys(forms))
        if not segmenter.spaced:  # its lengths: letters and digits
            counts = list(map(text_length, batch))
        elif forms is not None:  # its words: those of the form (no word holds a space)
            counts = _array_words(forms)
        words.append(np.asarray(counts, dtype=np.int64))
    return (np.concatenate([*keys, np.zeros(0, dtype="<u8")]),
            np.concatenate([*words, np.zeros(0, dtype=np.int64)]))


def _array_keys(forms) -> np.ndarray:
    """The :func:`text_key` of each string of an Arrow array, each distinct one hashed once
    (its UTF-8 bytes, as ``text_key``'s: the distinct strings read as binary, no copy)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(forms)
    fingerprint = partial(blake2b, digest_size=KEY_BYTES)
    distinct = encoded.dictionary.cast(pa.large_binary()).to_pylist()
    keys = as_keys(b"".join(map(blake2b.digest, map(fingerprint, distinct))))
    return keys[encoded.indices.to_numpy()]


def _array_words(forms) -> np.ndarray:
    """The words of each normal form of an Arrow array (its spaces + 1; none when empty)."""
    import pyarrow.compute as pc

    spaces = pc.count_substring(forms, " ").to_numpy().astype(np.int64)
    return np.where(pc.binary_length(forms).to_numpy() > 0, spaces + 1, 0)


def as_keys(buffer: bytes | bytearray) -> np.ndarray:
    """Concatenated :func:`text_key` fingerprints as a ``uint64`` array."""
    return np.frombuffer(bytes(buffer), dtype="<u8")


_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2⁶⁴/φ, odd: the multiplier that combines two keys


def mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (a new array): a bijection of ``uint64`` that scatters nearby
    values; arithmetic wraps mod 2**64."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(30))
        x = x * _M1
        x = x ^ (x >> np.uint64(27))
        x = x * _M2
        return x ^ (x >> np.uint64(31))


def combine(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The fingerprint of an ordered pair of fingerprints (element-wise)."""
    with np.errstate(over="ignore"):
        return mix64(mix64(first) ^ (second + GOLDEN))


@dataclass(frozen=True)
class TextKeys:
    """Fingerprints and word counts of one split's normalised texts.

    ``premise``/``premise_words``: per item. ``context``: the premise with the MCQ question
    (:meth:`~cuelens.data.Split.premise_context`; NLI: the premise). ``text``/``text_words``:
    per instance — the hypothesis, or each choice — item ``i`` owning
    ``text[starts[i]:starts[i + 1]]``.
    """

    premise: np.ndarray
    premise_words: np.ndarray
    context: np.ndarray
    text: np.ndarray
    text_words: np.ndarray
    starts: np.ndarray

    @classmethod
    def of(cls, split, forms_kept: list | None = None) -> "TextKeys":
        """The keys of ``split``; ``forms_kept`` receives the Arrow normal forms of its
        ``text`` part, batch by batch (see :func:`_keys_and_words`)."""
        n = len(split)
        premise, premise_words = _keys_and_words(split.premises)
        if split.task == Task.NLI:
            counts, texts = np.ones(n, dtype=np.int64), split.hypotheses
        else:
            counts = np.fromiter(map(len, split.choices), dtype=np.int64, count=n)
            texts = chain.from_iterable(split.choices)
        text, text_words = _keys_and_words(texts, forms_kept)
        context = premise
        if split.task == Task.MCQ and any(split.questions):
            context = _keys_and_words(split.premise_context(i) for i in range(n))[0]
        return cls(premise=premise, premise_words=premise_words, context=context, text=text,
                   text_words=text_words, starts=row_starts(counts))

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Plain arrays (no pickle), e.g. to store them next to a chunk of a split."""
        return {f"text_keys.{name}": getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_arrays(cls, arrays) -> "TextKeys":
        return cls(**{name: arrays[f"text_keys.{name}"] for name in cls.__dataclass_fields__})

    def text_sets(self) -> np.ndarray:
        """Per item, the fingerprint of its texts as a multiset (MCQ: the option set in any
        order, so mirrored items match)."""
        item = np.repeat(np.arange(len(self.starts) - 1), np.diff(self.starts))
        return self._fold(self.text[np.lexsort((self.text, item))])

    def text_sequences(self) -> np.ndarray:
        """Per item, the fingerprint of its texts in their order (MCQ: the options as shown, so
        a copy with the options permuted differs)."""
        return self._fold(self.text)

    def _fold(self, texts: np.ndarray) -> np.ndarray:
        """Per item, its ``texts[starts[i]:starts[i + 1]]`` combined in that order."""
        sizes = np.diff(self.starts)
        out = np.zeros(len(sizes), dtype=np.uint64)
        for position in range(int(sizes.max()) if len(sizes) else 0):
            has = sizes > position
            out[has] = combine(out[has], texts[self.starts[:-1][has] + position])
        return out


class SplitCache(Generic[T]):
    """Values computed once per split object and kept while the split lives."""

    def __init__(self) -> None:
        self._values: dict[int, T] = {}

    def get(self, split) -> T | None:
        return self._values.get(id(split))

    def take(self, split) -> T | None:
        """The value of ``split``, forgotten."""
        return self._values.pop(id(split), None)

    def keep(self, split, value: T) -> T:
        self._values[id(split)] = value
        weakref.finalize(split, self._values.pop, id(split), None)
        return value


_TEXT_KEYS = SplitCache[tuple[str, TextKeys]]()  # with the segmenter that cut their words


_TEXT_FORMS = SplitCache[tuple[str, list]]()  # until taken by text_forms


def text_keys(split, keep_forms: bool = False) -> TextKeys:
    """The split's :class:`TextKeys`, computed on first use and kept while the split lives;
    ``keep_forms``: computing them, keep the normal forms of the ``text`` part for one
    :func:`text_forms` (the words of the instances are encoded from them, not cut again)."""
    cached = cached_text_keys(split)
    if cached is not None:
        return cached
    forms: list | None = [] if keep_forms else None
    keys = keep_text_keys(split, TextKeys.of(split, forms))
    if forms is not None and all(batch is not None for batch in forms):
        _TEXT_FORMS.keep(split, (active_segmenter().name, forms))
    return keys


def text_forms(split) -> list | None:
    """The normal forms of the split's ``text`` part (its hypotheses, or each choice) as Arrow
    arrays, batch by batch, kept by :func:`text_keys` under the active segmenter, and
    forgotten: None when none are kept."""
    kept = _TEXT_FORMS.take(split)
    return kept[1] if kept is not None and kept[0] == active_segmenter().name else None


def cached_text_keys(split) -> TextKeys | None:
    """The split's :func:`text_keys` if they are computed already with the active segmenter
    (None: not yet)."""
    cached = _TEXT_KEYS.get(split)
    return cached[1] if cached is not None and cached[0] == active_segmenter().name else None


def keep_text_keys(split, keys: TextKeys) -> TextKeys:
    """Cache ``keys`` (e.g. loaded from disk) as the :func:`text_keys` of ``split`` under the
    active segmenter."""
    return _TEXT_KEYS.keep(split, (active_segmenter().name, keys))[1]
