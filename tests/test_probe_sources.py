"""The probe's front door (issue 24): one :class:`ProbeConfig` read by the API, the CLI and the
LLM probe, and one registry of prediction sources returning the same :class:`Predictions`
whatever the source (golden lm-eval/Inspect logs ≡ a predictions file with their answers)."""

from __future__ import annotations

import inspect
import re
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import cuelens
from cuelens.audit.pipeline import scan_dataset
from cuelens.audit.scan import ScanConfig
from cuelens.cli import app
from cuelens.data.loading import load_dataset
from cuelens.data.synthetic import make_nli
from cuelens.errors import UserError
from cuelens.probes.config import ProbeConfig
from cuelens.probes.pipeline import probe_dataset
from cuelens.probes.predictions import Predictions
from cuelens.probes.sources import (SOURCES, InspectLog, LLMPrompt, LmEvalLog, ModelSource,
                                    PredictionsFile, file_source, make_source)
from tests.test_eval_goldens import DATA, INSPECT_EVAL, INSPECT_JSON, LM_EVAL, inspect_samples, \
    lm_eval_answers

runner = CliRunner()


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# --- ProbeConfig -------------------------------------------------------------------------------

def test_one_home_for_the_defaults():
    """API, CLI and LLM probe take their defaults from ProbeConfig; cues ranked by z."""
    from cuelens.commands.probe import probe as cli_probe
    from cuelens.probes.llm.pipeline import probe_llm_dataset

    config = ProbeConfig()
    assert config.rank_by == "z" and config.top == 5 and config.min_support == 20
    api = inspect.signature(cuelens.probe).parameters
    cli = inspect.signature(cli_probe).parameters
    for name in ("top", "rank_by", "min_support", "bootstrap", "min_items", "seed"):
        assert api[name].default == getattr(config, name), name
        assert cli[name].default == getattr(config, name), name
    assert inspect.signature(probe_llm_dataset).parameters["config"].default is None
    result = runner.invoke(app, ["probe", "--help"], env={"COLUMNS": "200"})
    assert "z (default) tests only the scan's significant cues" in " ".join(result.output.split())


@pytest.mark.parametrize("options, message", [
    ({"rank_by": "nope"}, "rank_by (--rank-by): unknown metric 'nope'"),
    ({"top": 0}, "top (--top) must be at least 1, not 0"),
    ({"min_support": -2}, "min_support (--min-support) must be at least 1, not -2"),
    ({"bootstrap": 0}, "bootstrap (--bootstrap) must be at least 1, not 0")])
def test_config_checks_name_the_option_and_the_value(options, message):
    with pytest.raises(UserError, match=re.escape(message)):
        ProbeConfig(**options).validate()


def test_an_unknown_norm_is_named_before_any_work(tmp_path):
    """--norm-unit and norm= are checked up front, the message naming the option (--norm-unit foo
    was ignored without --norm; norm="bogus" on a predictions file read as the wrong source)."""
    rows = make_nli(60, seed=1)
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": r["id"], "prediction": r["label"]}
                                               for r in rows])
    for extra in ([], ["--norm"]):
        cli = runner.invoke(app, ["probe", str(data), "-p", str(preds), "--norm-unit", "foo",
                                  "--out", str(tmp_path / "out"), *extra])
        assert cli.exit_code != 0 and "Traceback" not in cli.output
        assert "unknown --norm-unit 'foo'; choose from chars, bytes" in cli.output
        assert not (tmp_path / "out").exists()
    with pytest.raises(UserError, match="unknown norm 'bogus'; choose from none, chars, bytes"):
        cuelens.probe(str(data), predictions=preds, norm="bogus")


def test_a_norm_unit_without_norm_is_one_error_line(tmp_path):
    """--norm-unit bytes without --norm was ignored silently: the log-likelihoods were read
    unnormalised, as if no unit had been given."""
    rows = make_nli(60, seed=1)
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": r["id"], "prediction": r["label"]}
                                               for r in rows])
    cli = runner.invoke(app, ["probe", str(data), "-p", str(preds), "--norm-unit", "bytes",
                              "--out", str(tmp_path / "out")])
    assert cli.exit_code == 2 and "Traceback" not in cli.output
    assert "--norm-unit bytes sets the length of --norm: add --norm" in " ".join(
        cli.output.split())
    assert not (tmp_path / "out").exists()


