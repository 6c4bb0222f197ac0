"""A Hugging Face tokenizer as the word segmenter of a scan (``--segmenter hf:PATH``;
docs/languages.md): its pieces with the word-piece markers stripped are the words."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from cuelens.audit.segmenters import Segmenter
from cuelens.errors import UserError, option_name

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
    """The pieces of a Hugging Face tokenizer, lower-cased, markers stripped; special pieces
    (``[UNK]`` …) and pieces without a letter or digit dropped."""

    tokenizer: Any = None

    def words(self, text: str) -> list[str]:
        special = set(self.tokenizer.all_special_tokens)
        pieces = (strip_marker(piece).lower() for piece in self.tokenizer.tokenize(text)
                  if piece not in special)
        return [piece for piece in pieces if any(char.isalnum() for char in piece)]


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt")


def _no_hub_id(spec: str, path: Path) -> bool:
    """Whether ``spec`` (of ``hf:PATH``, ``path`` expanded) names a filesystem path rather than
    a hub id (``name`` or ``namespace/name``): empty, absolute, ``~``/``.``-relative, deeper
    than one ``/`` or an existing file."""
    return (not spec or path.is_absolute() or spec.startswith((".", "~")) or spec.count("/") > 1
            or path.exists())


@cache
def load_hf_segmenter(name: str) -> HFSegmenter:
    """The tokenizer of ``name`` (``hf:PATH``: a tokenizer directory — no model config needed —
    or a hub id, through :func:`~cuelens.models.hub.from_pretrained`), loaded once per process;
    one :class:`UserError` line naming the option and the path when it cannot load (a missing
    directory at once, before transformers is imported)."""
    spec = name.removeprefix("hf:")
    path = Path(spec).expanduser()
    where = f"{option_name('segmenter')} {name}"
    if not spec or not path.is_dir() and _no_hub_id(spec, path):
        raise UserError(f"{where}: no tokenizer directory at {spec or '(none given)'} (hf:PATH "
                        "takes a Hugging Face tokenizer directory or a hub id)")
    from transformers import AutoTokenizer

    from cuelens.models.hub import from_pretrained

    try:
        if not path.is_dir():
            tokenizer = from_pretrained(AutoTokenizer, spec)
        elif not any((path / file).is_file() for file in TOKENIZER_FILES):
            raise UserError(f"not a Hugging Face tokenizer directory (none of "
                            f"{', '.join(TOKENIZER_FILES)})")
        else:
            tokenizer = AutoTokenizer.from_pretrained(str(path))
    except (OSError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else \
            type(error).__name__
        raise UserError(f"{where}: cannot load its tokenizer: {first}") from None
    except UserError as error:
        raise UserError(f"{where}: {error}") from None
    return HFSegmenter(name=name, spaced=False, tokenizer=tokenizer)
