"""The MCQ artifact baselines and the lengths section computed chunk by chunk
(cuelens.audit.item_parts: one core, a dataset in memory or the chunks of a file read one at a
time) equal those of the split held in memory, given the same folds."""

from __future__ import annotations

import numpy as np
import pytest

from cuelens.audit.config import ScanConfig
from cuelens.audit.item_parts import KeyCounts
from cuelens.audit.lengths import lengths_of_parts
from cuelens.audit.mcq_baselines import baselines_of_parts, mcq_baselines
from cuelens.audit.chunked_data import load_chunked
from cuelens.audit.chunk_scan import chunk_parts
from cuelens.data.schema import FieldMap
from cuelens.data.synthetic import make_mcq, make_nli
from cuelens.engine.streaming import load_streaming
from tests.conftest import write_jsonl
from tests.scan_helpers import length_section
from tests.test_streamed_stats import ExactFolds

CONFIG = ScanConfig(folds=3, iterations=1, max_fit_items=150, min_count=3, seed=4)
CHUNK_ITEMS = 64
COPIED = 50  # evaluated items that copy a fitting item's question and answer


def _with_questions(rows: list[dict]) -> list[dict]:
    """COPA-style questions on every other item (the no-context baselines apply)."""
    return [{**row, "question": "cause"} if i % 2 else row for i, row in enumerate(rows)]


def _mcq_files(tmp_path) -> tuple[tuple[str | None, str | None, str | None], ...]:
    """A cross-fitted file, and a train/test pair whose first COPIED test items repeat a train
    item's premise, question and right answer (the right answer moved to another position)."""
    single = write_jsonl(tmp_path / "all.jsonl",
                         _with_questions(make_mcq(300, seed=5, n_choices=3, vocab_size=200)))
    train = make_mcq(240, seed=2, n_choices=3, vocab_size=200)
    test = make_mcq(150, seed=3, n_choices=3, vocab_size=200, id_prefix="t")
    for i, (source, row) in enumerate(zip(train[:COPIED], test)):  # same question: same parity
        label = (source["label"] + 1) % 3
        choices = [c for j, c in enumerate(row["choices"]) if j != row["label"]]
        choices.insert(label, source["choices"][source["label"]])
        test[i] = {**row, "premise": source["premise"], "choices": choices, "label": label}
    train, test = _with_questions(train), _with_questions(test)
    pair = (None, str(write_jsonl(tmp_path / "train.jsonl", train)),
            str(write_jsonl(tmp_path / "test.jsonl", test)))
    return (str(single), None, None), pair


def _streamed_and_exact(sources, work):
    dataset = load_streaming(sources[0], train=sources[1], test=sources[2])
    work.mkdir()
    data = load_chunked(*sources, FieldMap(), False, CONFIG, work, chunk_items=CHUNK_ITEMS)
    assert len(data.splits[data.evaluated].sizes) > 1  # several chunks
    return dataset, data, chunk_parts(data, ExactFolds(dataset, CONFIG), CONFIG)


@pytest.mark.parametrize("which", ["cross-fitted", "train-test"])
def test_streamed_mcq_baselines_equal_the_in_memory_ones(tmp_path, which):
    sources = _mcq_files(tmp_path)[which == "train-test"]
    dataset, data, parts = _streamed_and_exact(sources, tmp_path / "work")
    streamed = baselines_of_parts(parts)
    assert streamed == mcq_baselines(dataset, CONFIG.folds, CONFIG.seed)
    assert lengths_of_parts(parts, data.store.task, data.label_names) == \
        length_section(dataset, CONFIG.folds, CONFIG.seed)
    rows = {row.name: row for row in streamed.rows}
    assert "no context: question only" in rows  # some items have a separate question
    if which == "train-test":  # the copied questions are seen, their answers memorised
        assert rows["question only"].coverage == round(COPIED / 150, 6)
        assert rows["question only"].accuracy >= (COPIED + (150 - COPIED) / 3 - 15) / 150
        assert streamed.fitted_on == "train" and set(streamed.gold_position) == \
            {"train", "test"}
    else:  # grouped folds: a question never meets itself in another fold
        assert rows["question only"].coverage == 0.0
        assert streamed.fitted_on == "3-fold cross-fitting"


def test_streamed_nli_lengths_equal_the_in_memory_ones(tmp_path):
    source = str(write_jsonl(tmp_path / "nli.jsonl", make_nli(400, seed=1, vocab_size=200)))
    dataset, data, parts = _streamed_and_exact((source, None, None), tmp_path / "work")
    streamed = lengths_of_parts(parts, data.store.task, data.label_names)
    assert streamed == length_section(dataset, CONFIG.folds, CONFIG.seed)
    assert sum(s.n for s in streamed.by_label.values()) == 400
    assert streamed.baseline is not None and streamed.baseline.protocol == "3-fold cross-fit"


def test_key_counts_outside_a_plane():
    counts = KeyCounts(3)
    counts.add(np.array([5, 7, 5, 5], dtype=np.uint64), np.array([0, 1, 1, 2]))
    keys = np.array([5, 5, 5, 7, 7, 9], dtype=np.uint64)
    assert counts.outside(keys, np.array([0, 1, 2, 0, 1, 0])).tolist() == [2, 2, 2, 1, 0, 0]
    assert KeyCounts(2).outside(keys, np.zeros(6, dtype=np.int64)).tolist() == [0] * 6
