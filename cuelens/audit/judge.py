"""LLM-as-judge logs judged in both orders: position consistency and flips.

A pairwise judge sees responses X and Y once as (A = X, B = Y) and once swapped; consistent
pairs, flips, tie-inconsistent pairs, the first-position test (per subset Holm-corrected,
:func:`cuelens.audit.subsets.holm`) and the log shapes :func:`judge_verdicts` reads (FastChat
MT-Bench judgments, or two records per pair): docs/preference.md ("Judge logs"),
docs/methods.md §16.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from scipy import stats

from cuelens.audit.chance import ALPHA, _r, wilson_interval
from cuelens.audit.subsets import mark_holm, record_subset
from cuelens.data.labels import normalise_label
from cuelens.data.readers import LineError, iter_records
from cuelens.errors import UserError
from cuelens.wording import plural

FIRST, SECOND, TIE = "first", "second", "tie"  # verdicts by response (first = X, shown first)
#: a verdict's spellings → its position (A, B or tie)
POSITIONS = {**dict.fromkeys(("a", "model_a", "1", "[[a]]", "response_a"), "A"),
             **dict.fromkeys(("b", "model_b", "2", "[[b]]", "response_b"), "B"),
             **dict.fromkeys(("tie", "[[c]]", "c", "draw", "tie (bothbad)"), TIE)}
PAIR_ID_FIELDS = ("pair_id", "id", "question_id", "uid")
VERDICT_FIELDS = ("winner", "verdict", "choice", "judgment")


def _position(value, line: int, path: str) -> str:
    position = POSITIONS.get(str(value).strip().lower())
    if position is None:
        raise UserError(f"verdict '{value}' is not A, B or tie", path=path, line=line)
    return position


FASTCHAT_FIELDS = ("question_id", "model_1", "model_2", "g1_winner", "g2_winner")
SWAPPED_TEXT = {"true": True, "1": True, "false": False, "0": False}


def _fastchat(record: dict, line: int, path: str) -> tuple[str, str, str] | None:
    """(pair key, verdict in the original order, in the swapped one) of a FastChat row, None
    for a judge error; the pair is ``question_id`` + ``model_1`` + ``model_2`` + ``turn``."""
    missing = [k for k in FASTCHAT_FIELDS if record.get(k) in (None, "")]
    if missing:
        raise UserError(f"a FastChat judgment needs {', '.join(missing)} (fields "
                        f"{', '.join(FASTCHAT_FIELDS)})", path=path, line=line)
    names = {"model_1": FIRST, "model_2": SECOND, "tie": TIE}
    g1, g2 = str(record["g1_winner"]).lower(), str(record["g2_winner"]).lower()
    if "error" in (g1, g2):
        return None
    if g1 not in names or g2 not in names:
        raise UserError(f"g1_winner/g2_winner must be model_1, model_2, tie or error; got "
                        f"'{g1}'/'{g2}'", path=path, line=line)
    key = "|".join(str(record.get(k, "")) for k in ("question_id", "model_1", "model_2", "turn"))
    return _pair_key(key), names[g1], names[g2]


def _pair_id(value, field: str, line: int, path: str) -> str:
    """A record's pair id: a text or a number (written as text); null, a boolean, an object, a
    list or a blank text is an error naming the field (every null id was the one pair 'None')."""
    if value is None or isinstance(value, (bool, dict, list)) or not str(value).strip():
        kind = "a blank text" if isinstance(value, str) else json.dumps(value)[:40]
        raise UserError(f"pair id field '{field}' holds {kind}; give each pair an id (a text or "
                        "a number)", path=path, line=line)
    return str(value)


def _pair_key(text: str) -> str:
    """A pair id in the labels' normal form (NFC, no invisible characters, stripped), as the
    subsets are read: the two orders of 'café' match whether written composed or decomposed."""
    return normalise_label(text) or text


def _swapped(record: dict, line: int, path: str) -> bool:
    """``swapped`` read strictly (true/false, 1/0, or those words as text) or ``order``
    (ab/ba)."""
    if "swapped" in record:
        value = record["swapped"]
        if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in SWAPPED_TEXT:
            return SWAPPED_TEXT[value.strip().lower()]
        raise UserError(f"'swapped' must be true or false, got {json.dumps(value)}", path=path,
                        line=line)
    order = str(record.get("order", "")).strip().lower()
    if order in ("ab", "ba"):
        return order == "ba"
    raise UserError("each record needs 'swapped' (true/false) or 'order' (ab/ba)", path=path,
                    line=line)


SHAPES = {"fastchat": "a FastChat judgment (g1_winner/g2_winner)",
          "two records": "a record of one order (swapped/order and a verdict)"}


def _shape(record: dict) -> str:
    """The log shape a record is written in (a FastChat row has a g1_winner or g2_winner)."""
    return "fastchat" if "g1_winner" in record or "g2_winner" in record else "two records"


def _check_shape(record: dict, shape: str, first: int, line: int, path: str) -> None:
    """Refuse a record of the other shape than the log's first record (on line ``first``); one
    that is neither is left to the shape's own checks, which name its missing fields."""
    own = _shape(record)
    if own != shape and (own == "fastchat" or any(
            f in record for f in ("swapped", "order", *VERDICT_FIELDS))):
        raise UserError(f"{SHAPES[own]} in a log whose line {first} is {SHAPES[shape]}; write "
                        "one shape per log", path=path, line=line)


