"""An OpenAI-compatible HTTP endpoint as an LLM-probe backend (vLLM, llama.cpp server, Ollama,
hosted APIs; docs/methods.md §6, docs/llm-probe.md). Standard library only (``urllib``, threads).

- **score**: ``POST {base}/completions`` with ``echo: true, logprobs: 1, max_tokens: 1`` and one
  prompt per option (``prompt + " " + option``, sent as one list); an option's log-probability is
  the sum of the echoed token log-probabilities whose ``text_offset`` falls inside the option
  (no word-boundary correction: an endpoint returns no full next-token distribution).
- **generate**: ``POST {base}/chat/completions`` with one user message, ``temperature: 0``.
- At most ``concurrency`` requests in flight (a thread pool; results are handed back on the
  calling thread); each request has a ``timeout``; HTTP 429/5xx and network errors are retried
  ``retries`` times with exponential backoff (``backoff · 2^attempt`` seconds, or the server's
  ``Retry-After`` when it is longer); other HTTP errors stop the run with one clear line.
- The key is read from the environment variable ``api_key_env`` (sent as a Bearer token) and
  never appears in :meth:`info`, cache keys or outputs.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from cuelens.errors import UserError
from cuelens.probes.llm.backends import OnResult, Request

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class OpenAIBackend:
    name = "openai"

    def __init__(self, model: str, base_url: str, *, api_key_env: str = "OPENAI_API_KEY",
                 concurrency: int = 4, timeout: float = 60.0, retries: int = 5,
                 backoff: float = 0.5):
        if concurrency < 1 or retries < 0 or timeout <= 0:
            raise UserError("--concurrency must be ≥ 1, --retries ≥ 0 and --timeout > 0")
        self.model, self.base_url = model, base_url.rstrip("/")
        self.api_key_env, self.concurrency, self.timeout = api_key_env, concurrency, timeout
        self.retries, self.backoff = retries, backoff
        self.settings = {"temperature": 0, "base_url": self.base_url}
        self.requests_sent = 0   # HTTP requests made, retries included
        self._lock = threading.Lock()

    def info(self) -> dict:
        return {"name": self.model, "backend": self.name, "base_url": self.base_url}

    # ------------------------------------------------------------------ requests
    def run(self, requests: list[Request], on_result: OnResult) -> None:
        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        pending: dict[Future, int] = {}
        queue = iter(range(len(requests)))
        try:
            for i in queue:
                pending[pool.submit(self._answer, requests[i])] = i
                if len(pending) >= 2 * self.concurrency:
                    break
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    i = pending.pop(future)
                    on_result(i, future.result())
                    nxt = next(queue, None)
                    if nxt is not None:
                        pending[pool.submit(self._answer, requests[nxt])] = nxt
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _answer(self, request: Request) -> dict:
        if request.kind == "score":
            return self._score(request)
        body = self._post("/chat/completions", {
            "model": self.model, "messages": [{"role": "user", "content": request.prompt}],
            "temperature": 0, "max_tokens": request.max_new_tokens})
        try:
            text = body["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise UserError(f"{self.base_url}/chat/completions: unexpected response "
                            f"{str(body)[:200]}") from None
        usage = body.get("usage") or {}
        return {"text": text, "prompt_tokens": int(usage.get("prompt_tokens", 0)),
                "completion_tokens": int(usage.get("completion_tokens", 0))}

    def _score(self, request: Request) -> dict:
        texts = [f"{request.prompt} {option}" for option in request.options]
        body = self._post("/completions", {"model": self.model, "prompt": texts, "echo": True,
                                           "logprobs": 1, "max_tokens": 1, "temperature": 0})
        start = len(request.prompt)
        logprobs, n_tokens = [0.0] * len(texts), [0] * len(texts)
        try:
            for position, choice in enumerate(body["choices"]):
                j = choice.get("index", position)
                lp = choice["logprobs"]
                end = len(texts[j])
                for value, offset in zip(lp["token_logprobs"], lp["text_offset"]):
                    if start <= offset < end:
                        logprobs[j] += float(value)
                        n_tokens[j] += 1
        except (KeyError, IndexError, TypeError, ValueError):
            raise UserError(f"{self.base_url}/completions: no echoed logprobs in the response "
                            "(does the server support echo=true with logprobs?)") from None
        if any(n == 0 for n in n_tokens):
            raise UserError(f"{self.base_url}/completions: an answer option got no echoed tokens")
        usage = body.get("usage") or {}
        return {"logprobs": logprobs, "n_tokens": n_tokens,
                "prompt_tokens": int(usage.get("prompt_tokens", 0)),
                "completion_tokens": int(usage.get("completion_tokens", 0))}

    def _post(self, path: str, payload: dict) -> dict:
        url = self.base_url + path
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        data = json.dumps(payload).encode("utf-8")
        reason = "no attempt"
        for attempt in range(self.retries + 1):
            wait_s = self.backoff * 2 ** attempt
            with self._lock:
                self.requests_sent += 1
            try:
                request = urllib.request.Request(url, data=data, headers=headers, method="POST")
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                reason = f"HTTP {exc.code}"
                if exc.code not in RETRY_STATUS:
                    detail = exc.read().decode("utf-8", "replace")[:200]
                    raise UserError(f"{url}: {reason}: {detail}") from None
                wait_s = max(wait_s, _retry_after(exc.headers.get("Retry-After")))
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                reason = str(getattr(exc, "reason", exc))
            except json.JSONDecodeError:
                raise UserError(f"{url}: the response is not JSON") from None
            if attempt < self.retries:
                time.sleep(wait_s)
        raise UserError(f"{url}: failed after {self.retries + 1} attempts ({reason}); finished "
                        "answers are cached, so running again resumes")


def _retry_after(value: str | None) -> float:
    try:
        return min(float(value), 60.0) if value else 0.0
    except ValueError:
        return 0.0
