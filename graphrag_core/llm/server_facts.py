"""What a local model server says about itself before any call: how many requests it serves at
once and how many tokens one request may hold (:class:`ServerFacts`, :func:`read_server_facts`).

Asked only of a local endpoint (this machine or a private network), once, with the standard
library (like the server's token count), at the places the known servers answer
(:data:`FACT_PLACES`, tried in order, the first that answers wins):

- llama.cpp's ``llama-server``: ``GET {root}/props`` gives ``total_slots`` and
  ``default_generation_settings.n_ctx`` (the context of one slot: the server's ``-c`` shared
  among its ``-np`` slots); ``GET {root}/slots`` lists the slots, each with its ``n_ctx``;
- vLLM: ``GET {base}/models`` gives each model's ``max_model_len`` (vLLM batches requests: no
  slot count);
- Ollama: ``GET {root}/api/ps`` gives each loaded model's ``context_length`` (the context it was
  loaded with; its parallel requests are not reported).

A server that answers none of them (llama-cpp-python's, a hosted API) has no facts: the slots
are then found from the calls' timing (:class:`~graphrag_core.llm.endpoints.SlotWatch`).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .endpoint_tokenizer import read_within, is_local_endpoint

FACTS_TIMEOUT_S = 5.0
"""The most one question about the server may take (it answers at once when it answers at all)."""


@dataclass(frozen=True)
class ServerFacts:
    """What a server reported: ``slots`` (requests served at once), ``context_tokens`` (the most
    tokens one request, prompt and reply, may hold); None where it said nothing. ``source``
    names where it said so, in people's words (``"llama.cpp's /props"``)."""

    slots: int | None = None
    context_tokens: int | None = None
    source: str = ""

    @property
    def known(self) -> bool:
        return self.slots is not None or self.context_tokens is not None


NO_FACTS = ServerFacts()


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _from_props(payload: object, model: str) -> ServerFacts:
    if not isinstance(payload, dict):
        return NO_FACTS
    settings = payload.get("default_generation_settings")
    n_ctx = _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return ServerFacts(slots=_positive(payload.get("total_slots")), context_tokens=n_ctx, source="llama.cpp's /props")


def _from_slots(payload: object, model: str) -> ServerFacts:
    if not isinstance(payload, list) or not payload or not all(isinstance(slot, dict) for slot in payload):
        return NO_FACTS
    return ServerFacts(slots=len(payload), context_tokens=_positive(payload[0].get("n_ctx")), source="llama.cpp's /slots")


def _from_models(payload: object, model: str) -> ServerFacts:
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return NO_FACTS
    cards = [card for card in data if isinstance(card, dict)]
    card = next((c for c in cards if c.get("id") == model), cards[0] if len(cards) == 1 else None)
    length = _positive(card.get("max_model_len")) if card is not None else None
    return ServerFacts(context_tokens=length, source="vLLM's /v1/models") if length else NO_FACTS


def _from_ollama(payload: object, model: str) -> ServerFacts:
    models = payload.get("models") if isinstance(payload, dict) else None
    if not isinstance(models, list):
        return NO_FACTS
    wanted = {model, model.split(":")[0], f"{model}:latest"}
    loaded = next((m for m in models if isinstance(m, dict) and {m.get("name"), m.get("model")} & wanted), None)
    length = _positive(loaded.get("context_length")) if loaded is not None else None
    return ServerFacts(context_tokens=length, source="Ollama's /api/ps") if length else NO_FACTS


FACT_PLACES: tuple[tuple[str, Callable[[object, str], ServerFacts]], ...] = (
    ("/props", _from_props),
    ("/slots", _from_slots),
    ("/v1/models", _from_models),
    ("/api/ps", _from_ollama),
)
"""Where the known servers say what they are, under the base URL's root, and how it reads."""


def _root(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def read_server_facts(
    base_url: str, *, model: str, timeout: float = FACTS_TIMEOUT_S, headers: Mapping[str, str] | None = None
) -> ServerFacts:
    """What the local server at ``base_url`` says about itself (module docstring); nothing for an
    endpoint that is not local, or that answers at none of the known places. Never raises."""
    if not is_local_endpoint(base_url):
        return NO_FACTS
    root = _root(base_url)
    for path, read in FACT_PLACES:
        payload = _get_json(root + path, timeout=timeout, headers=headers or {})
        if payload is None:
            continue
        facts = read(payload, model)
        if facts.known:
            return facts
    return NO_FACTS


def server_facts_of(model: object) -> ServerFacts:
    """:func:`read_server_facts` for a model built from OpenAI-compatible settings (its base URL,
    model name, key and timeout); nothing for any other model."""
    settings = getattr(model, "settings", None)
    if getattr(settings, "provider", None) != "openai" or not getattr(settings, "base_url", None):
        return NO_FACTS
    key = getattr(settings, "api_key", None)
    headers = {"authorization": f"Bearer {key.get_secret_value()}"} if key is not None else {}
    timeout = min(FACTS_TIMEOUT_S, float(getattr(settings, "timeout", FACTS_TIMEOUT_S)))
    return read_server_facts(settings.base_url, model=settings.model, timeout=timeout, headers=headers)


def _get_json(url: str, *, timeout: float, headers: Mapping[str, str]) -> Any | None:
    request = urllib.request.Request(url, method="GET", headers=dict(headers))
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 - the configured local endpoint
            if "json" not in str(answer.headers.get("content-type", "")):
                return None
            return json.loads(read_within(answer, deadline=time.monotonic() + timeout))
    except (urllib.error.URLError, OSError, ValueError):
        return None


__all__ = ["FACT_PLACES", "NO_FACTS", "ServerFacts", "read_server_facts", "server_facts_of"]
