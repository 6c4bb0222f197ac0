"""Label hygiene (docs/robustness.md, "Labels"): the normal form of a label
(:func:`normalise_label`, each rewrite counted in :class:`LabelFindings`), the results.json
``dataset.labels`` warnings (:func:`label_report`) and the one-label error
(:func:`check_label_count`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from cuelens.errors import UserError
from cuelens.wording import plural

#: Labels with fewer items than this in the fitting split are rare: warned about, and their cues
#: are not called significant (``--min-label-items``; 0 turns the exclusion off).
MIN_LABEL_ITEMS = 10
#: Most labels a scan fits: the aggregators have one feature and one class per label, so their
#: work grows with the square of the label count (docs/robustness.md, "Degenerate sizes").
MAX_LABELS = 50
#: The label set of multiple-choice data (instances of the right and wrong choices).
STRUCTURAL = ("right", "wrong")
_INTEGER = re.compile(r"^[+-]?\d+$")
_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate of ``text`` (a ``\\ud800`` JSON escape no encoder can write)."""
    match = _SURROGATE.search(text)
    return None if match is None else match.group()


def normalise_label(text: str) -> str:
    """The normal form of a label text (docs/robustness.md, "Labels"): NFC, no format (``Cf``)
    or control (``Cc``: ESC, tab, …) characters, stripped; ``""`` when nothing is left."""
    if text.isascii() and text.isprintable():
        return text.strip()
    visible = "".join(ch for ch in text if unicodedata.category(ch) not in ("Cf", "Cc"))
    return unicodedata.normalize("NFC", visible).strip()


def label_kind(label: str) -> str:
    """``integer``, ``number`` or ``text``: what a label looks like."""
    if _INTEGER.match(label):
        return "integer"
    try:
        float(label)
    except ValueError:
        return "text"
    return "number"


@dataclass
class LabelFindings:
    """What reading one split noticed: label rewrites (normal form → original → items) and
    duplicated JSON keys (key → [items, first line])."""

    rewrites: dict[str, dict[str, int]] = field(default_factory=dict)
    duplicate_keys: dict[str, list[int]] = field(default_factory=dict)

    def rewrite(self, original: str, normal: str, items: int = 1) -> None:
        counts = self.rewrites.setdefault(normal, {})
        counts[original] = counts.get(original, 0) + items

    def duplicate(self, keys: Iterable[str], line: int, items: int = 1) -> None:
        for key in keys:
            entry = self.duplicate_keys.setdefault(key, [0, line])
            entry[0] += items

    def merge(self, other: LabelFindings) -> None:
        for normal, counts in other.rewrites.items():
            for original, n in counts.items():
                self.rewrite(original, normal, n)
        for key, (n, line) in other.duplicate_keys.items():
            self.duplicate([key], line, n)

    def rewritten(self) -> list[dict]:
        """Each rewrite as ``{"from", "to", "items"}``, sorted by normal form, then original."""
        return [{"from": original, "to": normal, "items": n}
                for normal, originals in sorted(self.rewrites.items())
                for original, n in sorted(originals.items())]

    def to_dict(self) -> dict:
        return {"rewrites": self.rewrites, "duplicate_keys": self.duplicate_keys}

    @classmethod
    def from_dict(cls, data: Mapping) -> LabelFindings:
        return cls({k: dict(v) for k, v in data.get("rewrites", {}).items()},
                   {k: list(v) for k, v in data.get("duplicate_keys", {}).items()})


def rare_labels(counts: Mapping[str, int], min_items: int) -> list[str]:
    """Labels with fewer than ``min_items`` items (none for multiple-choice data)."""
    if set(counts) <= set(STRUCTURAL):
        return []
    return sorted(label for label, n in counts.items() if n < min_items)


