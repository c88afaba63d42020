"""The model seam: a chat model is anything with ``async complete(ChatRequest) -> ChatResponse``.

Adapters (OpenAI-compatible, offline, scripted) translate their own failures into
:class:`~graphrag_core.errors.ModelError` so that the engine's single retry loop decides.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

Purpose = Literal["map", "reduce", "summary", "rate", "judge", "claims", "questions", "support", "expand", "relevance"]


MAX_REPLY_CHARS = 1_000_000
"""A reply longer than this is refused whatever the call's ``max_tokens`` (a stream stops reading)."""


class ChatMessage(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class OutputSchema(BaseModel):
    """The JSON Schema a call's reply must match, sent as structured output where accepted.

    ``name`` names it for the API (letters, digits, ``_`` and ``-``); ``schema_`` is the JSON
    Schema itself (an object schema; strict mode wants every property required and
    ``additionalProperties: false``)."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    schema_: dict[str, Any] = Field(alias="schema")


class ChatRequest(BaseModel):
    """One model call. ``max_tokens`` is the output reserve of the phase; ``output_schema``
    (optional) is the shape the reply must have: each kind of call (map, reduce, rate, judge,
    claims, questions, summary) supplies its own (``graphrag_core.prompts``), and adapters send it as structured output where the endpoint
    takes it."""

    model_config = ConfigDict(frozen=True)

    purpose: Purpose
    messages: tuple[ChatMessage, ...]
    max_tokens: int | None = None
    json_mode: bool = True
    output_schema: OutputSchema | None = None

    @property
    def prompt_text(self) -> str:
        """Every message's content, joined by newlines: what counts against the budget."""
        return "\n".join(m.content for m in self.messages)


class TokenUsage(BaseModel):
    """Tokens of one or more calls. ``estimated_calls`` counts the calls whose tokens were counted
    with the run's tokenizer because the endpoint reported none (or an implausible count);
    ``cached_tokens`` is the part of ``prompt_tokens`` the endpoint served from its prompt cache
    (``prompt_tokens_details.cached_tokens``; llama.cpp's ``timings.cache_n``), billed at a
    fraction or not recomputed. Both are left out of the JSON when 0, and a sum carries the sum
    of its parts'."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_calls: int = Field(default=0, exclude_if=lambda calls: calls == 0)
    cached_tokens: int = Field(default=0, exclude_if=lambda tokens: tokens == 0)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: "TokenUsage") -> "TokenUsage":
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            estimated_calls=self.estimated_calls + other.estimated_calls,
            cached_tokens=self.cached_tokens + other.cached_tokens,
        )

    @property
    def uncached_prompt_tokens(self) -> int:
        """The prompt tokens the endpoint computed (and billed at the full price)."""
        return max(0, self.prompt_tokens - self.cached_tokens)

    @property
    def estimated(self) -> bool:
        """Whether any call's tokens here are the run's own count, not the endpoint's."""
        return self.estimated_calls > 0


class ChatResponse(BaseModel):
    """A reply: its text, its reported usage, and ``notices``: what the adapter says once about
    the endpoint (e.g. a response format it refused), for the run's events.

    ``finish_reason`` is the endpoint's (``"length"``: the reply was cut at ``max_tokens``);
    ``usage_unreported`` says that the endpoint should have reported usage and did not (a
    stream without usage, an implausible count): the engine then counts the call's tokens with
    the run's tokenizer and marks them estimated. A fake or offline model leaves both unset."""

    model_config = ConfigDict(frozen=True)

    text: str
    usage: TokenUsage | None = None
    notices: tuple[str, ...] = ()
    finish_reason: str | None = None
    usage_unreported: bool = False

    @property
    def cut(self) -> bool:
        """Whether the endpoint stopped the reply at the call's ``max_tokens``."""
        return self.finish_reason == "length"


@runtime_checkable
class ChatModel(Protocol):
    """What the engine calls. ``identity`` (optional attribute) names the model for caches
    and run records; it must never contain a secret."""

    async def complete(self, request: ChatRequest) -> ChatResponse: ...


@runtime_checkable
class StreamingChatModel(ChatModel, Protocol):
    """A chat model that can also deliver its reply as it is written: ``on_text`` sees each
    new piece of the reply's text, in order; the returned response holds the whole text and
    the usage (from the stream's final chunk). The engine streams the reduce call when the
    model offers this; ``on_text`` errors are the caller's and must propagate unchanged."""

    async def complete_streaming(self, request: ChatRequest, on_text: Callable[[str], None]) -> ChatResponse: ...


@runtime_checkable
class CheckableChatModel(ChatModel, Protocol):
    """A chat model that can check, without spending tokens, that its calls can work (an adapter
    that talks to a network; offline and scripted models have nothing to check).

    ``preflight`` raises :class:`~graphrag_core.errors.PreflightError` naming the endpoint.
    ``preflight_key`` names what a passed check holds for: the endpoint and model, and whether
    a key is set where the endpoint needs one (never the key itself); two models with one
    ``preflight_key`` pass or fail alike."""

    @property
    def preflight_key(self) -> str: ...

    async def preflight(self, *, timeout_s: float) -> None: ...


def model_identity(model: object) -> str:
    """A stable, secret-free name for a model: its ``identity`` attribute, else its class name."""
    identity = getattr(model, "identity", None)
    return str(identity) if identity else type(model).__name__


__all__ = ["ChatMessage", "ChatModel", "CheckableChatModel", "ChatRequest", "ChatResponse", "OutputSchema", "Purpose", "StreamingChatModel", "TokenUsage", "model_identity"]
