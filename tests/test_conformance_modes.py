"""Conformance across scan modes (issue 54), in the style of scikit-learn's
``parametrize_with_checks``: every scan mode (exact, streaming — data this small get the exact
scan's grouped folds —, streaming with hashed folds, streaming over the exact scan's grouped folds
held in memory, Ray, subsets; NLI and MCQ; preference pairs) × every check that applies to it.

The data are generated with planted cues (cuelens.data.synthetic, tests/planted_preference.py),
small enough that a case takes seconds; each mode's scan runs once per session (``scans``).

The exact scan is the streaming scan's function over the dataset held in memory, one chunk per
split, in the exact mode (grouped folds, their groups, the segmentation chosen over the whole
data); "streaming-grouped" runs that same mode over chunks spilled to disk.

Checks: results.json validates against its JSON Schema; ``next_steps`` (and the conclusion) are
what advice derives from the built sections; where the mode is the same — chunks spilled to disk
in the exact mode vs the exact scan, the streaming scan on Ray vs in the process — the results
are byte-identical, and the streaming scan of small data is the exact scan but for what names
the mode; the examples section is identical across memory modes given the same folds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from cuelens.audit.advice import advise
from cuelens.audit.config import ScanConfig
from cuelens.audit.pipeline import Scan, scan_dataset
from cuelens.audit.results import ScanSections
from cuelens.audit.chunked_data import load_chunked
from cuelens.audit.chunk_scan import scan_streaming, streamed_mode
from cuelens.audit.folds import HashedFolds
from cuelens.data.schema import FieldMap
from cuelens.data.synthetic import make_mcq, make_nli
from cuelens.engine.streaming import load_streaming
from cuelens.reports.schema import validate_results
from tests.conftest import write_jsonl
from tests.scan_helpers import exact_mode, without_the_mode

CONFIG = ScanConfig(folds=3, iterations=1, max_fit_items=150, min_count=3, seed=4)
CHUNK_ITEMS = 70  # several chunks per split


@dataclass(frozen=True)
class Data:
    """Data arguments (data, train, test) written for a task."""

    sources: tuple[str | None, str | None, str | None]

    def dataset(self):
        data, train, test = self.sources
        return load_streaming(data, train=train, test=test)


def _write_data(task: str, directory: Path) -> Data:
    """NLI: one cross-validated file with a subset field; MCQ: a train/test pair (3 choices)."""
    directory.mkdir(parents=True, exist_ok=True)
    if task == "nli":
        rows = make_nli(360, seed=1, vocab_size=200)
        for i, row in enumerate(rows):  # a subset field, one subset 'hard' with no cue at all
            row["source"] = "web" if i % 3 else "forum"
        return Data((str(write_jsonl(directory / "nli.jsonl", rows)), None, None))
    train = write_jsonl(directory / "train.jsonl", make_mcq(240, seed=2, n_choices=3,
                                                            vocab_size=200))
    test = write_jsonl(directory / "test.jsonl", make_mcq(120, seed=3, n_choices=3,
                                                          vocab_size=200))
    return Data((None, str(train), str(test)))


def _chunked(data: Data, directory: Path, **reader):
    directory.mkdir(parents=True)
    return load_chunked(*data.sources, FieldMap(), False, CONFIG, directory,
                        chunk_items=CHUNK_ITEMS, **reader)


def _exact(data: Data, work: Path) -> Scan:
    return scan_dataset(data.dataset(), CONFIG)


def _streaming(data: Data, work: Path) -> Scan:
    return scan_streaming(_chunked(data, work), CONFIG)


def _streaming_hashed(data: Data, work: Path) -> Scan:
    """The streaming scan's hashed folds (those of data above GROUPED_FOLD_INSTANCES)."""
    chunked = _chunked(data, work)
    hashed = HashedFolds(max(2, CONFIG.folds), CONFIG.folds, CONFIG.seed)
    return scan_streaming(chunked, CONFIG, mode=streamed_mode(chunked, CONFIG, hashed))


def _streaming_grouped(data: Data, work: Path) -> Scan:
    """Chunks spilled to disk scanned in the exact scan's mode (its grouped folds)."""
    return scan_streaming(_chunked(data, work), CONFIG, mode=exact_mode(data.dataset(), CONFIG))


def _ray(data: Data, work: Path) -> Scan:
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'cuelens[ray]'")
    from cuelens.audit.ray_passes import RayPasses

    started = not ray.is_initialized()
    if started:  # stopped again below: the Ray test modules start their own cluster
        ray.init(num_cpus=2, include_dashboard=False, configure_logging=False,
                 log_to_driver=False)
    try:
        passes = RayPasses()
        chunked = _chunked(data, work, reader=passes.read)
        chunked.store.passes = passes
        return scan_streaming(chunked, CONFIG)
    finally:
        if started:
            ray.shutdown()


