"""A number with the noun people write beside it: ``1 community``, ``2 communities``, ``1,234 batches``.

Every page, report and command line message that counts something says it through
:func:`counted`, so a count of one never reads "1 communities" or "1 calls".
"""

from __future__ import annotations

_VOWELS = frozenset("aeiou")


def plural(noun: str) -> str:
    """The English plural of a regular noun or noun phrase (its last word changes):
    ``community`` -> ``communities``, ``batch`` -> ``batches``, ``model call`` -> ``model calls``,
    ``key`` -> ``keys``."""
    if noun.endswith("y") and len(noun) > 1 and noun[-2] not in _VOWELS:
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def counted(count: int, noun: str, plural_form: str | None = None) -> str:
    """``count`` with ``noun`` in the number it agrees with, the count grouped by thousands:
    ``counted(1, "community") == "1 community"``, ``counted(1234, "batch") == "1,234 batches"``.
    ``plural_form`` names an irregular plural."""
    word = noun if count == 1 else (plural_form or plural(noun))
    return f"{count:,} {word}"


__all__ = ["counted", "plural"]
