"""An OpenAI-compatible HTTP endpoint as an LLM-probe backend (vLLM, llama.cpp server, Ollama,
``transformers serve``, hosted APIs), standard library only: the capability probe, the scoring
routes (``echo``, ``chat-top-logprobs``), concurrency, retries and the fail-fast start are
described in docs/llm-probe.md ("Backends", "Servers: what each can run"). The key is read from
``api_key_env`` and never appears in :meth:`OpenAIBackend.info`, cache keys or outputs."""

from __future__ import annotations

import http.client
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
ROUTE_STATUS = {400, 404, 405, 422, 501}  # the server lacks this route or one of its fields
AUTH_STATUS = {401, 403}
TOP_LOGPROBS = 20  # the most OpenAI's chat API returns
CONNECT_TIMEOUT = 5.0  # seconds for the first connection to the server
MAX_RESPONSE_BYTES = 16 * 1024 * 1024  # the largest response body read (docs/llm-probe.md)
DETAIL_BYTES = 200  # of an error response's body, quoted in the message
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
            return False, exc.detail

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
                with _OPENER.open(request, timeout=self.timeout) as response:
                    self._reached = True
                    raw, whole = _read_body(response, time.monotonic() + self.timeout,
                                            MAX_RESPONSE_BYTES)
                    if not whole:
                        raise UserError(f"{url}: the response is larger than "
                                        f"{MAX_RESPONSE_BYTES // 2**20} MB; is --base-url an "
                                        "OpenAI-compatible API?")
                    return _json_body(url, raw, response.headers.get("Content-Type", ""))
            except urllib.error.HTTPError as exc:
                self._reached = True
                reason = self._refused(url, exc)
                wait_s = max(wait_s, _retry_after(exc.headers.get("Retry-After")))
            except _Late as exc:
                reason = str(exc)
            except http.client.IncompleteRead as exc:
                total = f" of {len(exc.partial) + exc.expected:,}" if exc.expected else ""
                reason = (f"the server cut the response off after {len(exc.partial):,}{total} "
                          "bytes")
            except http.client.HTTPException as exc:  # a malformed status line or header
                reason = f"a malformed HTTP response ({type(exc).__name__})"
                if not self._reached:
                    raise UserError(f"{url}: {reason}; is --base-url an HTTP API?") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError, socket.timeout) as exc:
                reason = str(getattr(exc, "reason", exc)) or type(exc).__name__
                if not self._reached:
                    raise UserError(f"{url}: cannot reach the server ({reason}); is it running "
                                    "at --base-url?") from None
            if attempt < self.retries:
                time.sleep(wait_s)
        raise UserError(f"{url}: failed after {self.retries + 1} attempts ({reason}); finished "
                        "answers are cached, so running again resumes")

    def _refused(self, url: str, exc: urllib.error.HTTPError) -> str:
        """The reason of a retried HTTP status; other statuses raise their own line."""
        detail = _detail(exc, time.monotonic() + self.timeout)
        reason = f"HTTP {exc.code}{' ' + detail if detail else ''}"
        if 300 <= exc.code < 400:
            raise UserError(f"{url}: the server redirects (HTTP {exc.code}) to "
                            f"{exc.headers.get('Location') or 'another address'}; give the "
                            "address it redirects to as --base-url") from None
        if exc.code in AUTH_STATUS:
            key = "the key in" if os.environ.get(self.api_key_env) else "no key is set in"
            raise UserError(f"{url}: HTTP {exc.code}, not authorised ({key} "
                            f"${self.api_key_env}; --api-key-env names the variable)"
                            f"{': ' + detail if detail else ''}") from None
        if exc.code in ROUTE_STATUS:
            raise _Unsupported(reason, url) from None
        if exc.code not in RETRY_STATUS:
            raise UserError(f"{url}: {reason}") from None
        return reason + (" (rate limited)" if exc.code == 429 else "")


class _Late(Exception):
    """A response whose body did not arrive within the request's time (a dripping server)."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are reported, not followed: urllib would resend a POST as a bodiless GET."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def _read_body(response, deadline: float, limit: int) -> tuple[bytes, bool]:
    """(at most ``limit`` bytes of the body, whether that is all of it), read by ``deadline``
    (``time.monotonic()``): the socket timeout alone restarts with every byte a server drips;
    a body shorter than its Content-Length is ``http.client.IncompleteRead``."""
    length = response.headers.get("Content-Length")
    if length and length.isdigit() and int(length) > limit:
        return b"", False
    parts: list[bytes] = []
    size = 0
    while size <= limit:
        if time.monotonic() > deadline:
            raise _Late(f"the response took longer than the request timeout to arrive "
                        f"({size:,} bytes by then)")
        chunk = response.read1(65_536)
        if not chunk:
            if getattr(response, "length", None):  # bytes promised by Content-Length, not sent
                raise http.client.IncompleteRead(b"".join(parts), response.length)
            return b"".join(parts), True
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)[:limit], False


def _detail(exc: urllib.error.HTTPError, deadline: float) -> str:
    """The start of an error response's body, on one line (empty when unreadable)."""
    try:
        raw, _ = _read_body(exc, deadline, DETAIL_BYTES)
    except (_Late, OSError, http.client.HTTPException):
        return ""
    return _excerpt(raw)


def _excerpt(raw: bytes) -> str:
    text = " ".join(raw.decode("utf-8", "replace").split())
    return text[:DETAIL_BYTES] + ("…" if len(text) > DETAIL_BYTES else "")


def _json_body(url: str, raw: bytes, content_type: str) -> dict:
    """A response body as its JSON object, or one line saying what came instead."""
    if not raw.strip():
        raise UserError(f"{url}: the server answered with an empty body; is --base-url an "
                        "OpenAI-compatible API?")
    if "html" in content_type.lower() or raw.lstrip()[:1] == b"<":
        raise UserError(f"{url}: the server answered with an HTML page, not JSON; is --base-url "
                        "the API's root (e.g. http://host:8000/v1)?")
    try:
        body = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise UserError(f"{url}: the response is not JSON: {_excerpt(raw[:DETAIL_BYTES])}") \
            from None
    if not isinstance(body, dict):
        raise UserError(f"{url}: the response is JSON but not an object: "
                        f"{_excerpt(raw[:DETAIL_BYTES])}")
    return body


class _Unsupported(UserError):
    """The server answered, but without what a scoring route needs (``detail``: why)."""

    def __init__(self, detail: str, url: str = "") -> None:
        self.detail, self.url = detail, url
        super().__init__(f"{url}: {detail}" if url else detail)

    def __reduce__(self) -> tuple:
        return type(self), (self.detail, self.url)


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
