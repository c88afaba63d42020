"""The OpenAI-compatible chat model: OpenAI, Azure OpenAI, vLLM, Ollama, any chat-completions API.

The only module that imports the ``openai`` SDK. At its boundary every SDK failure becomes a
:class:`~graphrag_core.errors.ModelError` (``raise ... from exc``):

- 429, 408, 5xx, timeouts, lost connections and malformed bodies -> :class:`RetryableModelError`
  (``retry_after`` from ``Retry-After-Ms`` / ``Retry-After``: seconds or an HTTP date);
- any other 4xx and client misconfiguration -> :class:`FatalModelError`.

The SDK's own retries are off (``max_retries=0``): the engine's loop is the only one. A new
client is made for every call and closed after it, so no client outlives the event loop it was
made on (``asyncio.run`` per Streamlit rerun closes its loop; a reused client then fails with
"Event loop is closed"). The key is sent as a header and never appears in ``repr``,
``identity``, logs, error messages or reply texts (server texts that echo it are redacted).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

import openai

from ..errors import FatalModelError, ModelError, RetryableModelError
from .base import ChatRequest, ChatResponse, TokenUsage
from .settings import ModelSettings

logger = logging.getLogger(__name__)

NO_KEY_PLACEHOLDER = "not-needed"
"""Sent as the key to endpoints that need none (vLLM, Ollama), so the SDK never falls back to
reading ``OPENAI_API_KEY`` from the environment by itself."""
ERROR_BODY_EXCERPT = 300
REDACTED = "[redacted]"


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds to wait before retrying, from ``retry-after-ms`` or ``retry-after`` (seconds or an
    HTTP date); ``None`` when absent or unreadable; never negative."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        try:
            value = float(milliseconds) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(0.0, value)
    raw = lowered.get("retry-after")
    if raw is None or not raw.strip():
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = parsedate_to_datetime(raw.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    return max(0.0, value) if math.isfinite(value) else None


def _is_retryable_status(status: int) -> bool:
    return status in (408, 429) or status >= 500


class OpenAIChatModel:
    """A :class:`~graphrag_core.llm.base.ChatModel` over the chat-completions API.

    ``identity`` is ``"openai:{model}@{host}"`` (``"azure:..."`` with an ``api_version``): it
    names the endpoint and model for caches and run records and holds no secret. JSON mode
    sends ``response_format={"type": "json_object"}`` when both the settings and the request
    ask for it; ``max_tokens`` comes from the request. The reply text is returned as sent,
    even when it is not JSON: parsing and validation are the engine's.
    """

    def __init__(self, settings: ModelSettings) -> None:
        if settings.provider != "openai":
            raise FatalModelError("OpenAIChatModel needs settings with provider 'openai'.")
        self.settings = settings
        kind = "azure" if settings.api_version else "openai"
        self.identity = f"{kind}:{settings.model}@{settings.host}"

    def __repr__(self) -> str:
        return f"OpenAIChatModel(identity={self.identity!r}, timeout={self.settings.timeout!r})"

    def _secret(self) -> str | None:
        return self.settings.api_key.get_secret_value() if self.settings.api_key is not None else None

    def _redact(self, text: str) -> str:
        secret = self._secret()
        return text.replace(secret, REDACTED) if secret else text

    def _client(self) -> openai.AsyncOpenAI:
        """A fresh SDK client for one call, with the SDK's retries off."""
        settings = self.settings
        api_key = self._secret() or NO_KEY_PLACEHOLDER
        common: dict[str, Any] = {"api_key": api_key, "timeout": settings.timeout, "max_retries": 0}
        if settings.api_version:
            base_url = settings.base_url or ""
            if "/openai" in base_url:
                return openai.AsyncAzureOpenAI(base_url=base_url, api_version=settings.api_version, **common)
            return openai.AsyncAzureOpenAI(azure_endpoint=base_url, api_version=settings.api_version, **common)
        return openai.AsyncOpenAI(base_url=settings.base_url, **common)

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.settings.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": self.settings.temperature,
        }
        if request.max_tokens is not None:
            arguments["max_tokens"] = request.max_tokens
        if self.settings.json_mode and request.json_mode:
            arguments["response_format"] = {"type": "json_object"}
        return arguments

    async def complete(self, request: ChatRequest) -> ChatResponse:
        try:
            client = self._client()
        except (openai.OpenAIError, ValueError) as exc:
            raise FatalModelError(f"Cannot configure the model client for {self.identity}: {self._redact(str(exc))}") from None
        try:
            async with client:
                completion = await client.chat.completions.create(**self._arguments(request))
        except openai.APITimeoutError as exc:
            raise RetryableModelError(f"Model request to {self.identity} timed out after {self.settings.timeout:g}s.") from exc
        except openai.APIConnectionError as exc:
            cause = type(exc.__cause__).__name__ if exc.__cause__ is not None else "connection error"
            raise RetryableModelError(f"Could not reach the model endpoint {self.settings.host} ({cause}).") from exc
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from exc
        except openai.APIResponseValidationError as exc:
            raise RetryableModelError(f"Model response from {self.identity} is malformed: {self._redact(exc.message)}") from exc
        except openai.OpenAIError as exc:
            raise FatalModelError(f"Model call to {self.identity} failed: {self._redact(str(exc))}") from exc
        except ValueError as exc:  # a 200 reply whose body is not JSON (json.JSONDecodeError)
            raise RetryableModelError(
                f"Model response from {self.identity} ({self.settings.base_url}) is malformed: its body is not JSON ({exc})."
            ) from exc
        return self._response(completion)

    def _status_error(self, exc: openai.APIStatusError) -> ModelError:
        status = exc.status_code
        detail = self._redact(_error_detail(exc))
        message = f"Model endpoint {self.identity} answered HTTP {status}" + (f": {detail}" if detail else ".")
        if _is_retryable_status(status):
            return RetryableModelError(message, retry_after=parse_retry_after(exc.response.headers), status_code=status)
        return FatalModelError(message, status_code=status)

    def _response(self, completion: object) -> ChatResponse:
        """The reply text and usage; a body without choices or content is a retryable error."""
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise RetryableModelError(f"Model response from {self.identity} is malformed: it has no choices.")
        message = getattr(choices[0], "message", None)
        content = getattr(message, "content", None)
        if not isinstance(content, str):
            refusal = getattr(message, "refusal", None)
            reason = f" (refusal: {self._redact(str(refusal)[:ERROR_BODY_EXCERPT])})" if isinstance(refusal, str) and refusal else ""
            raise RetryableModelError(f"Model response from {self.identity} is malformed: its first choice has no message content{reason}.")
        # A reply that echoes the key is redacted here, before any event, result, cache entry,
        # stored run or page can hold it.
        return ChatResponse(text=self._redact(content), usage=_usage(getattr(completion, "usage", None)))


def _usage(usage: object) -> TokenUsage | None:
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if not isinstance(prompt, int) and not isinstance(completion, int):
        return None
    return TokenUsage(
        prompt_tokens=prompt if isinstance(prompt, int) else 0,
        completion_tokens=completion if isinstance(completion, int) else 0,
    )


def _error_detail(exc: openai.APIStatusError) -> str:
    """The server's own error message (``{"error": {"message": ...}}``), else a body excerpt."""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"][:ERROR_BODY_EXCERPT]
        if isinstance(error, str):
            return error[:ERROR_BODY_EXCERPT]
    if isinstance(body, str):
        return body.strip()[:ERROR_BODY_EXCERPT]
    return ""


__all__ = ["OpenAIChatModel", "parse_retry_after"]
