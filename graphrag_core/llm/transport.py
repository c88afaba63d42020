"""The HTTP transport under the OpenAI-compatible adapter: replies read within a bound, and the
moment each reply began.

:class:`BoundedTransport` wraps an ``httpx2`` transport (the HTTP library the ``openai`` SDK is
built on). Invariants:

- a reply's body is decoded here (identity, ``gzip``, ``deflate``), in pieces of at most
  :data:`DECODE_PIECE_BYTES`, and reading stops with :class:`ReplyTooLargeError` as soon as the
  decoded bytes pass ``max_bytes``: a compressed reply is refused before it is inflated past the
  bound (a "gzip bomb" costs at most the bound and one piece); any other content encoding is
  refused, and only the ones it can bound are offered (``Accept-Encoding``);
- when a request goes on the wire, and when its reply's status line and headers arrive (its
  first byte), the :class:`CallClock` of the call (a context variable the adapter sets around
  each call) is told: the call's deadline can count from the first byte, and the endpoint's
  :class:`~graphrag_core.llm.endpoints.SlotWatch` times the call without the client's own setup;
- a call that sends its request again (an output form the endpoint refused, tried in the next
  form) starts its clock again: the refusal's first byte is no reply to the request now waiting.

:func:`within_deadline` is the one deadline of the adapters' calls (chat and embeddings): a call
ends within its timeout, for a local server counted from the first byte of its reply.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TypeVar

import httpx2

from ..errors import ReplyTooLongError

DECODE_PIECE_BYTES = 64 * 1024
"""The most a compressed reply is inflated by in one step before its size is checked again."""
ACCEPTED_ENCODINGS = "gzip, deflate"


class ReplyTooLargeError(ReplyTooLongError):
    """A reply body (decoded) past the transport's bound: refused, and the connection closed."""


class CallClock:
    """When one call's request went on the wire (``sent``: its last request, when the call sent
    several) and when its reply began: :meth:`first_byte` hands that moment, once per request,
    to ``on_first_byte`` (the adapter moves the call's deadline there). A request sent after an
    earlier one's reply began (a renegotiation) starts the clock again: ``first_byte_at`` is
    cleared and ``on_request_sent`` is told, so the new request waits for its own first byte as
    long as a first request does."""

    def __init__(
        self, on_first_byte: Callable[[float], None] | None = None, *, on_request_sent: Callable[[float], None] | None = None
    ) -> None:
        self.sent = time.monotonic()
        self.first_byte_at: float | None = None
        self.on_first_byte = on_first_byte
        self.on_request_sent = on_request_sent
        self.requests = 0

    def request_sent(self) -> None:
        self.sent = time.monotonic()
        self.requests += 1
        if self.first_byte_at is not None:  # a request sent again: its wait starts now
            self.first_byte_at = None
            if self.on_request_sent is not None:
                self.on_request_sent(self.sent)

    def first_byte(self) -> None:
        if self.first_byte_at is None:
            self.first_byte_at = time.monotonic()
            if self.on_first_byte is not None:
                self.on_first_byte(self.first_byte_at)


CURRENT_CALL: contextvars.ContextVar[CallClock | None] = contextvars.ContextVar("graphrag_call_clock", default=None)
"""The clock of the model call running in this context (set by the adapter around each call)."""

LOCAL_FIRST_BYTE_FACTOR = 4
"""A call to a local endpoint may wait this many times the timeout for its reply to begin (its
turn at a server that answers one request at a time); the timeout counts from that first byte."""

T = TypeVar("T")


class DeadlinePassed(Exception):
    """A call ended at its deadline (:func:`within_deadline`); ``began``: its reply had begun."""

    def __init__(self, *, began: bool) -> None:
        super().__init__("the call passed its deadline")
        self.began = began


async def within_deadline(call: Callable[[], Awaitable[T]], *, timeout: float, local: bool, clock: CallClock) -> T:
    """``call()`` with ``clock`` as the context's :data:`CURRENT_CALL`, cancelled (its
    connection closed) ``timeout`` seconds after it started, or for a ``local`` endpoint after
    the first byte of its reply (the wait for that byte bounded by :data:`LOCAL_FIRST_BYTE_FACTOR`
    times the timeout). A request sent again within the call (a renegotiated output form) has
    the whole deadline again, counted from when it was sent. Raises :class:`DeadlinePassed` when
    it was cut at its deadline."""
    loop = asyncio.get_running_loop()
    timer: asyncio.Timeout | None = None
    first_wait = timeout * LOCAL_FIRST_BYTE_FACTOR if local else timeout

    def reply_began(at: float) -> None:
        if local and timer is not None and not timer.expired():
            timer.reschedule(loop.time() + timeout)

    def sent_again(at: float) -> None:
        if timer is not None and not timer.expired():
            timer.reschedule(loop.time() + first_wait)

    clock.on_first_byte, clock.on_request_sent = reply_began, sent_again
    token = CURRENT_CALL.set(clock)
    try:
        async with asyncio.timeout(first_wait) as timer:
            return await call()
    except TimeoutError:
        if timer is None or not timer.expired():
            raise
        raise DeadlinePassed(began=clock.first_byte_at is not None) from None
    finally:
        CURRENT_CALL.reset(token)


