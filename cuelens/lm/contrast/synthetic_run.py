"""Synthetic triplets for many starting sentences, each with its own seed, appended in order as
they are found, in worker processes or resumed (docs/contrast.md, "audit contrast synthetic")."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Generator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import closing
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from cuelens.audit.segmenters import choose_segmenter
from cuelens.errors import UserError, check_at_least_1
from cuelens.jsonio import append_jsonl, null_non_finite, read_jsonl_lines, write_jsonl
from cuelens.lm.contrast.synthetic import Vocabulary, synthesize_triplet
from cuelens.lm.scoring import SentenceError, SentenceScorer
from cuelens.lm.text import SAMPLE

SEED_STRIDE = 1_000_003

Progress = Callable[[str, float], None]
Finished = Generator[tuple[int, dict, float], None, None]   # (k, row, seconds), any order


@dataclass
class SyntheticRun:
    """The triplets in the output (resumed ones first) and this run's seconds per sentence
    (in sentence order; with several jobs each is one worker's time on that sentence)."""

    rows: list[dict]
    resumed: int
    seconds: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class _Search:
    """What every starting sentence's search shares (picklable: sent to the workers)."""

    vocab: Vocabulary
    seed: int
    max_steps: int
    patience: int
    batch_size: int
    segmenter: str = "unicode"
    device: str = "auto"    # where models given as specs run


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


def _check_same_models(resumed: list[dict], row: dict, out: Path) -> None:
    """Resumed triplets are of this run's two models (``--resume`` with other ``--models``
    appended their triplets to the others' silently)."""
    pair = [row["model_1"], row["model_2"]]
    if resumed and [resumed[0].get("model_1"), resumed[0].get("model_2")] != pair:
        raise UserError(f"--resume: the output holds triplets of the models "
                        f"{resumed[0].get('model_1')}, {resumed[0].get('model_2')}, not "
                        f"{pair[0]}, {pair[1]}; use the same --models or another --out",
                        path=str(out))


def _triplet(k: int, start: tuple[int, str], m1: SentenceScorer, m2: SentenceScorer,
             search: _Search, on_step: Callable[[int, int], None] | None = None
             ) -> tuple[int, dict, float]:
    """The output row of starting sentence number ``k`` and the seconds its search took."""
    index, sentence = start
    started = time.perf_counter()
    try:
        row = synthesize_triplet(sentence, m1, m2, search.vocab,
                                 seed=search.seed * SEED_STRIDE + k, max_steps=search.max_steps,
                                 patience=search.patience, batch_size=search.batch_size,
                                 on_step=on_step, segmenter=search.segmenter)
    except SentenceError as error:   # its index counts within one batch of candidates
        preview = sentence if len(sentence) <= 40 else sentence[:40] + "…"
        raise error.at(index, f"starting sentence {k + 1} ({preview!r}) or a sentence made "
                              "from it by replacing a word") from None
    (row,) = null_non_finite([{"natural_index": index, **row}])   # -inf → null
    return k, row, time.perf_counter() - started


def _scorer(model: SentenceScorer | str, device: str) -> SentenceScorer:
    from cuelens.lm import load_scorer

    return load_scorer(model, device=device) if isinstance(model, str) else model


def _serial(todo: range, starts: list[tuple[int, str]], m1: SentenceScorer | str,
            m2: SentenceScorer | str, search: _Search, progress: Progress | None) -> Finished:
    scorers = _scorer(m1, search.device), _scorer(m2, search.device)
    for k in todo:
        def on_step(which: int, step: int, k: int = k) -> None:
            if progress is not None:
                done = (which - 1 + min(step / search.max_steps, 1.0)) / 2
                progress(f"sentence {k + 1}/{len(starts)}, search {which}/2, step {step}",
                         (k + done) / len(starts))

        yield _triplet(k, starts[k], *scorers, search, on_step)


_WORKER_MODELS: dict[tuple[str, str], tuple[SentenceScorer, SentenceScorer]] = {}


def _worker_triplet(k: int, start: tuple[int, str], specs: tuple[str, str],
                    search: _Search) -> tuple[int, dict, float]:
    """:func:`_triplet` in a worker process, which loads the two models at its first sentence
    (a failure there reaches the parent as this call's exception) and keeps them."""
    if specs not in _WORKER_MODELS:
        _WORKER_MODELS[specs] = (_scorer(specs[0], search.device),
                                 _scorer(specs[1], search.device))
        if "torch" in sys.modules:   # one thread per worker: the workers share the cores
            sys.modules["torch"].set_num_threads(1)
    return _triplet(k, start, *_WORKER_MODELS[specs], search)


def _parallel(todo: range, starts: list[tuple[int, str]], m1: SentenceScorer | str,
              m2: SentenceScorer | str, search: _Search, jobs: int) -> Finished:
    if not (isinstance(m1, str) and isinstance(m2, str)):
        raise UserError("jobs > 1 needs the two models as scorer specs (e.g. 'ngram:lm/tri'): "
                        "each worker process loads them itself")
    executor = ProcessPoolExecutor(min(jobs, len(todo)), mp_context=get_context("spawn"))
    try:
        running: set[Future] = {executor.submit(_worker_triplet, k, starts[k], (m1, m2), search)
                                for k in todo}
        while running:
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: f.result()[0]):
                yield future.result()
    finally:   # on an error or interruption, sentences not yet started are not searched
        executor.shutdown(wait=True, cancel_futures=True)


