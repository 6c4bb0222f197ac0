"""The spaCy features' parse started ahead in a separate process (docs/icq-features.md, "Speed"):
the scan reads its values from the parse cache, the same values as parsing in the scan itself,
and falls back to parsing itself when that process cannot run or fails."""

from __future__ import annotations

import itertools
import os
import sys
import tempfile

import numpy as np
import pytest

import cuelens
from cuelens.audit.features import FEATURES
from cuelens.audit.features import annotate as annotate_module
from cuelens.audit.features import parse_ahead as ahead_module
from cuelens.audit.parse_cache import ParseCache
from cuelens.data.dataset import Instances

SUBJECTS = ["A man", "The girl", "Two dogs", "Nobody", "The old woman", "A child"]
VERBS = {"future": "will {v}", "past": "{v}ed", "present": "is {v}ing"}
STEMS = ["walk", "jump", "play", "cook", "paint", "clean"]
OBJECTS = ["at home.", "in the park.", "near the river.", "with a friend."]


def records() -> list[dict]:
    """NLI items whose hypotheses differ in tense, the label following the tense 3 times in 4."""
    rows = []
    for i, (subject, stem, obj) in enumerate(itertools.product(SUBJECTS, STEMS, OBJECTS)):
        tense = list(VERBS)[i % 3] if i % 4 else list(VERBS)[(i + 1) % 3]
        label = ["entailment", "neutral", "contradiction"][list(VERBS).index(tense)]
        rows.append({"premise": f"{subject} is outside.", "label": label,
                     "hypothesis": f"{subject} {VERBS[tense].format(v=stem)} {obj}",
                     "split": "train" if i % 5 else "test"})
    return rows


def scan_features(tmp_path, name: str) -> list:
    ParseCache.clear_memory()
    result = cuelens.scan(records(), features="tense,negation", cache_dir=tmp_path / name,
                          folds=3, iterations=1, seed=0)
    return result.results["features"]


@pytest.fixture
def inline(tmp_path, monkeypatch) -> list:
    """The feature rows of a scan that parses by itself."""
    with monkeypatch.context() as patch:
        patch.setattr(ahead_module, "AHEAD_MIN_TEXTS", 10**9)
        return scan_features(tmp_path, "inline")


def one_instance() -> Instances:
    return Instances(["A man walked home."], ["A man is outside."], np.zeros(1, dtype=np.int64),
                     np.zeros(1, dtype=np.int64))


@pytest.fixture
def ahead(monkeypatch):
    """Parse ahead from the first text, on a machine with two idle CPUs."""
    monkeypatch.setattr(ahead_module, "AHEAD_MIN_TEXTS", 1)
    monkeypatch.setattr(ahead_module, "default_n_process", lambda n_texts: 2)


def test_the_scan_reads_what_the_process_parsed_ahead(tmp_path, monkeypatch, inline, ahead):

    def no_parsing_here(*args, **kwargs):
        raise AssertionError("the scan parsed texts the process started ahead should have")

    monkeypatch.setattr(annotate_module, "_parse", no_parsing_here)
    rows = scan_features(tmp_path, "ahead")
    assert rows == inline
    assert any(row["feature"] == "TENSE" for row in rows)


def test_a_process_that_fails_leaves_the_parse_to_the_scan(tmp_path, monkeypatch, inline,
                                                           ahead):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(ahead_module, "PYTHON", sys.executable + "-missing")  # cannot start
    assert scan_features(tmp_path, "unstarted") == inline
    monkeypatch.setattr(ahead_module, "PYTHON", "false")  # starts, then fails
    assert scan_features(tmp_path, "failed") == inline
    assert not list(tmp_path.rglob("cuelens-parse-*"))  # its job files removed


def test_no_spacy_feature_a_frozen_app_or_a_busy_machine_parse_in_the_scan(tmp_path, monkeypatch,
                                                                           ahead):
    instances = one_instance()
    assert ahead_module.parse_ahead([FEATURES["negation"]], [instances], tmp_path) is None
    monkeypatch.setattr(sys, "frozen", True, raising=False)  # e.g. PyInstaller
    assert ahead_module.parse_ahead([FEATURES["tense"]], [instances], tmp_path) is None
    monkeypatch.delattr(sys, "frozen")
    monkeypatch.setattr(ahead_module, "default_n_process", lambda n_texts: 1)
    monkeypatch.setattr(ahead_module, "uncached", None)  # a busy machine reads no cache
    assert ahead_module.parse_ahead([FEATURES["tense"]], [instances], tmp_path) is None


def test_stop_ends_the_process_and_removes_its_files(tmp_path, ahead):
    instances = one_instance()
    ParseCache.clear_memory()
    work = tmp_path / "work"
    work.mkdir()
    running = ahead_module.parse_ahead([FEATURES["tense"]], [instances], tmp_path, work)
    assert running is not None and running.process.poll() is None
    assert running.directory.parent == work
    running.stop()
    assert running.process.poll() is not None and not running.directory.exists()


def test_the_process_reports_progress_while_the_scan_that_started_it_lives(tmp_path):
    report = ahead_module.progress_writer(tmp_path / "progress", os.getppid())
    report("parse", 0.25)
    assert (tmp_path / "progress").read_text() == "0.2500"
    orphaned = ahead_module.progress_writer(tmp_path / "progress", os.getpid())  # not our parent
    with pytest.raises(SystemExit):
        orphaned("parse", 0.5)
    assert (tmp_path / "progress").read_text() == "0.2500"
