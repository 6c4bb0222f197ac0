"""Test doubles for the LLM probe: a GPT-2 with planted behaviour, a local fake
OpenAI-compatible HTTP server (loopback only), and the small datasets they answer."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cuelens.data.dataset import Dataset, Split
from tests.tiny_models import mcq_planted

CUE = "nobody"


def split_of(name: str, rows: list[dict], task: str = "nli") -> Split:
    """A :class:`Split` of normalised ``rows``."""
    split = Split(name, name, task)
    for line, row in enumerate(rows, 1):
        split.append(row, json.dumps(row), line)
    return split


def mcq_dataset(test: list[dict] | None = None) -> tuple[Dataset, list[dict]]:
    """The planted 2-choice MCQ data of :func:`tests.tiny_models.mcq_planted` (its test rows,
    or ``test``) as a dataset, and the test rows."""
    train, planted_test = mcq_planted()
    test = planted_test if test is None else test
    return Dataset("mcq", "jsonl", "mcq", split_of("train", train, "mcq"),
                   split_of("test", test, "mcq"), ["right", "wrong"]), test


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models run ~50x faster on one thread than on two busy cores (autouse in every
    module that imports it)."""
    import torch

    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(saved)


def planted_gpt2_dir(path: Path, texts: list[str], *, yes: str = "yes", no: str = "no",
                     seed: int = 0) -> Path:
    """Save a 1-layer GPT-2 and a byte-level BPE over ``texts`` whose next-token logits are
    planted: ``" {no}"`` gets a large boost whenever a token containing "nobody" occurs earlier
    in the text, and ``" {yes}"`` a constant +4; every other logit is ~0.

    How: embeddings are zero-mean with dims 0–2 zero, except cue tokens (dim 0 = 8); q = k = 0
    (uniform causal attention), V copies dim 0 into dim 1 with gain 200, MLP and positions are
    zero; ln_f's bias sets dim 2 to 1; the untied output rows of " yes" / " no" read dims 2 / 1.
    """
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from tests.lm_random_init import byte_level_bpe

    tokenizer = byte_level_bpe(texts, 3000, full_alphabet=False)
    torch.manual_seed(seed)
    d = 32
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=512, n_embd=d, n_layer=1,
                        n_head=1, bos_token_id=tokenizer.bos_token_id,
                        eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=False)
    model = GPT2LMHeadModel(config).eval()
    vocab = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    cue_ids = [i for i, t in enumerate(vocab) if CUE in t.lower()]
    with torch.no_grad():
        wte = torch.randn(len(tokenizer), d)
        wte[:, :3] = 0
        wte[:, 3:] -= wte[:, 3:].mean(dim=1, keepdim=True)
        wte[cue_ids, 0] = 8.0
        model.transformer.wte.weight.copy_(wte)
        model.transformer.wpe.weight.zero_()
        block = model.transformer.h[0]
        block.attn.c_attn.weight.zero_()
        block.attn.c_attn.bias.zero_()
        block.attn.c_attn.weight[0, 2 * d + 1] = 200.0
        block.attn.c_proj.weight.copy_(torch.eye(d))
        block.attn.c_proj.bias.zero_()
        for layer in (block.mlp.c_fc, block.mlp.c_proj):
            layer.weight.zero_()
            layer.bias.zero_()
        model.transformer.ln_f.bias.zero_()
        model.transformer.ln_f.bias[2] = 1.0
        head = torch.randn(len(tokenizer), d) * 0.02
        head[tokenizer.convert_tokens_to_ids("Ġ" + yes), 2] = 4.0
        head[tokenizer.convert_tokens_to_ids("Ġ" + no), 1] = 3.0
        model.lm_head.weight.copy_(head)
    tokenizer.save_pretrained(path)
    model.save_pretrained(path)
    return path


FAMILIES = ("openai", "vllm", "llama.cpp", "transformers", "ollama")


