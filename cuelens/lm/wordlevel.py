"""What the word-level scorers (n-gram, LSTM/RNN) share: encoding, sentence sums, next-word
distributions and unknown words (docs/methods.md §9; docs/lm.md, "Word-level models")."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TypeGuard

import numpy as np

from cuelens.data.readers import read_json
from cuelens.errors import UserError
from cuelens.lm.text import BOS, EOS, UNK, WordSplitter, unknown_counts

TOKEN_CACHE_SIZE = 1 << 18


class WordLevelScorer:
    """Base class: subclasses set ``vocab``, ``index``, ``splitter``, ``name`` and implement
    :meth:`_logprobs` (log-probabilities of every word and ``</s>`` of id sequences) and
    :meth:`_next_logprobs` (log-probabilities of every vocabulary word after a prefix)."""

    vocab: list[str]
    index: dict[str, int]
    splitter: WordSplitter
    name: str
    open_vocab: bool = False

    def _logprobs(self, encoded: list[np.ndarray]) -> np.ndarray:
        """Flat array: for each sequence, ``len(ids) + 1`` log-probabilities (words, ``</s>``)."""
        raise NotImplementedError

    def _next_logprobs(self, prefix: np.ndarray) -> np.ndarray:
        """``log p(v | <s> prefix)`` for every vocabulary id ``v`` (a ``[V]`` array)."""
        raise NotImplementedError

    @staticmethod
    def _train_speller(words: list[list[str]]) -> WordLevelScorer:
        """The character model of ``open_vocab`` trained on ``words`` (lists of letters); every
        subclass uses :func:`cuelens.lm.ngram.train_speller`, which lives above this module."""
        raise NotImplementedError

    def ids(self, words: list[str]) -> np.ndarray:
        unk = self.index[UNK]
        return np.array([self.index.get(w, unk) for w in words], dtype=np.int64)

    def encode(self, sentence: str) -> tuple[list[str], np.ndarray]:
        """Words and ids; each whitespace token is split and looked up once per model (the
        synthetic search encodes tens of thousands of sentences differing in one word)."""
        cache = self.__dict__.setdefault("_token_cache", {})
        words: list[str] = []
        ids: list[int] = []
        for token in sentence.split():
            if token not in cache:
                if len(cache) >= TOKEN_CACHE_SIZE:
                    cache.clear()
                pieces = self.splitter.split_token(token)
                cache[token] = (pieces, self.ids(pieces).tolist())
            words += cache[token][0]
            ids += cache[token][1]
        return words, np.array(ids, dtype=np.int64)

    def unknown(self, words: list[str]) -> list[bool]:
        """Which of ``words`` (already split) are outside the vocabulary."""
        return [w not in self.index or w == UNK for w in words]

    def oov_counts(self, sentences: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(words, unknown words)`` per sentence, as the model splits them (``</s>`` excluded)."""
        return unknown_counts([self.splitter(s) for s in sentences], self.unknown)

    def _unique_logprobs(self, encoded: list[np.ndarray]) -> list[np.ndarray]:
        """Per sequence its ``len + 1`` log-probabilities; identical sequences are scored once."""
        keys = [ids.tobytes() for ids in encoded]
        unique = dict(zip(keys, encoded))
        flat = self._logprobs(list(unique.values()))
        ends = np.cumsum([len(ids) + 1 for ids in unique.values()])[:-1]
        pieces = dict(zip(unique, np.split(flat, ends)))
        return [pieces[key] for key in keys]

    def _word_logprobs(self, sentences: list[str]) -> tuple[list[list[str]], list[np.ndarray]]:
        encoded = [self.encode(s) for s in sentences]
        values = self._unique_logprobs([ids for _, ids in encoded])
        if self.open_vocab:
            values = [v + np.append(self.spelling_penalties(words), 0.0)
                      for (words, _), v in zip(encoded, values)]
        return [words for words, _ in encoded], values

    def score(self, sentences: list[str]) -> np.ndarray:
        if not sentences:
            return np.zeros(0)
        _, values = self._word_logprobs(list(sentences))
        return np.array([v.sum() for v in values], dtype=np.float64)

    def word_scores(self, sentence: str) -> list[tuple[str, float]]:
        words, values = self._word_logprobs([sentence])
        return list(zip([*words[0], EOS], values[0].tolist()))

    def next_word_logprobs(self, prefix: str, candidates: list[str]) -> np.ndarray:
        """``log p(candidate | prefix)`` of each whitespace word as the next word (docs/lm.md,
        "Next-word distributions and the synthetic search")."""
        words = self.splitter(prefix)
        prefix_ids = self.ids(words)
        table = self._next_logprobs(prefix_ids)
        split = [self.splitter(c) for c in candidates]
        out = np.empty(len(candidates), dtype=np.float64)
        longer = []
        for i, pieces in enumerate(split):
            if len(pieces) == 1:
                out[i] = table[self.ids(pieces)[0]]
                if self.open_vocab:
                    out[i] += self.spelling_penalties(pieces)[0]
            else:
                longer.append(i)
        if longer:
            texts = [" ".join([*words, *split[i]]) for i in longer]
            _, values = self._word_logprobs(texts)
            for i, v in zip(longer, values):
                out[i] = v[len(words):-1].sum()
        return out

    def spelling_penalties(self, words: list[str]) -> np.ndarray:
        """Per word: 0 in the vocabulary, else ``log p_spell(w) − log(1 − Σ_V p_spell)``
        (docs/lm.md, "Unknown words")."""
        unknown = [w not in self.index for w in words]    # a literal <unk> is not spelled
        out = np.zeros(len(words))
        if any(unknown):
            speller, log_rest = self._speller()
            spelled = [list(w) for w, u in zip(words, unknown) if u]
            out[np.flatnonzero(unknown)] = speller._sums(spelled) - log_rest
        return out

    def _speller(self):
        """The character model of the vocabulary's spelling and ``log(1 − Σ_V p_spell)``."""
        if getattr(self, "_spelling", None) is None:
            words = [list(w) for w in self.vocab if w not in (UNK, BOS, EOS)]
            speller = self._train_speller([*words, [UNK]])
            inside = float(np.exp(speller._sums(words)).sum())
            self._spelling = (speller, math.log1p(-min(inside, 1 - 1e-12)))
        return self._spelling

    def _sums(self, split: list[list[str]]) -> np.ndarray:
        """Log-probabilities (``</s>`` included) of already split sequences."""
        values = self._unique_logprobs([self.ids(words) for words in split])
        return np.array([v.sum() for v in values], dtype=np.float64)

    def perplexity(self, sentences: list[list[str]]) -> float:
        """``exp`` of the mean negative log-probability per word (``</s>`` included) of
        already split sentences."""
        return float(np.exp(-self._logprobs([self.ids(words) for words in sentences]).mean()))


