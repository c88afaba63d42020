"""The offline chat model: deterministic, extractive, no network and no downloads.

It answers the engine's real prompts (``graphrag_core.prompts``) by reading them back, with one
answerer per purpose (:data:`ANSWERERS`): ``map``, ``reduce`` and ``summary`` (``answers``),
``rate`` (``rating``), ``judge``, ``claims`` and ``questions`` (``judging``), ``support``
(``support_reply``: the offline support judge over the prompt's texts); ``expand`` and
``relevance`` (``lazy``: the lazy method's).

Invariants: the reply text is a function of the request alone (never of time, latency, call
order or class); it is always one JSON object, which goes through the same parsing and
validation as a real model's reply; ``identity`` is ``"offline:bm25/v{OFFLINE_VERSION}"``.
Whether a model streams is a property of its class: :class:`OfflineChatModel` never does,
:class:`PacedOfflineChatModel` always does.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Mapping
from types import MappingProxyType

from ...context import split_prompt_sections
from ...prompts import requested_language
from ...tokens import estimate_tokens
from ..base import ChatRequest, ChatResponse, Purpose, TokenUsage
from .answers import answer_map, answer_reduce, answer_summary
from .judging import claims_reply, judge_reply, questions_reply
from .lazy import answer_relevance, expansion_reply
from .rating import answer_rating
from .support_reply import support_reply

OFFLINE_VERSION = 6
"""Bumped whenever the offline model's answers change, so map caches keyed by its identity
never serve an older version's answers."""
OFFLINE_IDENTITY = f"offline:bm25/v{OFFLINE_VERSION}"
STREAM_PIECES = 40
"""How many pieces a streamed offline reply comes in."""

Answerer = Callable[[ChatRequest], Mapping[str, object]]
"""The reply payload (before it is written as JSON) for one request."""


def _user_message(request: ChatRequest) -> str:
    """The request's last user message ("" when it has none)."""
    return next((m.content for m in reversed(request.messages) if m.role == "user"), "")


def _system_message(request: ChatRequest) -> str:
    """The request's first system message ("" when it has none)."""
    return next((m.content for m in request.messages if m.role == "system"), "")


def _map(request: ChatRequest) -> Mapping[str, object]:
    return answer_map(*split_prompt_sections(_user_message(request)))


def _reduce(request: ChatRequest) -> Mapping[str, object]:
    return answer_reduce(*split_prompt_sections(_user_message(request)), language=requested_language(_system_message(request)))


def _summary(request: ChatRequest) -> Mapping[str, object]:
    user = _user_message(request)
    _, data = split_prompt_sections(user)
    return answer_summary(data or user)


def _rate(request: ChatRequest) -> Mapping[str, object]:
    return answer_rating(*split_prompt_sections(_user_message(request)))


def _judge(request: ChatRequest) -> Mapping[str, object]:
    return judge_reply(_user_message(request))


def _claims(request: ChatRequest) -> Mapping[str, object]:
    return claims_reply(_user_message(request))


def _questions(request: ChatRequest) -> Mapping[str, object]:
    return questions_reply(_system_message(request), _user_message(request))


def _support(request: ChatRequest) -> Mapping[str, object]:
    return support_reply(_user_message(request))


def _expand(request: ChatRequest) -> Mapping[str, object]:
    return expansion_reply(split_prompt_sections(_user_message(request))[0])


def _relevance(request: ChatRequest) -> Mapping[str, object]:
    return answer_relevance(_user_message(request))


ANSWERERS: Mapping[Purpose, Answerer] = MappingProxyType(
    {
        "map": _map,
        "reduce": _reduce,
        "summary": _summary,
        "rate": _rate,
        "judge": _judge,
        "claims": _claims,
        "questions": _questions,
        "support": _support,
        "expand": _expand,
        "relevance": _relevance,
    }
)
"""The answerer of each purpose; every :data:`~graphrag_core.llm.base.Purpose` has one."""


class OfflineChatModel:
    """The default chat model when none is configured (see the module docstring).

    ``latency=(min_s, max_s)`` adds a simulated delay per call, drawn uniformly from that range
    by a hash of ``seed`` and the request: the same request with the same seed always waits
    the same time, and the reply never depends on the delay. ``usage`` is the heuristic token
    estimate of the prompt and the reply, so run diagnostics have numbers to show. This class
    delivers each reply whole; :class:`PacedOfflineChatModel` also streams.
    """

    identity = OFFLINE_IDENTITY

    def __init__(self, *, latency: tuple[float, float] | None = None, seed: int = 0) -> None:
        if latency is not None:
            low, high = latency
            if low < 0 or high < low:
                raise ValueError("latency must be (min_s, max_s) with 0 <= min_s <= max_s.")
        self.latency = latency
        self.seed = seed

    def __repr__(self) -> str:
        return f"{type(self).__name__}(latency={self.latency!r}, seed={self.seed!r})"

    def delay_for(self, request: ChatRequest) -> float:
        """The simulated delay of ``request`` in seconds: a function of the seed and the request."""
        if self.latency is None:
            return 0.0
        low, high = self.latency
        digest = hashlib.sha256(f"{self.seed}\n{request.model_dump_json()}".encode()).digest()
        fraction = int.from_bytes(digest[:8], "big") / 2**64
        return low + (high - low) * fraction

    def reply(self, request: ChatRequest) -> str:
        """The reply text for ``request``, computed synchronously (no delay)."""
        return json.dumps(ANSWERERS[request.purpose](request), ensure_ascii=False)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        delay = self.delay_for(request)
        if delay > 0:
            await asyncio.sleep(delay)
        # Off the event loop: a big batch takes milliseconds to score, and other calls (and the
        # page's progress) must go on meanwhile, as they would with a remote model.
        text = await asyncio.to_thread(self.reply, request)
        return _response(request, text)


class PacedOfflineChatModel(OfflineChatModel):
    """The offline model for demonstrations: it also writes its reply piece by piece, like a
    real model's streamed reduce, so there is something to watch while the simulated latency
    passes. A :class:`~graphrag_core.llm.base.StreamingChatModel` whatever its latency;
    its replies are :class:`OfflineChatModel`'s, byte for byte."""

    async def complete_streaming(self, request: ChatRequest, on_text: Callable[[str], None]) -> ChatResponse:
        """The reply of :meth:`complete`, delivered in ``STREAM_PIECES`` pieces over its delay."""
        delay = self.delay_for(request)
        text = self.reply(request)
        size = max(1, -(-len(text) // STREAM_PIECES))
        for start in range(0, len(text), size):
            await asyncio.sleep(delay / STREAM_PIECES)
            on_text(text[start : start + size])
        return _response(request, text)


def _response(request: ChatRequest, text: str) -> ChatResponse:
    usage = TokenUsage(prompt_tokens=estimate_tokens(request.prompt_text), completion_tokens=estimate_tokens(text))
    return ChatResponse(text=text, usage=usage)


__all__ = ["ANSWERERS", "OFFLINE_IDENTITY", "OFFLINE_VERSION", "STREAM_PIECES", "Answerer", "OfflineChatModel", "PacedOfflineChatModel"]
