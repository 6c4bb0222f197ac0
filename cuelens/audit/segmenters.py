"""Word segmenters: how every cue statistic cuts a text into words (docs/methods.md §1b, which
describes each, docs/languages.md).

One registry, :data:`SEGMENTERS` (name → factory), read by ``--segmenter`` and
:class:`~cuelens.audit.config.ScanConfig`; the words every segmenter reads:
:data:`TOKEN_PATTERN`; the scripts written without spaces, where they differ:
:data:`UNSPACED_SCRIPTS`. :func:`choose_segmenter` is ``auto``: it picks one from the scripts of
a sample of the texts.
"""

from __future__ import annotations

import re
import sys
import string
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.util import find_spec

import numpy as np

from cuelens.errors import UserError
from cuelens.registry import Registry

TOKEN_PATTERN = r"[^\W_]+(?=n't\b)|n't\b|'(?:s|re|ve|ll|d|m)\b|[^\W_]+"
TOKEN_RE = re.compile(TOKEN_PATTERN)
WORD_RE = re.compile(r"[^\W_]+")  # TOKEN_PATTERN on a text without an apostrophe, ⅓ faster

#: The scripts written without spaces between words, as code-point ranges (their Unicode blocks).
UNSPACED_SCRIPTS: dict[str, str] = {
    "han": "\u3005-\u3007\u3021-\u3029\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
           "\U00020000-\U0003134f",
    "kana": "\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f",
    "thai": "\u0e00-\u0e7f",
    "lao": "\u0e80-\u0eff",
    "khmer": "\u1780-\u17ff\u19e0-\u19ff",
    "myanmar": "\u1000-\u109f\ua9e0-\ua9ff\uaa60-\uaa7f",
}
#: A run of one unspaced script (Han and kana together: Japanese writes them in one word), so a
#: text that mixes scripts (Chinese with a Thai name) has each script's runs cut by its own rules.
UNSPACED_RE = re.compile("|".join(
    f"[{ranges}]+" for ranges in (UNSPACED_SCRIPTS["han"] + UNSPACED_SCRIPTS["kana"],
                                  *(r for name, r in UNSPACED_SCRIPTS.items()
                                    if name not in ("han", "kana")))))
_SCRIPT_RES = {name: re.compile(f"[{ranges}]") for name, ranges in UNSPACED_SCRIPTS.items()}
_ASCII_LETTERS = string.ascii_letters.encode()


def _char_class(codes: Iterable[int]) -> str:
    """The ranges of ascending code points ``codes``, written for a regex character class."""
    ranges: list[list[int]] = []
    for code in codes:
        if ranges and code == ranges[-1][1] + 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
                   for a, b in ranges)


#: Where Unicode puts every Extended_Pictographic character (emoji-data.txt).
_PICTOGRAPHIC_BLOCKS = (range(0xA9, 0x3300), range(0x1F000, 0x1FFFE))


def emoji_pattern() -> str:
    """One emoji as a regex: a pictograph (Unicode Extended_Pictographic) with its variation
    selector, skin tone, tag or keycap marks, joined by ZWJ to the next one (👨‍👩‍👧), or a
    flag (a pair of regional indicators): one grapheme cluster."""
    import regex

    text = "".join(map(chr, (code for block in _PICTOGRAPHIC_BLOCKS for code in block)))
    found = regex.findall(r"\p{Extended_Pictographic}", text)
    pictograph = f"[{_char_class(map(ord, found))}]"
    marks = "[\ufe0f\u20e3\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f]*"
    return (f"(?:[\U0001f1e6-\U0001f1ff]{{1,2}}|{pictograph}{marks}"
            f"(?:\u200d{pictograph}{marks})*)")


