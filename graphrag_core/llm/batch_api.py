"""The OpenAI Batch API over HTTP: upload a JSON Lines file of chat-completion requests, create a
batch, poll it, download its output and error files (Azure OpenAI's batch has the same shape).

A line sent is ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``; a
line back is ``{"custom_id", "response": {"status_code", "body"}, "error"}``. Every HTTP or
format failure becomes a :class:`~graphrag_core.errors.BatchAPIError` (a ``ModelError``) naming
the step and what the server said. The key goes as a bearer header and never into a message.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

import httpx2
from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import BatchAPIError
from .settings import ModelSettings

CHAT_COMPLETIONS_URL = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"


class BatchStatus(StrEnum):
    """The states of a batch the API reports (a state not listed here is read as unfinished)."""

    VALIDATING = "validating"
    IN_PROGRESS = "in_progress"
    FINALIZING = "finalizing"
    COMPLETED = "completed"
    FAILED = "failed"
    EXPIRED = "expired"
    CANCELLING = "cancelling"
    CANCELLED = "cancelled"


TERMINAL_STATUSES = frozenset({BatchStatus.COMPLETED, BatchStatus.FAILED, BatchStatus.EXPIRED, BatchStatus.CANCELLED})
"""A job in one of these states changes no more; its output (and error) file is final."""
HTTP_TIMEOUT_S = 120.0
ERROR_EXCERPT = 300


class RequestCounts(BaseModel):
    model_config = ConfigDict(extra="ignore")

    total: int = 0
    completed: int = 0
    failed: int = 0


class BatchJob(BaseModel):
    """A batch as the API reports it (the fields this program reads)."""

    model_config = ConfigDict(extra="ignore")

    id: str
    status: str
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    request_counts: RequestCounts = RequestCounts()

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def completed(self) -> bool:
        """Finished having run every line it could (the others failed, each with its error)."""
        return self.status == BatchStatus.COMPLETED


class BatchLineResult(BaseModel):
    """One line of an output or error file: the reply body on success, else why not."""

    model_config = ConfigDict(frozen=True)

    custom_id: str
    body: dict[str, Any] | None = None
    error: str | None = None


def request_line(custom_id: str, body: Mapping[str, Any]) -> str:
    """One JSON Lines request of a batch input file."""
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": CHAT_COMPLETIONS_URL, "body": body}, ensure_ascii=False)


def parse_result_lines(text: str) -> list[BatchLineResult]:
    """The lines of an output or error file; a line that is not a result raises ``BatchAPIError``
    naming its number."""
    results = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            custom_id = str(data["custom_id"])
        except (ValueError, KeyError, TypeError) as exc:
            raise BatchAPIError(f"Batch result line {number} is not a result line ({exc}): {line[:ERROR_EXCERPT]}") from None
        response = data.get("response") or {}
        status = response.get("status_code") if isinstance(response, dict) else None
        body = response.get("body") if isinstance(response, dict) else None
        if status == 200 and isinstance(body, dict) and not data.get("error"):
            results.append(BatchLineResult(custom_id=custom_id, body=body))
            continue
        error = data.get("error") or (body.get("error") if isinstance(body, dict) else None)
        if isinstance(error, dict):
            error = error.get("message") or error.get("code")
        results.append(BatchLineResult(custom_id=custom_id, error=str(error or f"status {status}")[:ERROR_EXCERPT]))
    return results


class BatchClient:
    """The files and batches endpoints of one OpenAI-compatible base URL (``settings.base_url``).

    ``http_client`` (an ``httpx2.AsyncClient``) replaces the client made per call (tests)."""

    def __init__(self, settings: ModelSettings, *, http_client: httpx2.AsyncClient | None = None) -> None:
        if settings.provider != "openai" or not settings.base_url:
            raise BatchAPIError("The Batch API needs an OpenAI-compatible endpoint (--model openai with its base URL).", retryable=False)
        self.base_url = settings.base_url.rstrip("/")
        key = settings.api_key.get_secret_value() if settings.api_key is not None else None
        self._headers = {"Authorization": f"Bearer {key}"} if key and settings.key_may_go_to(settings.base_url) else {}
        self._http = http_client

    def __repr__(self) -> str:
        return f"BatchClient({self.base_url!r})"

    async def _send(self, step: str, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        client = self._http or httpx2.AsyncClient(timeout=HTTP_TIMEOUT_S)
        try:
            response = await client.request(method, self.base_url + path, headers=self._headers, **kwargs)
        except httpx2.HTTPError as exc:
            raise BatchAPIError(f"Batch API {step} at {self.base_url} failed: {type(exc).__name__}: {exc}") from exc
        finally:
            if self._http is None:
                await client.aclose()
        if response.status_code >= 400:
            retryable = response.status_code in (408, 429) or response.status_code >= 500
            raise BatchAPIError(
                f"Batch API {step} at {self.base_url} answered {response.status_code}: {response.text[:ERROR_EXCERPT]}",
                retryable=retryable, status_code=response.status_code,
            )
        return response

    async def _job(self, step: str, response: httpx2.Response) -> BatchJob:
        try:
            return BatchJob.model_validate(response.json())
        except (ValueError, ValidationError) as exc:
            raise BatchAPIError(f"Batch API {step} answered with no batch: {response.text[:ERROR_EXCERPT]}") from exc

    async def upload(self, lines: Iterable[str]) -> str:
        """Upload a batch input file; its file id."""
        data = ("\n".join(lines) + "\n").encode("utf-8")
        response = await self._send("upload", "POST", "/files", data={"purpose": "batch"}, files={"file": ("batch.jsonl", data, "application/jsonl")})
        file_id = (response.json() or {}).get("id")
        if not isinstance(file_id, str) or not file_id:
            raise BatchAPIError(f"Batch API upload answered with no file id: {response.text[:ERROR_EXCERPT]}")
        return file_id

    async def create(self, input_file_id: str, *, metadata: Mapping[str, str] | None = None) -> BatchJob:
        """Create a batch over an uploaded input file."""
        body: dict[str, Any] = {"input_file_id": input_file_id, "endpoint": CHAT_COMPLETIONS_URL, "completion_window": COMPLETION_WINDOW}
        if metadata:
            body["metadata"] = dict(metadata)
        return await self._job("create", await self._send("create", "POST", "/batches", json=body))

    async def get(self, batch_id: str) -> BatchJob:
        """The batch as it stands now."""
        return await self._job("poll", await self._send("poll", "GET", f"/batches/{batch_id}"))

    async def results(self, job: BatchJob) -> list[BatchLineResult]:
        """Every line of a finished job's output and error files."""
        lines: list[BatchLineResult] = []
        for file_id in (job.output_file_id, job.error_file_id):
            if file_id:
                response = await self._send("download", "GET", f"/files/{file_id}/content")
                lines += parse_result_lines(response.text)
        return lines


__all__ = [
    "CHAT_COMPLETIONS_URL",
    "TERMINAL_STATUSES",
    "BatchClient",
    "BatchStatus",
    "BatchJob",
    "BatchLineResult",
    "RequestCounts",
    "parse_result_lines",
    "request_line",
]
