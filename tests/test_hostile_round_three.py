"""Hostile inputs, round three (issue 57), in the form of tests/test_hostile_inputs.py:
degenerate sizes (many labels, many subsets) give bounded work and one clear line, and subset
values share the labels' normal form."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from cuelens.data.labels import MAX_LABELS
from tests.test_hostile_inputs import assert_refused, invoke, jsonl

LABELS = ["entailment", "neutral", "contradiction"]


def many_label_rows(n_labels: int, per_label: int) -> list[dict]:
    return [{"id": f"i{lab}-{k}", "premise": f"A man walks dog {k}.",
             "hypothesis": f"A person is outside {k} c{lab}.", "label": f"L{lab}"}
            for lab in range(n_labels) for k in range(per_label)]


@pytest.mark.parametrize("n_labels", [MAX_LABELS + 1, 10_000])
@pytest.mark.parametrize("stats", ["exact", "streaming"])
def test_more_labels_than_the_limit_are_one_line(tmp_path, n_labels, stats):
    """10,000 labels of 5 items each: refused before any statistic, naming the rare labels."""
    (tmp_path / "d.jsonl").write_text(jsonl(many_label_rows(n_labels, 5)))
    (tmp_path / "work").mkdir()
    start = time.perf_counter()
    assert_refused(tmp_path, ["scan", "d.jsonl", "--out", "o", "--stats", stats,
                              "--work-dir", "work"], "d.jsonl",
                   f"{n_labels:,} distinct labels ({n_labels:,} with fewer than 10 items): "
                   f"cue statistics support at most {MAX_LABELS} labels")
    assert time.perf_counter() - start < 60


def test_grouping_many_subsets_is_linear():
    """10,000 subsets of 5 items: one sort, not one pass per subset (the stall of issue 57)."""
    from cuelens.audit.subsets import grouped

    values = [f"s{i % 10_000}" for i in range(50_000)]
    start = time.perf_counter()
    groups = grouped(values)
    assert time.perf_counter() - start < 2
    assert len(groups) == 10_000 and groups["s7"].tolist() == [7, 10_007, 20_007, 30_007, 40_007]
    assert sorted(np.concatenate(list(groups.values())).tolist()) == list(range(50_000))
    assert grouped([]) == {}


def test_subset_values_share_the_labels_normal_form():
    from cuelens.audit.subsets import normal_subsets
    from cuelens.data.labels import LabelFindings

    findings = LabelFindings()
    assert normal_subsets(["bio", "bio ", "Bio", "b\u200bio", "bi\u0301o"], findings) == \
        ["bio", "bio", "Bio", "bio", "b\u00edo"]
    assert findings.rewritten() == [
        {"from": "bio ", "to": "bio", "items": 1}, {"from": "b\u200bio", "to": "bio", "items": 1},
        {"from": "bi\u0301o", "to": "b\u00edo", "items": 1}]


def subset_rows(n_subsets: int, per_subset: int) -> list[dict]:
    return [{"id": f"i{s}-{k}", "premise": f"A man walks dog {k}.",
             "hypothesis": "Nobody walks." if k % 3 == 2 else f"A person is outside {k}.",
             "label": LABELS[k % 3], "domain": f"s{s}"}
            for s in range(n_subsets) for k in range(per_subset)]


def test_many_small_subsets_are_counted_not_scanned(tmp_path):
    """500 subsets of 3 items and one of 60: only the large one gets its own word-cue scan;
    the rest are counted (results.json and terminal); spelling variants of one value merge
    with a warning."""
    rows = subset_rows(500, 3) + [dict(r, id=f"bio{k}", domain="bio")
                                    for k, r in enumerate(subset_rows(1, 60))]
    for row, variant in zip(rows[-4:], ["bio ", "b\u200bio", "bio", "Bio"]):
        row["domain"] = variant
    (tmp_path / "d.jsonl").write_text(jsonl(rows))
    code, output = invoke(tmp_path, ["scan", "d.jsonl", "--out", "o", "--features", "none",
                                     "--folds", "2", "--iterations", "1",
                                     "--subset-field", "domain"])
    assert code == 0, output
    table = json.loads((tmp_path / "o" / "results.json").read_text())["subsets"]
    rows_by_name = {row["subset"]: row for row in table["rows"]}
    assert len(rows_by_name) == 502 and rows_by_name["bio"]["n_items"] == 59
    assert rows_by_name["Bio"]["n_items"] == 1
    assert rows_by_name["bio"]["leakage"] is not None
    assert all(row["leakage"] is None for name, row in rows_by_name.items() if name != "bio")
    assert table["small"] == {"min_items": 20, "subsets": 501}
    assert table["rewritten"] == [{"from": "bio ", "to": "bio", "items": 1},
                                  {"from": "b\u200bio", "to": "bio", "items": 1}]
    flat = " ".join(output.split())
    assert "501 subsets with fewer than 20 items: no word-cue scan" in flat
    assert "subset values merged into their normal form" in flat and "'bio ' → 'bio'" in flat


# --------------------------------------------------------------------------- prompt templates
NLI_FIELDS = {"id": "x", "premise": "A man.", "hypothesis": "A person.", "labels": ["a"]}


@pytest.mark.parametrize(("text", "limit"), [
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
     "more than 100,000 loop iterations"),
    ("{% for c in premise %}{% for d in range(99999) %}{{ d }}{% endfor %}{% endfor %}",
     "more than 100,000 loop iterations"),
    ("{{ 'a' * 10000000000 }}", "a value of more than 1,000,000 characters"),
    ("{{ premise * 10000000000 }}", "a value of more than 1,000,000 characters"),
    ("{{ 'a'|center(10000000000) }}", "an argument over 1,000,000"),
    ("{{ '%10000000000s' % 'a' }}", "a width over 1,000,000 characters"),
    ("{{ '{:>10000000000}'.format('a') }}", "a width over 1,000,000 characters"),
    ("{{ 9 ** 100000 }}", "an integer of more than 4,096 bits"),
    ("{% set s = 'a' * 1000 %}{{ s.replace('a', s).replace('a', s) }}",
     "a value of more than 1,000,000 characters"),
    ("{% set s = 'a' * 1000 %}{{ s|replace('a', s)|replace('a', s) }}",
     "a value of more than 1,000,000 characters"),
])
def test_a_template_stops_at_the_sandbox_limits(text, limit):
    """Issue 57: 10¹⁰ loop iterations or a 10 GB string stop at once with one line."""
    from cuelens.errors import UserError
    from cuelens.probes.llm.templates import YES_NO, PromptTemplate

    template = PromptTemplate("huge", "nli", "score", text, YES_NO)
    start = time.perf_counter()
    with pytest.raises(UserError) as error:
        template.render(NLI_FIELDS)
    assert time.perf_counter() - start < 5
    assert str(error.value) == (f"prompt 'huge' stopped on item 'x': {limit} (the sandbox's "
                                "limit; docs/robustness.md)")


def test_templates_within_the_limits_render_as_before():
    from cuelens.probes.llm.templates import TEMPLATES, YES_NO, PromptTemplate

    text = ("{% for c in labels %}{{ loop.index }}{{ c|upper }}{% endfor %}|{{ premise * 2 }}|"
            "{{ '%-8s|' % hypothesis }}{{ '{:>3}'.format(1) }}")
    assert PromptTemplate("t", "nli", "score", text, YES_NO).render(NLI_FIELDS) == \
        "1A|A man.A man.|A person.|  1"
    assert TEMPLATES["nli-yes-no"].render(NLI_FIELDS).startswith(
        "Premise: A man.\nHypothesis: A person.\n")


@pytest.mark.parametrize(("answers", "message"), [
    ("entailment=yes, neutral=yes, contradiction=no",
     "answers: the labels 'entailment' and 'neutral' are both answered 'yes'"),
    ("entailment=Yes, neutral=yes, contradiction=no",
     "answers: the labels 'entailment' and 'neutral' are both answered 'yes'"),
    ("entailment=yes, entailment=maybe, contradiction=no",
     "answers: the label 'entailment' is mapped twice"),
    ("entailment=yes, neutral, contradiction=no", "answers: expected 'label=word, …'"),
])
def test_ambiguous_answer_mappings_are_refused_when_read(tmp_path, answers, message):
    from cuelens.errors import UserError
    from cuelens.probes.llm.templates import read_template

    path = tmp_path / "t.prompt"
    path.write_text(f"task: nli\nmode: score\nanswers: {answers}\n---\n{{{{ premise }}}}\n")
    with pytest.raises(UserError) as error:
        read_template(path)
    assert error.value.line == 3 and message in str(error.value)


# --------------------------------------------------------------------------- response cache
def test_a_damaged_response_cache_is_rebuilt_with_a_warning(tmp_path):
    from cuelens.probes.llm.cache import ResponseCache

    path = tmp_path / "llm.sqlite"
    cache = ResponseCache(path)
    cache.put("k", {"text": "yes"}, backend="b", model="m", template="t", item="i")
    cache.close()
    assert ResponseCache(path).get("k") == {"text": "yes"}
    path.write_bytes(b"this is not an SQLite database\n" * 200)
    Path(f"{path}-wal").unlink(missing_ok=True)
    cache = ResponseCache(path)
    assert cache.get("k") is None and len(cache) == 0
    assert cache.warnings == [f"{path}: the response cache was damaged (file is not a "
                              "database); moved to llm.sqlite.corrupt and rebuilt empty (its "
                              "answers are asked again)"]
    assert (tmp_path / "llm.sqlite.corrupt").read_bytes().startswith(b"this is not")
    cache.put("k", {"text": "no"}, backend="b", model="m", template="t", item="i")
    assert cache.get("k") == {"text": "no"}


# --------------------------------------------------------------------------- one label form
def test_predictions_use_the_scans_label_normal_form(tmp_path):
    """Labels with invisible format characters are normalised in the probe as in the scan."""
    from cuelens.data.loading import load_dataset
    from cuelens.probes.predictions import read_predictions_file

    rows = [{"id": f"n{i}", "premise": "A man.", "hypothesis": f"A person {i}.",
             "label": ["entail\u200dment", "neutral ", "contradiction"][i % 3]} for i in range(6)]
    (tmp_path / "d.jsonl").write_text(jsonl(rows))
    dataset = load_dataset(str(tmp_path / "d.jsonl"))
    assert dataset.label_names == ["contradiction", "entailment", "neutral"]
    (tmp_path / "p.jsonl").write_text(jsonl(
        {"id": r["id"], "prediction": r["label"],
         "probs": {"entail\u200dment": 0.5, "neutral\u00a0": 0.25, "contradiction": 0.25}}
        for r in rows))
    predictions = read_predictions_file(tmp_path / "p.jsonl", dataset)
    assert predictions.pred.tolist() == [1, 2, 0, 1, 2, 0]
    assert predictions.probs[0].tolist() == [0.25, 0.5, 0.25]


def test_a_damaged_items_parquet_is_one_line(tmp_path):
    """`audit train --debias poe --bias <scan>` reads the scan's items table."""
    from cuelens.data.loading import load_dataset
    from cuelens.errors import UserError
    from cuelens.mitigate.bias_source import read_bias

    (tmp_path / "d.jsonl").write_text(jsonl([{"id": f"n{i}", "premise": "A man.",
                                              "hypothesis": f"A person {i}.",
                                              "label": LABELS[i % 3]} for i in range(6)]))
    dataset = load_dataset(str(tmp_path / "d.jsonl"))
    scan = tmp_path / "scan"
    scan.mkdir()
    (scan / "items.parquet").write_bytes(b"PAR1" + b"\0" * 64)
    with pytest.raises(UserError) as error:
        read_bias(scan, dataset, dataset.test)
    assert str(error.value).startswith(f"{scan / 'items.parquet'}: not a readable Parquet table")
    assert "rerun `audit scan`" in str(error.value)


