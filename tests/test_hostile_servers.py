"""Hostile OpenAI-compatible servers (issue 56; docs/robustness.md, "LLM servers"): each failure
is reported by its cause in one line — an error status, an HTML page, a redirect, an empty,
malformed, cut, oversized or dripping body — never as "returns no log-probabilities" or a
traceback, and within a bounded time. The servers are raw HTTP on 127.0.0.1, started here."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cuelens.errors import UserError
from cuelens.probes.llm import openai
from cuelens.probes.llm.openai import OpenAIBackend

CHAT = json.dumps({"choices": [{"message": {"content": "A"}}]}).encode()


def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes,
          headers: dict[str, str] | None = None) -> None:
    handler.send_response(status)
    for name, value in {"Content-Type": "application/json",
                        "Content-Length": str(len(body)), **(headers or {})}.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def _drip(handler: BaseHTTPRequestHandler) -> None:
    """A valid header, then one byte every 0.2 s of a body that never ends in time."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    with contextlib.suppress(OSError):
        for _ in range(200):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.2)


def _cut(handler: BaseHTTPRequestHandler) -> None:
    """A Content-Length of 1,000 bytes, then 10 bytes and a closed connection."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "1000")
    handler.end_headers()
    handler.wfile.write(CHAT[:10])
    handler.close_connection = True


def _huge(handler: BaseHTTPRequestHandler) -> None:
    """A 100 MB body without a Content-Length (sent until the client hangs up)."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.end_headers()
    block = b"[" * 1_000_000
    with contextlib.suppress(OSError):
        for _ in range(100):
            handler.wfile.write(block)
    handler.close_connection = True


#: case → (how the server answers every POST, what the one line says)
CASES = {
    "500": (lambda h: _send(h, 500, b'{"error": "boom"}'), "failed after 2 attempts (HTTP 500"),
    "429": (lambda h: _send(h, 429, b"slow down"), "rate limited"),
    "401": (lambda h: _send(h, 401, b'{"error": "bad key"}'), "HTTP 401, not authorised"),
    "403": (lambda h: _send(h, 403, b""), "HTTP 403, not authorised"),
    "html": (lambda h: _send(h, 200, b"<!DOCTYPE html><html><body>Login</body></html>",
                             {"Content-Type": "text/html"}), "an HTML page, not JSON"),
    "redirect": (lambda h: _send(h, 302, b"", {"Location": "https://elsewhere.invalid/v1"}),
                 "redirects (HTTP 302) to https://elsewhere.invalid/v1"),
    "redirect 307": (lambda h: _send(h, 307, b"", {"Location": "/v2/chat/completions"}),
                     "redirects (HTTP 307) to /v2/chat/completions"),
    "empty": (lambda h: _send(h, 200, b""), "an empty body"),
    "malformed": (lambda h: _send(h, 200, b'{"choices": [{"mess'), "the response is not JSON"),
    "not an object": (lambda h: _send(h, 200, b"[1, 2]"), "JSON but not an object"),
    "cut": (_cut, "cut the response off after 10 of 1,000 bytes"),
    "drip": (_drip, "took longer than the request timeout"),
    "huge": (_huge, "larger than 16 MB"),
}


@contextlib.contextmanager
def hostile_server(respond):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            respond(self)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_server_failure_is_one_line_naming_its_cause(case, monkeypatch):
    respond, message = CASES[case]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with hostile_server(respond) as url:
        backend = OpenAIBackend("m", url, retries=1, backoff=0.01, timeout=1.0)
        begun = time.monotonic()
        with pytest.raises(UserError) as info:
            backend._post("/chat/completions", {"model": "m"})
        elapsed = time.monotonic() - begun
    text = str(info.value)
    assert message in text and text.startswith(url + "/chat/completions: "), text
    assert "\n" not in text and "log-probabilities" not in text
    assert elapsed < 8, elapsed  # two attempts of at most the 1 s timeout each, plus slack


@pytest.mark.timeout(30)
@pytest.mark.parametrize("case", ["500", "401", "html"])
def test_the_capability_probe_reports_the_cause_not_missing_log_probabilities(case):
    """A score template on a failing server: the failure, not "no log-probabilities"."""
    from cuelens.probes.llm.templates import TEMPLATES

    respond, message = CASES[case]
    with hostile_server(respond) as url:
        backend = OpenAIBackend("m", url, retries=1, backoff=0.01, timeout=1.0)
        with pytest.raises(UserError, match=message.replace("(", r"\(")) as info:
            backend.prepare([TEMPLATES["mcq-choice"]])
    assert "log-probabilities" not in str(info.value)


@pytest.mark.timeout(30)
def test_a_missing_route_is_still_a_missing_route():
    """HTTP 404 on both routes: the templates cannot run, with each route's status."""
    from cuelens.probes.llm.templates import TEMPLATES

    with hostile_server(lambda h: _send(h, 404, b'{"detail": "Not Found"}')) as url:
        backend = OpenAIBackend("m", url, retries=1, backoff=0.01, timeout=1.0)
        with pytest.raises(UserError) as info:
            backend.prepare([TEMPLATES["mcq-choice"]])
    text = str(info.value)
    assert "cannot run on this server" in text
    assert "/completions: HTTP 404" in text and "/chat/completions: HTTP 404" in text


@pytest.mark.timeout(30)
def test_a_good_answer_after_a_cut_one_is_read():
    """A cut body is retried like a dropped connection; the next answer is used."""
    calls = []

    def respond(handler):
        calls.append(1)
        _cut(handler) if len(calls) == 1 else _send(handler, 200, CHAT)

    with hostile_server(respond) as url:
        backend = OpenAIBackend("m", url, retries=1, backoff=0.01, timeout=1.0)
        assert backend._post("/chat/completions", {})["choices"][0]["message"]["content"] == "A"
    assert len(calls) == 2


def test_the_response_cap_is_the_documented_constant():
    assert openai.MAX_RESPONSE_BYTES == 16 * 2**20
