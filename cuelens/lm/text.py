"""Word splitting, vocabularies and input files for the language-model scorers
(docs/methods.md §9; the splitter: docs/lm.md, "Word-level models")."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any
from pathlib import Path

import numpy as np

from cuelens.audit.segmenters import (SEGMENTERS, UNSPACED_RE, Choice, characters,
                                      choose_segmenter, get_segmenter, script_of)
from cuelens.errors import UserError
from cuelens.outputs import check_output_name

UNK, BOS, EOS = "<unk>", "<s>", "</s>"
SAMPLE = 4000  # corpus lines read to choose the segmenter (as a scan reads 4,000 texts)
_EDGE_PUNCT = re.compile(r"^(\W*?)([\w].*?\w|\w)?(\W*)$", re.UNICODE)


@dataclass(frozen=True)
class WordSplitter:
    """How raw text becomes words for a word-level model (saved in the model's config); text is
    read in NFC, so decomposed input (macOS, some editors) finds the words of composed text.

    ``segmenter`` cuts runs of scripts written without spaces (Chinese, Japanese, Thai, …) into
    words: ``unicode`` keeps a run whole (models saved before this setting), ``chars`` cuts it
    into characters, ``chinese``/``japanese``/``thai`` use the scan's dictionary segmenters
    (docs/languages.md; docs/lm.md, "Word-level models")."""

    lowercase: bool = True
    detach_punct: bool = True
    segmenter: str = "unicode"

    def __post_init__(self) -> None:
        if self.segmenter not in SEGMENTERS:
            raise UserError(f"unknown word segmenter '{self.segmenter}' for a word-level model "
                            f"(use {', '.join(SEGMENTERS)})")

    def __call__(self, sentence: str) -> list[str]:
        return [word for token in sentence.split() for word in self.split_token(token)]

    def split_token(self, token: str) -> list[str]:
        """The words of one whitespace token."""
        if not unicodedata.is_normalized("NFC", token):
            token = unicodedata.normalize("NFC", token)
        text = token.lower() if self.lowercase else token
        if text in (UNK, BOS, EOS):   # PTB's <unk> etc. stay whole
            return [text]
        if not self.detach_punct:
            return self._segment(text)
        match = _EDGE_PUNCT.match(text)
        if match is None:       # cannot happen: every group is optional
            return [text]
        lead, core, tail = match.groups()
        if core:  # combining marks (a decomposed accent, a Devanagari vowel sign) are \W
            marks = next((i for i, c in enumerate(tail) if unicodedata.category(c)[0] != "M"),
                         len(tail))
            core, tail = core + tail[:marks], tail[marks:]
        return [*lead, *(self._segment(core) if core else []), *tail]

    def _segment(self, word: str) -> list[str]:
        """``word`` with its runs of unspaced scripts cut by :attr:`segmenter`; the text
        between runs is split as a whitespace token of its own."""
        if self.segmenter == "unicode" or not UNSPACED_RE.search(word):
            return [word]
        cut = _run_cutter(self.segmenter)
        pieces: list[str] = []
        position = 0
        for run in UNSPACED_RE.finditer(word):
            if run.start() > position:
                pieces += self.split_token(word[position:run.start()])
            pieces += cut(run.group())
            position = run.end()
        if position < len(word):
            pieces += self.split_token(word[position:])
        return pieces


@cache
def _run_cutter(name: str) -> Callable[[str], list[str]]:
    """How segmenter ``name`` cuts one run of an unspaced script into words: its dictionary
    for its own scripts, characters (with their combining marks) otherwise. ``chars`` gives
    characters only: the scan's added bigrams would repeat the text."""
    if name == "chars":
        return characters
    segmenter = get_segmenter(name)
    split_run = segmenter.split_run
    if split_run is None:
        return characters

    def cut(run: str) -> list[str]:
        if script_of(run) not in segmenter.runs:
            return characters(run)
        return [word for word in split_run(run) if word.strip()]

    return cut


def choose_splitter(lines: list[str], lowercase: bool = True, detach_punct: bool = True,
                    segmenter: str = "auto") -> tuple[WordSplitter, Choice]:
    """The splitter for a training corpus: ``auto`` picks the segmenter from the scripts of
    its first :data:`SAMPLE` lines as a scan does (docs/languages.md, "auto")."""
    if segmenter != "auto" and segmenter not in SEGMENTERS:
        raise UserError(f"unknown --segmenter '{segmenter}' for a word-level model "
                        f"(use auto, {', '.join(SEGMENTERS)})")
    choice = choose_segmenter(lines[:SAMPLE], segmenter)
    return WordSplitter(lowercase, detach_punct, choice.name), choice


def build_vocab(sentences: Iterable[list[str]], min_count: int = 1,
                max_size: int | None = None) -> list[str]:
    """Words seen at least ``min_count`` times (most frequent first, at most ``max_size``), plus
    UNK."""
    counts = Counter(word for words in sentences for word in words)
    for special in (UNK, BOS, EOS):
        counts.pop(special, None)
    kept = [w for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if c >= min_count]
    if max_size is not None:
        kept = kept[: max(max_size - 1, 0)]
    return [UNK, *kept]


def read_corpus(path: str | Path, splitter: WordSplitter) -> list[list[str]]:
    """One sentence per non-empty line of a UTF-8 text file (optionally .gz), split into words."""
    return [splitter(s) for s in corpus_lines(path)]


def corpus_lines(path: str | Path) -> list[str]:
    """Every non-blank line of a text file (optionally .gz), stripped; none is an error."""
    from cuelens.data.readers import text_lines

    lines = text_lines(path)
    if not lines:
        raise UserError("no sentences in file", path=str(path))
    return lines


JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet")  # read by column name, as datasets are


def suffix(path: Path) -> str:
    """The file's last suffix, lower-cased, a trailing ``.gz`` ignored (``""`` if none)."""
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    return suffixes[-1] if suffixes else ""


def check_jsonl_name(path: str | Path, gzip: bool = True) -> None:
    """An output of JSON Lines is named as the LM commands read such a file (``.jsonl``,
    ``.ndjson`` or ``.json``, and ``.gz`` when ``gzip``: ``scores.csv`` held JSON Lines);
    ``gzip=False`` for a file appended to line by line (plain lines after a gzip header were
    a file no reader could read)."""
    names = f"give --out a name ending in {', '.join(JSONL_SUFFIXES[:-1])} or {JSONL_SUFFIXES[-1]}"
    check_output_name(path, JSONL_SUFFIXES + tuple(s + ".gz" for s in JSONL_SUFFIXES),
                      f"this output is JSON Lines: {names}" + (" (optionally .gz)" if gzip else ""))
    if not gzip:
        check_output_name(path, JSONL_SUFFIXES, "this output is appended to line by line and "
                          f"cannot be gzipped: {names}")


def plain_lines(path: str | Path, option: str, unit: str = "sentence",
                keep_blank: bool = False) -> list[str]:
    """The lines of a text file read one ``unit`` (sentence, word) per line for ``option``; a
    JSON Lines, CSV, TSV or Parquet file (by its suffix) is refused, as each of its lines would
    be read as one (a JSON object scored as a sentence)."""
    from cuelens.data.readers import text_lines

    kind = suffix(Path(path))
    if kind in (*JSONL_SUFFIXES, *TABLE_SUFFIXES):
        raise UserError(f"{option} is read one {unit} per line, so each line of this {kind} "
                        f"file would be a {unit}: give a text file of one {unit} per line",
                        path=str(path))
    return text_lines(path, keep_blank=keep_blank)


def read_sentences(path: str | Path) -> tuple[list[int], list[str]]:
    """``(line numbers, sentences)`` to score: JSONL, CSV, TSV or Parquet with a ``"sentence"``
    field, or one sentence per line (any other file, e.g. ``.txt``: its blank lines are no
    sentences, and the line numbers count them)."""
    from cuelens.data.readers import open_lines

    path = Path(path)
    if suffix(path) not in (*JSONL_SUFFIXES, *TABLE_SUFFIXES):
        numbered = [(number, line.strip()) for number, line in open_lines(path) if line.strip()]
        if not numbered:
            raise UserError("no sentences in file", path=str(path))
        return [number for number, _ in numbered], [text for _, text in numbered]
    lines, sentences = [], []
    for number, record in _records(path):
        _check_fields(path, number, record, ("sentence",), "the sentences to score")
        sentence = record.get("sentence")
        if not isinstance(sentence, str) or not sentence.strip():
            raise UserError('expected a non-empty string field "sentence"', path=str(path),
                            line=number)
        lines.append(number)
        sentences.append(sentence.strip())
    return lines, sentences


@dataclass
class MinimalPairs:
    """Minimal pairs (BLiMP style): good/bad sentences with their paradigm and field, and the
    input line of each pair (a CSV's first pair is on line 2)."""

    good: list[str]
    bad: list[str]
    paradigm: list[str]
    field: list[str]
    lines: list[int]


def read_pairs(path: str | Path) -> MinimalPairs:
    """JSONL (optionally .gz; CSV, TSV or Parquet by their suffix) with ``sentence_good``/
    ``sentence_bad``; ``paradigm`` (or ``UID``) and ``field`` are optional (missing → ``"all"``)."""
    path = Path(path)
    pairs = MinimalPairs([], [], [], [], [])
    for number, record in _records(path):
        _check_fields(path, number, record, ("sentence_good", "sentence_bad"),
                      "the good and the bad sentence of each pair")
        good, bad = record.get("sentence_good"), record.get("sentence_bad")
        if not (isinstance(good, str) and isinstance(bad, str) and good.strip() and bad.strip()):
            raise UserError('expected non-empty string fields "sentence_good" and '
                            '"sentence_bad"', path=str(path), line=number)
        pairs.good.append(good.strip())
        pairs.bad.append(bad.strip())
        pairs.paradigm.append(str(record.get("paradigm") or record.get("UID") or "all"))
        pairs.field.append(str(record.get("field") or "all"))
        pairs.lines.append(number)
    return pairs


def _check_fields(path: Path, number: int, record: dict, names: tuple[str, ...],
                  holding: str) -> None:
    """Refuse a record without the fields ``names`` (which hold ``holding``), naming the file
    (and a JSONL file's line: a table's columns are the same on every row) and the fields it
    has (a CSV whose column is "text" read "line 2: expected a non-empty string field")."""
    missing = [name for name in names if name not in record]
    if not missing:
        return
    table = suffix(path) in TABLE_SUFFIXES
    kind = "column" if table else "field"
    wanted = " and ".join(f'"{name}"' for name in missing)
    present = ", ".join(f'"{name}"' for name in record) or "none"
    raise UserError(f"no {wanted} {kind}{'s' if len(missing) > 1 else ''} ({holding}); the "
                    f"{kind}s {'of this file' if table else 'of this line'} are {present}",
                    path=str(path), line=None if table else number)


def _records(path: Path) -> list[tuple[int, dict]]:
    """``(line, record)`` of a CSV, TSV or Parquet file (by its suffix) or else of a JSONL
    file; the first bad line, or no record, is an error naming the file."""
    from cuelens.data.readers import LineError, iter_records, jsonl_objects

    if suffix(path) in TABLE_SUFFIXES:
        records = []
        for number, _, record in iter_records(path, raw=False):
            if isinstance(record, LineError):
                raise record
            records.append((number, record))
    else:
        records = list(jsonl_objects(path))
    if not records:
        raise UserError("no records in file", path=str(path))
    return records


def unknown_counts(split: list[list[str]],
                   unknown: Callable[[list[str]], list[bool]]) -> tuple[np.ndarray, np.ndarray]:
    """``(words, unknown words)`` per sentence of already split sentences (``unknown``: which
    words a model does not know)."""
    return (np.array([len(words) for words in split], dtype=np.int64),
            np.array([sum(unknown(words)) for words in split], dtype=np.int64))


class SubwordScorer:
    """What the sub-word (Hugging Face) scorers share: a sentence's score is the sum of its
    :meth:`word_logprobs`; a word is unknown when the ``tokenizer`` spells it with its unknown
    token (byte-level tokenizers never do)."""

    tokenizer: Any

    def word_logprobs(self, sentences: list[str]) -> list[np.ndarray]:
        """Per-word log-probabilities of every sentence."""
        raise NotImplementedError

    def score(self, sentences: list[str]) -> np.ndarray:
        return np.array([w.sum() for w in self.word_logprobs(list(sentences))], dtype=np.float64)

    def unknown(self, words: list[str]) -> list[bool]:
        """Which whitespace ``words`` contain the tokenizer's unknown token."""
        unk = getattr(self.tokenizer, "unk_token_id", None)
        if unk is None or not words:
            return [False] * len(words)
        rows = self.tokenizer(list(words), add_special_tokens=False)["input_ids"]
        return [unk in row for row in rows]

    def oov_counts(self, sentences: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(words, unknown words)`` per sentence: whitespace words, with runs of scripts
        written without spaces cut by the segmenter a scan of ``sentences`` would choose
        (:func:`choose_splitter`; a Chinese sentence was one "word")."""
        splitter = unspaced_splitter(sentences)
        return unknown_counts([splitter(s) for s in sentences], self.unknown)


def unspaced_splitter(sentences: list[str]) -> WordSplitter:
    """Whitespace words, as written, with runs of scripts written without spaces cut by the
    segmenter a scan of ``sentences`` would choose (the words of sub-word models)."""
    splitter, _ = choose_splitter(sentences, lowercase=False, detach_punct=False)
    return splitter


def word_spans(sentence: str, splitter: WordSplitter) -> np.ndarray:
    """``[n, 2]`` character spans in ``sentence`` of its words under ``splitter`` (one that
    keeps case and punctuation: a whitespace token's words put together are the token in NFC,
    so decomposed text keeps its combining marks with their letters)."""
    spans = []
    for match in re.finditer(r"\S+", sentence):
        start, token = match.start(), match.group()
        for piece in splitter.split_token(token)[:-1]:
            end = next((end for end in range(start + 1, match.end())
                        if unicodedata.category(sentence[end])[0] != "M"
                        and unicodedata.normalize("NFC", sentence[start:end]) == piece), None)
            if end is None:     # cannot happen for such a splitter: keep the rest whole
                break
            spans.append((start, end))
            start = end
        spans.append((start, match.end()))
    return np.array(spans, dtype=np.int64).reshape(-1, 2)


def cut_unspaced(sentence: str, words: list[tuple[str, float]], tokens: list[list[int]],
                 offsets: np.ndarray, terms: np.ndarray) -> list[tuple[str, float]]:
    """A sub-word model's ``(word, log-probability)`` pairs with each word of a script written
    without spaces cut into the words of :func:`unspaced_splitter` (a Chinese sentence was one
    "word"). ``tokens``: each word's token indices into ``offsets`` (``[n, 2]`` character
    spans in ``sentence``) and ``terms`` (each token's share of its word's log-probability); a
    token across two segmenter words keeps them together (byte-level tokens may end mid-word)."""
    spans = word_spans(sentence, unspaced_splitter([sentence]))
    out = []
    for (text, value), index in zip(words, tokens):
        begin, end = offsets[index, 0], offsets[index, 1]
        first = np.searchsorted(spans[:, 0], begin, side="right") - 1
        last = np.searchsorted(spans[:, 0], np.maximum(end - 1, begin), side="right") - 1
        units: list[list[int]] = []
        reach = -1
        for k in range(len(index)):
            if first[k] > reach:
                units.append([])
            units[-1].append(k)
            reach = max(reach, last[k])
        if len(units) < 2:
            out.append((text, value))
            continue
        for unit in units:
            left = max(spans[first[unit[0]], 0], begin.min())
            right = min(spans[last[unit].max(), 1], end.max())
            out.append((sentence[left:right], float(terms[np.array(index)[unit]].sum())))
    return out
