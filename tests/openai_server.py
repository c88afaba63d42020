"""A chat-completions server on 127.0.0.1 whose answers are a function of the request.

    with openai_server(handler) as server:
        ...  # server.base_url, server.requests

``handler(path, body) -> (status, payload)``; a payload that is a list of dicts is sent as a
server-sent event stream (each dict one ``data:`` line, then ``data: [DONE]``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Handler = Callable[[str, dict], tuple[int, Any]]


def completion_body(content: str, *, prompt_tokens: int = 11, completion_tokens: int = 7) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
    }


@dataclass
class Server:
    base_url: str
    requests: list[dict] = field(default_factory=list)

    def bodies(self, path_end: str = "/chat/completions") -> list[dict]:
        return [r["json"] for r in self.requests if r["path"].endswith(path_end)]


@contextmanager
def openai_server(handler: Handler) -> Iterator[Server]:
    record: list[dict] = []

    class RequestHandler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _answer(self, body: dict) -> None:
            status, payload = handler(self.path, body)
            if isinstance(payload, list):
                data = b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in payload) + b"data: [DONE]\n\n"
                content_type = "text/event-stream"
            else:
                data = json.dumps(payload).encode()
                content_type = "application/json"
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            record.append({"path": self.path, "json": body, "headers": {k.lower(): v for k, v in self.headers.items()}})
            self._answer(body)

        def do_GET(self) -> None:  # noqa: N802
            record.append({"path": self.path, "json": {}, "headers": {k.lower(): v for k, v in self.headers.items()}})
            self._answer({})

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), RequestHandler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    host, port = httpd.server_address[:2]
    try:
        yield Server(base_url=f"http://{host}:{port}/v1", requests=record)
    finally:
        httpd.shutdown()
        httpd.server_close()
