"""The embedding model seam: what the ``vector`` method (naive RAG) ranks source chunks with
when one is configured (evaluation spec section 7), and its settings.

An :class:`EmbeddingModel` turns texts into vectors (``async embed(texts)``); its ``identity``
names the endpoint and model, never a secret, and keys the embedding cache. With no embedding
model the ``vector`` method ranks by BM25 (always so offline).

Keys read by :meth:`EmbeddingSettings.from_mapping` (the front ends pass their environment, as
for the chat model; the engine reads none):

====================================  ======================================================
``GRAPHRAG_EMBEDDING_MODEL``          the embedding model's name (e.g. ``text-embedding-3-small``);
                                      unset: no embedding model, BM25 ranks
``GRAPHRAG_EMBEDDING_BASE_URL``       an OpenAI-compatible endpoint with ``/embeddings``;
                                      default: the chat model's (``GRAPHRAG_LLM_BASE_URL``)
``GRAPHRAG_EMBEDDING_API_KEY``        its key; unset: the chat model's key, only when that key
                                      may go to this endpoint (the same rule as the chat model's)
``GRAPHRAG_EMBEDDING_API_VERSION``    set for Azure OpenAI
``GRAPHRAG_EMBEDDING_BATCH_SIZE``     texts per call (default 64)
====================================  ======================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from .base import TokenUsage
from .settings import DEFAULT_OPENAI_BASE_URL, DEFAULT_TIMEOUT_S, ModelSettings, SettingsError, endpoint_key

KEY_EMBEDDING_MODEL = "GRAPHRAG_EMBEDDING_MODEL"
KEY_EMBEDDING_BASE_URL = "GRAPHRAG_EMBEDDING_BASE_URL"
KEY_EMBEDDING_API_KEY = "GRAPHRAG_EMBEDDING_API_KEY"
KEY_EMBEDDING_API_VERSION = "GRAPHRAG_EMBEDDING_API_VERSION"
KEY_EMBEDDING_BATCH_SIZE = "GRAPHRAG_EMBEDDING_BATCH_SIZE"
DEFAULT_EMBEDDING_BATCH_SIZE = 64
BM25_RANKER = "bm25"
"""How a ``vector`` run names its ranking when no embedding model is configured."""


class Embeddings(BaseModel):
    """The vectors of some texts, in their order, and the tokens the call reported."""

    model_config = ConfigDict(frozen=True)

    vectors: list[list[float]]
    usage: TokenUsage = Field(default_factory=TokenUsage)


@runtime_checkable
class EmbeddingModel(Protocol):
    """Texts in, one vector per text out (same order). ``identity`` is stable and secret-free."""

    identity: str

    async def embed(self, texts: Sequence[str]) -> Embeddings: ...


class EmbeddingSettings(BaseModel):
    """Which embedding model ranks chunks for the ``vector`` method, and how to reach it.

    Invariants: ``base_url`` is an http(s) URL with a host; ``api_key`` is never shown
    (``describe`` reports only whether one is set); ``batch_size`` >= 1."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    base_url: str = DEFAULT_OPENAI_BASE_URL
    api_key: SecretStr | None = None
    api_version: str | None = None
    timeout: float = Field(default=DEFAULT_TIMEOUT_S, gt=0.0)
    batch_size: int = Field(default=DEFAULT_EMBEDDING_BATCH_SIZE, ge=1)

    @field_validator("model")
    @classmethod
    def _named(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the embedding model needs a name")
        return value.strip()

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if endpoint_key(value) is None or not value.strip().lower().startswith(("http://", "https://")):
            raise ValueError("base_url must be an http(s) URL with a host")
        return value.strip()

    @property
    def identity(self) -> str:
        """``embedding:{model}@{host}``: what the cache and run records name it by."""
        key = endpoint_key(self.base_url)
        host = "" if key is None else (key[1] if key[2] in (None, 80, 443) else f"{key[1]}:{key[2]}")
        return f"embedding:{self.model}@{host}"

    def describe(self) -> dict[str, object]:
        shown = self.model_dump(exclude={"api_key"})
        shown["api_key_set"] = self.api_key is not None
        return shown

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any], *, chat: ModelSettings | None = None) -> EmbeddingSettings | None:
        """The embedding settings of ``mapping`` (see the module docstring); None when no
        embedding model is named. ``chat`` is the chat model's settings: its endpoint is the
        default one, and its key is used only where it may go. Raises :class:`SettingsError`
        naming the key."""
        name = _text(mapping.get(KEY_EMBEDDING_MODEL))
        if not name:
            return None
        chat = chat or ModelSettings()
        base_url = _text(mapping.get(KEY_EMBEDDING_BASE_URL)) or (chat.base_url if chat.provider == "openai" and chat.base_url else DEFAULT_OPENAI_BASE_URL)
        values: dict[str, Any] = {"model": name, "base_url": base_url, "timeout": chat.timeout}
        key = _text(mapping.get(KEY_EMBEDDING_API_KEY))
        if key:
            values["api_key"] = key
        elif chat.api_key is not None and chat.key_may_go_to(base_url):
            values["api_key"] = chat.api_key.get_secret_value()
        version = _text(mapping.get(KEY_EMBEDDING_API_VERSION))
        if version:
            values["api_version"] = version
        batch = _text(mapping.get(KEY_EMBEDDING_BATCH_SIZE))
        if batch:
            try:
                values["batch_size"] = int(batch)
            except ValueError:
                raise SettingsError(f"{KEY_EMBEDDING_BATCH_SIZE} must be an integer, not {batch[:40]!r}.") from None
        try:
            return cls(**values)
        except ValidationError as exc:  # its text never includes a SecretStr
            first = exc.errors(include_url=False)[0]
            field = str(first.get("loc", ("",))[0])
            variable = {"model": KEY_EMBEDDING_MODEL, "base_url": KEY_EMBEDDING_BASE_URL, "batch_size": KEY_EMBEDDING_BATCH_SIZE}.get(field, field)
            raise SettingsError(f"{variable} is not valid: {first.get('msg', '')}.") from None


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def ranker_name(embedder: EmbeddingModel | None) -> str:
    """What ranks a ``vector`` run's chunks: the embedding model's identity, else ``bm25``."""
    return BM25_RANKER if embedder is None else str(embedder.identity)


def ranker_label(ranker: str) -> str:
    """What ranked a ``vector`` run's chunks, as people read it: ``BM25``, or the embedding model."""
    if ranker.startswith(BM25_RANKER):
        return "BM25" + ranker[len(BM25_RANKER):]
    return f"embeddings of {ranker.removeprefix('embedding:')}"


__all__ = [
    "BM25_RANKER",
    "DEFAULT_EMBEDDING_BATCH_SIZE",
    "KEY_EMBEDDING_API_KEY",
    "KEY_EMBEDDING_API_VERSION",
    "KEY_EMBEDDING_BASE_URL",
    "KEY_EMBEDDING_BATCH_SIZE",
    "KEY_EMBEDDING_MODEL",
    "EmbeddingModel",
    "EmbeddingSettings",
    "Embeddings",
    "ranker_label",
    "ranker_name",
]