def _subsets(data: Data, work: Path) -> Scan:
    if data.sources[0] is None:
        pytest.skip("the MCQ data have no subset field")
    return scan_dataset(data.dataset(), CONFIG, subset_field="source")


def _preference(data: Data, work: Path) -> Scan:
    import cuelens
    from tests.planted_preference import make_preference

    path = write_jsonl(work.parent / "preference.jsonl", make_preference(40, seed=1))
    return cuelens.scan(path, features="none", folds=3, iterations=1, min_count=3)


#: mode name → how it scans a task's data (work: a fresh directory of the case)
MODES: dict[str, Callable[[Data, Path], Scan]] = {
    "exact": _exact, "streaming": _streaming, "streaming-hashed": _streaming_hashed,
    "streaming-grouped": _streaming_grouped, "ray": _ray, "subsets": _subsets, "preference": _preference}
TASKS = ("nli", "mcq")
CASES = [pytest.param(mode, task, id=f"{mode}-{task}",  # Ray's start: ~30 s on 2 loaded cores
                      marks=[pytest.mark.slow, pytest.mark.timeout(600)] if mode == "ray" else [])
         for mode in MODES for task in TASKS
         if not (mode == "preference" and task == "mcq")]  # preference pairs are their own task

@pytest.fixture(scope="session")
def scans(tmp_path_factory) -> Callable[[str, str], dict]:
    """``scans(mode, task)``: the results.json of that mode's scan of the task's data, computed
    once per session."""
    root = tmp_path_factory.mktemp("conformance")
    data = {task: _write_data(task, root / task) for task in TASKS}
    done: dict[tuple[str, str], dict] = {}

    def scan(mode: str, task: str) -> dict:
        if (mode, task) not in done:
            result = MODES[mode](data[task], root / task / mode)
            done[mode, task] = json.loads(json.dumps(result.results))  # as written
        return done[mode, task]

    return scan


def check_schema(scans, mode: str, task: str) -> None:
    results = scans(mode, task)
    validate_results(results)
    assert results["next_steps"] and results["conclusion"]["status"]


def check_next_steps_follow_the_sections(scans, mode: str, task: str) -> None:
    """The conclusion and next steps written are what advice derives from the sections built."""
    results = scans(mode, task)
    again = advise(ScanSections.from_json(results))[1]
    assert results["next_steps"] == json.loads(json.dumps(again["next_steps"]))
    assert results["conclusion"] == json.loads(json.dumps(again["conclusion"]))


def check_planted_cue_found(scans, mode: str, task: str) -> None:
    """Every mode finds the planted cues: leakage beats the majority baseline (preference
    pairs: no word cue is planted, the responses of a pair hold the same words)."""
    results = scans(mode, task)
    if mode == "preference":
        assert results["leakage"]["majority"] == 0.5 and results["leakage"]["best"]["D"] <= 0.05
        assert results["preference"]["splits"]["all"]["pairs"] == 160  # 40 per planted subset
        return
    assert results["leakage"]["best"]["D"] > 0.05
    assert results["examples"]["by_cue"]  # examples of the listed cues


def check_same_folds_same_results(scans, mode: str, task: str) -> None:
    """Same folds, same results, byte for byte: chunks spilled to disk in the exact mode give
    the exact scan's results, the words-per-label section included, and so does the streaming
    scan of small data (its grouped folds built from the chunks) but for what names its mode;
    Ray gives the local streaming scan's."""
    if mode == "streaming-grouped":
        assert json.dumps(scans(mode, task)) == json.dumps(scans("exact", task))
    elif mode == "streaming":
        assert scans(mode, task)["config"]["statistics"] == "streaming"
        assert json.dumps(without_the_mode(scans(mode, task))) == \
            json.dumps(scans("exact", task))
    elif mode == "ray":
        assert scans(mode, task) == scans("streaming", task)
    else:
        pytest.skip(f"{mode}: no other mode shares its folds")


def check_examples_across_memory_modes(scans, mode: str, task: str) -> None:
    """One seeded example picker: given the same folds (so the same easy/hard split), the
    examples section of a scan held in memory is that of a scan streamed from disk."""
    if mode not in ("streaming", "streaming-grouped"):
        pytest.skip(f"{mode}: no in-memory scan shares its folds")
    assert scans(mode, task)["examples"] == scans("exact", task)["examples"]


def check_subsets_in_results(scans, mode: str, task: str) -> None:
    """The subsets table reaches results.json (its next steps: the check above)."""
    if mode not in ("subsets", "preference"):
        pytest.skip(f"{mode}: no subset field")
    assert scans(mode, task)["subsets"]["rows"]


CHECKS = [check_schema, check_next_steps_follow_the_sections, check_planted_cue_found,
          check_same_folds_same_results, check_examples_across_memory_modes,
          check_subsets_in_results]


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
@pytest.mark.parametrize("mode, task", CASES)
def test_mode_conforms(scans, mode, task, check):
    check(scans, mode, task)
