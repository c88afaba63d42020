"""The model server's own token count: the ``"endpoint"`` tokenizer setting.

OpenAI-compatible servers that count tokens do it at different places; :class:`EndpointTokenizer`
tries the known forms in order and keeps the first that answers (:data:`TOKENIZE_FORMS`):

- llama.cpp's server and vLLM: ``POST {root}/tokenize`` with ``{"content": text}`` (llama.cpp,
  answers ``{"tokens": [...]}``) or ``{"model": m, "prompt": text}`` (vLLM, answers
  ``{"count": n, ...}``); one body carries both;
- llama-cpp-python's server: ``POST {root}/extras/tokenize`` with ``{"input": text}``
  (answers ``{"tokens": [...]}``).

``root`` is the base URL without its ``/v1``. A chat endpoint counts more than the messages'
text: its chat template wraps each message in markers. :meth:`EndpointTokenizer.prompt_overhead`
is that share, measured once on the server with a ChatML frame (markers a ChatML model reads as
its own special tokens, and any other model as several ordinary ones, so the share is never
under-counted) and never less than OpenAI's 3 per message and 3 for the reply. Only the
standard library is used: counting needs no SDK.
"""

from __future__ import annotations

import ipaddress
import json
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..errors import RequestValidationError
from ..tokens import ENDPOINT

TOKENIZE_CACHE_ENTRIES = 4096


@dataclass(frozen=True)
class TokenizeForm:
    """One way a server counts: where to post, and how the text is named in the body."""

    path: str
    server: str

    def body(self, text: str, model: str) -> dict[str, object]:
        if self.path == "/extras/tokenize":
            return {"input": text, "model": model}
        return {"model": model, "prompt": text, "content": text, "add_special": False, "add_special_tokens": False}


TOKENIZE_FORMS: tuple[TokenizeForm, ...] = (
    TokenizeForm("/tokenize", "llama.cpp's server or vLLM"),
    TokenizeForm("/extras/tokenize", "llama-cpp-python's server"),
)

CHATML_FRAME = "<|im_start|>system\n<|im_end|>\n<|im_start|>user\n<|im_end|>\n<|im_start|>assistant\n"
"""Two messages and the reply's start in ChatML, with the messages' text left out."""

_NOT_THERE = frozenset({400, 404, 405, 422, 501})
"""Statuses that say the server has no counting at that path (the next form is tried)."""


def _read_count(payload: object) -> int:
    if not isinstance(payload, dict):
        raise TypeError("not a JSON object")
    value = payload.get("count")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    tokens = payload["tokens"]
    if not isinstance(tokens, list):
        raise TypeError("tokens is not a list")
    return len(tokens)


class EndpointTokenizer:
    """Counts tokens with the model server's own tokenizer (module docstring). Counts are cached
    by text. When no form answers, the first count raises ``RequestValidationError`` naming
    every place tried (the setting cannot be used with this endpoint).

    The count is a blocking call: the engine uses it while planning, before any model call."""

    def __init__(self, root_url: str, *, model: str, timeout: float, headers: Mapping[str, str] | None = None) -> None:
        self.name = ENDPOINT
        self.root = root_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self._headers = dict(headers or {})
        self._counts: dict[str, int] = {}
        self._form: TokenizeForm | None = None
        self._overhead: dict[int, int] = {}

    @property
    def url(self) -> str:
        """Where counts are asked for: the form that answered, else the first one tried."""
        return self.root + (self._form or TOKENIZE_FORMS[0]).path

    def __repr__(self) -> str:
        return f"EndpointTokenizer({self.url!r})"

    def count(self, text: str) -> int:
        if not text:
            return 0
        known = self._counts.get(text)
        if known is not None:
            return known
        value = self._ask(self._form, text) if self._form is not None else self._discover(text)
        if len(self._counts) >= TOKENIZE_CACHE_ENTRIES:
            self._counts.clear()
        self._counts[text] = value
        return value

    def available(self) -> bool:
        """Whether the server counts at any known place (asks it once)."""
        try:
            self.count("Hello")
        except RequestValidationError:
            return False
        return True

    def prompt_overhead(self, messages: int) -> int:
        """Tokens the server's chat template adds around ``messages`` messages and the reply's
        start (module docstring): never less than OpenAI's ``3 * messages + 3``."""
        known = self._overhead.get(messages)
        if known is None:
            frame = CHATML_FRAME if messages == 2 else "<|im_start|>user\n<|im_end|>\n" * messages + "<|im_start|>assistant\n"
            known = self._overhead[messages] = max(self.count(frame), 3 * messages + 3)
        return known

    def _discover(self, text: str) -> int:
        tried: list[str] = []
        for form in TOKENIZE_FORMS:
            try:
                value = self._ask(form, text)
            except _NotThere as missing:
                tried.append(f"{self.root}{form.path} (HTTP {missing.status})")
                continue
            self._form = form
            return value
        raise RequestValidationError(
            f"The model endpoint offers no token count at {tried[0]}"
            + (f", nor at {', '.join(tried[1:])}" if len(tried) > 1 else "")
            + "; choose the heuristic tokenizer or an exact encoding instead."
        )

    def _ask(self, form: TokenizeForm, text: str) -> int:
        url = self.root + form.path
        body = json.dumps(form.body(text, self.model)).encode()
        request = urllib.request.Request(url, data=body, method="POST", headers={"content-type": "application/json", **self._headers})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:  # noqa: S310 - the configured endpoint
                return _read_count(json.loads(read_within(answer, deadline=time.monotonic() + self.timeout)))
        except urllib.error.HTTPError as exc:
            if exc.code in _NOT_THERE and self._form is None:
                raise _NotThere(exc.code) from None
            raise RequestValidationError(
                f"The model endpoint offers no token count at {url} (HTTP {exc.code}); "
                "choose the heuristic tokenizer or an exact encoding instead."
            ) from None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise RequestValidationError(
                f"Could not count tokens at {url} ({type(exc).__name__}); "
                "choose the heuristic tokenizer or an exact encoding instead."
            ) from None


MAX_COUNT_REPLY_BYTES = 16 * 1024 * 1024
"""A count's reply is read up to this many bytes (a list of token ids for a long text included)."""


def read_within(answer: Any, *, deadline: float) -> bytes:
    """The reply's body, read by pieces until ``deadline`` (``time.monotonic``) or the size bound:
    a server that sends its reply a byte at a time cannot hold the planning for longer."""
    chunks: list[bytes] = []
    size = 0
    while piece := answer.read1(65536):
        chunks.append(piece)
        size += len(piece)
        if size > MAX_COUNT_REPLY_BYTES:
            raise ValueError(f"the reply passed {MAX_COUNT_REPLY_BYTES:,} bytes")
        if time.monotonic() > deadline:
            raise TimeoutError("the reply did not end within the timeout")
    return b"".join(chunks)


class _NotThere(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def is_local_host(host: str) -> bool:
    """Whether ``host`` is this machine or a private network's (a model server one runs oneself)."""
    name = host.strip("[]").lower()
    if not name:
        return False
    if name == "localhost" or name.endswith((".localhost", ".local", ".internal", ".lan")):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified


def is_local_endpoint(base_url: str) -> bool:
    """Whether ``base_url`` names a server on this machine or a private network (a model server
    a researcher started, e.g. llama-cpp-python, llama.cpp, vLLM or Ollama)."""
    return is_local_host(urlsplit(base_url).hostname or "")


__all__ = ["EndpointTokenizer", "TOKENIZE_FORMS", "TokenizeForm", "is_local_endpoint", "is_local_host", "read_within"]
