"""The LLM prompt probe (docs/methods.md §6, docs/llm-probe.md): templates, answer parsing, calibration,
a GPT-2 with planted cue behaviour giving hand-computed per-template numbers, and the
OpenAI-compatible endpoint over real HTTP on 127.0.0.1 (retry, cache, resume)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cuelens.cli import app
from cuelens.data.dataset import Dataset
from cuelens.data.synthetic import NLI_CUES, PlantedCue, make_nli
from cuelens.errors import UserError
from cuelens.probes.cues import Cue, word_cues
from cuelens.probes.llm.backends import LocalBackend, Request, load_backend
from cuelens.probes.llm.cache import ResponseCache
from cuelens.probes.llm.openai import OpenAIBackend
from cuelens.probes.llm.parsing import parse_answer
from cuelens.probes.llm.pipeline import answer, mcq_score_fn, run_llm_probe
from cuelens.probes.llm.templates import TEMPLATES, PromptTemplate, read_template
from tests.conftest import write_jsonl
from tests.llm_fakes import (CUE, FakeEndpoint, mcq_dataset, one_thread,  # noqa: F401
                             planted_gpt2_dir, split_of)  # one_thread: autouse fixture
from tests.tiny_models import mcq_planted

LABELS = ["contradiction", "entailment", "neutral"]
CUES = ["nobody", "outdoors", "possibly"]
REVERSED = ("task: nli\nmode: score\nanswers: entailment=no, neutral=maybe, contradiction=yes\n"
            "---\nPremise: {{ premise }}\nHypothesis: {{ hypothesis }}\nRight?\nAnswer:")
GENERATE = ("task: nli\nmode: generate\nmax_new_tokens: 2\nstyle: plain\n"
            "answers: entailment=yes, neutral=maybe, contradiction=no\n---\n"
            "{{ premise }} {{ hypothesis }}{% if id.endswith('7') %} maybe-garbage{% endif %}"
            "\nAnswer:")
runner = CliRunner()


@pytest.fixture(scope="module")
def records():
    """Planted NLI data; "nobody" also occurs in other labels often enough (10%) for its
    distribution test to have every label."""
    cues = (PlantedCue("nobody", "contradiction", 0.40, 0.10), *NLI_CUES[1:])
    rows = make_nli(450, seed=2, vocab_size=200, cues=cues)
    return rows[:300], rows[300:]


@pytest.fixture(scope="module")
def dataset(records):
    train, test = records
    return Dataset("planted", "jsonl", "nli", split_of("train", train), split_of("test", test),
                   LABELS)


@pytest.fixture(scope="module")
def planted(tmp_path_factory, records):
    texts = [TEMPLATES[n].render({"premise": r["premise"], "hypothesis": r["hypothesis"],
                                  "labels": []}) + " yes no maybe"
             for r in records[0] + records[1] for n in ("nli-yes-no", "nli-true-false")]
    return planted_gpt2_dir(tmp_path_factory.mktemp("planted"), texts)


def _has(text: str, word: str) -> bool:
    return word in text.lower().replace(".", " ").split()


def _expected(test: list[dict], cue_label: str, other_label: str):
    """Planted behaviour: ``cue_label`` when the hypothesis has "nobody", else ``other_label``."""
    pred = [cue_label if _has(r["hypothesis"], CUE) else other_label for r in test]
    correct = np.array([p == r["label"] for p, r in zip(pred, test)], dtype=float)
    masks = {w: np.array([_has(r["hypothesis"], w) for r in test]) for w in CUES}
    deltas = {w: correct[m].mean() - correct[~m].mean() for w, m in masks.items()}
    return pred, correct, masks, deltas


def _jsd_onehot(k: int) -> float:
    """JSD (bits) between a one-hot distribution over k labels and uniform, by hand."""
    m = np.array([(1 + 1 / k) / 2] + [1 / (2 * k)] * (k - 1))
    p, u = np.eye(k)[0], np.full(k, 1 / k)
    kl = lambda a, b: sum(x * math.log2(x / y) for x, y in zip(a, b) if x > 0)  # noqa: E731
    return 0.5 * kl(p, m) + 0.5 * kl(u, m)


# ------------------------------------------------------------------ templates and parsing
def test_prompts_refuses_an_unknown_task():
    """A misspelt --task printed an empty table and exited 0."""
    listed = runner.invoke(app, ["prompts", "--task", "mcq"])
    assert listed.exit_code == 0 and "mcq-letter" in listed.output
    assert "nli-yes-no" not in listed.output
    bad = runner.invoke(app, ["prompts", "--task", "MCQs"])
    assert bad.exit_code == 2 and "unknown --task 'MCQs'" in bad.output


def test_prompts_lists_every_template_name_whole_on_a_narrow_terminal():
    """The name column was cut to 'nli-true-false…' at 80 columns: not a name to pass."""
    listed = runner.invoke(app, ["prompts"], env={"COLUMNS": "80"})
    assert listed.exit_code == 0
    assert all(f"│ {name} " in listed.output for name in TEMPLATES), listed.output


def test_template_renders_in_a_sandbox_and_files_parse(tmp_path):
    t = TEMPLATES["mcq-letter"]
    text = t.render({"premise": "P", "question": "", "choices": ["x", "y"],
                     "letters": ["A", "B"], "labels": []})
    assert "A. x\nB. y\n" in text
    evil = PromptTemplate("evil", "nli", "score", "{{ premise.__class__.__mro__ }}",
                          {"e": "y"})
    with pytest.raises(UserError, match="evil"):
        evil.render({"premise": "p"})
    path = tmp_path / "mine.prompt"
    path.write_text(REVERSED)
    mine = read_template(path)
    assert (mine.name, mine.mode, mine.answers["contradiction"]) == ("mine", "score", "yes")
    path.write_text("task: nli\nmode: score\nanswer: x=y\n---\n{{ premise }}")
    with pytest.raises(UserError, match="line 3"):
        read_template(path)
    path.write_text("task: nli\nmode: score\nanswers: x=y\n---\n{{ premise ")
    with pytest.raises(UserError, match="syntax"):
        read_template(path)


def test_docs_template_file_parses_and_a_bad_task_names_its_line_and_value(tmp_path):
    """docs/llm-probe.md's template file is read as written; a task line with a comment after
    its value is one error naming the line and the value read (it said the front matter
    needed 'task: nli|mcq', which it had)."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "llm-probe.md").read_text("utf-8")
    example = re.search(r"^```\n(# my-template\.prompt.*?)^```", doc, flags=re.M | re.S)
    path = tmp_path / "my-template.prompt"
    path.write_text(example.group(1), encoding="utf-8")
    mine = read_template(path)
    assert (mine.task, mine.mode, mine.answers["contradiction"]) == ("nli", "score", "no")
    path.write_text("mode: score\ntask: nli   # nli | mcq\nanswers: x=y\n---\n{{ premise }}")
    with pytest.raises(UserError, match=r"line 2: task must be nli or mcq, not 'nli   # nli"):
        read_template(path)
    path.write_text("task: nli\nanswers: x=y\n---\n{{ premise }}")
    with pytest.raises(UserError, match="needs 'mode: score|generate'"):
        read_template(path)
    path.write_text("mode: score\ntask: nli\nanswers: x=yes, z=no   # the NLI words\n---\n"
                    "{{ premise }}")
    with pytest.raises(UserError, match=r"line 3: answers: 'no   # the NLI words' holds a "
                                        "comment"):
        read_template(path)