# --------------------------------------------------------------------------- evaluation logs
@pytest.mark.parametrize(("n_unsure", "interpretable"), [(40, False), (21, False), (20, True)])
def test_unparseable_inspect_answers_are_counted(tmp_path, n_unsure, interpretable):
    """Issue 57: "a bit unsure" is no answer (was choice A); counted like the LLM probe's
    unparseable answers, and a mostly unparseable log is not interpretable."""
    from cuelens.data.loading import load_dataset
    from cuelens.probes.sections import ProbeContext
    from tests.test_evallogs import inspect_log, planted_items, write_jsonl
    from cuelens.probes.evallogs import read_eval_log

    rows = planted_items()
    dataset = load_dataset(str(write_jsonl(tmp_path / "planted.jsonl", rows)))
    log = inspect_log(rows)
    for sample in log["samples"][:n_unsure]:
        sample["scores"]["choice"]["answer"] = "a bit unsure"
    (tmp_path / "log.json").write_text(json.dumps(log))
    predictions = read_eval_log(tmp_path / "log.json", dataset)
    assert (predictions.pred == -1).sum() == n_unsure
    assert predictions.log["unparseable"] == {"n": n_unsure, "rate": n_unsure / 40}
    assert f"{n_unsure} of 40 Inspect answers name no choice (e.g. samples[0]: " \
           "'a bit unsure'); counted as wrong" in predictions.notes
    sanity = ProbeContext(dataset=dataset, predictions=predictions, cues=[],
                          model_info={"log": predictions.log}, n_boot=50).sanity()
    if not interpretable:
        assert sanity["interpretable"] is False
        assert any("name no choice (more than 50%)" in note for note in sanity["notes"])
    else:
        assert not any("name no choice" in note for note in sanity["notes"])


