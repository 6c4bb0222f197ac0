"""``audit probe --llm --position-bias``: the position-bias probe (docs/methods.md §6,
docs/mcq-artifacts.md) run through each prompt template (docs/llm-probe.md), on LLMs with
planted position behaviour: exact accuracy per position, consistency, Cochran's Q."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cuelens.cli import app
from cuelens.errors import UserError
from cuelens.probes.llm.backends import LocalBackend
from cuelens.probes.llm.openai import OpenAIBackend
from cuelens.probes.llm.pipeline import mcq_score_fn, run_llm_probe, template_position_bias
from cuelens.probes.llm.templates import TEMPLATES
from cuelens.probes.position import position_bias
from cuelens.reports.schema import validate_results
from tests.conftest import write_jsonl
from tests.llm_fakes import (FakeEndpoint, mcq_dataset, one_thread,  # noqa: F401
                             planted_gpt2_dir)  # one_thread: autouse fixture
from tests.tiny_models import mcq_planted

runner = CliRunner()
# 40 two-choice questions, the model always answering A: right exactly when the gold answer is
# at A (once per question), Q = (k−1)(k ΣC² − T²)/(kT − ΣR²) = (2·40² − 40²)/(2·40 − 40) = 40.
ALWAYS_A = {"n_items": 40, "rotations": 80, "seed": 3, "accuracy_all_rotations": 0.5,
            "accuracy_by_position": [1.0, 0.0], "n_by_position": [40, 40], "spread": 1.0,
            "consistency": 0.0, "unanswered": 0}


def _check_always_a(section: dict, source: str) -> None:
    assert section["source"] == source
    assert {k: section[k] for k in ALWAYS_A} == ALWAYS_A
    assert (section["cochran_q"]["q"], section["cochran_q"]["df"]) == (40.0, 1)
    assert section["cochran_q"]["significant"]
    assert section["predicted_positions"]["counts"] == [40, 0]


def test_generated_letter_always_a():
    dataset, _ = mcq_dataset()       # the endpoint answers "A" (no "nobody" in these choices)
    with FakeEndpoint() as server:
        backend = OpenAIBackend("fake", server.url)
        section = template_position_bias(backend, TEMPLATES["mcq-letter-cot"], dataset, seed=3)
        assert server.count == 80    # every question once per rotation
    _check_always_a(section, "prompt mcq-letter-cot")


def test_generated_letter_follows_content_and_unparseable_is_no_pick():
    """The endpoint picks the choice with "never" wherever it sits (24 questions, gold in 14),
    else A (16 plain questions, 4 of them unreadable: 8 rotations without a pick)."""
    _, test = mcq_planted()
    for row in test[24:28]:
        row["premise"] += " maybe-garbage"
    dataset, _ = mcq_dataset(test)
    with FakeEndpoint() as server:
        server.cue = "never"
        backend = OpenAIBackend("fake", server.url)
        template = TEMPLATES["mcq-letter-cot"]
        section = template_position_bias(backend, template, dataset, seed=1)
        via_score_fn = position_bias(dataset.test, mcq_score_fn(backend, template), seed=1)
    assert section["accuracy_by_position"] == [(14 + 12) / 40, 14 / 40]
    assert section["consistency"] == 24 / 40 and section["unanswered"] == 8
    assert sum(section["predicted_positions"]["counts"]) == 40 - 4
    assert via_score_fn == {k: v for k, v in section.items() if k != "source"}


@pytest.fixture(scope="module")
def letter_a(tmp_path_factory):
    """A GPT-2 whose next token is " A" by +4 logits over everything (no "nobody" here)."""
    _, test = mcq_planted()
    texts = []
    for row in test:
        for choices in (row["choices"], row["choices"][::-1]):
            texts.append(TEMPLATES["mcq-letter"].render(
                {"premise": row["premise"], "question": "", "choices": choices,
                 "letters": ["A", "B"], "labels": []}) + " A B")
    return planted_gpt2_dir(tmp_path_factory.mktemp("letter-a"), texts, yes="A", no="B")


def test_scored_letters_always_a_and_nli_refused(letter_a):
    from cuelens.lm import load_scorer

    dataset, _ = mcq_dataset()
    backend = LocalBackend(load_scorer(str(letter_a), kind="causal", device="cpu"),
                           model="letter-a")
    run = run_llm_probe(dataset, backend, [TEMPLATES["mcq-letter"]], [], seed=3, n_boot=10,
                        position_bias=True)
    _check_always_a(run.section["templates"][0]["position_bias"], "prompt mcq-letter")
    assert run.section["templates"][0]["accuracy"] == 0.5   # gold at A in 20 of 40 as given
    nli = type(dataset)("nli", "jsonl", "nli", dataset.train, dataset.test, ["a", "b"])
    with pytest.raises(UserError, match="multiple-choice"):
        run_llm_probe(nli, backend, [], [], position_bias=True)


@pytest.mark.slow
def test_cli_llm_position_bias(letter_a, tmp_path):
    train, test = mcq_planted()
    data = tmp_path / "data"
    write_jsonl(data / "train.jsonl", train)
    write_jsonl(data / "test.jsonl", test)
    out = tmp_path / "out"
    args = ["probe", str(data), "--llm", str(letter_a), "--prompt", "mcq-letter",
            "--position-bias", "--seed", "3", "--bootstrap", "10", "--min-items", "5",
            "--device", "cpu", "--out", str(out)]
    result = runner.invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "mcq-letter position bias" in result.output and "(answer at A)" in result.output
    results = json.loads((out / "results.json").read_text())
    validate_results(results)
    _check_always_a(results["llm_probe"]["templates"][0]["position_bias"], "prompt mcq-letter")
    html = (out / "report.html").read_text()
    assert "fig-llm_probe-position_bias_0" in html and "Position bias," in html
    bad = runner.invoke(app, [*args[:-1], str(tmp_path / "o2"), "--position-lm", "gpt2"])
    assert bad.exit_code == 2 and "use --position-bias" in bad.output


class _EvenScores:
    """A score backend giving every option the same log-probability: no position is preferred."""

    name, model, settings = "even", "even", {}

    def info(self) -> dict:
        return {"name": self.model, "backend": self.name}

    def run(self, requests, on_result) -> None:
        for i, request in enumerate(requests):
            on_result(i, {"logprobs": [-1.0] * len(request.options),
                          "n_tokens": [1] * len(request.options),
                          "prompt_tokens": 1, "completion_tokens": 0})


def test_scored_shared_top_score_is_a_tie_not_position_a():
    """The template's answers were argmax, so a model without any preference showed 100% at A,
    0% at B and a significant Cochran's Q; ties are now counted as in the position probe."""
    dataset, _ = mcq_dataset()
    section = template_position_bias(_EvenScores(), TEMPLATES["mcq-letter"], dataset, seed=3)
    assert section["ties"] == 80 and section["unanswered"] == 0
    assert section["accuracy_by_position"] == [0.0, 0.0]
    assert not section["cochran_q"]["significant"]
    assert not section["predicted_positions"]["counts"]   # no question was answered
