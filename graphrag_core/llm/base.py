"""The model seam: a chat model is anything with ``async complete(ChatRequest) -> ChatResponse``.

Adapters (OpenAI-compatible, offline, scripted) translate their own failures into
:class:`~graphrag_core.errors.ModelError` so that the engine's single retry loop decides.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

Purpose = Literal["map", "reduce", "summary", "rate", "judge", "claims", "questions"]


class ChatMessage(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class ChatRequest(BaseModel):
    """One model call. ``max_tokens`` is the output reserve of the phase."""

    model_config = ConfigDict(frozen=True)

    purpose: Purpose
    messages: tuple[ChatMessage, ...]
    max_tokens: int | None = None
    json_mode: bool = True

    @property
    def prompt_text(self) -> str:
        """Every message's content, joined by newlines: what counts against the budget."""
        return "\n".join(m.content for m in self.messages)


class TokenUsage(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: "TokenUsage") -> "TokenUsage":
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class ChatResponse(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    usage: TokenUsage | None = None


@runtime_checkable
class ChatModel(Protocol):
    """What the engine calls. ``identity`` (optional attribute) names the model for caches
    and run records; it must never contain a secret."""

    async def complete(self, request: ChatRequest) -> ChatResponse: ...


def model_identity(model: object) -> str:
    """A stable, secret-free name for a model: its ``identity`` attribute, else its class name."""
    identity = getattr(model, "identity", None)
    return str(identity) if identity else type(model).__name__


__all__ = ["ChatMessage", "ChatModel", "ChatRequest", "ChatResponse", "Purpose", "TokenUsage", "model_identity"]
