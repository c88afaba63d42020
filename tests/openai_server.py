"""A chat-completions server on 127.0.0.1, for every test that talks to an OpenAI-compatible
endpoint: its answers are a function of the request, or a script of replies.

    with openai_server(handler) as server:   # handler(path, body) -> (status, payload) or a Reply
        ...  # server.base_url, server.requests

    with openai_server() as server:          # scripted: server.script(Reply(...), ...)
        ...

A payload that is a dict is sent as JSON; a list of dicts as a server-sent event stream (each
dict one ``data:`` line, then ``data: [DONE]``); a str as text/plain; bytes as they are. A
reply with a ``pace`` sends its body slowly: one event (a stream) or one byte every ``pace``
seconds.

    with openai_server(llama_cpp_handler(answer), one_at_a_time=True) as server:
        ...  # answers as llama-cpp-python's server does (see llama_cpp_handler)

``server.abandoned`` counts the replies whose client went away before the end (a call
cancelled on the wire: a reply's ``delay`` ends when its client leaves, as a model server stops
working on a call whose connection closed); ``server.served`` holds each request's (start, end)
of service. ``one_at_a_time`` holds one slot for chat completions only (a model server answers
``/props`` or ``/tokenize`` beside a call in its slot).
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAP_ANSWER = '{"answer": "Floods.", "usefulness": 80}'
"""A valid map answer."""


@dataclass
class Reply:
    """One reply: its status, body (see the module's docstring), extra headers, and how long the
    server waits before sending it (cut short when the server closes)."""

    status: int = 200
    body: Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    pace: float = 0.0


Handler = Callable[[str, dict], "tuple[int, Any] | Reply"]


def completion_body(
    content: str | None = MAP_ANSWER, *, prompt_tokens: int = 11, completion_tokens: int = 7, finish_reason: str = "stop"
) -> dict:
    """A chat-completion response whose one choice says ``content``."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [{"index": 0, "finish_reason": finish_reason, "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
    }