class FakeEndpoint:
    """A deterministic OpenAI-compatible server on 127.0.0.1: "no" is the likely / generated
    answer when the prompt contains ``cue`` ("nobody"), else "yes" (MCQ letters: the option
    containing the cue, else A); prompts containing "maybe-garbage" get an unparseable chat
    answer. ``fail_next`` injects HTTP 500s; ``fail_after`` makes every request after that many
    fail (a server going down); ``count`` counts requests, ``paths`` their paths.

    ``family`` replays what each server family does with the fields cuelens sends, as their
    documentation and source describe them (recorded behaviour, not their code):

    - ``openai`` / ``vllm``: ``/completions`` takes a string or a list of prompts and echoes the
      prompt's token log-probabilities with ``text_offset`` (vLLM: the first token's is null);
      chat returns ``logprobs.content[0].top_logprobs``;
    - ``llama.cpp``: ``echo`` is ignored on ``/completions`` (log-probabilities of generated
      tokens only, as ``logprobs.content``); chat returns ``top_logprobs``;
    - ``transformers`` (``transformers serve``): a list prompt is HTTP 400 ``{"detail": "prompt
      must be a string."}``; ``echo``, ``logprobs`` and ``top_logprobs`` are ignored (no
      ``logprobs`` in any response);
    - ``ollama``: ``/v1/completions`` ignores ``echo``/``logprobs``; chat returns
      ``top_logprobs`` (Ollama ≥ 0.12.11).
    """

    def __init__(self, family: str = "openai") -> None:
        assert family in FAMILIES
        self.family = family
        self.count, self.fail_next, self.fail_after, self.cue = 0, 0, None, CUE
        self.paths: list[str] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.count += 1
                    outer.paths.append(self.path)
                    fail = outer.fail_next > 0 or (outer.fail_after is not None
                                                   and outer.count > outer.fail_after)
                    outer.fail_next = max(0, outer.fail_next - 1)
                if fail:
                    self.send_response(500)
                    self.end_headers()
                    return
                status, answer = outer.completions(body) if self.path.endswith(
                    "/completions") and "chat" not in self.path else outer.chat(body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "FakeEndpoint":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    def favoured(self, prompt: str) -> str:
        if "\nA. " in prompt:   # MCQ letters: the option containing the cue word
            options = [line for line in prompt.split("\n") if line[1:3] == ". "]
            hit = [o[0] for o in options if self.cue in o.lower()]
            return hit[0] if hit else "A"
        return "no" if self.cue in prompt.lower() else "yes"

    def _echoed(self, text: str) -> dict:
        """Echoed tokens of prompt + " " + option: the option after "Answer:" (a choice text:
        likely when it has the cue) or the last word (likely when it is the favoured one)."""
        option = text.rsplit("Answer:", 1)[-1].strip() if "Answer:" in text else ""
        if len(option.split()) > 1:
            prompt = text[:len(text) - len(option) - 1]
            value = -0.1 if self.cue in option.lower() else -3.0
        else:
            prompt, _, option = text.rpartition(" ")
            value = -0.1 if option == self.favoured(prompt) else -3.0
        first = None if self.family == "vllm" else -5.0
        return {"tokens": [prompt, " " + option, "."], "token_logprobs": [first, value, -1.0],
                "text_offset": [0, len(prompt), len(text)]}

    def completions(self, body: dict) -> tuple[int, dict]:
        prompts = body["prompt"]
        if isinstance(prompts, list) and self.family in ("transformers", "ollama",
                                                        "llama.cpp"):
            return 400, {"detail": "prompt must be a string."}
        prompts = prompts if isinstance(prompts, list) else [prompts]
        choices = []
        for i, text in enumerate(prompts):
            choice: dict = {"index": i, "text": text + "." if body.get("echo") else ".",
                            "finish_reason": "length"}
            if self.family in ("openai", "vllm") and body.get("echo") and body.get("logprobs"):
                choice["logprobs"] = self._echoed(text)
            elif self.family == "llama.cpp" and body.get("logprobs"):
                choice["logprobs"] = {"content": [{"token": ".", "logprob": -1.0,
                                                   "bytes": [46]}]}
            elif self.family == "ollama":
                choice["logprobs"] = None
            choices.append(choice)
        return 200, {"object": "text_completion", "choices": choices,
                     "usage": {"prompt_tokens": 10 * len(choices),
                               "completion_tokens": len(choices)}}

    def _top(self, prompt: str) -> list[dict]:
        favoured = self.favoured(prompt)
        words = ["yes", "no", "maybe", "A", "B", "C", "D", "The"]
        return [{"token": " " + w if self.family == "llama.cpp" else w,
                 "logprob": -0.1 if w == favoured else -3.0 - 0.1 * j,
                 "bytes": list(w.encode())} for j, w in enumerate(words)]

    def chat(self, body: dict) -> tuple[int, dict]:
        prompt = body["messages"][0]["content"]
        if "maybe-garbage" in prompt:
            text = "I would rather not say."
        elif "\nA. " in prompt:
            text = f"Thinking... Answer: {self.favoured(prompt)}"
        else:
            text = f"Step 1: read. Step 2: compare.\nAnswer: {self.favoured(prompt)}"
        choice: dict = {"index": 0, "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop"}
        if body.get("logprobs") and self.family != "transformers":
            top = self._top(prompt)
            first = max(top, key=lambda t: t["logprob"])
            choice["logprobs"] = {"content": [{**first, "top_logprobs": top[
                : body.get("top_logprobs") or 0]}]}
            choice["message"]["content"] = first["token"]
        return 200, {"object": "chat.completion", "choices": [choice],
                     "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 7}}