def read_config(directory: Path, arch: str | tuple[str, ...]) -> dict:
    """The ``config.json`` of a saved word-level model, checked to be of ``arch``."""
    path = directory / "config.json"
    if not path.is_file():
        raise UserError("not a cuelens language-model directory (no config.json)",
                        path=str(directory))
    config = read_json(path)
    if not isinstance(config, dict):
        raise UserError("model config must be a JSON object", path=str(path))
    archs = (arch,) if isinstance(arch, str) else arch
    if config.get("arch") not in archs:
        raise UserError(f"model is a '{config.get('arch')}' model, not {' / '.join(archs)}",
                        path=str(path))
    return config


def is_whole(value: object, least: int) -> TypeGuard[int]:
    """A saved config's ``value`` is an integer (not a bool) of at least ``least``."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def is_number(value: object) -> TypeGuard[int | float]:
    """A saved config's ``value`` is an integer or a float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def checked_splitter(value: object, path: Path) -> WordSplitter:
    """The ``splitter`` field of a saved model's ``config.json`` as a :class:`WordSplitter`;
    one :class:`UserError` naming the file otherwise."""
    try:
        if not isinstance(value, dict):
            raise TypeError(value)
        return WordSplitter(**value)
    except TypeError:
        raise UserError(f"field 'splitter' is not a word-splitter setting: {value!r}",
                        path=str(path)) from None


def checked_vocab(directory: Path, size: int | None = None) -> list[str]:
    """``vocab.json``: a list of words (``size`` of them when given), else one error."""
    path = directory / "vocab.json"
    vocab = read_json(path)
    if not isinstance(vocab, list) or not all(isinstance(w, str) for w in vocab):
        raise UserError("vocab.json must be a list of words", path=str(path))
    if size is not None and len(vocab) != size:
        raise UserError(f"vocab.json has {len(vocab)} words but config.json's vocab_size is "
                        f"{size}", path=str(path))
    return vocab