@pytest.mark.parametrize("text, expected", [
    ("Let me think. No wait... Answer: maybe", 1), ("answer is **Yes**.", 0),
    ("No, because the premise says so.", 2), ("It is clearly maybe the case", 1),
    ("hard to say: yes or no", None), ("Yes or no? Yes.", 0), ("I cannot tell.", None), ("Nobody knows", None)])
def test_parse_answer_words(text, expected):
    assert parse_answer(text, ["yes", "maybe", "no"]) == expected


def test_parse_answer_letters_ignore_the_article_a():
    assert parse_answer("I pick a fine one: (B)", ["A", "B"], letters=True) == 1
    assert parse_answer("a thought. Answer: A", ["A", "B"], letters=True) == 0
    assert parse_answer("a b c", ["A", "B"], letters=True) is None


class ScriptedBackend:
    """Fixed option log-probabilities: content-free prompts get the prior 0.7/0.2/0.1, real
    prompts 0.5/0.3/0.2 with token counts 1/3/1."""

    name, model, settings = "scripted", "m", {}

    def info(self) -> dict:
        return {"name": self.model, "backend": self.name}

    def run(self, requests, on_result):
        for i, r in enumerate(requests):
            p = [0.7, 0.2, 0.1] if "N/A" in r.prompt else [0.5, 0.3, 0.2]
            on_result(i, {"logprobs": list(np.log(p)), "n_tokens": [1, 3, 1],
                          "prompt_tokens": 5, "completion_tokens": 5})


