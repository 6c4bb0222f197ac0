"""Synthetic triplets for many starting sentences, written as they are found (docs/methods.md §9).

:func:`run_synthetic` searches the triplet of every starting sentence in turn (each with its own
seed, ``seed · 1000003 + k``, so a triplet does not depend on the others), appends it to the
JSONL output as soon as it is finished and reports ``progress(stage, fraction)``. With
``resume`` the triplets already in the output (the same starting sentences, in order) are kept
and the search goes on after them, giving the same file as an uninterrupted run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cuelens.errors import UserError
from cuelens.io import append_jsonl, null_non_finite, read_jsonl_lines, write_jsonl
from cuelens.lm.contrast.synthetic import Vocabulary, synthesize_triplet
from cuelens.lm.scoring import SentenceScorer

SEED_STRIDE = 1_000_003


@dataclass
class SyntheticRun:
    """The triplets in the output (resumed ones first) and this run's seconds per sentence."""

    rows: list[dict]
    resumed: int
    seconds: list[float] = field(default_factory=list)


def _resumed_rows(out: Path, starts: list[tuple[int, str]]) -> list[dict]:
    rows = read_jsonl_lines(out)
    for row, (index, sentence) in zip(rows, starts):
        if row.get("n") != sentence or row.get("natural_index") != index:
            raise UserError("--resume: the output holds triplets of other starting sentences; "
                            "use the same --init, --n and options, or another --out",
                            path=str(out))
    if len(rows) > len(starts):
        raise UserError(f"--resume: the output already holds {len(rows)} triplets, more than "
                        f"--n {len(starts)}", path=str(out))
    return rows


def run_synthetic(starts: list[tuple[int, str]], m1: SentenceScorer, m2: SentenceScorer,
                  vocab: Vocabulary, out: str | Path, *, seed: int = 0, max_steps: int = 200,
                  patience: int = 8, batch_size: int = 2048, resume: bool = False,
                  progress: Callable[[str, float], None] | None = None) -> SyntheticRun:
    """Triplets of ``starts`` (``(natural_index, sentence)`` pairs) appended to ``out``."""
    out = Path(out)
    rows = _resumed_rows(out, starts) if resume and out.exists() else []
    write_jsonl(out, rows)    # a fresh file, or the resumed one without a torn last line
    run = SyntheticRun(rows, resumed=len(rows))
    for k in range(len(rows), len(starts)):
        index, sentence = starts[k]

        def on_step(search: int, step: int, k: int = k) -> None:
            if progress is not None:
                done = (search - 1 + min(step / max_steps, 1.0)) / 2
                progress(f"sentence {k + 1}/{len(starts)}, search {search}/2, step {step}",
                         (k + done) / len(starts))

        started = time.perf_counter()
        row = synthesize_triplet(sentence, m1, m2, vocab, seed=seed * SEED_STRIDE + k,
                                 max_steps=max_steps, patience=patience, batch_size=batch_size,
                                 on_step=on_step)
        run.seconds.append(time.perf_counter() - started)
        (row,) = null_non_finite([{"natural_index": index, **row}])   # -inf → null
        append_jsonl(out, row)
        run.rows.append(row)
        if progress is not None:
            progress(f"sentence {k + 1}/{len(starts)} done", (k + 1) / len(starts))
    return run