@cache
def marked_patterns() -> tuple[re.Pattern, re.Pattern]:
    """:data:`TOKEN_PATTERN` and :data:`WORD_RE` with combining marks (Mn/Mc/Me) inside words
    (Python's ``\\w`` has none: it would cut ``नमस्ते`` at its virama), and each emoji a word
    of its own (:func:`emoji_pattern`)."""
    marks = _char_class(code for code in range(sys.maxunicode + 1)
                        if unicodedata.category(chr(code))[0] == "M")
    word = f"(?:[^\\W_]|[{marks}])+"
    emoji, token = emoji_pattern(), TOKEN_PATTERN.replace(r"[^\W_]+", word)
    return re.compile(f"{token}|{emoji}"), re.compile(f"(?:{word}|{emoji})")


def characters(run: str) -> list[str]:
    """The characters of ``run``, each with the combining marks that follow it."""
    chars: list[str] = []
    for char in run:
        if chars and unicodedata.category(char)[0] == "M":
            chars[-1] += char
        else:
            chars.append(char)
    return chars


def char_grams(run: str) -> list[str]:
    """Character unigrams then bigrams of a run of an unspaced script (``chars``)."""
    chars = characters(run)
    return chars + [a + b for a, b in zip(chars, chars[1:])]


@dataclass(frozen=True)
class Segmenter:
    """Cuts a text into lower-cased word tokens, repeats kept, in order (docs/methods.md §1).

    ``split_run`` cuts a run of an unspaced script (None: the run is one word); ``runs``: the
    unspaced scripts it cuts with ``split_run`` (others get :func:`char_grams`)."""

    name: str
    split_run: Callable[[str], list[str]] | None = None
    runs: frozenset[str] = frozenset(UNSPACED_SCRIPTS)
    spaced: bool = True  # lengths count words (False: characters, for unspaced scripts)

    def words(self, text: str) -> list[str]:
        """All word tokens of ``text`` in order, repeats kept."""
        text = text.lower().replace("\u2019", "'")
        if text.isascii():
            return (TOKEN_RE if "'" in text else WORD_RE).findall(text)
        if not unicodedata.is_normalized("NFC", text):
            text = unicodedata.normalize("NFC", text)
        token_re, word_re = marked_patterns()
        tokens = (token_re if "'" in text else word_re).findall(text)
        if self.split_run is None or not UNSPACED_RE.search(text):
            return tokens
        out: list[str] = []
        for token in tokens:
            out.extend(self._split(token) if UNSPACED_RE.search(token) else (token,))
        return out

    def normal_forms(self, texts: Sequence[str]) -> list[str]:
        """``" ".join(self.words(text))`` of each of ``texts`` (:meth:`form_array` where it
        can be had, else one text at a time)."""
        forms = self.form_array(texts)
        if forms is None:
            return [" ".join(self.words(text)) for text in texts]
        return forms.to_pylist()

    def form_array(self, texts: Sequence[str]):
        """:meth:`normal_forms` as an Arrow string array: the ASCII texts cut in one compiled
        pass (:func:`compiled_forms`), the others one by one. None without pyarrow, or for a
        subclass with its own :meth:`words` (``hf:PATH``)."""
        if type(self).words is not Segmenter.words or (compiled := compiled_forms(texts)) is None:
            return None
        forms, done = compiled
        if done.false_count:
            import pyarrow as pa

            forms = pa.array([form if form is not None else " ".join(self.words(text))
                              for form, text in zip(forms.to_pylist(), texts)], pa.large_string())
        return forms

    def _split(self, token: str) -> list[str]:
        """A word with runs of unspaced scripts: its other pieces kept, the runs cut."""
        out: list[str] = []
        position = 0
        for run in UNSPACED_RE.finditer(token):
            if run.start() > position:
                out.append(token[position:run.start()])
            out.extend(self.cut_run(run.group()))
            position = run.end()
        if position < len(token):
            out.append(token[position:])
        return out

    def cut_run(self, run: str) -> list[str]:
        """A run of one unspaced script: cut by :attr:`split_run` if it reads that script, else
        by the installed dictionary segmenter of the script (Thai inside Chinese text), else
        into :func:`char_grams`."""
        assert self.split_run is not None
        script = script_of(run)
        if script in self.runs:
            return [word for word in self.split_run(run) if word.strip()]
        other = _installed_dictionary(script)
        return char_grams(run) if other is None else other.cut_run(run)


