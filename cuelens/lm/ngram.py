"""Word n-gram model with interpolated Kneser-Ney smoothing, NLTK's ``KneserNeyInterpolated``
vectorised (docs/methods.md §9; recursion and saved files: docs/lm.md)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from cuelens.errors import UserError
from cuelens.lm.text import BOS, EOS, UNK, WordSplitter, build_vocab
from cuelens.lm.wordlevel import (WordLevelScorer, checked_splitter, checked_vocab, is_number,
                                  is_whole, read_config)

SPELLING_ORDER = 3


@dataclass
class _Level:
    """Lookup tables of one order k: numerators keyed by k-gram, context statistics by
    (k−1)-gram."""

    gram_keys: np.ndarray      # sorted int64 keys of k-grams with a numerator
    gram_num: np.ndarray       # count (highest order) or continuation count
    ctx_keys: np.ndarray       # sorted int64 keys of contexts (empty tuple → key 0)
    ctx_den: np.ndarray        # c(h) or the continuation total
    ctx_types: np.ndarray      # N1+(h •): distinct words after h among the k-grams


def _keys(grams: np.ndarray, base: int) -> np.ndarray:
    keys = np.zeros(len(grams), dtype=np.int64)
    for column in range(grams.shape[1]):
        keys = keys * base + grams[:, column]
    return keys


def _lookup(sorted_keys: np.ndarray, values: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``values`` at ``query`` keys, 0 where a key is absent."""
    if len(sorted_keys) == 0:
        return np.zeros(len(query), dtype=values.dtype)
    index = np.minimum(np.searchsorted(sorted_keys, query), len(sorted_keys) - 1)
    return np.where(sorted_keys[index] == query, values[index], 0)


