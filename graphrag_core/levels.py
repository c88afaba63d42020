"""Which summaries a run reads, as one type with its words: a community level, ``"leaf"`` or
``"dynamic"`` (dynamic selection).

Every front end parses what people type with :func:`parse_level` and shows a level with
:func:`level_label`; stored runs, links and CSV cells hold :func:`level_text`. The three agree:
``parse_level(level_text(x)) == x`` for every level ``x``.
"""

from __future__ import annotations

from typing import Literal

LEAF: Literal["leaf"] = "leaf"
DYNAMIC: Literal["dynamic"] = "dynamic"

Level = int | Literal["leaf", "dynamic"]
"""A run's level: an integer >= 0, ``"leaf"`` or ``"dynamic"``."""

FixedLevel = int | Literal["leaf"]
"""A level a request can name (``community_level``): dynamic selection is a setting of its own."""


class LevelError(ValueError):
    """Text that names no level; the message quotes it and says what a level looks like."""


def parse_level(text: str | int) -> Level:
    """The level ``text`` names: ``"leaf"``, ``"dynamic"``, ``"2"``, ``"level 2"``, ``"C2"`` (the
    paper's name) or an int; case and surrounding blanks do not matter. Raises :class:`LevelError`."""
    if isinstance(text, bool):
        raise LevelError(f"{text!r} is not a level: use leaf, dynamic or an integer >= 0.")
    if isinstance(text, int):
        if text < 0:
            raise LevelError(f"{text} is not a level: use leaf, dynamic or an integer >= 0.")
        return text
    word = str(text).strip().lower()
    if word in (LEAF, DYNAMIC):
        return word  # type: ignore[return-value]
    for prefix in ("level ", "level", "c"):
        if word.startswith(prefix) and word[len(prefix):].strip().isdigit():
            word = word[len(prefix):].strip()
            break
    if word.isdigit():
        return int(word)
    raise LevelError(f"{str(text).strip()!r} is not a level: use leaf, dynamic or an integer >= 0.")


def level_text(level: Level) -> str:
    """The level as stored and linked: ``"leaf"``, ``"dynamic"`` or the decimal number."""
    return str(level)


def level_label(level: Level, *, threshold: int | None = None) -> str:
    """The level as people read it: ``"leaf"``, ``"dynamic"`` or ``"level 2"``; with the rating
    ``threshold`` of a dynamic selection, ``"dynamic (threshold 2)"`` (a fixed level ignores it)."""
    if level == DYNAMIC and threshold is not None:
        return f"{DYNAMIC} (threshold {threshold})"
    return level if isinstance(level, str) else f"level {level}"


def is_fixed(level: Level) -> bool:
    """Whether ``level`` is one level of the hierarchy (not dynamic selection)."""
    return level != DYNAMIC


__all__ = ["DYNAMIC", "LEAF", "FixedLevel", "Level", "LevelError", "is_fixed", "level_label", "level_text", "parse_level"]