def run_synthetic(starts: list[tuple[int, str]], m1: SentenceScorer | str,
                  m2: SentenceScorer | str, vocab: Vocabulary, out: str | Path, *,
                  seed: int = 0, max_steps: int = 200, patience: int = 8,
                  batch_size: int = 2048, resume: bool = False, jobs: int = 1,
                  progress: Progress | None = None, segmenter: str = "auto",
                  device: str = "auto") -> SyntheticRun:
    """Triplets of ``starts`` (``(natural_index, sentence)`` pairs) appended to ``out``.

    ``m1``, ``m2``: scorers, or scorer specs for :func:`cuelens.lm.load_scorer` (required when
    ``jobs > 1``). ``jobs``: worker processes (0: one per CPU core; 1: search in this process,
    with progress after every word position; more: progress after every finished sentence).
    ``segmenter``: how runs of scripts written without spaces are cut into words (``auto``:
    chosen from the scripts of the starting sentences, as a scan chooses). ``device``: where
    models given as specs run (:func:`cuelens.lm.load_scorer`)."""
    if jobs < 0:
        raise UserError(f"--jobs must be 0 (all cores) or more, not {jobs}")
    # 0 or fewer steps "found" the starting sentence itself; a batch of 0 was a traceback
    check_at_least_1(max_steps=max_steps, patience=patience, batch_size=batch_size)
    out = Path(out)
    rows = _resumed_rows(out, starts) if resume and out.exists() else []
    run = SyntheticRun(rows, resumed=len(rows))
    todo = range(len(rows), len(starts))
    if not todo:
        write_jsonl(out, rows)    # the resumed file without a torn last line
    if segmenter == "auto":
        segmenter = choose_segmenter([sentence for _, sentence in starts[:SAMPLE]]).name
    search = _Search(vocab, seed, max_steps, patience, batch_size, segmenter, device)
    jobs = jobs or os.cpu_count() or 1
    finished = (_serial(todo, starts, m1, m2, search, progress) if jobs == 1 or len(todo) <= 1
                else _parallel(todo, starts, m1, m2, search, jobs))
    waiting: dict[int, tuple[dict, float]] = {}
    with closing(finished):   # on an exception, unstarted sentences are cancelled
        for count, (k, row, seconds) in enumerate(finished, start=1):
            if count == 1:   # a fresh file (or the resumed one without a torn last line) only
                _check_same_models(run.rows, row, out)
                write_jsonl(out, run.rows)   # now: a model that fails to load writes nothing
            waiting[k] = row, seconds
            while len(run.rows) in waiting:   # write in sentence order
                row, seconds = waiting.pop(len(run.rows))
                append_jsonl(out, row)
                run.rows.append(row)
                run.seconds.append(seconds)
            if progress is not None:
                progress(f"sentence {k + 1}/{len(starts)} done",
                         (run.resumed + count) / len(starts))
    return run