def _group(keys: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    unique, inverse = np.unique(keys, return_inverse=True)
    sums = np.bincount(inverse, weights=weights, minlength=len(unique))
    return unique, sums.astype(np.int64)


def _checked_config(config: dict, path: Path) -> tuple[int, float, WordSplitter]:
    """``order`` (an integer ≥ 2), ``discount`` (a number in [0, 1]) and the word splitter of
    an n-gram ``config.json``; one :class:`UserError` naming the field otherwise."""
    order, discount, splitter = (config.get(k) for k in ("order", "discount", "splitter"))
    if not is_whole(order, 2):
        raise UserError(f"field 'order' must be an integer of at least 2, got {order!r}",
                        path=str(path))
    if not (is_number(discount) and 0 <= discount <= 1):
        raise UserError(f"field 'discount' must be a number between 0 and 1, got {discount!r}",
                        path=str(path))
    return order, float(discount), checked_splitter(splitter, path)


def train_speller(words: list[list[str]]) -> NgramModel:
    """The character trigram model that spells unknown words of every word-level model with
    ``open_vocab`` (:mod:`cuelens.lm.wordlevel`)."""
    return NgramModel.train(words, order=SPELLING_ORDER)


class NgramModel(WordLevelScorer):
    """Interpolated Kneser-Ney n-gram model over a fixed vocabulary; implements
    ``SentenceScorer``."""

    _train_speller = staticmethod(train_speller)

    def __init__(self, vocab: list[str], counts: dict[int, tuple[np.ndarray, np.ndarray]],
                 order: int, discount: float, splitter: WordSplitter, name: str = "ngram"):
        if order < 2:
            raise UserError("n-gram order must be at least 2")
        if not 0 <= discount <= 1:  # what from_pretrained accepts; also refuses nan
            raise UserError(f"n-gram discount must be between 0 and 1, got {discount}")
        if float(len(vocab)) ** order >= 2.0 ** 62:
            raise UserError(f"order {order} is too high for a vocabulary of {len(vocab)} words")
        self.vocab, self.counts, self.order = vocab, counts, order
        self.discount, self.splitter, self.name = discount, splitter, name
        self.index = {word: i for i, word in enumerate(vocab)}
        self._levels = self._tables()

    # ----------------------------------------------------------------- training and storage
    @classmethod
    def train(cls, sentences: list[list[str]], order: int = 3, discount: float = 0.75,
              min_count: int = 1, splitter: WordSplitter | None = None) -> "NgramModel":
        """Count the padded everygrams (orders 1..n) of ``sentences`` (lists of words)."""
        vocab = [*build_vocab(sentences, min_count), BOS, EOS]
        index = {word: i for i, word in enumerate(vocab)}
        unk, bos, eos = index[UNK], index[BOS], index[EOS]
        pieces = [np.asarray([bos] * (order - 1) + [index.get(w, unk) for w in words] +
                             [eos] * (order - 1), dtype=np.int64) for words in sentences]
        flat = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
        sentence_of = np.repeat(np.arange(len(pieces)), [len(p) for p in pieces])
        counts = {}
        for k in range(1, order + 1):
            begin = np.arange(max(len(flat) - k + 1, 0))
            valid = sentence_of[begin] == sentence_of[begin + k - 1] if len(begin) else begin
            grams = np.stack([flat[begin[valid] + j] for j in range(k)], axis=1)
            unique, number = np.unique(grams, axis=0, return_counts=True)
            counts[k] = (unique.astype(np.int32), number.astype(np.int64))
        return cls(vocab, counts, order, discount, splitter or WordSplitter())

    def save_pretrained(self, directory: str | Path) -> None:
        from safetensors.numpy import save

        from cuelens.atomic import atomic_write_bytes
        from cuelens.jsonio import write_json

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        write_json(directory / "config.json", {
            "model_type": "cuelens-ngram", "arch": "ngram", "order": self.order,
            "discount": self.discount,
            "smoothing": "interpolated-kneser-ney (nltk.lm.KneserNeyInterpolated)",
            "splitter": asdict(self.splitter), "vocab_size": len(self.vocab)})
        write_json(directory / "vocab.json", self.vocab)
        arrays = {f"{kind}_{k}": np.ascontiguousarray(array) for k, pair in self.counts.items()
                  for kind, array in zip(("ngrams", "counts"), pair)}
        atomic_write_bytes(directory / "model.safetensors", save(arrays))

    @classmethod
    def from_pretrained(cls, directory: str | Path, name: str | None = None) -> "NgramModel":
        """A model saved by :meth:`save_pretrained` (or the older ``counts.npz`` layout)."""
        from safetensors import SafetensorError
        from safetensors.numpy import load_file

        directory = Path(directory)
        config = read_config(directory, "ngram")
        order, discount, splitter = _checked_config(config, directory / "config.json")
        vocab = checked_vocab(directory)
        try:
            if (directory / "model.safetensors").is_file():
                data = load_file(str(directory / "model.safetensors"))
            else:
                with np.load(directory / "counts.npz", allow_pickle=False) as npz:
                    data = dict(npz)
            counts = {k: (data[f"ngrams_{k}"], data[f"counts_{k}"])
                      for k in range(1, order + 1)}
        except (OSError, KeyError, ValueError, SafetensorError) as exc:  # a cut-short file
            raise UserError(f"cannot read n-gram counts: {exc}", path=str(directory)) from None
        return cls(vocab, counts, order, discount, splitter, name=name or f"ngram:{directory}")

    # ----------------------------------------------------------------- smoothing tables
    def _tables(self) -> list[_Level]:
        V, n = len(self.vocab), self.order
        keys = {k: _keys(grams.astype(np.int64), V) for k, (grams, _) in self.counts.items()}
        levels = []
        for k in range(1, n + 1):
            ctx_types = _group(keys[k] // V)
            if k == n:
                gram_keys, gram_num = keys[k], self.counts[k][1]
                ctx = _group(keys[k] // V, self.counts[k][1].astype(np.float64))
            else:   # continuation counts from the (k+1)-grams
                gram_keys, gram_num = _group(keys[k + 1] % V ** k)
                ctx = _group((keys[k + 1] // V) % V ** (k - 1)) if k > 1 else \
                    (np.zeros(1, dtype=np.int64), np.array([len(keys[2])], dtype=np.int64))
            levels.append(_Level(gram_keys, gram_num, ctx[0], ctx[1],
                                 _lookup(ctx_types[0], ctx_types[1], ctx[0])))
        return levels

    def _probabilities(self, history: np.ndarray, words: np.ndarray) -> np.ndarray:
        """p(word | history) for rows of ``history`` ([m, n−1] ids) and ``words`` ([m])."""
        V, d = len(self.vocab), self.discount
        p = None
        for k, level in enumerate(self._levels, start=1):
            context = history[:, history.shape[1] - (k - 1):] if k > 1 else history[:, :0]
            ctx_key = _keys(context, V)
            den = _lookup(level.ctx_keys, level.ctx_den, ctx_key).astype(np.float64)
            types = _lookup(level.ctx_keys, level.ctx_types, ctx_key).astype(np.float64)
            num = _lookup(level.gram_keys, level.gram_num, ctx_key * V + words).astype(np.float64)
            seen = (den > 0) & (types > 0)
            safe = np.where(seen, den, 1.0)
            alpha = np.maximum(num - d, 0.0) / safe
            if p is None:   # unigram level: continuation count / number of bigram types
                p = num / safe
                continue
            p = np.where(seen, alpha + d * types / safe * p, p)
        assert p is not None, "the model has at least the unigram level"
        return p

    # ----------------------------------------------------------------- scoring
    def _next_logprobs(self, prefix: np.ndarray) -> np.ndarray:
        """All vocabulary words after ``<s> prefix`` in one vectorised lookup."""
        n, V = self.order, len(self.vocab)
        history = np.concatenate([np.full(n - 1, self.index[BOS]), prefix])[-(n - 1):]
        with np.errstate(divide="ignore"):
            return np.log(self._probabilities(np.tile(history, (V, 1)).astype(np.int64),
                                              np.arange(V, dtype=np.int64)))

    def _logprobs(self, encoded: list[np.ndarray]) -> np.ndarray:
        n, bos, eos = self.order, self.index[BOS], self.index[EOS]
        lengths = np.array([len(ids) + 1 for ids in encoded], dtype=np.int64)
        padded = np.concatenate([np.concatenate([np.full(n - 1, bos), ids, [eos]])
                                 for ids in encoded]).astype(np.int64)
        ends = np.cumsum(lengths + n - 1)
        targets = np.concatenate([np.arange(e - length, e) for e, length in zip(ends, lengths)])
        history = np.stack([padded[targets - n + 1 + j] for j in range(n - 1)], axis=1)
        with np.errstate(divide="ignore"):
            return np.log(self._probabilities(history, padded[targets]))
