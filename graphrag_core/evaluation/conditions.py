"""Conditions: a name and the request overrides its answers are made with (evaluation spec
section 3), and the one parser of the ``NAME: key=value, ...`` text every front end reads.

Invariants: a :class:`Condition`'s overrides name request fields only (short names such as
``level`` are resolved through :data:`CONDITION_ALIASES`), never ``query`` or ``seed``, and
together they make a valid :class:`~graphrag_core.request.GlobalSearchRequest`; a condition of
the ``text`` or ``vector`` method sets nothing that means nothing for it (evaluation spec
section 7: ``Condition TS: level does not apply to method text.``); every refusal is an
:class:`~graphrag_core.errors.EvaluationError` naming the condition.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import EvaluationError, RequestValidationError
from ..inputs import unicode_problem
from ..methods import DEFAULT_METHOD
from ..request import GlobalSearchRequest, inapplicable_settings

CONDITION_ALIASES = {
    GlobalSearchRequest.short_name(name): name
    for name in GlobalSearchRequest.model_fields
    if GlobalSearchRequest.short_name(name) != name
}
"""Short names a condition may use for request fields (``level=0`` is ``community_level=0``): the
settings' short names, as the command line and the app's links spell them."""
_NOT_OVERRIDABLE = frozenset({"query", "seed"})
_TRUE, _FALSE = frozenset({"true", "yes", "on"}), frozenset({"false", "no", "off"})


def request_fields() -> tuple[str, ...]:
    """The request fields a condition may override (read from the request model, so fields
    added to it are accepted without a change here)."""
    return tuple(f for f in GlobalSearchRequest.model_fields if f not in _NOT_OVERRIDABLE)


def _scalar(text: str) -> Any:
    """A typed value: a boolean word, ``none``/``null``, an int, a float, else the text."""
    value = text.strip()
    low = value.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    if low in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            continue
    return value


class Condition(BaseModel):
    """A name and the request overrides its answers are made with."""

    model_config = ConfigDict(frozen=True)

    name: str
    overrides: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, /, **data: Any) -> None:
        name = data.get("name")
        if not isinstance(name, str) or not name.strip():
            raise EvaluationError("A condition needs a name.")
        if problem := unicode_problem(name):
            raise EvaluationError(f"A condition's name is {problem}.")
        data["name"] = name.strip()
        overrides: dict[str, Any] = {}
        given: dict[str, str] = {}
        allowed = request_fields()
        for key, value in dict(data.get("overrides") or {}).items():
            field = CONDITION_ALIASES.get(key, key)
            if field not in allowed:
                raise EvaluationError(f"Condition {data['name']}: unknown request field {key}.")
            overrides[field] = value
            given[field] = key
        try:
            GlobalSearchRequest(query="probe", **overrides)
        except (RequestValidationError, ValueError) as exc:
            raise EvaluationError(f"Condition {data['name']}: {exc}") from None
        method = overrides.get("method", DEFAULT_METHOD)
        for field in inapplicable_settings(method):
            if field in overrides:
                raise EvaluationError(f"Condition {data['name']}: {given[field]} does not apply to method {method}.")
        data["overrides"] = overrides
        super().__init__(**data)

    @classmethod
    def parse(cls, text: str) -> Condition:
        """``NAME:key=value,key=value`` (e.g. ``C0:level=0`` or ``small:map_budget=2000,strategy=stop``)."""
        name, _, rest = text.partition(":")
        overrides: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = part.partition("=")
            if not eq or not key.strip():
                raise EvaluationError(f"Condition {name.strip() or text}: expected key=value, got {part!r}.")
            overrides[key.strip()] = _scalar(value)
        return cls(name=name, overrides=overrides)

    def request(self, question: str, seed: int) -> GlobalSearchRequest:
        """The request of one answer: the front ends' defaults (a question reserve of 256, so
        the questions of a set share their map prompts' prefix), then the overrides."""
        return GlobalSearchRequest(query=question, seed=seed, **{**GlobalSearchRequest.front_end_defaults(), **self.overrides})

    @property
    def method(self) -> str:
        """What answers under this condition: ``global``, ``text`` or ``vector``."""
        return str(self.overrides.get("method", DEFAULT_METHOD))

    def describe(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.overrides.items()) or "defaults"


def parse_conditions(text: str) -> list[Condition]:
    """One condition per line, ``NAME: key=value, key=value`` (blank lines and ``#`` comments
    skipped): the Evaluate page's box and a conditions file read alike."""
    conditions = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, rest = line.partition(":")
            conditions.append(Condition.parse(f"{name.strip()}:{rest.replace(' ', '')}"))
    return conditions


__all__ = ["CONDITION_ALIASES", "Condition", "parse_conditions", "request_fields"]