def test_log_options_with_a_model_are_one_error_line(tmp_path):
    """--norm and --id-field read evaluation logs: with --model (norm=/id_field= with model=)
    they were ignored silently, the model's own predictions probed as if they applied."""
    data = write_jsonl(tmp_path / "data.jsonl", make_nli(60, seed=1))
    model = str(tmp_path / "no-model")
    cli = runner.invoke(app, ["probe", str(data), "--model", model, "--norm",
                              "--out", str(tmp_path / "out")])
    assert cli.exit_code == 2 and "Traceback" not in cli.output
    assert "norm (--norm) reads evaluation logs" in " ".join(cli.output.split())
    assert not (tmp_path / "out").exists()
    with pytest.raises(UserError, match=r"^id_field \(--id-field\) and norm \(--norm\) read "
                                        "evaluation logs"):
        cuelens.probe(str(data), model=model, id_field="doc_id", norm="bytes")


def test_api_and_cli_probe_agree_on_defaults(tmp_path):
    """No probe options given: `audit probe` and cuelens.probe (on the same scan directory)
    test the same cues — the significant ones, by z — and write the same probe section."""
    rows = make_nli(300, seed=7)
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    wrong = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    preds = write_jsonl(tmp_path / "p.jsonl", [
        {"id": r["id"], "prediction": r["label"] if i % 3 else wrong[r["label"]]}
        for i, r in enumerate(rows)])
    scan = runner.invoke(app, ["scan", str(data), "--out", str(tmp_path / "scan"), "--folds",
                               "3", "--iterations", "1", "--features", "none"])
    assert scan.exit_code == 0, scan.output
    cli = runner.invoke(app, ["probe", str(data), "-p", str(preds), "--scan",
                              str(tmp_path / "scan"), "--out", str(tmp_path / "cli")])
    assert cli.exit_code == 0, cli.output
    from_cli = json.loads((tmp_path / "cli" / "results.json").read_text())["probe"]
    from_api = cuelens.probe(str(data), predictions=preds, scan=tmp_path / "scan").results
    assert from_cli["cue_selection"]["rank_by"] == "z"
    assert from_cli["cue_selection"]["significant_only"] is True
    assert "nobody" in {c["cue"] for c in from_cli["accuracy_test"]["cues"]}
    assert from_api["probe"] == from_cli


# --- the registry --------------------------------------------------------------------------------

def test_registry_names_every_source():
    assert dict(SOURCES.items()) == {"model": ModelSource, "predictions": PredictionsFile,
                       "lm-eval": LmEvalLog, "inspect": InspectLog, "llm": LLMPrompt}
    assert all(cls.name == name for name, cls in SOURCES.items())
    with pytest.raises(UserError, match="unknown prediction source 'csv'; choose from model, predictions"):
        make_source("csv", path="x")


@pytest.mark.parametrize("path, name", [(LM_EVAL, "lm-eval"), (INSPECT_EVAL, "inspect"),
                                        (INSPECT_JSON, "inspect"), (DATA, "predictions")])
def test_file_source_is_chosen_by_content(path, name):
    assert file_source(path).name == name


def _answers_file(tmp_path: Path, log: Path, dataset) -> Path:
    """A predictions file holding the answers the golden log records, read with json alone."""
    if log == LM_EVAL:
        answers = {doc_id: choice for doc_id, choice, _ in lm_eval_answers(log)}
        picks = [answers[i] for i in range(len(dataset.test))]
    else:
        by_id = {str(s["id"]): "ABC".index(s["scores"]["choice"]["answer"])
                 for s in inspect_samples(log)}
        picks = [by_id[item_id] for item_id in dataset.test.ids]
    return write_jsonl(tmp_path / "answers.jsonl", [
        {"id": item_id, "prediction": p} for item_id, p in zip(dataset.test.ids, picks)])


