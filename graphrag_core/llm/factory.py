"""How a front end gets its chat model from settings: :func:`build_chat_model`.

Kept apart from :mod:`.settings`, which the adapters import: building a model imports an
adapter, so settings and adapters form no import cycle.
"""

from __future__ import annotations

from .base import ChatModel
from .embeddings import EmbeddingModel, EmbeddingSettings
from .endpoints import Endpoints
from .settings import ModelSettings


def build_chat_model(settings: ModelSettings, *, endpoints: Endpoints | None = None) -> ChatModel:
    """The chat model the settings describe: :class:`OpenAIChatModel`, else the offline model
    (:class:`PacedOfflineChatModel`, which streams, when a simulated latency is set).

    ``endpoints`` remembers what each endpoint accepted; a front end passes the one it holds for
    the process, so every model it builds shares one negotiation per endpoint (default: a
    fresh one for this model)."""
    if settings.provider == "openai":
        from .openai_model import OpenAIChatModel  # the vendor SDK is imported only when used

        return OpenAIChatModel(settings, endpoints=endpoints)
    from .offline.model import OfflineChatModel, PacedOfflineChatModel

    latency = settings.offline_latency
    paced = latency is not None and latency[1] > 0  # a delay to watch: the reply is streamed over it
    model_class = PacedOfflineChatModel if paced else OfflineChatModel
    return model_class(latency=latency, seed=settings.offline_seed)


def build_embedding_model(settings: EmbeddingSettings | None) -> EmbeddingModel | None:
    """The embedding model the settings describe (:class:`OpenAIEmbeddingModel`), or None when no
    embedding model is configured (the ``vector`` method then ranks by BM25)."""
    if settings is None:
        return None
    from .openai_embeddings import OpenAIEmbeddingModel  # the vendor SDK is imported only when used

    return OpenAIEmbeddingModel(settings)


__all__ = ["build_chat_model", "build_embedding_model"]