# The compiled path. An ASCII text without an apostrophe has the words of WORD_RE: its runs of
# ASCII letters and digits, lower-cased and joined by one space, read off its bytes in one numpy
# pass (:func:`_plain_forms`). An ASCII text with one goes through RE2 rewrites in pyarrow: each
# contraction that TOKEN_PATTERN cuts off ('s 're 've 'll 'd 'm before a word boundary, then n't
# before one) is set apart with a marker (no two of them overlap, and marking one never makes or
# breaks another), every other run of characters that are not ASCII letters or digits becomes one
# space, and the markers are written back. Such texts holding a marker go the Python way.
_MARKED = "[\x01\x02]"
_ARROW_REWRITES = ((r"'(s|re|ve|ll|d|m)\b", " \x02\\1 "), (r"n't\b", " \x01 "),
                   (r"[^a-z0-9\x01\x02]+", " "))


@cache
def _arrow_compute():
    """pyarrow.compute, or None when pyarrow is not installed (the Python path alone)."""
    if find_spec("pyarrow") is None:
        return None
    import pyarrow.compute

    return pyarrow.compute


def compiled_forms(texts: Sequence[str]):
    """The words of each ASCII text of ``texts`` joined by a space, as :meth:`Segmenter.words`
    cuts it (lower-cased :data:`TOKEN_PATTERN`), compiled over the whole batch (numpy for the
    texts without an apostrophe, pyarrow's RE2 for the others): an Arrow string array, null for
    a text that is not ASCII or holds an apostrophe and a control character \\x01/\\x02, and the
    Boolean array of the texts done. None without pyarrow (docs/methods.md §1)."""
    pc = _arrow_compute()
    if pc is None:
        return None
    import pyarrow as pa

    array = pa.array(texts, pa.large_string())
    forms, ascii = _plain_forms(array), pc.string_is_ascii(array)
    quoted = pc.and_(ascii, pc.match_substring(array, "'"))
    done = ascii.to_numpy(zero_copy_only=False)
    if quoted.true_count:
        rewritten, marked = _rewritten_forms(pc.filter(array, quoted))
        forms = pc.replace_with_mask(forms, quoted, rewritten)
        done[np.flatnonzero(quoted.to_numpy(zero_copy_only=False))] &= \
            ~marked.to_numpy(zero_copy_only=False)
    done = pa.array(done)
    return pc.if_else(done, forms, None), done


def string_bytes(array) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (from 0) and UTF-8 bytes of an Arrow ``large_string`` array, as numpy views."""
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[array.offset:][:len(array) + 1]
    data = np.frombuffer(array.buffers()[2] or b"", dtype=np.uint8)[offsets[0]:offsets[-1]]
    return offsets - offsets[0], data


def _plain_forms(array):
    """Each text of an Arrow ``large_string`` array as its runs of ASCII letters and digits,
    lower-cased, joined by one space (the normal form of an ASCII text without an apostrophe;
    any other byte separates words), from one numpy pass over its bytes."""
    import pyarrow as pa

    offsets, data = string_bytes(array)
    word = _alnum(data)
    new_word = word.copy()
    new_word[1:] &= ~word[:-1]
    texts = offsets[:-1][offsets[:-1] < len(data)]
    new_word[texts] = word[texts]  # a text starts afresh
    starts = np.flatnonzero(new_word)
    first = np.searchsorted(starts, texts)  # of each text, its first word if it has one
    spaced = np.ones(len(starts), dtype=bool)  # a word after another of its text
    spaced[first[first < len(starts)]] = False
    kept = word  # its words, and the separator just before each word but its first
    kept[starts[spaced] - 1] = True
    kept_at = np.flatnonzero(kept)
    out = data[kept_at]
    out = np.where(_alnum(out), out | np.uint8(0x20), np.uint8(ord(" ")))  # 0x20: lower case
    offsets = np.searchsorted(kept_at, offsets).astype(np.int64)
    return pa.LargeStringArray.from_buffers(len(array), pa.py_buffer(offsets),
                                            pa.py_buffer(out))


def _alnum(data: np.ndarray) -> np.ndarray:
    """Which bytes are ASCII letters or digits (``| 0x20`` folds the upper-case letters onto the
    lower-case ones and leaves the digits as they are)."""
    folded = data | np.uint8(0x20)
    return ((folded >= ord("a")) & (folded <= ord("z"))) | ((data >= ord("0")) & (data <= ord("9")))


def _rewritten_forms(array):
    """:func:`compiled_forms` of ASCII texts by RE2 rewrites, and whether each holds a marker
    (its form not to be used)."""
    pc = _arrow_compute()
    forms = pc.ascii_lower(array)
    for pattern, replacement in _ARROW_REWRITES:
        forms = pc.replace_substring_regex(forms, pattern, replacement)
    forms = pc.replace_substring(pc.replace_substring(pc.utf8_trim(forms, " "), "\x01", "n't"),
                                 "\x02", "'")
    return forms, pc.match_substring_regex(array, _MARKED)


def script_of(run: str) -> str:
    """The unspaced script of a run's first character."""
    return next((name for name, pattern in _SCRIPT_RES.items() if pattern.match(run)), "")


