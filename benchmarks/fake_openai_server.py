"""A fake OpenAI-compatible chat server for benchmarks: instant, deterministic replies that both
this engine and Microsoft GraphRAG accept, and every prompt counted with o200k_base.

Replies by what the prompt asks for: this engine's map (``{"answer", "usefulness"}``) and reduce
(``{"answer"}``), GraphRAG's map (``{"points": [...]}``) and reduce (Markdown). Streams when
asked (``"stream": true``, with usage at the end). ``/tokenize`` and ``/extras/tokenize`` answer
404, as OpenAI does. ``GET /stats`` returns the calls, their prompt tokens (o200k_base, each
message's text plus 3 per message and 3 for the reply) and the peak of calls in flight;
``POST /reset`` clears them.

With ``--prompt-cache`` it keeps a prompt cache as OpenAI's does: the longest prefix a prompt
shares with any prompt seen before is reported as ``prompt_tokens_details.cached_tokens`` when it
is at least 1,024 tokens, in whole steps of 128. ``--prefill-ms-per-1k`` makes each reply wait for
its prompt's uncached tokens as a local server computes them (llama.cpp skips a cached prefix).

    python benchmarks/fake_openai_server.py [--port 0] [--latency 0.0] [--prompt-cache] [--prefill-ms-per-1k 0]
"""

from __future__ import annotations

import argparse
import bisect
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphrag_core.tokens import get_tokenizer  # noqa: E402

O200K = get_tokenizer("o200k_base")


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.calls: list[dict] = []
        self.in_flight = 0
        self.peak = 0


STATS = Stats()

CACHE_MIN_TOKENS, CACHE_STEP = 1024, 128
"""OpenAI's prompt caching: prefixes from 1,024 tokens, in steps of 128."""


class PromptCache:
    """Every prompt seen, sorted, so the longest prefix a new one shares with any of them is the
    longest it shares with its two neighbours."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: list[str] = []

    def cached_tokens(self, prompt: str) -> int:
        with self.lock:
            at = bisect.bisect_left(self.seen, prompt)
            shared = max((_common_prefix(prompt, self.seen[i]) for i in (at - 1, at) if 0 <= i < len(self.seen)), default=0)
            bisect.insort(self.seen, prompt)
        tokens = O200K.count(prompt[:shared])
        return 0 if tokens < CACHE_MIN_TOKENS else tokens // CACHE_STEP * CACHE_STEP


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n  # the largest i with a[:i] == b[:i], by bisection on whole slices (fast in C)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def reply_for(messages: list[dict]) -> str:
    system = messages[0]["content"] if messages else ""
    prompt = "\n".join(m["content"] for m in messages)
    if '"points"' in prompt:  # GraphRAG's map
        return json.dumps({"points": [{"description": "Scrooge changes from miser to benefactor [Data: Reports (1, 2)]", "score": 70}]})
    if "intermediate answer" in system or '"usefulness"' in prompt:  # this engine's map
        return json.dumps({"answer": "Scrooge changes from miser to benefactor.", "usefulness": 70})
    if "final answer" in system and '"answer"' in prompt:  # this engine's reduce
        return json.dumps({"answer": "Redemption: Scrooge changes from miser to benefactor [Communities: 1]."})
    return "## Redemption\n\nScrooge changes from miser to benefactor [Data: Reports (1, 2)]."  # GraphRAG's reduce


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    latency = 0.0
    prompt_cache: PromptCache | None = None
    prefill_s_per_token = 0.0

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.rstrip("/").endswith("/stats"):
            with STATS.lock:
                body = {
                    "calls": len(STATS.calls), "prompt_tokens": [c["prompt_tokens"] for c in STATS.calls],
                    "cached_tokens": [c["cached_tokens"] for c in STATS.calls], "peak_in_flight": STATS.peak,
                }
            self._send(200, json.dumps(body).encode())
        else:
            self._send(404, b'{"detail": "Not Found"}')

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path.rstrip("/").endswith("/reset"):
            STATS.reset()
            self._send(200, b"{}")
            return
        if not self.path.endswith("/chat/completions"):
            self._send(404, b'{"detail": "Not Found"}')
            return
        messages = body.get("messages") or []
        tokens = sum(O200K.count(str(m.get("content") or "")) for m in messages) + 3 * len(messages) + 3
        joined = "".join(f"<|{m.get('role')}|>{m.get('content') or ''}" for m in messages)
        cached = min(tokens, self.prompt_cache.cached_tokens(joined)) if self.prompt_cache is not None else 0
        with STATS.lock:
            STATS.in_flight += 1
            STATS.peak = max(STATS.peak, STATS.in_flight)
        try:
            if self.latency or self.prefill_s_per_token:
                time.sleep(self.latency + self.prefill_s_per_token * (tokens - cached))
            content = reply_for(messages)
        finally:
            with STATS.lock:
                STATS.in_flight -= 1
                STATS.calls.append({"prompt_tokens": tokens, "cached_tokens": cached})
        usage = {"prompt_tokens": tokens, "completion_tokens": 20, "total_tokens": tokens + 20}
        if self.prompt_cache is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": cached}
        model = body.get("model") or "fake"
        if body.get("stream"):
            chunks = [
                {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [{"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": None}]},
                {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [], "usage": usage},
            ]
            data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
            self._send(200, data, "text/event-stream")
            return
        answer = {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": usage,
        }
        self._send(200, json.dumps(answer).encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds each reply waits")
    parser.add_argument("--prompt-cache", action="store_true", help="cache prompt prefixes and report cached_tokens")
    parser.add_argument("--prefill-ms-per-1k", type=float, default=0.0, help="milliseconds each reply waits per 1,000 uncached prompt tokens")
    args = parser.parse_args()
    serve(args.port, latency=args.latency, prompt_cache=args.prompt_cache, prefill_ms_per_1k=args.prefill_ms_per_1k).serve_forever()


def serve(port: int = 0, *, latency: float = 0.0, prompt_cache: bool = False, prefill_ms_per_1k: float = 0.0) -> ThreadingHTTPServer:
    """The server, bound (not yet serving); its base URL is printed."""
    Handler.latency = latency
    Handler.prompt_cache = PromptCache() if prompt_cache else None
    Handler.prefill_s_per_token = prefill_ms_per_1k / 1e6
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    return server


if __name__ == "__main__":
    main()