@pytest.mark.parametrize("log", [LM_EVAL, INSPECT_EVAL, INSPECT_JSON])
def test_golden_logs_and_a_predictions_file_give_the_same_probe(tmp_path, log):
    """One Predictions type whatever the source: the log's answers written as a predictions
    file give the same predictions and the same probe sections (but `model`, which says where
    they came from; lm-eval also logs probabilities, which no section here uses)."""
    dataset = load_dataset(str(DATA))
    scan = scan_dataset(dataset, ScanConfig(folds=3, iterations=1))
    from_log = file_source(log).predict(dataset)
    from_file = file_source(_answers_file(tmp_path, log, dataset)).predict(dataset)
    assert isinstance(from_log, Predictions) and isinstance(from_file, Predictions)
    np.testing.assert_array_equal(from_log.pred, from_file.pred)
    assert from_log.info["log"]["format"] == SOURCES[from_log.info["log"]["format"]].name
    assert from_file.info == {"name": "answers.jsonl", "resolved": str(tmp_path / "answers.jsonl"),
                              "source": "predictions"}
    config = ProbeConfig(rank_by="lmi", min_support=1, bootstrap=200)  # tiny data: no z cue
    probes = [probe_dataset(dataset, p, scan=scan, config=config).results["probe"]
              for p in (from_log, from_file)]
    assert probes[0].pop("model")["log"]["entries"] == len(dataset.test)
    probes[1].pop("model")
    assert probes[0]["accuracy_test"]["cues"]  # something was tested
    assert probes[0] == probes[1]


def test_model_source_runs_the_classifier_once(tmp_path):
    """ModelSource: Predictions of a classifier's probabilities (label order: the dataset's),
    through an injected runner when given (the Ray engine's hook)."""
    dataset = cuelens.load_dataset(make_nli(30, seed=1))
    calls = []

    class Fixed:
        resolved = "fixed"
        untrained = ()  # a fine-tuned head: nothing at random

        def untrained_note(self):
            return None

        class model:  # noqa: N801 - what classifier_predictions reads
            class config:  # noqa: N801
                id2label = {0: "neutral", 1: "contradiction", 2: "entailment"}

        def predict_proba(self, split, batch_size=None, on_batch=None):
            calls.append(batch_size)
            probs = np.tile([0.2, 0.5, 0.3], (len(split), 1))
            if on_batch is not None:
                on_batch(len(split))
            return probs

    seen = []
    preds = ModelSource(Fixed(), "fixed-model", 8).predict(dataset, on_items=seen.append)
    assert calls == [8] and seen == [30]
    assert dataset.label_names == ["contradiction", "entailment", "neutral"]
    np.testing.assert_allclose(preds.probs[0], [0.5, 0.3, 0.2])  # reordered to the dataset's
    assert preds.pred.tolist() == [0] * 30
    assert preds.info == {"name": "fixed-model", "resolved": "fixed", "source": "model"}
    runner_calls = []

    def runner_(split, batch_size=None, on_batch=None):
        runner_calls.append(len(split))
        return np.tile([0.1, 0.1, 0.8], (len(split), 1))

    other = ModelSource(Fixed(), "fixed-model", predict_proba=runner_).predict(dataset)
    assert runner_calls == [30] and calls == [8] and other.pred.tolist() == [1] * 30  # entailment


def test_a_model_label_the_dataset_lacks_is_one_warning():
    """A 3-way NLI model on 2-label data: its neutral column was dropped silently, each item
    taking the more probable of the other two (an item the model calls neutral counted as one of
    them); the predictions stay so and say so."""
    rows = [{"id": f"n{i}", "premise": "A man sleeps.", "hypothesis": f"Someone rests {i}.",
             "label": ("entailment", "contradiction")[i % 2]} for i in range(6)]
    dataset = cuelens.load_dataset(rows)

    class Fixed:
        resolved, untrained = "fixed", ()

        def untrained_note(self):
            return None

        class model:  # noqa: N801 - what classifier_predictions reads
            class config:  # noqa: N801
                id2label = {0: "entailment", 1: "neutral", 2: "contradiction"}

        def predict_proba(self, split, batch_size=None, on_batch=None):
            return np.tile([0.3, 0.5, 0.2], (len(split), 1))

    preds = ModelSource(Fixed(), "three-way").predict(dataset)
    assert preds.pred.tolist() == [1] * 6  # entailment, the more probable of the two
    np.testing.assert_allclose(preds.probs[0], [0.2, 0.3])
    assert preds.notes == ["the model also predicts neutral, not a label of this dataset: each "
                           "item's prediction is the most probable of its labels (contradiction, "
                           "entailment), and probs leave it out"]


