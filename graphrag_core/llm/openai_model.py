"""The OpenAI-compatible chat model: OpenAI, Azure OpenAI, vLLM, Ollama, any chat-completions API.

The only module that imports the ``openai`` SDK. At its boundary every SDK failure becomes a
:class:`~graphrag_core.errors.ModelError` (``raise ... from exc``):

- 429, 408, 5xx, timeouts, lost connections and malformed bodies -> :class:`RetryableModelError`
  (``retry_after`` from ``Retry-After-Ms`` / ``Retry-After``: seconds or an HTTP date);
- any other 4xx and client misconfiguration -> :class:`FatalModelError`.

The SDK's own retries are off (``max_retries=0``): the engine's loop is the only one. One SDK
client is kept per event loop, so calls of a run share its connections while no client
outlives the loop it was made on (``asyncio.run`` per Streamlit rerun closes its loop; a client
reused on another loop fails with "Event loop is closed"). An ``http_client`` given to the
constructor (an ``httpx.AsyncClient``; the test seam httpx is built for) is used instead of
the SDK's own. The key is sent as a header and never appears in ``repr``, ``identity``, logs
error messages or reply texts (server texts that echo it are redacted).

Structured output: a request with an ``output_schema`` is sent with the strongest
``response_format`` the endpoint accepts, tried in :data:`OUTPUT_FORMS` order: ``json_schema``
(strict: OpenAI, Azure, vLLM, Ollama, llama.cpp's server), ``json_object`` with a ``schema``
(llama-cpp-python's server), plain ``json_object``, then none. A refusal is recognised by its
status (400, 422, 500: llama-cpp-python answers 500) and its content (it names the response
format or schema); the next form is tried at once. What the endpoint settled on is remembered
by the model's :class:`~graphrag_core.llm.endpoints.Endpoints`, which a front end shares between
the models it builds: each endpoint is then negotiated once, and a refusal is logged (and handed
to the run as a notice) once per endpoint and form.

Deadlines and bounds: every call ends within ``timeout`` seconds (for a local server, counted
from the first byte of its reply, the wait for that byte bounded apart); a call past its
deadline is cancelled and its connection closed. Reply bodies are read through
:class:`~graphrag_core.llm.transport.BoundedTransport`, never past ``MAX_REPLY_BODY_BYTES``
decoded. A local endpoint found answering one request at a time
(:class:`~graphrag_core.llm.endpoints.SlotWatch`) is said so once, with advice, and its calls
stream from then on, so a timed-out one stops the server's work too. The finish reason is kept;
missing or implausible usage is flagged for the engine to count.

What the endpoint's answers say (error bodies, refusals, ``Retry-After``, usage) is read by the
pure functions of :mod:`.openai_replies`; this module applies them where the SDK's types are known.

Why this module is long: it is the one boundary with the SDK and the endpoint's HTTP: request
forms, streams, errors, usage, deadlines and the server's own token count are each translated
here, where the SDK's types are known, and nowhere else.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import urllib.request
import weakref
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx2
import openai
import pydantic

from ..errors import (
    CallTimedOut,
    ContextLengthError,
    FatalModelError,
    ModelError,
    ModelOutputError,
    PreflightError,
    ReplyTooLongError,
    RetryableModelError,
)
from ..parsing import quote_reply
from ..tokens import DEFAULT_EXACT, ENDPOINT
from .base import MAX_REPLY_CHARS, ChatRequest, ChatResponse, TokenUsage
from .endpoint_tokenizer import EndpointTokenizer, is_local_endpoint
from .settings import ModelSettings
from .endpoints import OUTPUT_FORMS, Endpoints, OutputForm, SlotWatch
from .openai_replies import (
    CONTEXT_LENGTH_ADVICE,
    ERROR_BODY_EXCERPT,
    MAX_PLAUSIBLE_CALL_TOKENS,
    MAX_REPLY_BODY_BYTES,
    REDACTED,
    SCHEMA_FORMS,
    error_detail,
    finish_reason_of,
    is_context_overflow,
    is_retryable_status,
    notice_excerpt,
    refusal_notice,
    parse_retry_after,
    refuses_format,
    reported_usage,
    served_error,
)
from .transport import LOCAL_FIRST_BYTE_FACTOR, BoundedTransport, CallClock, DeadlinePassed, deadline_message, within_deadline

logger = logging.getLogger(__name__)

NO_KEY_PLACEHOLDER = "not-needed"
"""Sent as the key to endpoints that need none (vLLM, Ollama), so the SDK never falls back to
reading ``OPENAI_API_KEY`` from the environment by itself."""
def _ignore(piece: str) -> None:
    return None


def _proxied(scheme: str, host: str) -> bool:
    """Whether requests to ``host`` go through a proxy (then a direct connection proves nothing)."""
    proxies = urllib.request.getproxies()
    return scheme in proxies and not urllib.request.proxy_bypass(host)


def sdk_client(
    *,
    base_url: str | None,
    api_version: str | None,
    api_key: str | None,
    timeout: float,
    local: bool,
    http_client: Any | None,
    max_bytes: int,
) -> openai.AsyncOpenAI:
    """An SDK client (Azure's when ``api_version`` is set) with its retries off, over a
    :class:`BoundedTransport` that reads no reply past ``max_bytes`` decoded bytes (an injected
    ``http_client`` is used as it is). Its HTTP timeouts bound the gaps between bytes (for a
    ``local`` endpoint, the wait for the first one is :data:`LOCAL_FIRST_BYTE_FACTOR` times
    longer); the adapter bounds each whole call with
    :func:`~graphrag_core.llm.transport.within_deadline`."""
    http_timeout: Any = httpx2.Timeout(timeout * LOCAL_FIRST_BYTE_FACTOR, connect=timeout) if local else timeout
    common: dict[str, Any] = {"api_key": api_key or NO_KEY_PLACEHOLDER, "timeout": http_timeout, "max_retries": 0}
    if http_client is not None:
        common["http_client"] = http_client
    else:
        inner = httpx2.AsyncHTTPTransport(limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100))
        common["http_client"] = openai.DefaultAsyncHttpxClient(transport=BoundedTransport(inner, max_bytes=max_bytes))
    if api_version:
        if "/openai" in (base_url or ""):
            return openai.AsyncAzureOpenAI(base_url=base_url, api_version=api_version, **common)
        return openai.AsyncAzureOpenAI(azure_endpoint=base_url or "", api_version=api_version, **common)
    return openai.AsyncOpenAI(base_url=base_url, **common)


class OpenAIChatModel:
    """A :class:`~graphrag_core.llm.base.ChatModel` over the chat-completions API.

    ``identity`` is ``"openai:{model}@{host}"`` (``"azure:..."`` with an ``api_version``): it
    names the endpoint and model for caches and run records and holds no secret. With JSON
    mode on (settings and request), a request with an ``output_schema`` is sent with the
    strongest accepted structured-output form (module docstring), one without with
    ``response_format={"type": "json_object"}``; ``max_tokens`` comes from the request. The
    reply text is returned as sent, even when it is not JSON: parsing and validation are the
    engine's. ``complete_streaming`` delivers the reply as it is written. ``endpoints`` is where
    the negotiated output form is remembered (a fresh :class:`Endpoints` when none is given).
    """

    def __init__(self, settings: ModelSettings, *, http_client: Any | None = None, endpoints: Endpoints | None = None) -> None:
        if settings.provider != "openai":
            raise FatalModelError("OpenAIChatModel needs settings with provider 'openai'.")
        self.settings = settings
        kind = "azure" if settings.api_version else "openai"
        self.identity = f"{kind}:{settings.model}@{settings.host}"
        self._http_client = http_client
        self.endpoints = endpoints if endpoints is not None else Endpoints()
        self._notices: list[str] = []
        self._usage_warned = False
        self._over_reserve_said = False
        self._endpoint_tokenizer: EndpointTokenizer | None = None
        self._default_tokenizer: str | None = None
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = weakref.WeakKeyDictionary()

    @property
    def endpoint(self) -> str:
        """The endpoint and model, secret-free: what accepted output forms are remembered by."""
        return f"{self.settings.base_url}#{self.settings.model}"

    @property
    def local(self) -> bool:
        """Whether the endpoint is a server on this machine or a private network."""
        return is_local_endpoint(self.settings.base_url or "")

    @property
    def output_form(self) -> OutputForm | None:
        """The form this endpoint is known to accept, ``None`` before its first call."""
        return self.endpoints.accepted_form(self.endpoint)

    def endpoint_tokenizer(self) -> EndpointTokenizer:
        """The server's own token count (the ``"endpoint"`` tokenizer setting); one per model,
        so its counts and the form the server answered are asked for once."""
        if self._endpoint_tokenizer is None:
            base = (self.settings.base_url or "").rstrip("/")
            root = base[: -len("/v1")] if base.endswith("/v1") else base
            secret = self._secret()
            headers = {"authorization": f"Bearer {secret}"} if secret else {}
            self._endpoint_tokenizer = EndpointTokenizer(root, model=self.settings.model, timeout=self.settings.timeout, headers=headers)
        return self._endpoint_tokenizer

    def default_tokenizer(self) -> str:
        """What the ``"auto"`` tokenizer setting counts with against this endpoint: the server's
        own count when it is a local server that offers one (asked once), else o200k_base."""
        if self._default_tokenizer is None:
            local = is_local_endpoint(self.settings.base_url or "")
            self._default_tokenizer = ENDPOINT if local and self.endpoint_tokenizer().available() else DEFAULT_EXACT
        return self._default_tokenizer

    def needs_key(self) -> bool:
        """Hosted OpenAI and Azure OpenAI refuse calls without a key; local servers need none."""
        host = urlsplit(self.settings.base_url or "").hostname or ""
        return bool(self.settings.api_version) or host == "api.openai.com" or host.endswith((".openai.com", ".openai.azure.com"))

    @property
    def preflight_key(self) -> str:
        """What a passed :meth:`preflight` holds for: the identity, and whether a key is set
        where the endpoint needs one (a check without the key fails, one with it may pass)."""
        keyed = self.needs_key() and self.settings.api_key is not None
        return f"{self.identity} (key set)" if keyed else self.identity

    async def preflight(self, *, timeout_s: float) -> None:
        """Check without spending tokens that calls can work: a key where the endpoint needs
        one, and an endpoint that accepts a connection (skipped behind a proxy or with an
        injected ``http_client``). Raises :class:`PreflightError` naming the endpoint."""
        base_url = self.settings.base_url or ""
        if self.needs_key() and self._secret() is None:
            raise PreflightError(
                f"No API key for the model endpoint {base_url}: set GRAPHRAG_LLM_API_KEY (or OPENAI_API_KEY). Nothing was sent.",
                endpoint=base_url,
            )
        parts = urlsplit(base_url)
        if self._http_client is not None or not parts.hostname or _proxied(parts.scheme, parts.hostname):
            return
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, port), timeout_s)
        except (OSError, asyncio.TimeoutError) as exc:
            reason = f"no answer within {timeout_s:g}s" if isinstance(exc, asyncio.TimeoutError) else (exc.strerror or type(exc).__name__)
            raise PreflightError(
                f"The model endpoint {base_url} cannot be reached ({reason}). Nothing was sent; "
                "check the base URL and that the server is running.",
                endpoint=base_url,
            ) from None
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()

    def __repr__(self) -> str:
        return f"OpenAIChatModel(identity={self.identity!r}, timeout={self.settings.timeout!r})"

    def _secret(self) -> str | None:
        return self.settings.api_key.get_secret_value() if self.settings.api_key is not None else None

    def _redact(self, text: str) -> str:
        secret = self._secret()
        return text.replace(secret, REDACTED) if secret else text

    def _client(self) -> openai.AsyncOpenAI:
        """The SDK client of the running event loop (made on first use), with its retries off."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._new_client()
        return client

    async def aclose(self) -> None:
        """Close the running loop's client (an injected ``http_client`` stays the caller's)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None and self._http_client is None:
            await client.close()

    def _new_client(self) -> openai.AsyncOpenAI:
        """The SDK client of :func:`sdk_client`, replies read up to :data:`MAX_REPLY_BODY_BYTES`."""
        settings = self.settings
        return sdk_client(
            base_url=settings.base_url, api_version=settings.api_version, api_key=self._secret(), timeout=settings.timeout,
            local=self.local, http_client=self._http_client, max_bytes=MAX_REPLY_BODY_BYTES,
        )

    def _forms(self, request: ChatRequest) -> list[OutputForm]:
        """The forms to try for ``request``, strongest first, from what the endpoint accepted."""
        if not (self.settings.json_mode and request.json_mode):
            return ["none"]
        wanted = list(OUTPUT_FORMS)
        if request.output_schema is None or not self.settings.structured_output:
            wanted = [f for f in wanted if f not in SCHEMA_FORMS]
        known = self.endpoints.accepted_form(self.endpoint)
        if known is not None:
            wanted = [f for f in wanted if OUTPUT_FORMS.index(f) >= OUTPUT_FORMS.index(known)]
        return wanted or ["none"]

    def _arguments(self, request: ChatRequest, form: OutputForm = "json_object") -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.settings.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": self.settings.temperature,
        }
        if request.max_tokens is not None:
            arguments["max_tokens"] = request.max_tokens
        schema = request.output_schema
        if form == "json_schema" and schema is not None:
            arguments["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.name, "schema": schema.schema_, "strict": True},
            }
        elif form == "json_object_schema" and schema is not None:
            arguments["response_format"] = {"type": "json_object", "schema": schema.schema_}
        elif form in ("json_object", "json_object_schema", "json_schema"):
            arguments["response_format"] = {"type": "json_object"}
        return arguments

    def batch_body(self, request: ChatRequest) -> dict[str, Any]:
        """The chat-completions body of ``request`` as one line of a Batch API job sends it, in
        the strongest output form the endpoint is known to accept (a batch line cannot fall back)."""
        return self._arguments(request, self._forms(request)[0])

    def batch_reply(self, body: object) -> ChatResponse:
        """The reply in a Batch API output line's body, read as a direct call's reply is (usage
        with its cached prompt tokens; a body with no content is a ``RetryableModelError``)."""
        try:
            completion = openai.types.chat.ChatCompletion.model_validate(body)
        except pydantic.ValidationError as exc:
            raise RetryableModelError(f"Model response from {self.identity} in a batch is malformed: {notice_excerpt(str(exc))}") from None
        return self._response(completion)

    def _refused(self, form: OutputForm, following: OutputForm, detail: str) -> None:
        """Remember that the endpoint refused ``form``; say so once per endpoint and form."""
        if self.endpoints.refused(self.endpoint, form, following=following):
            notice = refusal_notice(self.identity, form, following, detail)
            logger.warning("%s", notice)
            self._notices.append(notice)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await self._call(request, None)

    async def complete_streaming(self, request: ChatRequest, on_text: Callable[[str], None]) -> ChatResponse:
        """The reply as it is written (``stream=True``): ``on_text`` sees each new piece; the
        usage comes from the stream's final chunk (``stream_options.include_usage``)."""
        return await self._call(request, on_text)

    async def _call(self, request: ChatRequest, on_text: Callable[[str], None] | None) -> ChatResponse:
        """One call within its deadline: ``timeout`` seconds from its start, or, for a local
        endpoint, from the first byte of its reply (waiting for that byte is bounded by
        :data:`LOCAL_FIRST_BYTE_FACTOR` times the timeout). A call past its deadline is cancelled,
        its connection closed (a streamed one stops the server's work too)."""
        try:
            client = self._client()
        except (openai.OpenAIError, ValueError) as exc:
            raise FatalModelError(f"Cannot configure the model client for {self.identity}: {self._redact(str(exc))}") from None
        local = self.local
        clock = CallClock()
        watch = self.endpoints.slots(self.endpoint) if local else None
        if watch is not None:
            watch.started()
        streamed = on_text if on_text is not None else (_ignore if watch is not None and watch.single_slot else None)
        answered = False
        try:
            response = await within_deadline(lambda: self._exchange(client, request, streamed), timeout=self.settings.timeout, local=local, clock=clock)
            answered = True
        except DeadlinePassed as passed:
            raise CallTimedOut(deadline_message("Model", self.identity, self.settings.timeout, local=local, began=passed.began)) from None
        finally:
            found = watch.ended(clock.sent, answered=answered) if watch is not None else False
        if found and watch is not None:
            self._single_slot_found(watch)
        self._over_reserve(request, response)
        return self._with_notices(response)

    def _over_reserve(self, request: ChatRequest, response: ChatResponse) -> None:
        """A reply reported with more completion tokens than its ``max_tokens`` (llama.cpp counts
        the end of its generation too: 513 for 512) is used as it is and counted as reported;
        said once per model."""
        limit, usage = request.max_tokens, response.usage
        if self._over_reserve_said or not limit or usage is None or usage.completion_tokens <= limit:
            return
        self._over_reserve_said = True
        notice = (
            f"Model endpoint {self.identity} reported {usage.completion_tokens:,} completion tokens for a call limited to "
            f"{limit:,} (max_tokens), more completion tokens than it was asked for: the reply is used as it is and its "
            "tokens counted as reported (a server may count the end of its reply too)."
        )
        logger.info("%s", notice)
        self._notices.append(notice)

    def _single_slot_found(self, watch: SlotWatch) -> None:
        notice = (
            f"Model endpoint {self.identity} answers one request at a time: of its last {watch.observed} calls, sent "
            f"{watch.most_in_flight} at a time, none was served while another was. Set the concurrency to 1 "
            f"(--concurrency 1, or the concurrency slider) and give calls a longer timeout (GRAPHRAG_LLM_TIMEOUT, now "
            f"{self.settings.timeout:g}s): each call waits for the ones before it. Its calls now stream, so one that "
            "times out is also cancelled on the server."
        )
        logger.warning("%s", notice)
        self._notices.append(notice)

    async def _exchange(self, client: openai.AsyncOpenAI, request: ChatRequest, on_text: Callable[[str], None] | None) -> ChatResponse:
        """Send ``request`` in the strongest accepted form and read the reply (streamed when
        ``on_text`` is given); SDK failures become model errors."""
        forms = self._forms(request)
        extra: dict[str, Any] = {} if on_text is None else {"stream": True, "stream_options": {"include_usage": True}}
        try:
            for position, form in enumerate(forms):
                try:
                    completion = await client.chat.completions.create(**self._arguments(request, form), **extra)
                except openai.APIStatusError as exc:
                    detail = self._redact(error_detail(exc.body))
                    if position + 1 < len(forms) and form != "none" and refuses_format(exc.status_code, detail):
                        self._refused(form, forms[position + 1], detail)
                        continue
                    raise
                if forms[0] in SCHEMA_FORMS:  # a schema call: what it settled on holds for the endpoint
                    self.endpoints.settle(self.endpoint, form)
                break
            if on_text is not None:
                return await self._read_stream(completion, on_text)
        except openai.APITimeoutError as exc:
            raise CallTimedOut(f"Model request to {self.identity} timed out after {self.settings.timeout:g}s.") from exc
        except openai.APIConnectionError as exc:
            cause = type(exc.__cause__).__name__ if exc.__cause__ is not None else "connection error"
            raise RetryableModelError(f"Could not reach the model endpoint {self.settings.host} ({cause}).") from exc
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from exc
        except openai.APIResponseValidationError as exc:
            raise RetryableModelError(f"Model response from {self.identity} is malformed: {self._redact(exc.message)}") from exc
        except openai.OpenAIError as exc:
            raise FatalModelError(f"Model call to {self.identity} failed: {self._redact(str(exc))}") from exc
        except ModelOutputError:
            raise  # a reply refused while it was read (too long): the engine's to judge
        except ValueError as exc:  # a 200 reply whose body is not JSON (json.JSONDecodeError)
            raise RetryableModelError(
                f"Model response from {self.identity} ({self.settings.base_url}) is malformed: its body is not JSON ({exc})."
            ) from exc
        return self._response(completion)

    def _with_notices(self, response: ChatResponse) -> ChatResponse:
        """Hand what this model has to say once (refused formats) to the engine with a reply."""
        if not self._notices:
            return response
        notices, self._notices = tuple(self._notices), []
        return response.model_copy(update={"notices": response.notices + notices})

    async def _read_stream(self, stream: Any, on_text: Callable[[str], None]) -> ChatResponse:
        """Join a chat-completions stream's pieces; the usage is on its final chunk. An endpoint
        that answers a streaming request with one plain completion is read as such."""
        answer = getattr(stream, "response", None)
        if answer is not None and "application/json" in str(answer.headers.get("content-type", "")):
            async with stream:
                body = json.loads(await answer.aread())
            response = self._response(openai.types.chat.ChatCompletion.model_validate(body))
            on_text(response.text)
            return response
        pieces: list[str] = []
        received = 0
        usage: TokenUsage | None = None
        finish_reason: str | None = None
        secret = self._secret()
        # a reply that echoes the key is redacted before any piece leaves: the last
        # len(key) - 1 characters wait until the next piece shows whether they start the key
        held = ""
        keep = len(secret) - 1 if secret else 0
        async with stream:
            async for chunk in stream:
                if getattr(chunk, "usage", None) is not None:
                    usage = self._checked_usage(chunk.usage, chunk)
                choices = getattr(chunk, "choices", None) or []
                finish_reason = (finish_reason_of(choices[0]) if choices else None) or finish_reason
                piece = getattr(getattr(choices[0], "delta", None), "content", None) if choices else None
                if isinstance(piece, str) and piece:
                    received += len(piece)
                    if received > MAX_REPLY_CHARS:
                        raise ReplyTooLongError(
                            f"The model's streamed reply passed {MAX_REPLY_CHARS:,} characters, so it was refused "
                            f"and the stream closed. {quote_reply(''.join(pieces[:50]))}"
                        )
                    held = self._redact(held + piece)
                    cut = max(0, len(held) - keep)
                    ready, held = held[:cut], held[cut:]
                    if ready:
                        pieces.append(ready)
                        on_text(ready)
        if held:
            pieces.append(held)
            on_text(held)
        if not pieces:
            raise RetryableModelError(f"Model response from {self.identity} is malformed: the stream carried no content.")
        return ChatResponse(text="".join(pieces), usage=usage, usage_unreported=usage is None, finish_reason=finish_reason)

    def _status_error(self, exc: openai.APIStatusError) -> ModelError:
        status = exc.status_code
        detail = self._redact(error_detail(exc.body))
        message = f"Model endpoint {self.identity} answered HTTP {status}" + (f": {detail}" if detail else ".")
        if status in (400, 413, 422) and is_context_overflow(detail, exc.body):
            return ContextLengthError(f"{message} {CONTEXT_LENGTH_ADVICE}", status_code=status)
        if is_retryable_status(status):
            return RetryableModelError(message, retry_after=parse_retry_after(exc.response.headers), status_code=status)
        return FatalModelError(message, status_code=status)

    def _response(self, completion: object) -> ChatResponse:
        """The reply text, usage and finish reason; a body without choices or content is a
        retryable error (one that carries the server's own error message says it). An
        implausible usage is said once per model (a notice) and recorded as unreported."""
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list) or not choices:
            served = served_error(completion)
            if served:
                raise RetryableModelError(f"Model endpoint {self.identity} answered with an error: {self._redact(served)}")
            raise RetryableModelError(f"Model response from {self.identity} is malformed: it has no choices.")
        message = getattr(choices[0], "message", None)
        content = getattr(message, "content", None)
        if not isinstance(content, str):
            refusal = getattr(message, "refusal", None)
            reason = f" (refusal: {self._redact(str(refusal)[:ERROR_BODY_EXCERPT])})" if isinstance(refusal, str) and refusal else ""
            raise RetryableModelError(f"Model response from {self.identity} is malformed: its first choice has no message content{reason}.")
        usage = self._checked_usage(getattr(completion, "usage", None), completion)
        # A reply that echoes the key is redacted here, before any event, result, cache entry,
        # stored run or page can hold it.
        return ChatResponse(
            text=self._redact(content), usage=usage, usage_unreported=usage is None,
            finish_reason=finish_reason_of(choices[0]),
        )

    def _checked_usage(self, reported: object, completion: object = None) -> TokenUsage | None:
        """The reported usage (with its cached prompt tokens), or ``None`` (with a notice) when it
        is negative or implausibly large."""
        usage = reported_usage(reported, completion)
        if usage is None:
            return None
        if min(usage.prompt_tokens, usage.completion_tokens) < 0 or usage.total_tokens > MAX_PLAUSIBLE_CALL_TOKENS:
            if self._usage_warned:
                return None
            self._usage_warned = True
            notice = (
                f"Model endpoint {self.identity} reported an implausible token usage (prompt {usage.prompt_tokens:,}, "
                f"completion {usage.completion_tokens:,}); the call's tokens were counted by the run instead."
            )
            logger.warning("%s", notice)
            self._notices.append(notice)
            return None
        return usage


__all__ = [
    "EndpointTokenizer",
    "OpenAIChatModel",
    "sdk_client",
    # defined in openai_replies, importable from here as before
    "MAX_PLAUSIBLE_CALL_TOKENS",
    "MAX_REPLY_BODY_BYTES",
    "REDACTED",
    "parse_retry_after",
]
