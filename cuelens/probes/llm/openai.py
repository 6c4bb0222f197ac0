"""An OpenAI-compatible HTTP endpoint as an LLM-probe backend (vLLM, llama.cpp server, Ollama,
``transformers serve``, hosted APIs), standard library only: the capability probe, the scoring
routes (``echo``, ``chat-top-logprobs``), concurrency, retries and the fail-fast start are
described in docs/llm-probe.md ("Backends", "Servers: what each can run"). The key is read from
``api_key_env`` and never appears in :meth:`OpenAIBackend.info`, cache keys or outputs."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from itertools import islice

from cuelens.errors import UserError
from cuelens.probes.llm.requests import OnResult, Request

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
TOP_LOGPROBS = 20  # the most OpenAI's chat API returns
CONNECT_TIMEOUT = 5.0  # seconds for the first connection to the server
_PROBE_PROMPT = "Question: is the sky blue? Answer yes or no.\nAnswer:"


@dataclass(frozen=True)
class Capabilities:
    """What the server answered to the capability probe."""

    echo: bool         # /completions echoes the prompt's token log-probabilities
    chat_top: bool     # /chat/completions returns top_logprobs of the first token
    detail: str = ""   # why a route is missing, for the one-line message

    @property
    def route(self) -> str | None:
        return "echo" if self.echo else "chat-top-logprobs" if self.chat_top else None


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
        self.settings: dict = {"temperature": 0, "base_url": self.base_url}
        self.requests_sent = 0   # HTTP requests made, retries and the capability probe included
        self._lock = threading.Lock()
        self._reached = False    # a response (any status) has arrived from the server
        self._capabilities: Capabilities | None = None

    def info(self) -> dict:
        out = {"name": self.model, "backend": self.name, "base_url": self.base_url}
        if "scoring" in self.settings:
            out["scoring"] = self.settings["scoring"]
        return out

    # ------------------------------------------------------------------ capabilities
    def capabilities(self) -> Capabilities:
        """Ask the server once (two small requests) which scoring routes it supports."""
        if self._capabilities is None:
            self.check_reachable()
            echo, why_echo = self._try(lambda: self._echo_score(_PROBE_PROMPT, "yes"))
            chat, why_chat = self._try(lambda: self._chat_score(_PROBE_PROMPT, ["yes"]))
            detail = "; ".join(w for w in (why_echo and f"/completions: {why_echo}",
                                           why_chat and f"/chat/completions: {why_chat}") if w)
            self._capabilities = Capabilities(echo, chat, detail)
        return self._capabilities

    def check_reachable(self) -> None:
        """One TCP connection to the server (at most :data:`CONNECT_TIMEOUT` seconds): a
        refused connection, an unknown host or no answer is one line, at once."""
        if self._reached:
            return
        parts = urllib.parse.urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UserError(f"--base-url must be an http(s) URL, got {self.base_url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        if urllib.request.getproxies().get(parts.scheme) and \
                not urllib.request.proxy_bypass(parts.hostname):
            return  # reached through a proxy: the first request tells
        try:
            socket.create_connection((parts.hostname, port),
                                     timeout=min(self.timeout, CONNECT_TIMEOUT)).close()
        except socket.gaierror as exc:
            raise UserError(f"{self.base_url}: cannot resolve host {parts.hostname!r} "
                            f"({exc.strerror or exc})") from None
        except (TimeoutError, socket.timeout):
            raise UserError(f"{self.base_url}: no answer from {parts.hostname}:{port} within "
                            f"{min(self.timeout, CONNECT_TIMEOUT):g} s; is the server running?"
                            ) from None
        except OSError as exc:
            raise UserError(f"{self.base_url}: cannot connect to {parts.hostname}:{port} "
                            f"({exc.strerror or exc}); is the server running?") from None

    def _try(self, call) -> tuple[bool, str]:
        try:
            call()
            return True, ""
        except _Unsupported as exc:
            return False, str(exc)
        except UserError as exc:
            if not self._reached:
                raise
            return False, exc.message.split(": ", 1)[-1][:120]

    def prepare(self, templates) -> None:
        """Choose the scoring route for ``templates`` before any item is asked; a
        :class:`UserError` (one line) when a score template cannot run on this server."""
        scored = [t for t in templates if t.mode == "score"]
        if not scored:
            return
        caps = self.capabilities()
        route = caps.route
        usable = [t for t in scored if route == "echo" or (
            route == "chat-top-logprobs" and _letters_or_words(t))]
        if len(usable) < len(scored):
            blocked = [t.name for t in scored if t not in usable]
            runnable = [t.name for t in templates if t not in scored or t in usable]
            why = ("it returns no log-probabilities (no prompt echo on /completions, no "
                   "top_logprobs on /chat/completions)" if route is None else
                   "without prompt echo only one-word answers (letters, yes/no) can be scored "
                   "from chat top_logprobs")
            raise UserError(f"{self.base_url}: score template(s) {', '.join(blocked)} cannot "
                            f"run on this server: {why}"
                            + (f" ({caps.detail})" if caps.detail else "")
                            + (f"; it can run: {', '.join(runnable)}" if runnable else
                               "; generate templates (e.g. --prompt nli-yes-no-cot) can run"))
        self.settings["scoring"] = route

    # ------------------------------------------------------------------ requests
    def run(self, requests: list[Request], on_result: OnResult) -> None:
        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        pending: dict[Future, int] = {}
        queue = iter(range(len(requests)))

        def submit(n: int) -> None:  # the next ``n`` requests of the queue
            for i in islice(queue, n):
                pending[pool.submit(self._answer, requests[i])] = i

        try:
            if requests and not self._reached:  # one request first: a dead server fails fast
                self.check_reachable()
                on_result(next(queue), self._answer(requests[0]))
            submit(2 * self.concurrency)
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    on_result(pending.pop(future), future.result())
                    submit(1)
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
        return {"text": text, **_usage(body)}

    def _score(self, request: Request) -> dict:
        route = self.settings.get("scoring") or self.capabilities().route
        if route == "echo":
            parts = [self._echo_score(request.prompt, option) for option in request.options]
            return {"logprobs": [p[0] for p in parts], "n_tokens": [p[1] for p in parts],
                    "prompt_tokens": sum(p[2] for p in parts),
                    "completion_tokens": sum(p[3] for p in parts)}
        if route == "chat-top-logprobs":
            return self._chat_score(request.prompt, list(request.options))
        raise UserError(f"{self.base_url}: this server returns no log-probabilities, so score "
                        "templates cannot run on it (generate templates can)")

    def _echo_score(self, prompt: str, option: str) -> tuple[float, int, int, int]:
        text = f"{prompt} {option}"
        body = self._post("/completions", {"model": self.model, "prompt": text, "echo": True,
                                           "logprobs": 1, "max_tokens": 1, "temperature": 0})
        total, n = 0.0, 0
        try:
            lp = body["choices"][0]["logprobs"]
            for value, offset in zip(lp["token_logprobs"], lp["text_offset"]):
                if len(prompt) <= offset < len(text) and value is not None:
                    total += float(value)
                    n += 1
        except (KeyError, IndexError, TypeError, ValueError):
            raise _Unsupported("no echoed token log-probabilities in the response") from None
        if n == 0:
            raise _Unsupported("the prompt was not echoed with log-probabilities")
        usage = _usage(body)
        return total, n, usage["prompt_tokens"], usage["completion_tokens"]

    def _chat_score(self, prompt: str, options: list[str]) -> dict:
        body = self._post("/chat/completions", {
            "model": self.model, "messages": [{"role": "user", "content": prompt}],
            "temperature": 0, "max_tokens": 1, "logprobs": True, "top_logprobs": TOP_LOGPROBS})
        try:
            top = body["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            pairs = [(str(t["token"]).strip().casefold(), float(t["logprob"])) for t in top]
        except (KeyError, IndexError, TypeError, ValueError):
            raise _Unsupported("no top_logprobs in the response") from None
        if not pairs:
            raise _Unsupported("an empty top_logprobs list")
        floor = min(value for _, value in pairs)
        scores = [max((value for token, value in pairs if token == option.strip().casefold()),
                      default=floor) for option in options]
        return {"logprobs": scores, "n_tokens": [1] * len(options), **_usage(body)}

    # ------------------------------------------------------------------ HTTP
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
                    self._reached = True
                    return json.loads(response.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                self._reached = True
                reason = f"HTTP {exc.code}"
                if exc.code not in RETRY_STATUS:
                    detail = exc.read().decode("utf-8", "replace")[:200]
                    raise UserError(f"{url}: {reason}: {detail}") from None
                wait_s = max(wait_s, _retry_after(exc.headers.get("Retry-After")))
            except (urllib.error.URLError, TimeoutError, ConnectionError, socket.timeout) as exc:
                reason = str(getattr(exc, "reason", exc)) or type(exc).__name__
                if not self._reached:
                    raise UserError(f"{url}: cannot reach the server ({reason}); is it running "
                                    "at --base-url?") from None
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise UserError(f"{url}: the response is not JSON") from None
            if attempt < self.retries:
                time.sleep(wait_s)
        raise UserError(f"{url}: failed after {self.retries + 1} attempts ({reason}); finished "
                        "answers are cached, so running again resumes")


class _Unsupported(UserError):
    """The server answered, but without what a scoring route needs."""


def _letters_or_words(template) -> bool:
    """A score template whose every answer option is one short word (scorable from the first
    answer token's top log-probabilities)."""
    if template.task == "mcq":
        return template.options == "letters"
    return all(len(word.split()) == 1 and len(word.strip()) <= 16
               for word in template.answers.values())


def _usage(body: dict) -> dict:
    usage = body.get("usage") or {}
    return {"prompt_tokens": int(usage.get("prompt_tokens") or 0),
            "completion_tokens": int(usage.get("completion_tokens") or 0)}


def _retry_after(value: str | None) -> float:
    try:
        return min(float(value), 60.0) if value else 0.0
    except ValueError:
        return 0.0