def deadline_message(what: str, identity: str, timeout: float, *, local: bool, began: bool) -> str:
    """What a call cut at its deadline says: ``{what} request to {identity} timed out ...``."""
    if not local:
        return f"{what} request to {identity} timed out after {timeout:g}s (GRAPHRAG_LLM_TIMEOUT bounds each whole call)."
    if not began:
        return (
            f"{what} request to {identity} timed out: no reply began within {timeout * LOCAL_FIRST_BYTE_FACTOR:g}s "
            f"({LOCAL_FIRST_BYTE_FACTOR} x GRAPHRAG_LLM_TIMEOUT, the wait for a local server's turn)."
        )
    return f"{what} request to {identity} timed out: its reply did not end within {timeout:g}s of its first byte (GRAPHRAG_LLM_TIMEOUT)."


class _Inflater:
    """Decodes one content encoding in bounded pieces; ``None`` is the identity."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._wbits = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}.get(encoding)
        self._inflater = zlib.decompressobj(self._wbits) if self._wbits is not None else None
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of ``data``, each at most :data:`DECODE_PIECE_BYTES`, one at a time
        (the caller checks its bound between them, before the next is inflated)."""
        if self._inflater is None:
            yield data
            return
        while data:
            try:
                piece = self._inflater.decompress(data, DECODE_PIECE_BYTES)
            except zlib.error:
                if self.encoding == "deflate" and not self._started:  # a raw deflate stream, with no zlib header
                    self._inflater, self._started = zlib.decompressobj(-zlib.MAX_WBITS), True
                    continue
                raise httpx2.DecodingError(f"The reply's {self.encoding} body is corrupt.") from None
            self._started = True
            stalled = not piece and self._inflater.unconsumed_tail == data
            data = self._inflater.unconsumed_tail
            if self._inflater.eof and self._inflater.unused_data:  # a further gzip member
                data = self._inflater.unused_data
                self._inflater = zlib.decompressobj(self._wbits)
            if piece:
                yield piece
            elif stalled or not data:
                return


class _BoundedBody(httpx2.AsyncByteStream):
    def __init__(self, raw: httpx2.AsyncByteStream, inflater: _Inflater, max_bytes: int, url: str) -> None:
        self._raw, self._inflater, self._max, self._url = raw, inflater, max_bytes, url

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total = 0
        async for chunk in self._raw:
            for piece in self._inflater.feed(chunk):
                total += len(piece)
                if total > self._max:
                    await self._raw.aclose()
                    raise ReplyTooLargeError(
                        f"The reply from {self._url} passed {self._max:,} bytes"
                        + (f" once inflated ({self._inflater.encoding})" if self._inflater.encoding != "identity" else "")
                        + ", so it was refused and the connection closed."
                    )
                if piece:
                    yield piece

    async def aclose(self) -> None:
        await self._raw.aclose()


class BoundedTransport(httpx2.AsyncBaseTransport):
    """``inner`` with every reply body bounded to ``max_bytes`` decoded bytes and each reply's
    first byte reported to the call's :class:`CallClock` (the module's invariants)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, *, max_bytes: int) -> None:
        self._inner = inner
        self.max_bytes = max_bytes

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["accept-encoding"] = ACCEPTED_ENCODINGS
        clock = CURRENT_CALL.get()
        if clock is not None:
            clock.request_sent()
        response = await self._inner.handle_async_request(request)
        if clock is not None:
            clock.first_byte()
        encoding = response.headers.get("content-encoding", "identity").strip().lower() or "identity"
        if encoding not in ("identity", "gzip", "deflate"):
            await response.aclose()
            raise ReplyTooLargeError(f"The reply from {request.url.host} uses content encoding {encoding!r}, which cannot be read within a size bound.")
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in ("content-encoding", "content-length")]
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx2.Response(
            response.status_code,
            headers=headers,
            stream=_BoundedBody(response.stream, _Inflater(encoding), self.max_bytes, request.url.host),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


__all__ = [
    "CURRENT_CALL", "LOCAL_FIRST_BYTE_FACTOR", "BoundedTransport", "CallClock", "DeadlinePassed", "ReplyTooLargeError", "deadline_message",
    "within_deadline",
]