@pytest.mark.parametrize("answer", ["B", " b ", "(B)", "B.", "B:"])
def test_letter_answers_still_name_their_choice(answer):
    from cuelens.probes.evallogs import _letter_index

    assert _letter_index(answer) == 1
    assert _letter_index("a bit unsure") == _letter_index("Both") == _letter_index("") == -1


def test_a_truncated_eval_archive_is_named(tmp_path):
    from cuelens.data.loading import load_dataset
    from cuelens.errors import UserError
    from cuelens.probes.evallogs import read_eval_log
    from tests.test_evallogs import planted_items, write_eval_archive, write_jsonl

    rows = planted_items()
    dataset = load_dataset(str(write_jsonl(tmp_path / "planted.jsonl", rows)))
    whole = write_eval_archive(tmp_path / "log.eval", rows).read_bytes()
    cut = tmp_path / "cut.eval"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(UserError) as error:
        read_eval_log(cut, dataset)
    assert str(error.value) == (f"{cut}: truncated archive: the file starts as a zip (an Inspect "
                                ".eval log) but its end is missing; copy or download it again")


# --------------------------------------------------------------------------- preference data
def test_csv_chat_message_columns_are_read_as_messages(tmp_path):
    """Issue 57: JSON-encoded message lists in CSV response columns: the assistant turns are
    the responses, the shared user turn the prompt (not the raw JSON)."""
    import csv

    from cuelens.data.preference import load_preferences

    def chat(answer: str) -> str:
        return json.dumps([{"role": "user", "content": "Name a colour."},
                           {"role": "assistant", "content": answer}])

    with open(tmp_path / "p.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "chosen", "rejected"])
        for i in range(4):
            writer.writerow([f"p{i}", chat(f"Blue, number {i}."), chat("Green.")])
    split = next(iter(load_preferences(tmp_path / "p.csv").splits.values()))
    assert split.chosen == [f"Blue, number {i}." for i in range(4)]
    assert split.rejected == ["Green."] * 4
    assert split.prompts == ["Name a colour."] * 4


def test_sigterm_unwinds_the_command_but_kills_forked_workers_plainly():
    """The command's process turns SIGTERM into KeyboardInterrupt (cleanup runs; the streaming
    case is tests/test_faults.py); a forked pool worker, which multiprocessing stops with
    SIGTERM, dies by the signal without a traceback."""
    import os
    import signal

    from cuelens.cli import _on_terminate

    handler = _on_terminate(os.getpid())
    with pytest.raises(KeyboardInterrupt):
        handler(signal.SIGTERM, None)
    child = os.fork()
    if child == 0:  # pragma: no cover (the child process)
        signal.signal(signal.SIGTERM, handler)
        os.kill(os.getpid(), signal.SIGTERM)
        os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
