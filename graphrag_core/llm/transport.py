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
  :class:`~graphrag_core.llm.endpoints.SlotWatch` times the call without the client's own setup.
"""

from __future__ import annotations

import contextvars
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterator

import httpx2

from ..errors import ReplyTooLongError

DECODE_PIECE_BYTES = 64 * 1024
"""The most a compressed reply is inflated by in one step before its size is checked again."""
ACCEPTED_ENCODINGS = "gzip, deflate"


class ReplyTooLargeError(ReplyTooLongError):
    """A reply body (decoded) past the transport's bound: refused, and the connection closed."""


class CallClock:
    """When one call's request went on the wire (``sent``: its last request, when the call sent
    several) and when its reply began: :meth:`first_byte` hands that moment, once, to
    ``on_first_byte`` (the adapter moves the call's deadline there)."""

    def __init__(self, on_first_byte: Callable[[float], None] | None = None) -> None:
        self.sent = time.monotonic()
        self.first_byte_at: float | None = None
        self._on_first_byte = on_first_byte

    def request_sent(self) -> None:
        self.sent = time.monotonic()

    def first_byte(self) -> None:
        if self.first_byte_at is None:
            self.first_byte_at = time.monotonic()
            if self._on_first_byte is not None:
                self._on_first_byte(self.first_byte_at)


CURRENT_CALL: contextvars.ContextVar[CallClock | None] = contextvars.ContextVar("graphrag_call_clock", default=None)
"""The clock of the model call running in this context (set by the adapter around each call)."""


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


__all__ = ["CURRENT_CALL", "BoundedTransport", "CallClock", "ReplyTooLargeError"]
