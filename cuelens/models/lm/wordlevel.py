"""What the word-level scorers (n-gram, LSTM/RNN) share: encoding and sentence sums (SPEC §9).

A sentence is ``splitter(sentence)`` mapped to vocabulary ids (unknown words → ``<unk>``) and
scored as ``Σ_i log p(w_i | w_<i) + log p(</s> | w)``; :meth:`word_scores` lists every word and
the final ``</s>`` so that the values add up to :meth:`score`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cuelens.data.readers import read_json
from cuelens.errors import UserError
from cuelens.models.lm.text import EOS, UNK, WordSplitter


class WordLevelScorer:
    """Base class: subclasses set ``vocab``, ``index``, ``splitter``, ``name`` and implement
    :meth:`_logprobs` (log-probabilities of every word and ``</s>`` of id sequences)."""

    vocab: list[str]
    index: dict[str, int]
    splitter: WordSplitter
    name: str

    def _logprobs(self, encoded: list[np.ndarray]) -> np.ndarray:
        """Flat array: for each sequence, ``len(ids) + 1`` log-probabilities (words, ``</s>``)."""
        raise NotImplementedError

    def ids(self, words: list[str]) -> np.ndarray:
        unk = self.index[UNK]
        return np.array([self.index.get(w, unk) for w in words], dtype=np.int64)

    def encode(self, sentence: str) -> tuple[list[str], np.ndarray]:
        words = self.splitter(sentence)
        return words, self.ids(words)

    def _flat(self, sentences: list[str]) -> tuple[np.ndarray, np.ndarray]:
        encoded = [self.encode(s)[1] for s in sentences]
        return self._logprobs(encoded), np.array([len(ids) + 1 for ids in encoded])

    def score(self, sentences: list[str]) -> np.ndarray:
        if not sentences:
            return np.zeros(0)
        logp, lengths = self._flat(list(sentences))
        return np.add.reduceat(logp, np.cumsum(lengths) - lengths)

    def word_scores(self, sentence: str) -> list[tuple[str, float]]:
        words, _ = self.encode(sentence)
        logp, _ = self._flat([sentence])
        return list(zip([*words, EOS], logp.tolist()))

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
