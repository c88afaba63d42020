"""Each search setting as the app draws and links it (:class:`SettingField`), read from its
field's metadata in :class:`~graphrag_core.request.SearchSettings`: its URL parameter, kind,
default, bounds, choices and help. No streamlit import here."""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from graphrag_core.errors import GraphRAGError
from graphrag_core.levels import DYNAMIC, LevelError, level_text, parse_level
from graphrag_core.request import SearchSettings, check_typed_setting

LINK_NAMES: dict[str, str] = {"fallback_max_level": "fallback_level"}
"""Search settings whose parameter is not their short name: links made before short names."""

Kind = Literal["level", "bool", "int", "float", "choice", "text"]


def level_option(value: str) -> str:
    """The Community level picker's option (``"leaf"``, ``"2"``) for ``value``: the option itself,
    or the one a stale label names. Streamlit (1.67) hands back a selectbox's *label* when its
    text changed since it was drawn (``leaf (262 summaries)`` became ``leaf · ≈496k tokens · 262
    summaries`` once the token counts were ready), and a click in between would otherwise send
    that label on. The picker's extra text follows ``" · "`` or ``" ("``."""
    head = value.split(" · ", 1)[0].split(" (", 1)[0]
    try:
        return level_text(parse_level(head))
    except LevelError:
        return value


class _Ignored(ValueError):  # noqa: N818 - raised and caught inside the URL decoding only
    """A URL value that cannot be used; the message says why (or is empty)."""


@dataclass(frozen=True)
class SettingField:
    """One search setting as the app draws and links it, read from its field's metadata: its
    name (also its widget's key), URL parameter, kind, default, bounds (the rule's, else the
    page's ``ui_max`` above), accepted values and description (its help line)."""

    name: str
    param: str
    kind: Kind
    default: Any
    low: int | None
    high: int | None
    choices: tuple[str, ...] | None
    description: str
    scale: bool = False
    """The rule bounds the value on both sides (a rating, say), not only the page."""

    def cast(self, value: Any) -> Any:
        """A widget's value as the setting's type (a number input may hand back either number
        type; the level picker hands back an option's text, or a label grown stale)."""
        if value is None:
            return None
        if self.kind == "level":
            return parse_level(level_option(str(value)))
        if self.kind == "int":
            return int(value)
        if self.kind == "float":
            return float(value)
        if self.kind == "bool":
            return bool(value)
        return str(value)

    def encode(self, value: Any) -> str:
        """The value as a URL writes it."""
        if isinstance(value, bool):
            return "1" if value else "0"
        if isinstance(value, float):
            return f"{value:g}"
        return level_text(value) if self.kind == "level" else str(value)

    def decode(self, raw: str) -> Any:
        """The value ``raw`` writes; ``_Ignored`` when it breaks the setting's rule (the spec's
        message) or lies outside the page's range."""
        if self.kind == "level":
            try:
                level = parse_level(raw)
            except LevelError:
                raise _Ignored("") from None
            if level == DYNAMIC:
                raise _Ignored("")
            return self._checked(level)
        if self.kind == "bool":
            if raw.lower() not in ("1", "0", "true", "false"):
                raise _Ignored("")
            return raw.lower() in ("1", "true")
        if self.kind in ("int", "float"):
            try:
                number: int | float = int(raw.strip()) if self.kind == "int" else float(raw)
            except ValueError:
                raise _Ignored("") from None
            return self._checked(number)
        return self._checked(raw)

    def _checked(self, value: Any) -> Any:
        try:
            check_typed_setting(self.name, value)
        except GraphRAGError as exc:
            raise _Ignored(str(exc).rstrip(".")) from None
        if self.choices is not None and value not in self.choices:
            raise _Ignored(f"{self.name} must be one of {', '.join(self.choices)}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if self.low is not None and value < self.low:
                raise _Ignored(f"{self.name} must be at least {self.low}")
            if self.high is not None and value > self.high:
                raise _Ignored(f"{self.name} must be at most {self.high}")
        return value


def _kind(annotation: Any, choices: tuple[str, ...] | None) -> Kind:
    if get_origin(annotation) in (Union, types.UnionType):
        args = get_args(annotation)
        if int in args and any(get_origin(arg) is Literal for arg in args):
            return "level"  # an integer or a word: "leaf"
        if set(args) == {int, type(None)}:
            return "int"  # an integer or none (the seed: none draws one)
    if annotation is bool:
        return "bool"
    if annotation is int:
        return "int"
    if annotation is float:
        return "float"
    return "choice" if choices is not None else "text"


@functools.cache
def setting_fields(model: type[SearchSettings] = SearchSettings) -> tuple[SettingField, ...]:
    """Every search setting of ``model``, in declaration order, as :class:`SettingField` (its
    default the front ends' own, :meth:`~graphrag_core.request.SearchSettings.front_end_default`)."""
    found = []
    for name, info in model.model_fields.items():
        choices = model.choices(name)
        kind = _kind(info.annotation, choices)
        low, high = model.bounds(name)
        rule_bounds = low is not None and high is not None
        low = low if low is not None else model.ui_min(name)
        found.append(
            SettingField(
                name=name,
                param=LINK_NAMES.get(name) or model.short_name(name),
                kind=kind,
                default=model.front_end_default(name),
                low=low,
                high=high if high is not None else model.ui_max(name),
                choices=None if kind == "level" else choices,
                description=info.description or name.replace("_", " "),
                scale=rule_bounds,
            )
        )
    return tuple(found)


__all__ = ["LINK_NAMES", "Kind", "SettingField", "level_option", "setting_fields"]