def test_calibration_and_length_normalisation_by_hand(dataset):
    t = TEMPLATES["nli-yes-no"]   # options in label order: contradiction=no, entailment=yes, …
    backend = ScriptedBackend()
    raw = answer(backend, t, dataset)
    assert set(raw.pred) == {0}                    # the largest raw probability (0.5) wins
    calibrated = answer(backend, t, dataset, calibrate=True)
    assert set(calibrated.pred) == {2}             # 0.2/0.1 = 2 > 0.3/0.2 = 1.5 > 0.5/0.7
    np.testing.assert_allclose(calibrated.probs[0], np.array([5 / 7, 1.5, 2]) / (5 / 7 + 3.5))
    normalised = answer(backend, t, dataset, normalize=True)  # log .3 / 3 = −0.40 is the largest
    assert set(normalised.pred) == {1}
    assert calibrated.prompt_tokens == 5 * (len(dataset.test) + 1)  # one content-free prompt


# ------------------------------------------------------------------ a planted causal LM
def test_prefix_cached_scores_equal_word_probabilities(planted):
    from cuelens.lm import load_scorer

    scorer = load_scorer(str(planted), kind="causal", device="cpu", batch_size=4)
    prompts = ["Premise: a man is here. Hypothesis: nobody is here. Answer:", "Answer:",
               "A woman sits in the park near the table"]
    options = [["yes", "no", "maybe"], ["maybe no", "yes"], ["no", "yes yes", "maybe"]]
    for (values, counts), prompt, opts in zip(scorer.continuation_logprobs(prompts, options),
                                              prompts, options):
        words = [scorer.word_logprobs([f"{prompt} {o}"])[0][-len(o.split()):].sum()
                 for o in opts]
        np.testing.assert_allclose(values, words, atol=1e-4)
        assert list(counts) == [len(scorer.tokenizer(" " + o)["input_ids"]) for o in opts]


def test_planted_model_gives_the_hand_computed_numbers(planted, dataset, records, tmp_path):
    from cuelens.lm import load_scorer

    path = tmp_path / "reversed.prompt"
    path.write_text(REVERSED)
    gen = tmp_path / "gen.prompt"
    gen.write_text(GENERATE)
    templates = [TEMPLATES["nli-yes-no"], read_template(path), read_template(gen)]
    backend = LocalBackend(load_scorer(str(planted), kind="causal", device="cpu",
                                       batch_size=16), model="planted")
    cues = word_cues(dataset, CUES)
    run = run_llm_probe(dataset, backend, templates, cues, seed=0, n_boot=200, min_items=5)
    test = records[1]
    by_name = {t["name"]: t for t in run.section["templates"]}
    for name, (cue_label, other) in {"nli-yes-no": ("contradiction", "entailment"),
                                     "reversed": ("entailment", "contradiction"),
                                     "gen": ("contradiction", "entailment")}.items():
        pred, correct, masks, deltas = _expected(test, cue_label, other)
        section = by_name[name]
        assert section["unparseable"]["n"] == 0  # the planted model always answers yes/no
        assert [LABELS[p] for p in run.answers[name].pred] == pred
        assert section["accuracy"] == pytest.approx(correct.mean(), abs=1e-6)
        rows = {c["cue"]: c for c in section["accuracy_test"]["cues"]}
        for w in CUES:
            assert rows[w]["n_with"] == masks[w].sum()
            assert rows[w]["delta"] == pytest.approx(deltas[w], abs=1e-6)
            assert rows[w]["ci_low"] <= rows[w]["delta"] <= rows[w]["ci_high"]
        assert section["accuracy_test"]["total_abs_delta"] == pytest.approx(
            sum(abs(d) for d in deltas.values()), abs=1e-5)
        dist = {c["cue"]: c for c in section["distribution_test"]["cues"]}["nobody"]
        assert dist["predicted_dist"][cue_label] == 1.0   # every balanced cue item: one label
        sign = 1 if cue_label == "contradiction" else -1  # "nobody" favours contradiction
        assert dist["score"] == pytest.approx(sign * _jsd_onehot(3), abs=1e-6)
    totals = {n: s["accuracy_test"]["total_abs_delta"] for n, s in by_name.items()}
    assert run.section["verdict"]["least_cue_reliant"] == min(totals, key=totals.get)


