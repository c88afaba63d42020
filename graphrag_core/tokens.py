"""Token counting: the spec's heuristic estimate and exact OpenAI encodings.

The engine only needs ``Tokenizer.count``. A tokenizer that is *additive* (the count of a
concatenation is a function of per-piece measures) also exposes ``measure``/``total``, which
lets the batcher size parts and batches without re-reading whole strings.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Protocol, runtime_checkable

HEURISTIC = "heuristic"
EXACT_ENCODINGS = ("cl100k_base", "o200k_base")
ENDPOINT = "endpoint"
"""Count with the model server's own tokenizer (``/tokenize`` of llama.cpp's and vLLM's servers)."""
TOKENIZER_NAMES = (HEURISTIC, *EXACT_ENCODINGS, ENDPOINT)


@runtime_checkable
class Tokenizer(Protocol):
    name: str

    def count(self, text: str) -> int: ...


def _ascii_count(text: str) -> int:
    # encode() with errors="ignore" drops every code point >= 128 at C speed.
    return len(text) if text.isascii() else len(text.encode("ascii", "ignore"))


def estimate_tokens(text: str) -> int:
    """``ceil(cjk / 1.8 + ascii / 4)`` over code points (spec section 4), in exact arithmetic.

    A code point below 128 counts as ASCII, any other as CJK. ``cjk / 1.8 + ascii / 4`` equals
    ``(20 * cjk + 9 * ascii) / 36``, so the ceiling is taken on integers and never suffers from
    floating-point rounding.
    """
    ascii_count = _ascii_count(text)
    return _total(ascii_count, len(text) - ascii_count)


def _total(ascii_count: int, cjk_count: int) -> int:
    return -(-(20 * cjk_count + 9 * ascii_count) // 36)


class HeuristicTokenizer:
    """The spec's estimate. Additive: a measure is ``(ascii, cjk)`` code point counts."""

    name = HEURISTIC

    def count(self, text: str) -> int:
        return estimate_tokens(text)

    def measure(self, text: str) -> tuple[int, int]:
        ascii_count = _ascii_count(text)
        return ascii_count, len(text) - ascii_count

    @staticmethod
    def total(ascii_count: int, cjk_count: int) -> int:
        return _total(ascii_count, cjk_count)


class ExactTokenizer:
    """An exact OpenAI encoding (``cl100k_base`` or ``o200k_base``), read from files that ship
    inside the ``bpe-openai`` wheel, so nothing is downloaded."""

    def __init__(self, encoding: str) -> None:
        if encoding not in EXACT_ENCODINGS:
            raise ValueError(f"Unknown tokenizer {encoding!r}; choose one of {', '.join(TOKENIZER_NAMES)}.")
        import bpe_openai  # local import: only runs that ask for exact counts pay for loading

        self.name = encoding
        self._encoding = bpe_openai.get_encoding(encoding)
        self._max_token_chars: int | None = None

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._encoding.encode(text, disallowed_special=()))

    @property
    def max_token_chars(self) -> int:
        """The most code points one token can cover: its byte length bounds it (a code point is
        at least one byte), so no text of more than ``budget * max_token_chars`` code points
        fits in ``budget`` tokens."""
        if self._max_token_chars is None:
            self._max_token_chars = max(len(value) for value in self._encoding.token_byte_values())
        return self._max_token_chars


@lru_cache(maxsize=None)
def get_tokenizer(name: str = HEURISTIC) -> Tokenizer:
    """The tokenizer called ``name``: ``"heuristic"``, ``"cl100k_base"`` or ``"o200k_base"``
    (``"endpoint"`` needs the model: see :func:`tokenizer_for`)."""
    if name == HEURISTIC:
        return HeuristicTokenizer()
    if name == ENDPOINT:
        raise ValueError(
            "The 'endpoint' tokenizer counts with the model server's own /tokenize, so it needs the model; "
            "choose heuristic, cl100k_base or o200k_base here."
        )
    return ExactTokenizer(name)


def tokenizer_for(name: str, model: object | None) -> Tokenizer:
    """The tokenizer called ``name`` for runs against ``model``: ``"endpoint"`` asks the model
    for its server's own count (``model.endpoint_tokenizer()``); raises ``ValueError`` naming
    the model when it offers none."""
    if name != ENDPOINT:
        return get_tokenizer(name)
    make = getattr(model, "endpoint_tokenizer", None)
    if make is None:
        identity = getattr(model, "identity", None) or type(model).__name__
        raise ValueError(
            f"The model {identity} has no token count of its own (the 'endpoint' tokenizer needs an "
            "OpenAI-compatible server with /tokenize); choose heuristic, cl100k_base or o200k_base."
        )
    return make()
