"""What model endpoints accepted, held by an object its owner shares: :class:`Endpoints`.

A call with an output schema is sent with the strongest ``response_format`` its endpoint
accepts, tried in :data:`OUTPUT_FORMS` order (``graphrag_core.llm.openai_model``). What an
endpoint settled on, and which refusals were already announced, live in an :class:`Endpoints`
object. A front end holds one for the process and hands it to every model it builds
(``build_chat_model(settings, endpoints=...)``), so each endpoint is negotiated once and each
refusal announced once; a model built without one gets its own, and negotiates for itself.
"""

from __future__ import annotations

import threading
from typing import Literal

OutputForm = Literal["json_schema", "json_object_schema", "json_object", "none"]
OUTPUT_FORMS: tuple[OutputForm, ...] = ("json_schema", "json_object_schema", "json_object", "none")
"""The ``response_format`` forms, strongest first: ``json_schema`` (strict), ``json_object``
with a ``schema``, plain ``json_object``, then none."""


class Endpoints:
    """Per endpoint (a secret-free name of a base URL and model): the output form it accepts,
    and the refused forms already announced.

    Invariant: :meth:`refused` answers True once per endpoint and form, whichever model asks
    and from whichever thread.
    """

    def __init__(self) -> None:
        self._forms: dict[str, OutputForm] = {}
        self._announced: set[tuple[str, OutputForm]] = set()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        with self._lock:
            return f"Endpoints({dict(self._forms)!r})"

    def accepted_form(self, endpoint: str) -> OutputForm | None:
        """The form ``endpoint`` is known to accept; ``None`` before its first schema call."""
        with self._lock:
            return self._forms.get(endpoint)

    def settle(self, endpoint: str, form: OutputForm) -> None:
        """Remember that a schema call to ``endpoint`` succeeded with ``form``."""
        with self._lock:
            self._forms[endpoint] = form

    def refused(self, endpoint: str, form: OutputForm, *, following: OutputForm) -> bool:
        """Remember that ``endpoint`` refused ``form``, so ``following`` is tried from now on.

        True the first time this endpoint's refusal of ``form`` is recorded: the caller says so
        then, and never again."""
        with self._lock:
            self._forms[endpoint] = following
            if (endpoint, form) in self._announced:
                return False
            self._announced.add((endpoint, form))
            return True


__all__ = ["OUTPUT_FORMS", "Endpoints", "OutputForm"]