def _needs(module: str, extra: str, what: str):
    """Import ``module`` (an optional dependency) or raise one line naming the extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise UserError(f"the {what} segmenter needs {module}: pip install 'cuelens[{extra}]' "
                        f"(or --segmenter chars, which needs nothing)") from error


def _chinese() -> Segmenter:
    rjieba = _needs("rjieba", "cjk", "chinese")
    return Segmenter("chinese", rjieba.cut, frozenset({"han"}), spaced=False)


def _japanese() -> Segmenter:
    fugashi = _needs("fugashi", "cjk", "japanese")
    _needs("unidic_lite", "cjk", "japanese")
    tagger = fugashi.Tagger()
    return Segmenter("japanese", lambda run: [word.surface for word in tagger(run)],
                     frozenset({"han", "kana"}), spaced=False)


def _thai() -> Segmenter:
    tokenize = _needs("pythainlp.tokenize", "thai", "thai").word_tokenize
    _needs("nlpo3", "thai", "thai")
    return Segmenter("thai", lambda run: tokenize(run, engine="nlpo3"), frozenset({"thai"}),
                     spaced=False)


#: Segmenter name → (factory, the pip extra it needs or None, one line on what it does).
SEGMENTERS: Registry[tuple[Callable[[], Segmenter], str | None, str]] = Registry("segmenter", {
    "unicode": (lambda: Segmenter("unicode"), None,
                "NFC, letters + combining marks; runs of scripts without spaces stay whole"),
    "chars": (lambda: Segmenter("chars", char_grams, spaced=False), None,
              "as unicode, runs of scripts without spaces as character unigrams + bigrams"),
    "chinese": (_chinese, "cjk", "rjieba (jieba's dictionary) on Han runs"),
    "japanese": (_japanese, "cjk", "fugashi + unidic-lite (MeCab) on Han/kana runs"),
    "thai": (_thai, "thai", "PyThaiNLP's dictionary, newmm maximal matching in nlpo3 (Rust), "
                            "on Thai runs"),
}, field="segmenter", also=("auto", "hf:PATH"))


@cache
def get_segmenter(name: str) -> Segmenter:
    """The registered segmenter ``name`` (built once per process)."""
    return SEGMENTERS.get(name)[0]()


@cache
def _installed_dictionary(script: str) -> Segmenter | None:
    """The dictionary segmenter of ``script`` (:data:`DICTIONARY_OF`) if it is installed."""
    name = DICTIONARY_OF.get(script)
    return get_segmenter(name) if name is not None and installed(name) else None


def installed(name: str) -> bool:
    """Whether segmenter ``name`` can be built here (its extra is installed)."""
    try:
        get_segmenter(name)
    except UserError:
        return False
    return True


def script_shares(texts: Iterable[str]) -> dict[str, float]:
    """Share of the letters of ``texts`` in each unspaced script, and ``spaced`` for the rest
    (an ASCII text's letters, A–Z and a–z, counted in one pass); a text counted in its composed
    form (NFC), as it is cut (a decomposed ``で`` is one kana, not ``て`` and a mark)."""
    counts: Counter[str] = Counter(dict.fromkeys([*_SCRIPT_RES, "spaced"], 0))
    for text in texts:
        if text.isascii():
            encoded = text.encode()
            counts["spaced"] += len(encoded) - len(encoded.translate(None, _ASCII_LETTERS))
            continue
        if not unicodedata.is_normalized("NFC", text):
            text = unicodedata.normalize("NFC", text)
        letters = sum(char.isalpha() for char in text)
        unspaced = 0
        for name, pattern in _SCRIPT_RES.items():
            found = len(pattern.findall(text))
            counts[name] += found
            unspaced += found
        counts["spaced"] += max(letters - unspaced, 0)
    total = sum(counts.values()) or 1
    return {name: round(count / total, 4) for name, count in counts.most_common() if count}


#: The dictionary segmenter of each unspaced script (``auto``); kana means Japanese.
DICTIONARY_OF = {"han": "chinese", "kana": "japanese", "thai": "thai"}
UNSPACED_SHARE = 0.2  # auto: a dictionary (or chars) segmenter above this share of letters


def main_unspaced_script(shares: dict[str, float]) -> str | None:
    """The unspaced script of :func:`script_shares` (kana from 5% of them on: Japanese mixes it
    with Han), None below :data:`UNSPACED_SHARE` of the letters."""
    unspaced = {name: share for name, share in shares.items() if name != "spaced"}
    total = sum(unspaced.values())
    if total < UNSPACED_SHARE:
        return None
    if unspaced.get("kana", 0) >= 0.05 * total:
        return "kana"
    return max(unspaced, key=lambda name: unspaced[name])


@dataclass(frozen=True)
class Choice:
    """The segmenter a scan uses and why (results.json ``segmentation``)."""

    requested: str
    name: str
    reason: str
    scripts: dict[str, float]
    warning: str | None = None  # e.g. the extra that would give a dictionary segmenter


def choose_segmenter(texts: Iterable[str], requested: str = "auto") -> Choice:
    """``auto``: the segmenter for the scripts of ``texts`` (a sample); another name is kept."""
    shares = script_shares(texts)
    if requested != "auto":
        return Choice(requested, requested, "requested", shares)
    if not shares:  # no letters: "0% of letters in scripts written with spaces" misled
        return Choice(requested, "unicode", "no letters in the sample (only digits, symbols "
                      "or emoji)", shares)
    total = 1 - shares.get("spaced", 0.0)
    main = main_unspaced_script(shares)
    if main is None:
        return Choice(requested, "unicode", f"{1 - total:.0%} of letters in scripts written "
                      "with spaces", shares)
    largest = max((name for name in shares if name != "spaced"), key=shares.__getitem__)
    reason = f"{total:.0%} of letters in scripts without spaces, mostly {largest}"
    if main != largest:  # kana from 5% of them on: Japanese, most of whose letters are Han
        reason += f", {shares[main]:.0%} {main} (Japanese)"
    name = DICTIONARY_OF.get(main)
    if name is None:
        return Choice(requested, "chars", reason + " (no dictionary segmenter: character "
                      "unigrams + bigrams)", shares)
    if installed(name):
        return Choice(requested, name, reason, shares)
    extra = SEGMENTERS[name][1]
    return Choice(requested, "chars", reason + f" ({name} not installed: character unigrams + "
                  "bigrams)", shares, warning=f"words of {name.capitalize()} text are character "
                  f"unigrams + bigrams; pip install 'cuelens[{extra}]' for the {name} dictionary "
                  "segmenter")
