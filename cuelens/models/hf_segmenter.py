"""A Hugging Face tokenizer as the word segmenter of a scan (``--segmenter hf:PATH``;
docs/languages.md): its pieces with the word-piece markers stripped are the words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cuelens.audit.segmenters import Segmenter

#: Word-piece markers: WordPiece continuation, SentencePiece and byte-level BPE word starts.
MARKERS = ("##", "\u2581", "\u0120")


def strip_marker(piece: str) -> str:
    """A tokenizer piece without its word-piece marker."""
    for marker in MARKERS:
        if piece.startswith(marker):
            return piece[len(marker):]
    return piece


@dataclass(frozen=True)
class HFSegmenter(Segmenter):
    """The pieces of a Hugging Face tokenizer, lower-cased, markers stripped, pieces without a
    letter or digit dropped."""

    tokenizer: Any = None

    def words(self, text: str) -> list[str]:
        pieces = (strip_marker(piece).lower() for piece in self.tokenizer.tokenize(text))
        return [piece for piece in pieces if any(char.isalnum() for char in piece)]


def load_hf_segmenter(name: str) -> HFSegmenter:
    """The tokenizer of ``name`` (``hf:PATH``: a local directory or a cached hub id)."""
    from transformers import AutoTokenizer

    from cuelens.models.hub import from_pretrained

    return HFSegmenter(name=name, spaced=False,
                       tokenizer=from_pretrained(AutoTokenizer, name.removeprefix("hf:")))
