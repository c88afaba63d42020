"""A fake OpenAI Batch API for tests: the files endpoints (upload, content) and the batches
endpoints (create, retrieve), on a free port of 127.0.0.1.

Each job's lines are answered by the offline model (the line's purpose is the start of its
custom id), so an experiment through it makes real answers, claims and judgments. A job goes
``validating`` -> ``in_progress`` -> its end after ``polls`` retrievals; what its end is comes
from ``Fake.plans`` (one per job, in creation order; ``complete`` once they run out):

- ``complete``: every line answered;
- ``fail_some``: every third line in the error file (status 500), the rest answered;
- ``expire``: ``expired``, only the first half of the lines answered;
- ``fail``: the whole job ``failed``, no output.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from graphrag_core.llm.base import ChatMessage, ChatRequest
from graphrag_core.llm.offline import OfflineChatModel

OFFLINE = OfflineChatModel()


@dataclass
class Job:
    id: str
    input_file_id: str
    lines: list[dict]
    plan: str
    polls_left: int
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed: int = 0
    failed: int = 0

    def body(self) -> dict:
        return {
            "id": self.id, "object": "batch", "endpoint": "/v1/chat/completions", "status": self.status, "input_file_id": self.input_file_id,
            "output_file_id": self.output_file_id, "error_file_id": self.error_file_id, "completion_window": "24h",
            "request_counts": {"total": len(self.lines), "completed": self.completed, "failed": self.failed},
        }


@dataclass
class Fake:
    base_url: str = ""
    polls: int = 2
    plans: list[str] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    jobs: dict[str, Job] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids)}"

    def lines_sent(self) -> list[list[str]]:
        """Each job's custom ids, in creation order."""
        return [[line["custom_id"] for line in job.lines] for job in self.jobs.values()]

    def advance(self, job: Job) -> None:
        if job.status in ("completed", "failed", "expired"):
            return
        job.polls_left -= 1
        if job.polls_left > 0:
            job.status = "in_progress"
            job.completed = min(len(job.lines) - 1, job.completed + 1)
            return
        answered, errors = [], []
        for n, line in enumerate(job.lines):
            if job.plan == "fail" or (job.plan == "expire" and n >= len(job.lines) // 2):
                continue
            if job.plan == "fail_some" and n % 3 == 0:
                errors.append({"id": f"r{n}", "custom_id": line["custom_id"], "response": {"status_code": 500, "body": {"error": {"message": "server overloaded"}}}, "error": None})
                continue
            answered.append({"id": f"r{n}", "custom_id": line["custom_id"], "response": {"status_code": 200, "body": completion(line)}, "error": None})
        if answered:
            job.output_file_id = self.new_id("file")
            self.files[job.output_file_id] = "".join(json.dumps(a) + "\n" for a in answered).encode()
        if errors:
            job.error_file_id = self.new_id("file")
            self.files[job.error_file_id] = "".join(json.dumps(e) + "\n" for e in errors).encode()
        job.completed, job.failed = len(answered), len(errors)
        job.status = {"fail": "failed", "expire": "expired"}.get(job.plan, "completed")


def completion(line: dict) -> dict:
    """The offline model's reply to a batch line, as a chat-completion body."""
    body = line["body"]
    request = ChatRequest(
        purpose=line["custom_id"].split("-", 1)[0], messages=[ChatMessage(**m) for m in body["messages"]], max_tokens=body.get("max_tokens"),
    )
    text = OFFLINE.reply(request)
    prompt = sum(len(m["content"]) for m in body["messages"]) // 4
    return {
        "id": "chatcmpl-b", "object": "chat.completion", "created": 0, "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": len(text) // 4, "total_tokens": prompt + len(text) // 4},
    }


def _uploaded_file(content_type: str, data: bytes) -> bytes:
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + data)
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            return part.get_payload(decode=True)
    raise ValueError("no file part")


@contextmanager
def batch_api_server(*, polls: int = 2, plans: list[str] | None = None) -> Iterator[Fake]:
    fake = Fake(polls=polls, plans=list(plans or []))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _send(self, status: int, body: object, kind: str = "application/json") -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            data = self.rfile.read(int(self.headers.get("content-length", "0")))
            with fake.lock:
                fake.requests.append(("POST", self.path))
                if self.path == "/v1/files":
                    file_id = fake.new_id("file")
                    fake.files[file_id] = _uploaded_file(self.headers["content-type"], data)
                    self._send(200, {"id": file_id, "object": "file", "purpose": "batch", "bytes": len(fake.files[file_id])})
                elif self.path == "/v1/batches":
                    body = json.loads(data)
                    lines = [json.loads(line) for line in fake.files[body["input_file_id"]].decode().splitlines() if line.strip()]
                    plan = fake.plans.pop(0) if fake.plans else "complete"
                    job = Job(id=fake.new_id("batch"), input_file_id=body["input_file_id"], lines=lines, plan=plan, polls_left=fake.polls)
                    fake.jobs[job.id] = job
                    self._send(200, job.body())
                else:
                    self._send(404, {"error": {"message": "not found"}})

        def do_GET(self) -> None:  # noqa: N802
            with fake.lock:
                fake.requests.append(("GET", self.path))
                parts = self.path.strip("/").split("/")
                if parts[:2] == ["v1", "batches"] and len(parts) == 3 and parts[2] in fake.jobs:
                    job = fake.jobs[parts[2]]
                    fake.advance(job)
                    self._send(200, job.body())
                elif parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content" and parts[2] in fake.files:
                    self._send(200, fake.files[parts[2]], "application/jsonl")
                else:
                    self._send(404, {"error": {"message": "not found"}})

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    fake.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