def check_label_count(counts: Mapping[str, int], path: str) -> None:
    """Every item under one label, or more than :data:`MAX_LABELS` labels: no statistic can
    compare them (one clear error)."""
    if len(counts) > MAX_LABELS:
        rare = len(rare_labels(counts, MIN_LABEL_ITEMS))
        raise UserError(f"{len(counts):,} distinct labels ({rare:,} with fewer than "
                        f"{plural(MIN_LABEL_ITEMS, 'item')}): cue statistics support at most "
                        f"{MAX_LABELS} labels (check the label field; merge or drop the rare "
                        "labels)", path=path)
    if len(counts) == 1:
        (label, n), = counts.items()
        raise UserError(f"all {plural(n, 'item has', 'items have')} the label {label!r}: cue "
                        "statistics need at least two labels (check the label field, or give the "
                        "other labels' items too)", path=path)


def _quoted(labels: Iterable[str]) -> str:
    return ", ".join(repr(label) for label in labels)


def unicode_form(text: str) -> str:
    """The Unicode normal form ``text`` is in, as a message names it: NFC, NFD or neither (two
    texts that look the same may differ only in it)."""
    return next((form for form in ("NFC", "NFD") if unicodedata.is_normalized(form, text)),
                "neither NFC nor NFD")


def _original(text: str) -> str:
    """A rewritten text as :func:`rewrites_text` shows it: its repr (which spells out invisible
    characters), said to be not in NFC when it is not (it looks the same as its normal form)."""
    return repr(text) + ("" if unicodedata.is_normalized("NFC", text) else " (not NFC)")


def rewrites_text(rewritten: list[dict]) -> str:
    """``'a ' → 'a' (3); …`` for the first five ``{"from", "to", "items"}`` rewrites."""
    shown = "; ".join(f"{_original(r['from'])} → {r['to']!r} ({r['items']:,})"
                      for r in rewritten[:5])
    return shown + (f" and {len(rewritten) - 5} more" if len(rewritten) > 5 else "")


def label_report(splits: Mapping[str, tuple[str, Mapping[str, int], LabelFindings]],
                 fitting: str, min_items: int = MIN_LABEL_ITEMS) -> dict:
    """results.json ``dataset.labels`` from each split's ``(path, label counts, findings)``;
    ``fitting`` names the split whose counts decide which labels are rare."""
    warnings: list[str] = []
    rewritten = []
    for role, (path, counts, findings) in splits.items():
        rewritten += [{"split": role, **rewrite} for rewrite in findings.rewritten()]
        for key, (n, line) in sorted(findings.duplicate_keys.items()):
            warnings.append(f"{path}, line {line}: "
                            f"{plural(n, 'record repeats', 'records repeat')} the key {key!r} (the "
                            "last value is used; JSON leaves duplicates undefined)")
    if rewritten:
        warnings.insert(0, f"labels rewritten to their normal form (Unicode NFC, invisible "
                           f"characters and surrounding spaces removed): "
                           f"{rewrites_text(rewritten)}")
    labels = sorted({label for _, counts, _ in splits.values() for label in counts})
    kinds: dict[str, list[str]] = {}
    for label in labels:
        kinds.setdefault(label_kind(label), []).append(label)
    if len(kinds) > 1 and set(labels) - set(STRUCTURAL):
        listed = "; ".join(f"{kind}: {_quoted(names[:5])}" for kind, names in sorted(kinds.items()))
        warnings.append(f"labels of mixed kinds ({listed}): each value is a class of its own; "
                        "check the label field and the shards' label types")
    counts = splits[fitting][1]
    rare = rare_labels(counts, min_items)
    once = sorted(label for label, n in counts.items() if n == 1 and label not in STRUCTURAL)
    if rare:
        warnings.append(f"rare {'label' if len(rare) == 1 else 'labels'} {_quoted(rare)} with "
                        f"fewer than {plural(min_items, 'item')} in "
                        f"{splits[fitting][0]}: their cues are not called significant and stay "
                        "out of the next steps (--min-label-items 0 keeps them)")
    elif once:
        warnings.append(f"{'label' if len(once) == 1 else 'labels'} {_quoted(once)} "
                        f"{'occurs' if len(once) == 1 else 'occur'} only once in "
                        f"{splits[fitting][0]}")
    return {"min_items": min_items, "rare": rare, "rewritten": rewritten,
            "warnings": warnings}


def split_counts(labels: Iterable) -> Counter:
    """Items per label of a split's label column."""
    return Counter(str(label) for label in labels)