def _judged_twice(pair: str, order: str, first: int, line: int, path: str) -> UserError:
    """A pair (and order: ``original``/``swapped``, empty for a FastChat row of both) seen
    before on line ``first``."""
    where = f" in the {order} order" if order else ""
    return UserError(f"pair '{pair}' is judged twice{where} (first on line {first}); keep one "
                     "judgment per pair and order", path=path, line=line)


def judge_verdicts(path: str | Path, subset_field: str | None = None
                   ) -> tuple[str, dict[str, tuple[str, str]], dict[str, str], int]:
    """(log shape, pair → (verdict in the original order, verdict in the swapped order) by
    response, pair → subset, records skipped) from a judge log file."""
    path = Path(path)
    pairs: dict[str, dict[bool, str]] = {}
    seen: dict[tuple[str, bool], int] = {}  # (pair, swapped) → the line that judged it
    subsets: dict[str, str] = {}
    shape, first, skipped = "", 0, 0
    for line, _, record in iter_records(path):
        if isinstance(record, LineError):
            raise record
        if shape:
            _check_shape(record, shape, first, line, str(path))
        else:
            shape, first = _shape(record), line
        subset = record_subset(record, subset_field, str(path), line) if subset_field else ""
        subset = normalise_label(subset) or subset  # NFC, no invisible characters, stripped
        if shape == "fastchat":
            found = _fastchat(record, line, str(path))
            if found is None:
                skipped += 1
                continue
            key, original, swapped = found
            if (key, False) in seen:
                raise _judged_twice(key, "", seen[key, False], line, str(path))
            seen[key, False] = line
            pairs[key] = {False: original, True: swapped}
            subsets[key] = subset
            continue
        id_field = next((f for f in PAIR_ID_FIELDS if f in record), None)
        verdict_field = next((f for f in VERDICT_FIELDS if f in record), None)
        if id_field is None or verdict_field is None:
            needs = [f"a pair id ({'/'.join(PAIR_ID_FIELDS)})"] * (id_field is None) + \
                [f"a verdict ({'/'.join(VERDICT_FIELDS)})"] * (verdict_field is None)
            raise UserError(f"a judge record needs {' and '.join(needs)}", path=str(path),
                            line=line)
        flipped = _swapped(record, line, str(path))
        position = _position(record[verdict_field], line, str(path))
        # position A shows X in the original order and Y in the swapped one
        by_response = TIE if position == TIE else \
            (FIRST if (position == "A") != flipped else SECOND)
        key = _pair_key(_pair_id(record[id_field], id_field, line, str(path)))
        if (key, flipped) in seen:
            raise _judged_twice(key, "swapped" if flipped else "original",
                                seen[key, flipped], line, str(path))
        seen[key, flipped] = line
        if subsets.get(key, subset) != subset:  # one pair, two subsets: neither is its own
            raise UserError(f"pair '{key}' is in {subset_field} '{subsets[key]}' on line "
                            f"{seen[key, not flipped]} and '{subset}' here; give both orders "
                            "of a pair one subset", path=str(path), line=line)
        pairs.setdefault(key, {})[flipped] = by_response
        subsets[key] = subset
    complete = {key: (v[False], v[True]) for key, v in pairs.items() if len(v) == 2}
    if not complete:
        raise UserError("no pair was judged in both orders", path=str(path))
    skipped += len(pairs) - len(complete)
    return shape, complete, {k: subsets[k] for k in complete}, skipped


