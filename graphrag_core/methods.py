"""What answers a question: the search method (evaluation spec section 7), as one type with its
words. The source chunks the ``text`` and ``vector`` methods read are :mod:`graphrag_core.sources`.

=========  ===========================================================  ============
method     what answers                                                 paper's name
=========  ===========================================================  ============
global     map-reduce over community summaries (a level, or dynamic)    C0-C3
text       the same map-reduce over the index's source chunks           TS
vector     the chunks most relevant to the question, one call (no map)  SS
lazy       relevance tests of source chunks under a budget, then map-   LZ
           reduce over what they found, grouped by community
=========  ===========================================================  ============

A run's *units* are what it maps over and cites: communities for ``global`` and ``lazy`` (whose
map reads each community's relevant source text and claims, never its summary), source chunks
for ``text`` and ``vector`` (:func:`unit_kind`). This module imports nothing of the project's,
so every other module may name a method.
"""

from __future__ import annotations

from typing import Literal

Method = Literal["global", "text", "vector", "lazy"]
GLOBAL: Literal["global"] = "global"
TEXT: Literal["text"] = "text"
VECTOR: Literal["vector"] = "vector"
LAZY: Literal["lazy"] = "lazy"
METHODS: tuple[str, ...] = (GLOBAL, TEXT, VECTOR, LAZY)
"""The methods, in the order the app and the command line offer them."""
DEFAULT_METHOD: Literal["global"] = GLOBAL

METHOD_WORDS: dict[str, str] = {
    GLOBAL: "Community summaries (global search)",
    TEXT: "Source text, map-reduce (TS)",
    VECTOR: "Source chunks, naive RAG (SS)",
    LAZY: "Relevance tests under a budget, then map-reduce (LazyGraphRAG's idea)",
}
"""Each method as people read it (the app's choice, reports)."""
PAPER_NAMES: dict[str, str] = {TEXT: "TS", VECTOR: "SS"}
"""The GraphRAG paper's names of the methods that read source text."""

UnitKind = Literal["community", "source"]
"""What a run's map units (batches, candidates, the behind set) are: communities or source chunks."""
UNIT_NOUNS: dict[str, tuple[str, str]] = {"community": ("community", "communities"), "source": ("source chunk", "source chunks")}
"""A unit kind as a noun, singular and plural."""


def method_label(method: str) -> str:
    """A method as reports and tables name it: ``global``, ``text (TS)``, ``vector (SS)``."""
    return f"{method} ({PAPER_NAMES[method]})" if method in PAPER_NAMES else method


def unit_kind(method: str) -> UnitKind:
    """The units a run of ``method`` maps over and cites: ``"community"`` for ``global`` and
    ``lazy``, else ``"source"``."""
    return "community" if method in (GLOBAL, LAZY) else "source"


def reads_chunks(method: str) -> bool:
    """Whether ``method`` reads the index's source chunks (``text``, ``vector``, ``lazy``)."""
    return method in (TEXT, VECTOR, LAZY)


def units_noun(method: str, count: int | None = None) -> str:
    """What a run of ``method`` reads, as a noun (plural unless ``count`` is 1): ``summaries``
    for ``global``, ``communities`` for ``lazy`` (each with its relevant source text), else
    ``source chunks``."""
    if method == GLOBAL:
        return "summary" if count == 1 else "summaries"
    if method == LAZY:
        return "community" if count == 1 else "communities"
    singular, plural = UNIT_NOUNS["source"]
    return singular if count == 1 else plural


__all__ = [
    "DEFAULT_METHOD",
    "GLOBAL",
    "LAZY",
    "METHODS",
    "METHOD_WORDS",
    "PAPER_NAMES",
    "TEXT",
    "UNIT_NOUNS",
    "VECTOR",
    "Method",
    "UnitKind",
    "method_label",
    "reads_chunks",
    "unit_kind",
    "units_noun",
]
