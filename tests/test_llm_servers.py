"""OpenAI-compatible servers that are not OpenAI (docs/llm-probe.md, "Servers"): the capability
probe picks a scoring route per server family (recorded-behaviour fakes of OpenAI, vLLM,
llama.cpp, transformers serve and Ollama on 127.0.0.1), a server that is not there fails in
seconds with one line, and a real ``transformers serve`` started here runs every generate template
and refuses score templates in one line before any item is asked."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cuelens.cli import app
from cuelens.data.dataset import Dataset
from cuelens.errors import UserError
from cuelens.probes.llm.openai import OpenAIBackend
from cuelens.probes.llm.pipeline import answer
from cuelens.probes.llm.templates import TEMPLATES, with_max_new_tokens
from tests.conftest import write_jsonl
from tests.llm_fakes import FakeEndpoint, mcq_dataset, one_thread, split_of  # noqa: F401
from tests.tiny_models import mcq_planted, nli_planted

runner = CliRunner()
ROUTES = {"openai": "echo", "vllm": "echo", "llama.cpp": "chat-top-logprobs",
          "ollama": "chat-top-logprobs", "transformers": None}


def cue_letters(test: list[dict], cue: str) -> list[int]:
    return [next((j for j, c in enumerate(r["choices"]) if cue in c), 0) for r in test]


@pytest.mark.parametrize("family", list(ROUTES))
def test_each_server_family_gets_the_route_it_supports(family):
    dataset, test = mcq_dataset()
    expected = cue_letters(test, "never")
    with FakeEndpoint(family) as server:
        server.cue = "never"
        backend = OpenAIBackend("m", server.url, retries=0)
        assert backend.capabilities().route == ROUTES[family]
        assert server.count == 2  # the probe: one /completions, one /chat/completions
        if ROUTES[family] is None:
            with pytest.raises(UserError) as err:
                backend.prepare([TEMPLATES["mcq-letter"], TEMPLATES["mcq-letter-cot"]])
            message = str(err.value)
            assert "returns no log-probabilities" in message and "\n" not in message
            assert "it can run: mcq-letter-cot" in message
            assert server.count == 2  # refused before any item was asked
        else:
            got = answer(backend, TEMPLATES["mcq-letter"], dataset)  # letters: every route
            assert got.pred.tolist() == expected
            assert backend.info()["scoring"] == ROUTES[family]
        if ROUTES[family] == "chat-top-logprobs":  # whole choice texts need echo
            with pytest.raises(UserError, match="only one-word answers"):
                backend.prepare([TEMPLATES["mcq-choice"]])
        server.count = 0
        generated = answer(backend, TEMPLATES["mcq-letter-cot"], dataset)
        assert generated.pred.tolist() == expected and server.count == len(test)
        assert set(server.paths[-len(test):]) == {"/v1/chat/completions"}


def test_scores_are_per_option_string_prompts():
    """transformers serve refuses a list prompt; every option is sent as its own string."""
    dataset, test = mcq_dataset()
    with FakeEndpoint("vllm") as server:
        server.cue = "never"
        backend = OpenAIBackend("m", server.url)
        got = answer(backend, TEMPLATES["mcq-choice"], dataset)
        assert got.pred.tolist() == cue_letters(test, "never")
        assert server.count == 2 + 2 * len(test)  # 2 choices each


@contextlib.contextmanager
def silent_server():
    """A TCP server that accepts connections and never answers (a hung endpoint)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join(timeout=2)
        for conn in held:
            conn.close()
        listener.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("where,message", [
    ("refused", "cannot connect to 127.0.0.1"), ("dns", "cannot resolve host"),
    ("silent", "cannot reach the server")])
def test_no_server_fails_in_seconds_with_one_line(where, message):
    dataset, _ = mcq_dataset()
    url = {"refused": f"http://127.0.0.1:{free_port()}/v1",
           "dns": "http://no-such-host.invalid/v1"}.get(where)
    with contextlib.ExitStack() as stack:
        url = url or stack.enter_context(silent_server())
        backend = OpenAIBackend("m", url, retries=5, backoff=1.0, timeout=1.0)
        begun = time.monotonic()
        with pytest.raises(UserError, match=message) as err:
            answer(backend, TEMPLATES["mcq-letter-cot"], dataset)
        assert time.monotonic() - begun < 5  # no retries, no backoff: retries=5 would be 31 s
        assert "\n" not in str(err.value)