def _rate(count: int, n: int) -> dict:
    low, high = wilson_interval(count, n)
    return {"count": count, "rate": _r(count / n) if n else None, "ci": [_r(low), _r(high)]}


def consistency(verdicts: list[tuple[str, str]]) -> dict:
    """Consistency, flip and tie-inconsistency rates of (original, swapped) verdict pairs, and
    the first-position test over the flips (module doc)."""
    n = len(verdicts)
    consistent = sum(a == b for a, b in verdicts)
    flips = [(a, b) for a, b in verdicts if a != b and TIE not in (a, b)]
    # a flip picks position A both times: X (first) in the original order, Y in the swapped one
    first = sum(a == FIRST for a, _ in flips)
    test = stats.binomtest(first, len(flips), 0.5).pvalue if flips else 1.0
    return {"n_pairs": n, "consistent": _rate(consistent, n), "flips": _rate(len(flips), n),
            "tie_inconsistent": _rate(n - consistent - len(flips), n),
            "flips_to_first": {**_rate(first, len(flips)), "p_value": float(f"{test:.6g}")},
            "verdicts": dict(sorted(Counter(f"{a}/{b}" for a, b in verdicts).items()))}


def judge_section(path: str | Path, subset_field: str | None = None) -> dict:
    """results.json of ``kind`` ``judge_log`` (docs/results-schema.md)."""
    shape, verdicts, subsets, skipped = judge_verdicts(path, subset_field)
    out = {"kind": "judge_log", "file": Path(path).name, "shape": shape, "skipped": skipped,
           "alpha": ALPHA, **consistency(list(verdicts.values()))}
    out["flips_to_first"]["significant"] = bool(out["flips_to_first"]["p_value"] < ALPHA)
    if subset_field:
        names = sorted(set(subsets.values()))
        rows = [{"subset": s, **consistency([v for k, v in verdicts.items() if subsets[k] == s])}
                for s in names]
        mark_holm([row["flips_to_first"] for row in rows])
        out["by_subset"] = {"field": subset_field, "correction": "holm", "rows": rows}
    return out


def judge_verdict(section: dict) -> str:
    """A plain-English sentence for a judge log."""
    c, f, first = section["consistent"], section["flips"], section["flips_to_first"]
    text = (f"The judge gave the same verdict in both orders for {100 * c['rate']:.1f}% of "
            f"{plural(section['n_pairs'], 'pair')} (95% CI {100 * c['ci'][0]:.1f}–"
            f"{100 * c['ci'][1]:.1f}%); "
            f"{100 * f['rate']:.1f}% flipped when the responses swapped places")
    if f["count"] and first.get("significant"):
        side = "first" if first["rate"] > 0.5 else "second"
        return (f"{text}, and {100 * max(first['rate'], 1 - first['rate']):.1f}% of the flips "
                f"favour the {side} position (p = {first['p_value']:.3g}): a position bias.")
    return f"{text}." if not f["count"] else \
        f"{text}; the flips favour neither position significantly."

