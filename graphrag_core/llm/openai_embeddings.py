"""The OpenAI-compatible embedding model (``POST /embeddings``: OpenAI, Azure OpenAI, vLLM,
Ollama, llama.cpp's server), the chat adapter's sibling and the other importer of the SDK.

At its boundary every SDK failure becomes a :class:`~graphrag_core.errors.ModelError`, as the
chat adapter's do: 429, 408, 5xx, timeouts and lost connections are retryable (with the
server's ``Retry-After``), any other 4xx is fatal. The SDK's own retries are off; one client is
kept per event loop; the key is sent as a header and never appears in ``identity``, ``repr``
or an error message.

Deadlines and bounds, as the chat adapter's: every call ends within ``timeout`` seconds (for a
local server, counted from the first byte of its reply, the wait for that byte bounded by
:data:`~graphrag_core.llm.transport.LOCAL_FIRST_BYTE_FACTOR` times the timeout); a call past
its deadline is cancelled, its connection closed, and is retryable. Reply bodies are read
through :class:`~graphrag_core.llm.transport.BoundedTransport`, never past
:func:`reply_bound` decoded bytes (a reply past it is a
:class:`~graphrag_core.llm.transport.ReplyTooLargeError`).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence
from typing import Any

import openai

from ..errors import EmbeddingError, FatalModelError, ModelError, ModelOutputError, RetryableModelError
from ..tokens import estimate_tokens
from .base import TokenUsage
from .embeddings import EmbeddingSettings, Embeddings
from .endpoint_tokenizer import is_local_endpoint
from .openai_model import sdk_client
from .openai_replies import MAX_PLAUSIBLE_CALL_TOKENS, MAX_REPLY_BODY_BYTES, REDACTED, parse_retry_after
from .transport import CallClock, DeadlinePassed, deadline_message, within_deadline

RETRYABLE_STATUSES = frozenset({408, 409, 429})
REPLY_BYTES_PER_TEXT = 256 * 1024
"""What one text's vector may take in a reply body: 8,192 dimensions written as JSON numbers of
up to 32 bytes each (base64, the SDK's default, takes about six times less)."""


def reply_bound(batch_size: int) -> int:
    """The most decoded bytes an embeddings reply of ``batch_size`` texts is read up to: the chat
    adapter's bound, or more when a batch's vectors may need it."""
    return max(MAX_REPLY_BODY_BYTES, batch_size * REPLY_BYTES_PER_TEXT)


class OpenAIEmbeddingModel:
    """An :class:`~graphrag_core.llm.embeddings.EmbeddingModel` over the embeddings API.

    ``embed`` sends the texts in calls of at most ``settings.batch_size`` and returns their
    vectors in order, with the tokens every call reported (a call that reported none counts its
    texts with the spec's estimate, marked estimated: ``TokenUsage.estimated_calls``). ``http_client`` (an
    ``httpx.AsyncClient``) replaces the SDK's own, the test seam httpx is built for."""

    def __init__(self, settings: EmbeddingSettings, *, http_client: Any | None = None) -> None:
        self.settings = settings
        self.identity = settings.identity
        self._http_client = http_client
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        return f"OpenAIEmbeddingModel(identity={self.identity!r})"

    def _secret(self) -> str | None:
        return self.settings.api_key.get_secret_value() if self.settings.api_key is not None else None

    def _redact(self, text: str) -> str:
        secret = self._secret()
        return text.replace(secret, REDACTED) if secret else text

    @property
    def local(self) -> bool:
        """Whether the endpoint is a server on this machine or a private network."""
        return is_local_endpoint(self.settings.base_url)

    def _client(self) -> openai.AsyncOpenAI:
        """The running event loop's :func:`~graphrag_core.llm.openai_model.sdk_client`, replies
        read up to :func:`reply_bound`; :meth:`_call` bounds the whole call."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            settings = self.settings
            client = self._clients[loop] = sdk_client(
                base_url=settings.base_url, api_version=settings.api_version, api_key=self._secret(), timeout=settings.timeout,
                local=self.local, http_client=self._http_client, max_bytes=reply_bound(settings.batch_size),
            )
        return client

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        vectors: list[list[float]] = []
        usage = TokenUsage()
        size = self.settings.batch_size
        for start in range(0, len(texts), size):
            part, part_usage = await self._call(list(texts[start : start + size]))
            vectors.extend(part)
            usage = usage + part_usage
        return Embeddings(vectors=vectors, usage=usage)

    async def _call(self, texts: list[str]) -> tuple[list[list[float]], TokenUsage]:
        """One call within its deadline (the module's docstring)."""
        local, timeout = self.local, self.settings.timeout
        try:
            return await within_deadline(lambda: self._exchange(texts), timeout=timeout, local=local, clock=CallClock())
        except DeadlinePassed as passed:
            raise RetryableModelError(deadline_message("Embedding", self.identity, timeout, local=local, began=passed.began)) from None

    async def _exchange(self, texts: list[str]) -> tuple[list[list[float]], TokenUsage]:
        try:
            client = self._client()
        except (openai.OpenAIError, ValueError) as exc:
            raise FatalModelError(f"Cannot configure the embedding client for {self.identity}: {self._redact(str(exc))}") from None
        try:
            response = await client.embeddings.create(model=self.settings.model, input=texts)
        except openai.APITimeoutError as exc:
            raise RetryableModelError(f"Embedding request to {self.identity} timed out after {self.settings.timeout:g}s.") from exc
        except openai.APIConnectionError as exc:
            raise RetryableModelError(f"Could not reach the embedding endpoint of {self.identity}.") from exc
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from exc
        except openai.OpenAIError as exc:
            raise FatalModelError(f"Embedding call to {self.identity} failed: {self._redact(str(exc))}") from exc
        except ModelOutputError:
            raise  # a reply refused while it was read (past the bound)
        except ValueError as exc:  # a 200 reply whose body is not JSON (json.JSONDecodeError)
            raise RetryableModelError(f"Embedding response from {self.identity} is malformed: its body is not JSON ({exc}).") from exc
        data = sorted(getattr(response, "data", None) or [], key=lambda item: getattr(item, "index", 0))
        vectors = [list(getattr(item, "embedding", None) or []) for item in data]
        if len(vectors) != len(texts) or any(not v for v in vectors):
            raise EmbeddingError(f"The embedding endpoint of {self.identity} answered {len(vectors)} vectors for {len(texts)} texts.")
        reported = getattr(response, "usage", None)
        tokens = getattr(reported, "prompt_tokens", None) or getattr(reported, "total_tokens", None)
        if not isinstance(tokens, int) or not 0 < tokens <= MAX_PLAUSIBLE_CALL_TOKENS:
            # no (or no plausible) usage: the texts counted with the spec's estimate, marked estimated
            return vectors, TokenUsage(prompt_tokens=sum(estimate_tokens(text) for text in texts), estimated_calls=1)
        return vectors, TokenUsage(prompt_tokens=tokens)

    def _status_error(self, exc: openai.APIStatusError) -> ModelError:
        status = exc.status_code
        body = exc.body
        detail = ""
        if isinstance(body, dict):
            error = body.get("error", body)
            detail = error.get("message", "") if isinstance(error, dict) else str(error)
        message = f"Embedding endpoint {self.identity} answered HTTP {status}" + (f": {self._redact(str(detail))[:300]}" if detail else ".")
        if status in RETRYABLE_STATUSES or status >= 500:
            return RetryableModelError(message, retry_after=parse_retry_after(exc.response.headers), status_code=status)
        return FatalModelError(message, status_code=status)


__all__ = ["OpenAIEmbeddingModel", "reply_bound"]
