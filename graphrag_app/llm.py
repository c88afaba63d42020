"""The app's models: built from settings with what the process already learned about each
endpoint, and checked before a run with what already passed.

One :class:`~graphrag_core.llm.endpoints.Endpoints` (the output form each endpoint accepted, the
notices already shown) and one :class:`~graphrag_core.preflight.Preflight` (the endpoints that
passed their check lately) are held for the process (``st.cache_resource``), so a session's second
run neither negotiates its structured output again nor re-checks its endpoint.
"""

from __future__ import annotations

import logging

import streamlit as st

from graphrag_core.llm.base import ChatModel
from graphrag_core.llm.embeddings import EmbeddingModel, EmbeddingSettings
from graphrag_core.llm.endpoints import Endpoints
from graphrag_core.llm.settings import ModelSettings
from graphrag_core.llm.factory import build_chat_model, build_embedding_model
from graphrag_core.preflight import Preflight

from .settings import AppSettings, load_settings

_LOG = logging.getLogger(__name__)


def app_endpoints(app: AppSettings) -> Endpoints:
    """An :class:`Endpoints` that remembers in ``app.endpoints_path`` (what a local server
    accepted is not negotiated again after a restart); a memory that cannot be written is logged
    and the app goes on with what it learns in this process."""
    endpoints = Endpoints()
    endpoints.remember_in(app.endpoints_path, on_failure=lambda message: _LOG.warning("endpoint memory: %s", message))
    return endpoints


@st.cache_resource(show_spinner=False)
def shared_endpoints() -> Endpoints:
    """The process's one :class:`Endpoints` (shared by every session), remembered across restarts."""
    return app_endpoints(load_settings())


@st.cache_resource(show_spinner=False)
def shared_preflight() -> Preflight:
    """The process's one :class:`Preflight` (shared by every session)."""
    return Preflight()


def build_model(settings: ModelSettings) -> ChatModel:
    """The chat model ``settings`` describe, negotiating through the process's endpoints. Build it
    inside the job that uses it: an OpenAI client must not outlive its event loop."""
    return build_chat_model(settings, endpoints=shared_endpoints())


def embedding_for(chat: ModelSettings, embedding: EmbeddingSettings | None) -> EmbeddingSettings | None:
    """The embedding model naive RAG ranks with beside the chat model ``chat``: the configured
    one, except with the offline chat model (offline, BM25 ranks the chunks)."""
    return None if chat.provider == "offline" else embedding


def build_embedder(chat: ModelSettings, embedding: EmbeddingSettings | None) -> EmbeddingModel | None:
    """The embedding model of :func:`embedding_for`, built inside the job that uses it (as a chat model is)."""
    return build_embedding_model(embedding_for(chat, embedding))


def ranking_line(chat: ModelSettings, embedding: EmbeddingSettings | None, *, error: str | None = None) -> str:
    """How naive RAG (method ``vector``) ranks the source chunks with this chat model, in words."""
    chosen = embedding_for(chat, embedding)
    if chosen is not None:
        return f"Naive RAG ranks the source chunks by the cosine similarity of embeddings from {chosen.model} ({chosen.identity.split('@')[-1]})."
    if chat.provider == "offline":
        return "Naive RAG ranks the source chunks by BM25 (offline: no embedding model is called)."
    why = f" ({error})" if error else " (no embedding model is configured: set GRAPHRAG_EMBEDDING_MODEL to rank by embeddings)"
    return f"Naive RAG ranks the source chunks by BM25{why}."


__all__ = ["build_embedder", "build_model", "embedding_for", "ranking_line", "shared_endpoints", "shared_preflight"]