def test_cli_no_server_is_one_line(tmp_path):
    train, test = mcq_planted()
    data = tmp_path / "data"
    write_jsonl(data / "train.jsonl", train)
    write_jsonl(data / "test.jsonl", test)
    result = runner.invoke(app, ["probe", str(data), "--llm", "openai:m", "--base-url",
                                 f"http://127.0.0.1:{free_port()}/v1", "--no-cache",
                                 "--prompt", "mcq-letter-cot", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "is the server running" in result.output
    assert "Traceback" not in result.output


# ------------------------------------------------------------------ a real transformers serve
def _serve_available() -> bool:
    try:
        from transformers.utils.import_utils import is_serve_available
    except ImportError:
        return False
    return is_serve_available()


def tiny_chat_model(path: Path) -> Path:
    from tests.lm_random_init import byte_level_bpe, gpt2

    texts = ["Which option is the right one? Answer: A B C yes no maybe"] * 4
    tokenizer = byte_level_bpe(texts, 300)
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
    gpt2(tokenizer, positions=1024).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def transformers_serve(tmp_path_factory):
    """``transformers serve`` on 127.0.0.1 with a tiny random GPT-2 (at most 120 s to start)."""
    if not _serve_available():
        pytest.skip("transformers serve needs its serving extra (fastapi, uvicorn, openai): "
                    "pip install 'cuelens[dev]'")
    model = tiny_chat_model(tmp_path_factory.mktemp("served") / "model")
    port = free_port()
    log = open(model.parent / "serve.log", "wb")
    command = [sys.executable, "-c", "from transformers.cli.transformers import main; main()",
               "serve", str(model), "--host", "127.0.0.1", "--port", str(port),
               "--device", "cpu"]
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(url + "/models", timeout=2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("transformers serve did not start: "
                                + (model.parent / "serve.log").read_text()[-500:])
                time.sleep(1)
        yield str(model), url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


@pytest.mark.slow
@pytest.mark.timing
def test_real_transformers_serve(transformers_serve, tmp_path):
    model, url = transformers_serve
    dataset, test = mcq_dataset(mcq_planted()[1][:6])
    backend = OpenAIBackend(model, url, retries=1, timeout=120)
    caps = backend.capabilities()
    assert caps.route is None  # it ignores echo, logprobs and top_logprobs
    with pytest.raises(UserError, match="score template.s. mcq-choice, mcq-letter cannot run"):
        backend.prepare([TEMPLATES["mcq-choice"], TEMPLATES["mcq-letter"],
                         TEMPLATES["mcq-letter-cot"]])
    train, nli_test = nli_planted()
    nli = Dataset("nli", "jsonl", "nli", split_of("train", train),
                  split_of("test", nli_test[::8]), ["contradiction", "entailment", "neutral"])
    for template, data in [("mcq-letter-cot", dataset), ("nli-yes-no-cot", nli),
                           ("nli-true-false-cot", nli)]:  # every built-in generate template
        sent = backend.requests_sent
        got = answer(backend, with_max_new_tokens(TEMPLATES[template], 3), data)
        assert backend.requests_sent == sent + len(data.test)
        assert len(got.texts) == len(data.test)
        assert np.isin(got.pred, [-1, *range(len(data.label_names))]).all()
        assert got.completion_tokens > 0  # the server's usage counts

    data = tmp_path / "data"
    write_jsonl(data / "test.jsonl", test)
    write_jsonl(data / "train.jsonl", mcq_planted()[0])
    refused = runner.invoke(app, ["probe", str(data), "--llm", f"openai:{model}", "--base-url",
                                  url, "--no-cache", "--out", str(tmp_path / "o")])
    assert refused.exit_code == 2 and "cannot run on this server" in refused.output
    lines = [line for line in refused.output.splitlines() if line.strip()]
    assert "mcq-letter-cot" in " ".join(lines[-3:])
