"""One relevance test of the lazy method (docs/lazy-search.md, step 3): its request (a few
source chunks and one subquery, within the prompt budget), the parsing of its reply, and its
cache key.

Invariants: a test's whole prompt fits its budget, or :class:`BudgetError` says that the
budget cannot hold even one empty chunk; the chunks it holds keep their rank order (the first
is cut to its longest code-point prefix that fits when it does not fit whole); a reply is
usable only when it answers every chunk sent, once, and names no other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ..context import CANDIDATE_SEPARATOR, format_source_header
from ..errors import BudgetError, RelevanceOutputError
from ..llm.base import ChatRequest
from ..parsing import invalid_output, parse_json_output
from ..prompts import RELEVANCE_OUTPUT_SCHEMA, render_relevance_messages
from ..ranking import RankedChunk
from ..tokens import Tokenizer, prompt_overhead

RELEVANCE_PROMPT_TOO_SMALL = "Map token budget cannot fit the relevance test prompt."
RELEVANCE_SHAPE_ERROR = (
    'Relevance test output must contain "tests": one object (source_id, relevant, claims) for each source it was given.'
)
MAX_CLAIMS_PER_CHUNK = 8
"""Claims kept from one chunk's test at most (a model listing more is cut, not refused)."""


class Verdict(NamedTuple):
    """One chunk's test: relevant or not, and the claims drawn from it."""

    relevant: bool
    claims: tuple[str, ...] = ()


def _content(chunks: Sequence[RankedChunk], last_text: str | None = None) -> str:
    texts = [chunk.text.strip() for chunk in chunks]
    if last_text is not None:
        texts[-1] = last_text
    return CANDIDATE_SEPARATOR.join(format_source_header(chunk.reference) + text for chunk, text in zip(chunks, texts))


def relevance_request(
    subquery: str, chunks: Sequence[RankedChunk], *, budget: int, output_reserve: int, tokenizer: Tokenizer
) -> tuple[ChatRequest, list[RankedChunk]]:
    """The test call for the first of ``chunks`` that fit ``budget`` whole (at least one: the
    first, cut to fit when it must), and those chunks."""

    def request_for(content: str) -> ChatRequest:
        return ChatRequest(
            purpose="relevance", messages=render_relevance_messages(subquery, content), max_tokens=output_reserve or None,
            output_schema=RELEVANCE_OUTPUT_SCHEMA,
        )

    room = budget - prompt_overhead(tokenizer, len(request_for("").messages))

    def fits(content: str) -> bool:
        return tokenizer.count(request_for(content).prompt_text) <= room

    taken: list[RankedChunk] = []
    for chunk in chunks:
        if not fits(_content([*taken, chunk])):
            break
        taken.append(chunk)
    if taken:
        return request_for(_content(taken)), taken
    first = chunks[0]
    text = first.text.strip()
    if not fits(_content([first], "")):
        raise BudgetError(RELEVANCE_PROMPT_TOO_SMALL)
    low, high = 0, len(text)  # fits(low) and not fits(high)
    while high - low > 1:
        middle = (low + high) // 2
        if fits(_content([first], text[:middle])):
            low = middle
        else:
            high = middle
    return request_for(_content([first], text[:low])), [first]


def check_prompt_budget(subquery: str, *, budget: int, output_reserve: int, tokenizer: Tokenizer) -> None:
    """Raise :class:`BudgetError` when ``budget`` cannot hold a test of one empty chunk (before any call)."""
    empty = RankedChunk(reference="0", chunk_id="0", text="", score=1.0)
    relevance_request(subquery, [empty], budget=budget, output_reserve=output_reserve, tokenizer=tokenizer)


def _source_id(value: object) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    return value.strip() if isinstance(value, str) and value.strip() else None


def parse_relevance_output(raw: str, expected: Sequence[str]) -> dict[str, Verdict]:
    """Each expected source's :class:`Verdict`, from a reply ``{"tests": [{"source_id", "relevant",
    "claims"}]}``; ``relevant`` must be a JSON boolean and ``claims`` a list of strings (blank ones
    dropped, at most :data:`MAX_CLAIMS_PER_CHUNK` kept). Text that is not JSON raises the spec's
    not-valid-JSON error; any other shape, a missing or repeated source or one not sent,
    :data:`RELEVANCE_SHAPE_ERROR`."""
    value = parse_json_output(raw, error=RelevanceOutputError)
    tests = value.get("tests") if isinstance(value, dict) else None
    if not isinstance(tests, list):
        raise invalid_output(RelevanceOutputError, RELEVANCE_SHAPE_ERROR, raw)
    wanted = set(expected)
    verdicts: dict[str, Verdict] = {}
    for item in tests:
        if not isinstance(item, dict):
            raise invalid_output(RelevanceOutputError, RELEVANCE_SHAPE_ERROR, raw)
        source, relevant, claims = _source_id(item.get("source_id")), item.get("relevant"), item.get("claims", [])
        if (
            source not in wanted
            or source in verdicts
            or not isinstance(relevant, bool)
            or not isinstance(claims, list)
            or not all(isinstance(claim, str) for claim in claims)
        ):
            raise invalid_output(RelevanceOutputError, RELEVANCE_SHAPE_ERROR, raw)
        kept = tuple(" ".join(claim.split()) for claim in claims if claim.strip())[:MAX_CLAIMS_PER_CHUNK] if relevant else ()
        verdicts[source] = Verdict(relevant=relevant, claims=kept)
    if set(verdicts) != wanted:
        raise invalid_output(RelevanceOutputError, RELEVANCE_SHAPE_ERROR, raw)
    return verdicts


__all__ = [
    "MAX_CLAIMS_PER_CHUNK", "RELEVANCE_PROMPT_TOO_SMALL", "RELEVANCE_SHAPE_ERROR", "Verdict", "check_prompt_budget",
    "parse_relevance_output", "relevance_request",
]
