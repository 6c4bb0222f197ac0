"""Shortcuts of preference pairs: length, formatting and position.

What a shortcut, a decided pair and a win rate are, and the test and interval of each row:
docs/preference.md ("What the scan reports") and docs/methods.md §16. ``significant`` is
Holm-corrected over the rows of one table (:func:`cuelens.audit.subsets.holm`); the subset ×
shortcut table of :mod:`cuelens.audit.subsets` corrects over all its cells.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable

import numpy as np

from cuelens.audit.chance import ALPHA, _r, wilson_interval
from cuelens.audit.results import PreferenceSection
from cuelens.audit.subsets import mark_holm
from cuelens.audit.tokenize import char_length, text_length
from cuelens.data.preference import NO_POSITION, PreferenceSplit
from cuelens.wording import plural

Scorer = Callable[[list[str]], np.ndarray]


def _per_text(measure: Callable[[str], float]) -> Scorer:
    """The scorer giving each text ``measure(text)``."""
    return lambda texts: np.fromiter(map(measure, texts), dtype=np.float64, count=len(texts))


def _matches(pattern: str, flags: int = re.MULTILINE) -> Scorer:
    compiled = re.compile(pattern, flags)
    return _per_text(lambda text: compiled.search(text) is not None)


#: formatting feature → a per-response 0/1 scorer (a regular expression, docs/preference.md).
FORMATS: dict[str, Scorer] = {
    "markdown list": _matches(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+\S"),
    "markdown header": _matches(r"^\s{0,3}#{1,6}\s+\S"),
    "code block": _matches(r"```|^(?: {4}|\t)\S"),
    "bold text": _matches(r"\*\*[^*\n]+\*\*|__[^_\n]+__"),
    "emoji": _matches("[\U0001F300-\U0001FAFF\U00002600-\U000027BF\U0001F1E6-\U0001F1FF]"),
    "apology or refusal": _matches(
        r"\b(?:I(?:'| a)m sorry|I apologi[sz]e|my apologies|I (?:cannot|can't|can not|won't|"
        r"am unable to|'m unable to|am not able to)|as an AI\b|as a language model)",
        re.IGNORECASE),
}


#: shortcut → per-response scorer; the rule picks the response with the higher score (tokens:
#: the word tokens of the cue tokenizer, :mod:`cuelens.audit.tokenize`).
SHORTCUTS: dict[str, Scorer] = {"longer (characters)": _per_text(char_length),
                                "longer (tokens)": _per_text(text_length),
                                **FORMATS}
POSITION = "shown first"


def shortcut_scores(pairs: PreferenceSplit) -> dict[str, np.ndarray]:
    """Per shortcut, the (pairs × 2) scores of the chosen (column 0) and the rejected (column 1)
    response, each text scored once; ``shown first`` (1 for the first-shown response) only when
    some pair records a position, NaN in the pairs that do not."""
    scores = {name: np.column_stack([score(pairs.chosen), score(pairs.rejected)])
              for name, score in SHORTCUTS.items()}
    position = np.asarray(pairs.positions, dtype=np.int64)
    known = position != NO_POSITION
    if known.any():
        first = np.where(known, (position == 0).astype(np.float64), np.nan)
        scores[POSITION] = np.column_stack([first, 1.0 - first])
    return scores


def win_row(name: str, chosen: np.ndarray, rejected: np.ndarray) -> dict:
    """One shortcut's row from the per-pair scores of the chosen and the rejected responses."""
    from scipy import stats

    decided = chosen != rejected
    n, wins = int(decided.sum()), int((chosen > rejected).sum())
    row = {"shortcut": name, "n_pairs": len(chosen), "decided": n, "wins": wins,
           "chosen_mean": _r(chosen.mean()) if len(chosen) else None,
           "rejected_mean": _r(rejected.mean()) if len(chosen) else None}
    if n == 0:
        return {**row, "rate": None, "rate_ci": None, "p_value": 1.0}
    low, high = wilson_interval(wins, n)
    p_value = stats.binomtest(wins, n, 0.5).pvalue
    return {**row, "rate": _r(wins / n), "rate_ci": [_r(low), _r(high)],
            "p_value": float(f"{p_value:.6g}")}


def shortcut_rows(scores: dict[str, np.ndarray], index: np.ndarray | None = None) -> list[dict]:
    """Every shortcut's row over the pairs at ``index`` (all when None) of
    :func:`shortcut_scores`; the position row only when some of them record a position.
    ``significant``: Holm over these rows."""
    rows = []
    for name, both in scores.items():
        both = both if index is None else both[index]
        if name == POSITION:
            both = both[~np.isnan(both[:, 0])]
            if not len(both):
                continue
        rows.append(win_row(name, both[:, 0], both[:, 1]))
    return mark_holm(rows)


def pair_checks(pairs: PreferenceSplit) -> dict:
    """Pairs repeated exactly (same prompt, chosen and rejected after NFC, case and space
    folding) and pairs whose two responses are the same text. A pair is remembered by a 16-byte
    digest of its folded texts, not by a copy of them."""
    def fold(text: str) -> str:
        return " ".join(unicodedata.normalize("NFC", text).lower().split())

    seen: set[bytes] = set()
    repeated = identical = 0
    for p, c, r in zip(pairs.prompts, pairs.chosen, pairs.rejected):
        chosen, rejected = fold(c), fold(r)
        identical += chosen == rejected
        key = hashlib.blake2b("\0".join((fold(p), chosen, rejected)).encode("utf-8",
                                                                           "surrogatepass"),
                              digest_size=16).digest()
        repeated += key in seen
        seen.add(key)
    return {"repeated_pairs": repeated, "identical_responses": identical}


def preference_section(splits: dict[str, PreferenceSplit], shape: str,
                       scores: dict[str, dict[str, np.ndarray]] | None = None
                       ) -> PreferenceSection:
    """The ``preference`` section of results.json (docs/results-schema.md): per split, sizes,
    ties, the shortcut rows and the pair checks; ``scores``: :func:`shortcut_scores` per split
    role when already computed."""
    out = {}
    for role, pairs in splits.items():
        ties = sum(pairs.ties.values())
        known = scores[role] if scores is not None else shortcut_scores(pairs)
        out[role] = {"pairs": len(pairs), "ties": ties,
                     "tie_rate": _r(ties / (ties + len(pairs))),
                     "positions_recorded": int(sum(p != NO_POSITION for p in pairs.positions)),
                     "shortcuts": shortcut_rows(known), **pair_checks(pairs)}
    return PreferenceSection(shape=shape, correction="holm", alpha=ALPHA, splits=out)


def rule_text(shortcut: str) -> str:
    """A shortcut's pick in words: "the longer (tokens) response"."""
    if shortcut == POSITION:
        return "the response shown first"
    return f"the {shortcut} response" if shortcut.startswith("longer") else \
        f"the response with {shortcut}"


def shortcut_verdict(row: dict) -> str:
    """A plain-English sentence for one shortcut row."""
    name = row["shortcut"]
    if row["rate"] is None:
        return f"{name}: never tells the two responses apart."
    head = (f"{rule_text(name)} is the chosen one in {100 * row['rate']:.1f}% of the "
            f"{plural(row['decided'], 'pair')} it tells apart "
            f"(95% CI {100 * row['rate_ci'][0]:.1f}–{100 * row['rate_ci'][1]:.1f}%, "
            f"Holm-adjusted p = {row['p_holm']:.3g})")
    if not row["significant"]:
        return f"{head}: no evidence of a shortcut."
    return f"{head}: a shortcut — {'it wins' if row['rate'] > 0.5 else 'it loses'} more often " \
           "than a coin flip."