def embedding_body(texts: list[str] | str, *, dimensions: int = 4) -> dict:
    """An embeddings response: one vector per input text (a function of the text), with usage."""
    texts = [texts] if isinstance(texts, str) else texts
    data = [
        {"object": "embedding", "index": i, "embedding": [float((len(text) * (d + 1)) % 7 + 1) for d in range(dimensions)]}
        for i, text in enumerate(texts)
    ]
    tokens = sum(len(text.split()) for text in texts)
    return {"object": "list", "data": data, "model": "test-embedding", "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def stream_chunks(text: str, *, size: int = 8, finish_reason: str = "stop", usage: dict | None = None) -> list[dict]:
    """A chat-completion stream of ``text`` in pieces of ``size`` characters, its last chunk
    carrying ``finish_reason``, then (when given) a chunk with ``usage``."""
    def chunk(delta: dict, reason: str | None) -> dict:
        return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "test-model",
                "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}

    pieces = [text[i : i + size] for i in range(0, len(text), size)] or [""]
    chunks = [chunk({"content": p}, None) for p in pieces] + [chunk({}, finish_reason)]
    if usage is not None:
        chunks.append({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "test-model", "choices": [], "usage": usage})
    return chunks


CHARS_PER_TOKEN = 4
"""How many characters the llama-cpp-like handler counts as one token."""


def llama_cpp_handler(answer: Callable[[dict], str], *, delay: float = 0.0) -> Handler:
    """Chat completions as llama-cpp-python's server sends them: the text ``answer(body)``
    (JSON strings may hold raw newlines), cut at ``max_tokens`` (``CHARS_PER_TOKEN`` characters
    a token) with ``finish_reason: "length"``; usage in a plain reply, none in a stream. Each
    reply takes ``delay`` seconds."""

    def handle(path: str, body: dict) -> Reply:
        text = answer(body)
        limit = body.get("max_tokens")
        reason = "stop"
        if limit and len(text) > limit * CHARS_PER_TOKEN:
            text, reason = text[: limit * CHARS_PER_TOKEN], "length"
        if body.get("stream"):
            return Reply(body=stream_chunks(text, finish_reason=reason), delay=delay)
        prompt = sum(len(m.get("content", "")) for m in body.get("messages", []))
        usage = {"prompt_tokens": prompt // CHARS_PER_TOKEN, "completion_tokens": len(text) // CHARS_PER_TOKEN}
        return Reply(body=completion_body(text, finish_reason=reason, **usage), delay=delay)

    return handle


def llama_server_props(handler: Handler, *, slots: int = 1, n_ctx: int = 8192) -> Handler:
    """``handler`` behind llama.cpp's ``llama-server`` introspection: ``GET /props`` says
    ``total_slots`` and the context of one slot (``default_generation_settings.n_ctx``), as
    ``llama-server -c {slots * n_ctx} -np {slots}`` does; every other request goes to ``handler``."""

    def handle(path: str, body: dict) -> Any:
        if path.rstrip("/").endswith("/props") and not body:
            return Reply(body={"total_slots": slots, "default_generation_settings": {"n_ctx": n_ctx}, "build_info": "b0-fake"})
        return handler(path, body)

    return handle


def prefix_cache_handler(answer: Callable[[dict], str], *, block: int = 16) -> Handler:
    """Chat completions from a server with a prompt cache, as OpenAI's and llama.cpp's: the part of
    a prompt (its messages' texts joined) that starts like a prompt seen before is reported as
    ``prompt_tokens_details.cached_tokens``, in whole blocks of ``block`` tokens
    (``CHARS_PER_TOKEN`` characters a token)."""
    seen: list[str] = []
    lock = threading.Lock()

    def handle(path: str, body: dict) -> Reply:
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        with lock:
            shared = max((_common_prefix(prompt, earlier) for earlier in seen), default=0)
            seen.append(prompt)
        tokens = len(prompt) // CHARS_PER_TOKEN
        cached = (shared // CHARS_PER_TOKEN) // block * block
        payload = completion_body(answer(body), prompt_tokens=tokens, completion_tokens=9)
        payload["usage"]["prompt_tokens_details"] = {"cached_tokens": min(cached, tokens)}
        return Reply(body=payload)

    return handle


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


@dataclass
class Server:
    base_url: str
    requests: list[dict] = field(default_factory=list)
    """Every request received: its ``path``, ``headers`` (lower-case names) and ``json`` body."""
    replies: deque[Reply] = field(default_factory=deque)
    """The script a server without a handler answers from, in order."""
    closing: threading.Event = field(default_factory=threading.Event)
    abandoned: int = 0
    """Replies whose client went away before their end (a call cancelled on the wire)."""
    served: list[tuple[float, float]] = field(default_factory=list)
    """Each answered request's (start, end) of service, on ``time.monotonic``."""

    def bodies(self, path_end: str = "/chat/completions") -> list[dict]:
        return [r["json"] for r in self.requests if r["path"].endswith(path_end)]

    @property
    def authorizations(self) -> list[str]:
        """The ``authorization`` header of each request ("" where there was none)."""
        return [r["headers"].get("authorization", "") for r in self.requests]

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def next_reply(self, path: str, body: dict) -> Reply:
        """The script's next reply (a 500 once the script is exhausted)."""
        return self.replies.popleft() if self.replies else Reply(500, {"error": {"message": "script exhausted"}})


def _encode(body: Any) -> tuple[bytes, str]:
    if isinstance(body, list):
        return b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in body) + b"data: [DONE]\n\n", "text/event-stream"
    if isinstance(body, dict):
        return json.dumps(body).encode(), "application/json"
    if isinstance(body, str):
        return body.encode(), "text/plain"
    return body, "application/json"


def _pieces(data: bytes, body: Any) -> list[bytes]:
    """The parts a paced reply is sent in: its events (a stream), else its bytes."""
    if isinstance(body, list):
        return [part + b"\n\n" for part in data.split(b"\n\n") if part]
    return [data[i : i + 1] for i in range(len(data))]


@contextmanager
def openai_server(handler: Handler | None = None, *, one_at_a_time: bool = False) -> Iterator[Server]:
    """A server on a free port of 127.0.0.1 answering with ``handler`` (by default, the server's
    own script); it is closed when the block ends. ``one_at_a_time`` serves one request at a
    time, as a single-slot local model server does (the others wait their turn)."""
    server = Server(base_url="")
    answer = handler or server.next_reply
    slot = threading.Lock() if one_at_a_time else None

    class RequestHandler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _answer(self, body: dict) -> None:
            server.requests.append({"path": self.path, "json": body, "headers": {k.lower(): v for k, v in self.headers.items()}})
            if slot is None or not self.path.endswith("/completions"):  # /props, /tokenize, /health take no slot
                self._serve(body)
                return
            with slot:
                self._serve(body)

        def _client_left(self) -> bool:
            """Whether the client closed its connection (a cancelled call), seen without reading."""
            try:
                readable, _, _ = select.select([self.connection], [], [], 0)
                return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                return True

        def _wait(self, seconds: float) -> bool:
            """Wait ``seconds`` before replying, as a model server works on the call; False when the
            client left meanwhile (the server stops that work, as llama.cpp's does) or the server closes."""
            deadline = time.monotonic() + seconds
            while (left := deadline - time.monotonic()) > 0:
                if server.closing.wait(min(left, 0.02)):
                    return False
                if self._client_left():
                    return False
            return True

        def _serve(self, body: dict) -> None:
            started = time.monotonic()
            reply = answer(self.path, body)
            if not isinstance(reply, Reply):
                reply = Reply(*reply)
            if reply.delay and not self._wait(reply.delay):
                server.abandoned += 1
                server.served.append((started, time.monotonic()))
                return
            data, content_type = _encode(reply.body)
            headers = {"content-type": content_type, **{k.lower(): v for k, v in reply.headers.items()}}
            try:
                self.send_response(reply.status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                if not reply.pace:
                    self.wfile.write(data)
                for piece in _pieces(data, reply.body) if reply.pace else ():
                    self.wfile.write(piece)
                    self.wfile.flush()
                    if server.closing.wait(reply.pace):
                        break
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                server.abandoned += 1
            finally:
                server.served.append((started, time.monotonic()))

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("content-length", "0"))
            self._answer(json.loads(self.rfile.read(length) or b"{}"))

        def do_GET(self) -> None:  # noqa: N802
            self._answer({})

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), RequestHandler)
    httpd.daemon_threads = True
    host, port = httpd.server_address[:2]
    server.base_url = f"http://{host}:{port}/v1"
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield server
    finally:
        server.closing.set()
        httpd.shutdown()
        httpd.server_close()


