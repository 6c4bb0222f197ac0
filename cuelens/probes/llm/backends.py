"""Where the LLM probe's answers come from: a registry of backends (docs/llm-probe.md, "Backends").
A backend answers :class:`Request` s, handing each response to ``on_result(i, response)`` at once
(for the response cache), after an optional ``prepare(templates)`` (:func:`prepare_backend`):

- score: ``{"logprobs": [...], "n_tokens": [...], "prompt_tokens": n, "completion_tokens": m}``
- generate: ``{"text": "...", "prompt_tokens": n, "completion_tokens": m}``
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from cuelens.errors import UserError
from cuelens.probes.llm.requests import OnResult, Request, RequestTooLong
from cuelens.registry import Registry

__all__ = ["BACKENDS", "Backend", "BackendOptions", "LocalBackend", "OnResult", "Request",
           "load_backend", "prepare_backend"]


class Backend(Protocol):
    """What the pipeline needs from a backend."""

    name: str       # registry name, e.g. "hf"
    model: str
    settings: dict  # everything besides the request that changes an answer (cache key)

    def info(self) -> dict: ...

    def run(self, requests: list[Request], on_result: OnResult) -> None: ...


def prepare_backend(backend: Backend, templates: list) -> None:
    """Before any item is asked: ``backend.prepare(templates)`` where the backend has one
    (optional: it checks that every template can run there, with a one-line
    :class:`UserError` otherwise, and may fix settings such as the endpoint's scoring route)."""
    prepare = getattr(backend, "prepare", None)
    if prepare is not None:
        prepare(templates)


@dataclass(frozen=True)
class BackendOptions:
    """Options of every backend (each reads the ones it uses)."""

    device: str = "auto"
    batch_size: int | None = None  # rows per forward; None: ROWS_PER_BATCH of the device
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 4
    timeout: float = 60.0
    retries: int = 5
    backoff: float = 0.5


# Rows per forward of the local backend when no batch size is given (a row: a prompt and all its
# options; the scorer also caps the padded tokens of a forward): the fastest budgets measured on
# the CPU box and an H100 (docs/BENCHMARKS.md, "LLM option scoring on a GPU").
ROWS_PER_BATCH = {"cpu": 16, "gpu": 64}


def rows_per_batch(options: BackendOptions, device: str) -> int:
    """``options.batch_size``, else the default rows per forward on ``device``."""
    return options.batch_size or ROWS_PER_BATCH["cpu" if device == "cpu" else "gpu"]


class LocalBackend:
    """A local causal LM (``transformers``) behind the project's :class:`CausalScorer`."""

    name = "hf"

    def __init__(self, scorer, *, model: str, batch_size: int = 16, chunk: int = 256):
        self.scorer, self.model, self.batch_size, self.chunk = scorer, model, batch_size, chunk
        self.settings = {"bow_correction": scorer.bow_correction, "decoding": "greedy"}

    def info(self) -> dict:
        return {"name": self.model, "backend": self.name, "device": str(self.scorer.device)}

    def run(self, requests: list[Request], on_result: OnResult) -> None:
        self._check_lengths(requests)
        for kind, handler in (("score", self._score), ("generate", self._generate)):
            index = [i for i, r in enumerate(requests) if r.kind == kind]
            for begin in range(0, len(index), self.chunk):  # chunks: results reach the cache;
                # large enough for length-sorted batches with little padding
                part = index[begin:begin + self.chunk]
                for i, response in zip(part, handler([requests[i] for i in part])):
                    on_result(i, response)

    def _check_lengths(self, requests: list[Request]) -> None:
        """A :class:`RequestTooLong` for the first request whose prompt and answer (its longest
        option, or ``max_new_tokens`` generated) would not fit the model's positions."""
        limit = self.scorer.max_length
        if not limit or not requests:
            return
        space = "" if self.scorer.scheme.dummy_prefix else " "
        options = [space + o for r in requests for o in r.options]
        ids = self.scorer.tokenizer(options, add_special_tokens=False)["input_ids"] \
            if options else []
        sizes = iter(len(x) for x in ids)
        prompts = self._prompt_tokens([r.prompt for r in requests])
        for i, (request, n) in enumerate(zip(requests, prompts)):
            longest = max((next(sizes) for _ in request.options), default=0)
            if request.kind == "generate":
                extra, what = request.max_new_tokens, "--max-new-tokens"
            else:
                extra, what = longest, "its longest answer option"
            if n + extra > limit:
                raise RequestTooLong(f"the prompt ({n} tokens) and {what} ({extra} tokens) do "
                                     f"not fit the model's {limit} positions", i)

    def _prompt_tokens(self, prompts: list[str]) -> list[int]:
        ids = self.scorer.tokenizer(prompts, add_special_tokens=False)["input_ids"]
        return [len(x) + 1 for x in ids]  # + the BOS context

    def _score(self, requests: list[Request]) -> list[dict]:
        prompts = [r.prompt for r in requests]
        values = self.scorer.continuation_logprobs(prompts, [list(r.options) for r in requests])
        return [{"logprobs": [float(x) for x in logp], "n_tokens": [int(n) for n in counts],
                 "prompt_tokens": p, "completion_tokens": int(counts.sum())}
                for (logp, counts), p in zip(values, self._prompt_tokens(prompts))]

    def _generate(self, requests: list[Request]) -> list[dict]:
        import torch

        scorer, tokenizer = self.scorer, self.scorer.tokenizer
        prompts = [[scorer.bos, *ids] for ids in tokenizer(
            [r.prompt for r in requests], add_special_tokens=False)["input_ids"]]
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else scorer.eos
        out: list[dict] = [{}] * len(requests)
        order = np.argsort([-len(p) for p in prompts], kind="stable")
        for begin in range(0, len(order), self.batch_size):
            index = [int(i) for i in order[begin:begin + self.batch_size]]
            width = max(len(prompts[i]) for i in index)
            ids = torch.full((len(index), width), pad, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for row, i in enumerate(index):  # left padding for batched decoding
                ids[row, width - len(prompts[i]):] = torch.tensor(prompts[i])
                mask[row, width - len(prompts[i]):] = 1
            budget = max(requests[i].max_new_tokens for i in index)
            with torch.inference_mode():
                generated = scorer.model.generate(
                    input_ids=ids.to(scorer.device), attention_mask=mask.to(scorer.device),
                    max_new_tokens=budget, do_sample=False, pad_token_id=pad,
                    eos_token_id=scorer.eos)[:, width:].cpu().numpy()
            for row, i in enumerate(index):
                new = list(generated[row][: requests[i].max_new_tokens])
                if scorer.eos in new:
                    new = new[: new.index(scorer.eos)]
                out[i] = {"text": tokenizer.decode(new, skip_special_tokens=True),
                          "prompt_tokens": len(prompts[i]), "completion_tokens": len(new)}
        return out


def _hf(model: str, options: BackendOptions) -> Backend:
    from cuelens.lm import load_scorer
    from cuelens.lm.causal import CausalScorer
    from cuelens.models.hub import pick_device

    device = pick_device(options.device)
    rows = rows_per_batch(options, device)
    scorer = load_scorer(model, kind="causal", device=device, batch_size=rows)
    assert isinstance(scorer, CausalScorer)  # kind="causal" in natural-log base
    if device.startswith("cuda"):
        import torch

        scorer.model.to(torch.bfloat16)
    return LocalBackend(scorer, model=model, batch_size=rows)


def _openai(model: str, options: BackendOptions) -> Backend:
    from cuelens.probes.llm.openai import OpenAIBackend

    if not options.base_url:
        raise UserError("--llm openai:MODEL needs --base-url (e.g. http://127.0.0.1:8000/v1)")
    return OpenAIBackend(model, options.base_url, api_key_env=options.api_key_env,
                         concurrency=options.concurrency, timeout=options.timeout,
                         retries=options.retries, backoff=options.backoff)


BACKENDS: Registry[Callable[[str, BackendOptions], Backend]] = Registry(
    "LLM backend", {"hf": _hf, "openai": _openai})


def load_backend(spec: str, options: BackendOptions = BackendOptions()) -> Backend:
    """The backend named by ``spec``: ``NAME:MODEL`` for a registered ``NAME``, else a local
    ``transformers`` model (directory, alias or hub id)."""
    prefix, sep, target = spec.partition(":")
    if sep and prefix in BACKENDS:
        if not target:
            raise UserError(f"--llm '{spec}' needs a model name after '{prefix}:'")
        return BACKENDS[prefix](target, options)
    return BACKENDS["hf"](spec, options)
