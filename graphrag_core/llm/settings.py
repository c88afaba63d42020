"""How a front end gets its chat model: the settings (the public names of :mod:`.config`,
importable from here) and :func:`build_chat_model`, which turns them into a model.

The adapters import :mod:`.config`, never this module: building a model (which imports an
adapter) and reading settings (which an adapter does) then form no import cycle.
"""

from __future__ import annotations

from .base import ChatModel
from .config import *  # the settings' names (config.__all__), importable from here
from .config import ModelSettings
from .config import __all__ as _CONFIG_NAMES
from .endpoints import Endpoints


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


__all__ = [*_CONFIG_NAMES, "build_chat_model"]