@pytest.mark.slow
def test_cli_llm_probe_on_a_local_model(planted, records, tmp_path):
    data = tmp_path / "data"
    write_jsonl(data / "train.jsonl", records[0])
    write_jsonl(data / "test.jsonl", records[1])
    out = tmp_path / "out"
    result = runner.invoke(app, ["probe", str(data), "--llm", str(planted), "--prompt",
                                 "nli-yes-no", "--out", str(out), "--bootstrap", "100",
                                 "--min-items", "5", "--device", "cpu"],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    section = results["llm_probe"]["templates"][0]
    _, correct, _, _ = _expected(records[1], "contradiction", "entailment")
    assert section["accuracy"] == pytest.approx(correct.mean(), abs=1e-6)
    verdict = results["llm_probe"]["verdict"]  # one template: nothing to compare it with
    assert verdict["least_cue_reliant"] is None and "one template" in verdict["reason"]
    rows = [json.loads(x) for x in (out / "predictions-nli-yes-no.jsonl").read_text().split("\n")
            if x]
    assert len(rows) == len(records[1]) and len(rows[0]["probs"]) == 3
    html = (out / "report.html").read_text()
    assert "prompted language model" in html and "fig-llm_probe-delta" in html
    bad = runner.invoke(app, ["probe", str(data), "--llm", str(planted), "--prompt",
                              "mcq-letter", "--out", str(tmp_path / "o2")])
    assert bad.exit_code == 2 and "is for MCQ items" in bad.output



@pytest.mark.parametrize("template", ["mcq-choice", "mcq-letter-cot"])
def test_a_prompt_longer_than_the_model_names_its_template_and_item(planted, template):
    """A generate prompt past the model's positions was an IndexError traceback from torch; a
    score prompt's error numbered it within its batch ("prompt 3"), naming no item."""
    from cuelens.lm import load_scorer

    scorer = load_scorer(str(planted), kind="causal", device="cpu")
    backend = LocalBackend(scorer, model="planted")
    _, test = mcq_planted()
    test = [dict(r) for r in test[:6]]
    test[4]["premise"] = " ".join([test[4]["premise"]] * 30)
    data, _ = mcq_dataset(test)
    lengths = backend._prompt_tokens([TEMPLATES[template].render(
        {"premise": r["premise"], "question": "", "choices": r["choices"],
         "letters": ["A", "B"], "labels": []}) for r in test])
    extra = TEMPLATES[template].max_new_tokens if template.endswith("cot") else 20
    scorer.max_length = sorted(lengths)[-2] + extra  # only item 4 is too long
    with pytest.raises(UserError, match=f"prompt template '{template}', item "
                                        f"'{test[4]['id']}': the prompt .* do not fit"):
        answer(backend, TEMPLATES[template], data)

def test_mcq_scoring_matches_naive_per_choice_forward_passes(planted):
    import torch

    from cuelens.lm.causal import CausalScorer
    from cuelens.lm import load_scorer

    base = load_scorer(str(planted), kind="causal", device="cpu")
    scorer = CausalScorer(base.model, base.tokenizer, name="p", bow_correction=False)
    backend = LocalBackend(scorer, model="planted")
    _, test = mcq_planted()
    premises = [r["premise"] for r in test[:6]]
    choices = [r["choices"] for r in test[:6]]
    scores = mcq_score_fn(backend, TEMPLATES["mcq-choice"])(premises, choices)
    tok = scorer.tokenizer
    for premise, options, got in zip(premises, choices, scores):
        prompt = TEMPLATES["mcq-choice"].render({"premise": premise, "question": ""})
        head = [scorer.bos, *tok(prompt, add_special_tokens=False)["input_ids"]]
        naive = []
        for option in options:
            tail = tok(" " + option, add_special_tokens=False)["input_ids"]
            with torch.inference_mode():
                logp = torch.log_softmax(scorer.model(torch.tensor([head + tail])).logits[0], -1)
            naive.append(sum(float(logp[len(head) - 1 + j, t]) for j, t in enumerate(tail)))
        np.testing.assert_allclose(got, naive, atol=1e-4)


# ------------------------------------------------------------------ the HTTP endpoint
PROBES = 2  # the capability probe: one /completions and one /chat/completions request


def test_endpoint_scores_generates_retries_and_resumes(dataset, records, tmp_path):
    test = records[1]
    gen = tmp_path / "gen.prompt"
    gen.write_text(GENERATE)
    templates = [TEMPLATES["nli-yes-no"], read_template(gen)]
    garbage = np.array([r["id"].endswith("7") for r in test])
    cues = word_cues(dataset, CUES)
    n = len(test)
    total = 3 * n + n  # one string prompt per option (3 labels), one chat request per item
    with FakeEndpoint() as server:
        backend = OpenAIBackend("fake", server.url, concurrency=3, retries=2, backoff=0.01,
                                timeout=10)
        server.fail_next = 2                     # two injected 500s, retried
        run = run_llm_probe(dataset, backend, templates, cues, n_boot=100, min_items=5)
        assert server.count == backend.requests_sent == PROBES + total + 2
        assert run.section["model"]["scoring"] == "echo"
        _, correct, masks, _ = _expected(test, "contradiction", "entailment")
        scored, generated = run.section["templates"]
        assert scored["accuracy"] == pytest.approx(correct.mean(), abs=1e-6)
        assert scored["unparseable"]["n"] == 0
        assert generated["unparseable"] == {"n": int(garbage.sum()),
                                            "rate": round(float(garbage.mean()), 6)}
        correct = correct * ~garbage   # unparseable answers count as wrong
        assert generated["accuracy"] == pytest.approx(correct.mean(), abs=1e-6)
        row = {c["cue"]: c for c in generated["accuracy_test"]["cues"]}["nobody"]
        m = masks["nobody"]
        assert row["delta"] == pytest.approx(correct[m].mean() - correct[~m].mean(), abs=1e-6)
        assert generated["tokens"]["completion"] == 7 * n

        cache = ResponseCache(tmp_path / "cache.sqlite")
        server.count, server.fail_after = 0, 100   # the server dies after 100 requests
        with pytest.raises(UserError, match="resumes"):
            run_llm_probe(dataset, OpenAIBackend("fake", server.url, concurrency=3, retries=1,
                                                 backoff=0.01), templates, cues, cache=cache)
        stored = len(cache)   # scored items (3 requests each) answered before the server died
        assert 20 <= stored <= (100 - PROBES) // 3
        server.count, server.fail_after = 0, None  # back up: only the missing answers are asked
        again = run_llm_probe(dataset, OpenAIBackend("fake", server.url), templates, cues,
                              cache=cache, n_boot=100, min_items=5)
        assert server.count == PROBES + 3 * (n - stored) + n and len(cache) == 2 * n
        server.count = 0
        third = run_llm_probe(dataset, OpenAIBackend("fake", server.url), templates, cues,
                              cache=cache, n_boot=100, min_items=5)
        assert server.count == PROBES   # every answer from the cache
        assert third.section == again.section == run.section
        cache.close()


def test_endpoint_mcq_letters_generated(tmp_path):
    dataset, test = mcq_dataset()
    with FakeEndpoint() as server:
        server.cue = "never"
        backend = OpenAIBackend("fake", server.url)
        got = answer(backend, TEMPLATES["mcq-letter-cot"], dataset)
    expected = [next((j for j, c in enumerate(r["choices"]) if "never" in c), 0) for r in test]
    assert list(got.pred) == expected


@pytest.mark.slow
def test_endpoint_cli_hides_the_key_and_costs_nothing_the_second_time(records, tmp_path,
                                                                      monkeypatch):
    data = tmp_path / "data"
    write_jsonl(data / "train.jsonl", records[0])
    write_jsonl(data / "test.jsonl", records[1])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-cuelens-test")
    with FakeEndpoint() as server:
        args = ["probe", str(data), "--llm", "openai:fake", "--base-url", server.url,
                "--prompt", "nli-yes-no", "--prompt", "nli-yes-no-cot", "--bootstrap", "100",
                "--min-items", "5", "--cache", str(tmp_path / "c.sqlite")]
        first = runner.invoke(app, args + ["--out", str(tmp_path / "a")],
                              catch_exceptions=False)
        assert first.exit_code == 0, first.output
        assert server.count == PROBES + 4 * len(records[1])
        server.count = 0
        second = runner.invoke(app, args + ["--out", str(tmp_path / "b")],
                               catch_exceptions=False)
        assert second.exit_code == 0 and server.count == PROBES
    a, b = ((tmp_path / d / "results.json").read_bytes() for d in "ab")
    assert a == b
    for path in [*tmp_path.rglob("*.json*"), tmp_path / "c.sqlite", *tmp_path.rglob("*.html")]:
        assert b"sk-secret-cuelens-test" not in path.read_bytes()
    missing = runner.invoke(app, ["probe", str(data), "--llm", "openai:fake"])
    assert missing.exit_code == 2 and "--base-url" in missing.output


def test_load_backend_registry():
    with pytest.raises(UserError, match="needs a model"):
        load_backend("openai:")
    assert Request("score", "p", ("a",)).key_parts() == ["score", "p", ["a"], 0]


def test_report_section_escapes_template_and_cue_names():
    from cuelens.reports import validate_results
    from cuelens.reports.render import render_html
    from cuelens.reports.pages import build_sections
    from tests.report_fixtures import PAYLOADS, nli_results

    results = nli_results()
    cue = {"cue": PAYLOADS[0], "kind": "word", "n_with": 20, "n_without": 80, "acc_with": 0.9,
           "acc_without": 0.5, "delta": 0.4, "ci_low": 0.2, "ci_high": 0.6}
    dist = {"cue": PAYLOADS[0], "train_dist": {"contradiction": 0.8, "entailment": 0.1,
                                                "neutral": 0.1},
            "predicted_dist": {"contradiction": 0.6, "entailment": 0.2, "neutral": 0.2},
            "n": 30, "score": 0.1}
    templates = [{"name": name, "mode": "score", "style": "plain", "accuracy": 0.5,
                  "unparseable": {"n": 0, "rate": 0.0},
                  "tokens": {"prompt": 10, "completion": 2, "total": 12},
                  "accuracy_test": {"cues": [dict(cue, delta=d)], "total_abs_delta": abs(d)},
                  "distribution_test": {"cues": [dist]}}
                 for name, d in ((PAYLOADS[1], 0.4), (PAYLOADS[2], -0.1))]
    results["llm_probe"] = {"model": {"name": PAYLOADS[0], "backend": "hf"},
                            "templates": templates,
                            "verdict": {"least_cue_reliant": PAYLOADS[2]}}
    validate_results(results)
    section = {s.key: s for s in build_sections(results)}["llm_probe"]
    assert set(section.figures) == {"accuracy", "delta", "distribution"}
    html = render_html(results)
    for payload in PAYLOADS[:3]:
        assert payload not in html
    assert "&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in html  # the verdict, escaped


def _verdict_section(name, total, rate=0.0, accuracy=0.5):
    return {"name": name, "accuracy": accuracy, "unparseable": {"rate": rate},
            "accuracy_test": {"cues": [{"cue": "w"}], "total_abs_delta": total}}


def test_verdict_skips_templates_that_mostly_cannot_be_read():
    from cuelens.probes.llm.pipeline import verdict

    sections = [_verdict_section("a", 0.3), _verdict_section("b", 0.0, 0.9, 0.0),
                _verdict_section("c", 0.2, 0.5), _verdict_section("d", 0.2, 0.1, 0.6)]
    correct = {name: np.ones(40) for name in "abcd"}
    cue = Cue("w", "word", np.arange(40) < 20)
    assert verdict(sections, correct, [cue])["ranking"] == ["d", "c", "a"]
    assert verdict([_verdict_section("b", 0.0, 0.9)], {}, [])["least_cue_reliant"] is None


def test_verdict_names_a_template_only_when_it_relies_less_beyond_the_noise():
    """"a" is right exactly on the items with the cue (ΔAcc +100 points), "b" on every other
    item (−100), "c" and "d" on a random half, whatever the cue. The totals rank "c" or "d"
    first; it is named against "a" and "b", not against its twin."""
    from cuelens.probes.llm.pipeline import verdict

    rng = np.random.default_rng(0)
    cue = Cue("w", "word", np.arange(400) % 2 == 0)
    correct = {"a": cue.test_mask * 1.0, "b": 1.0 - cue.test_mask,
               "c": rng.integers(0, 2, 400) * 1.0, "d": rng.integers(0, 2, 400) * 1.0}

    def section(name):
        right, mask = correct[name], cue.test_mask
        return _verdict_section(name, abs(right[mask].mean() - right[~mask].mean()))

    clear = verdict([section("a"), section("b"), section("c")], correct, [cue], seed=0)
    assert clear["least_cue_reliant"] == "c"
    assert [d["template"] for d in clear["differences"]] == ["a", "b"]
    assert all(d["ci_low"] > 0.8 for d in clear["differences"])
    twins = verdict([section(n) for n in "abcd"], correct, [cue], seed=0)
    assert twins["least_cue_reliant"] is None and twins["ranking"][:2] in (["c", "d"], ["d", "c"])
    assert "no template relies measurably less" in twins["reason"]