# -- a small local model's server -----------------------------------------------------------------

SMOLLM2_REFUSAL = (
    "1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}"
)
"""What the server says to a ``json_schema`` response format (the issue's own excerpt, whole)."""


@dataclass(frozen=True)
class SmolBehaviour:
    """How a SmolLM2-135M-like model answers a first map request, as shares that add up to at
    most 1 (the rest answers well): ``cut`` (a long answer cut at ``max_tokens``), ``garbage``
    (prose, not JSON), ``over_reserve`` (a good answer reporting one completion token more than
    ``max_tokens``, as llama.cpp counts the end of generation), ``zero`` (nothing useful, score
    0). A retried request (it says what was wrong) answers well with ``retry_ok``. ``delay`` is
    each reply's time in the one slot; ``slow`` the share of replies that take ``slow_s`` more."""

    cut: float = 0.2
    garbage: float = 0.15
    over_reserve: float = 0.1
    zero: float = 0.1
    retry_ok: float = 0.7
    delay: float = 0.02
    slow: float = 0.0
    slow_s: float = 0.0


def smol_tokens(text: str) -> int:
    """A small model's own token count: about 3.5 ASCII characters a token, 3 tokens for each
    other character (a byte-level tokenizer with no merges for Chinese: the spec's estimate
    counts such text several times lower)."""
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return -(-ascii_chars * 2 // 7) + 3 * (len(text) - ascii_chars)


def _share(*parts: object) -> float:
    import hashlib

    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def smollm2_like_handler(behaviour: SmolBehaviour | None = None, *, n_ctx: int = 8192) -> Handler:
    """Chat completions as llama.cpp's ``llama-server`` serving SmolLM2-135M-Instruct with one
    slot answers them (with ``openai_server(..., one_at_a_time=True)``): ``GET /props`` says one
    slot of ``n_ctx`` tokens, ``POST /tokenize`` counts with :func:`smol_tokens`, a
    ``json_schema`` response format is refused at once (HTTP 500, :data:`SMOLLM2_REFUSAL`), JSON
    strings carry raw newlines, replies are cut at ``max_tokens`` (``finish_reason: "length"``),
    and a map reply is chosen by ``behaviour`` from a hash of the request (the same request, the
    same reply). The reduce streams, with its usage on the last chunk."""
    b = behaviour or SmolBehaviour()

    def reply_text(body: dict, roll: float, retried: bool) -> tuple[str, int]:
        """The reply's text and how many completion tokens more than it holds the server reports."""
        score = 20 + int(_share("score", roll) * 70)
        good = '{ "answer": "}\nThe main themes are:\n\n1. hackers\n2. the culture of %d","usefulness" : %d }' % (score, score)
        if retried:
            return (good, 0) if roll < b.retry_ok else ("Sure! The main themes are hackers and their jargon.", 0)
        edges = [b.cut, b.cut + b.garbage, b.cut + b.garbage + b.over_reserve, b.cut + b.garbage + b.over_reserve + b.zero]
        if roll < edges[0]:
            return json.dumps({"answer": "a long list of points, " * 400, "usefulness": score}), 0
        if roll < edges[1]:
            return "Sure! Here is the answer in JSON format:\n```\nanswer: the main themes\n```", 0
        if roll < edges[2]:
            return good, 1
        if roll < edges[3]:
            return '{"answer": "I do not know.", "usefulness": 0}', 0
        return good, 0

    def handle(path: str, body: dict) -> Reply:
        if path.rstrip("/").endswith("/props") and not body:
            return Reply(body={"total_slots": 1, "default_generation_settings": {"n_ctx": n_ctx}, "build_info": "b0-smollm2-like"})
        if path.endswith("/tokenize"):
            return Reply(body={"tokens": [0] * smol_tokens(str(body.get("content", "")))})
        if body.get("response_format", {}).get("type") == "json_schema":
            return Reply(500, {"error": {"message": SMOLLM2_REFUSAL, "type": "server_error"}})
        messages = body.get("messages", [])
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        system = str(messages[0].get("content", "")) if messages else ""
        roll = _share(prompt)
        delay = b.delay + (b.slow_s if _share("slow", prompt) < b.slow else 0.0)
        if "final answer" in system:
            text, extra = '{"answer": "The main themes are hackers and their jargon.\n\nWizards know them. [Communities: 1]"}', 0
        else:
            text, extra = reply_text(body, roll, retried="---Your previous reply---" in system)
        limit = body.get("max_tokens")
        reason = "stop"
        if limit and smol_tokens(text) > limit:
            cut = len(text)
            while cut and smol_tokens(text[:cut]) > limit:
                cut = int(cut * 0.9)
            text, reason = text[:cut], "length"
        completion = smol_tokens(text) + extra
        if limit and extra:
            completion, reason = limit + extra, "length"
        usage = {"prompt_tokens": smol_tokens(prompt), "completion_tokens": completion, "total_tokens": smol_tokens(prompt) + completion}
        if body.get("stream"):
            return Reply(body=stream_chunks(text, finish_reason=reason, usage=usage), delay=delay)
        return Reply(body=completion_body(text, finish_reason=reason, prompt_tokens=usage["prompt_tokens"], completion_tokens=completion), delay=delay)

    return handle