def test_llm_prompt_source():
    """LLMPrompt: a backend asked through one template gives the probe's Predictions (the
    arg-max option; calibrated: 0.2/0.1 = 2 > 0.3/0.2 > 0.5/0.7)."""
    from cuelens.probes.llm.templates import TEMPLATES
    from tests.test_llm_probe import ScriptedBackend

    dataset = cuelens.load_dataset(make_nli(24, seed=2))
    template = TEMPLATES["nli-yes-no"]
    raw = make_source("llm", backend=ScriptedBackend(), template=template).predict(dataset)
    assert isinstance(raw, Predictions) and raw.pred.tolist() == [0] * 24
    np.testing.assert_allclose(raw.probs[0], [0.5, 0.3, 0.2])
    assert raw.info == {"name": "m", "backend": "scripted", "template": "nli-yes-no",
                        "source": "llm"}
    calibrated = LLMPrompt(ScriptedBackend(), template, calibrate=True).predict(dataset)
    assert calibrated.pred.tolist() == [2] * 24


def test_llm_prompt_of_a_template_or_backend_name_is_one_error():
    """LLMPrompt(backend="gpt2", template="nli-yes-no") was built, then cuelens.probe failed
    with an AttributeError traceback ("'str' object has no attribute 'check'"): each is now
    one error naming the argument and how to get one."""
    from cuelens.probes.llm.templates import TEMPLATES
    from tests.test_llm_probe import ScriptedBackend

    with pytest.raises(UserError, match=r"^template= takes a prompt template, TEMPLATES\[name\] "
                                        r"of cuelens.probes.llm.templates \(nli-yes-no, .*\), "
                                        r"not 'nli-yes-no'$"):
        make_source("llm", backend=ScriptedBackend(), template="nli-yes-no")
    with pytest.raises(UserError, match=r"^backend= takes a backend, load_backend\(spec\) of "
                                        r"cuelens.probes.llm.backends, not 'gpt2'$"):
        LLMPrompt("gpt2", TEMPLATES["nli-yes-no"])


def test_no_import_cycle_inside_probes():
    """Every import (top-level or deferred) between cuelens.probes modules points one way:
    evallogs→predictions and llm.openai→llm.requests←llm.backends, never back (issue 24)."""
    import ast
    import graphlib

    root = Path(cuelens.__file__).parent
    modules = {".".join(p.relative_to(root.parent).with_suffix("").parts): p
               for p in (root / "probes").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found |= {n for n in (node.module, *(f"{node.module}.{a.name}"
                                                      for a in node.names)) if n in modules}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name in modules}
        graph[name] = found - {name}
    assert "cuelens.probes.predictions" in graph["cuelens.probes.evallogs"]
    assert "cuelens.probes.llm.requests" in graph["cuelens.probes.llm.openai"]
    order = list(graphlib.TopologicalSorter(graph).static_order())  # CycleError on a cycle
    assert order.index("cuelens.probes.predictions") < order.index("cuelens.probes.sources")


def test_chance_of_questions_with_different_numbers_of_choices(tmp_path):
    """Chance is mean(1/k_i), as the scan's MCQ baselines have it: questions of 2 to 5 choices
    were judged against 1/2, so a model at 45% (chance 32%) was 'at chance, not interpretable'."""
    rows, preds = [], []
    for i in range(240):
        k = 2 + i % 4
        choices = [f"option {j} of item {i} reads {'long ' * (j % 3)}text" for j in range(k)]
        rows.append({"id": f"q{i}", "premise": f"Question {i} asks something.",
                     "choices": choices, "label": i % k})
        preds.append({"id": f"q{i}", "prediction": i % k if i % 20 < 9 else (i + 1) % k})
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    predictions = write_jsonl(tmp_path / "p.jsonl", preds)
    done = runner.invoke(app, ["probe", str(data), "-p", str(predictions), "--out",
                               str(tmp_path / "out"), "--bootstrap", "200"])
    assert done.exit_code == 0, done.output
    chance = float(np.mean([1 / (2 + i % 4) for i in range(240)]))
    sanity = json.loads((tmp_path / "out" / "results.json").read_text())["probe"]["sanity"]
    assert sanity["accuracy"]["chance"] == pytest.approx(chance, abs=1e-6)
    assert sanity["accuracy"]["accuracy"] == 0.45 and sanity["interpretable"] is True
    assert f"vs chance {100 * chance:.1f}%" in done.output
