"""What people type as lists (seeds, budgets, levels), parsed one way for every front end, and
the one check that typed text is Unicode (:func:`unicode_problem`).

The Sweeps and Evaluate pages and the command line read ``"1, 2 3"`` alike; a bad entry raises
:class:`InputError` naming the box or option (``what``) and the entry, so each front end shows
the same sentence.
"""

from __future__ import annotations

import re

from .errors import RequestValidationError

ENTRY_SHOWN = 20
"""At most this many characters of a bad entry are quoted back."""


class InputError(RequestValidationError):
    """A typed list holds an entry that cannot be used; the message names the list and the entry."""


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def unicode_problem(text: str) -> str | None:
    """Why ``text`` is not Unicode text, or None when it is.

    A lone surrogate (U+D800-U+DFFF) is what a byte that is not UTF-8 becomes in a command
    line argument, or what a ``"\\udcff"`` escape becomes in JSON; no text can be written or
    hashed as UTF-8 with one in it, so it is bad input, named by its code point and position
    (counted from 1)."""
    found = _LONE_SURROGATE.search(text)
    if found is None:
        return None
    return (
        f"not valid Unicode text (U+{ord(found.group()):04X} at character {found.start() + 1}, "
        "e.g. typed in another encoding): retype it, or save its file as UTF-8"
    )


def split_entries(text: str) -> list[str]:
    """The entries of a typed list: separated by commas when there is one (``"leaf, level 2"``),
    else by blanks (``"1 2 3"``); empty entries are dropped."""
    parts = text.split(",") if "," in text else text.split()
    return [part.strip() for part in parts if part.strip()]


def parse_int(text: str, *, what: str, minimum: int | None = None) -> int:
    """One whole number, at least ``minimum``; :class:`InputError` naming ``what`` otherwise."""
    try:
        value = int(text.strip())
    except ValueError:
        raise InputError(f"{what}: {text.strip()[:ENTRY_SHOWN]!r} is not a whole number.") from None
    if minimum is not None and value < minimum:
        raise InputError(f"{what}: {value} is below {minimum}.")
    return value


def parse_ints(text: str, *, what: str, minimum: int | None = None) -> list[int]:
    """``"1, 2 3"`` -> ``[1, 2, 3]``: commas, blanks or both between entries (see :func:`parse_int`)."""
    return [parse_int(entry, what=what, minimum=minimum) for entry in text.replace(",", " ").split()]


__all__ = ["InputError", "parse_int", "parse_ints", "split_entries"]
