"""The app's models: built from settings with what the process already learned about each
endpoint, and checked before a run with what already passed.

One :class:`~graphrag_core.llm.endpoints.Endpoints` (the output form each endpoint accepted, the
notices already shown) and one :class:`~graphrag_core.preflight.Preflight` (the endpoints that
passed their check lately) are held for the process (``st.cache_resource``), so a session's second
run neither negotiates its structured output again nor re-checks its endpoint.
"""

from __future__ import annotations

import streamlit as st

from graphrag_core.llm.base import ChatModel
from graphrag_core.llm.endpoints import Endpoints
from graphrag_core.llm.settings import ModelSettings
from graphrag_core.llm.factory import build_chat_model
from graphrag_core.preflight import Preflight


@st.cache_resource(show_spinner=False)
def shared_endpoints() -> Endpoints:
    """The process's one :class:`Endpoints` (shared by every session)."""
    return Endpoints()


@st.cache_resource(show_spinner=False)
def shared_preflight() -> Preflight:
    """The process's one :class:`Preflight` (shared by every session)."""
    return Preflight()


def build_model(settings: ModelSettings) -> ChatModel:
    """The chat model ``settings`` describe, negotiating through the process's endpoints. Build it
    inside the job that uses it: an OpenAI client must not outlive its event loop."""
    return build_chat_model(settings, endpoints=shared_endpoints())


__all__ = ["build_model", "shared_endpoints", "shared_preflight"]
