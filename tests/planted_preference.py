"""A planted preference benchmark and judge log whose shortcut rates are known exactly (the
ground truth of the preference tests; docs/preference.md).

:func:`make_preference` writes Arena-shaped records (``prompt``, ``response_a``, ``response_b``,
``winner``, ``subset``). Every response is built from the same random words: a pair's two
responses hold the same words in a different order (same characters, same tokens, no word cue)
unless a subset plants a shortcut. Per subset of ``n`` pairs (``n`` divisible by 20):

==========  ===========================================================================
subset      planted
==========  ===========================================================================
length      the chosen response is the longer (12 vs 6 words) in exactly 80% of pairs,
            the shorter in 20%
format      the chosen response is a markdown list item in exactly 75% of pairs, the
            rejected one in 25% (lengths equal: the other gets `` .`` appended)
position    the chosen response is shown first in exactly 90% of pairs (50% elsewhere)
clean       nothing: half the chosen responses are longer and half shorter; plus ``n/10`` ties
==========  ===========================================================================

:func:`make_judge_log` writes two records per pair (``pair_id``, ``order`` ab/ba, ``winner``
A/B/tie): of ``n`` pairs (divisible by 20) exactly 70% are consistent, 20% flip (all toward
position A) and 10% are tie-inconsistent.
"""

from __future__ import annotations

import numpy as np

SUBSETS = ("length", "format", "position", "clean")
WORDS = ("apple river stone cloud garden window silver market letter candle bridge meadow "
         "forest violin pepper saddle harbor lantern marble pillow").split()


def _words(rng: np.random.Generator, n: int) -> list[str]:
    return [str(w) for w in rng.choice(WORDS, size=n)]


def _pair(rng: np.random.Generator, subset: str, j: int, n: int) -> tuple[str, str, bool]:
    """(chosen, rejected, chosen shown first) of the ``j``-th of ``n`` pairs of ``subset``."""
    words = _words(rng, 12)
    shuffled = list(rng.permutation(words))
    chosen, rejected = " ".join(words), " ".join(str(w) for w in shuffled)
    first = j % 2 == 0
    if subset == "length" or subset == "clean":
        longer_wins = j < (0.8 * n if subset == "length" else 0.5 * n)
        short = " ".join(str(w) for w in shuffled[:6])
        chosen, rejected = (chosen, short) if longer_wins else (short, rejected)
    elif subset == "format":
        listed = j < 0.75 * n
        chosen, rejected = (f"- {chosen}", f"{rejected} .") if listed else \
            (f"{chosen} .", f"- {rejected}")
    elif subset == "position":
        first = j < 0.9 * n
    return chosen, rejected, first


def make_preference(n: int = 200, seed: int = 0) -> list[dict]:
    """Planted Arena-shaped records, ``n`` pairs per subset (see the module doc)."""
    if n % 20:
        raise ValueError("n must be divisible by 20 so the planted rates are exact")
    rng = np.random.default_rng(seed)
    records = []
    for subset in SUBSETS:
        for j in range(n):
            chosen, rejected, first = _pair(rng, subset, j, n)
            a, b = (chosen, rejected) if first else (rejected, chosen)
            records.append({"id": f"{subset}-{j}",
                            "prompt": f"question {subset} {j} about {' '.join(_words(rng, 3))}",
                            "response_a": a, "response_b": b,
                            "winner": "model_a" if first else "model_b", "subset": subset})
        if subset == "clean":
            for j in range(n // 10):
                records.append({"id": f"tie-{j}", "prompt": f"tied question {j}",
                                "response_a": " ".join(_words(rng, 5)),
                                "response_b": " ".join(_words(rng, 5)), "winner": "tie",
                                "subset": subset})
    return records


def make_judge_log(n: int = 100) -> list[dict]:
    """Two judge records per pair: 70% consistent, 20% flips toward A, 10% tie-inconsistent."""
    if n % 20:
        raise ValueError("n must be divisible by 20 so the planted rates are exact")
    records = []
    for j in range(n):
        if j < 0.7 * n:  # consistent: the first response both times (A, then B)
            verdicts = ("A", "B") if j % 2 else ("tie", "tie")
        elif j < 0.9 * n:  # flip: position A both times
            verdicts = ("A", "A")
        else:  # tie in one order only
            verdicts = ("A", "tie")
        for order, verdict in zip(("ab", "ba"), verdicts):
            records.append({"pair_id": f"p{j}", "order": order, "winner": verdict,
                            "category": "even" if j % 2 == 0 else "odd"})
    return records
