"""The shapes of the models' replies, as strict structured output wants them (each call's
``output_schema``): one per kind of call. :mod:`graphrag_core.prompts` holds the prompts that ask
for them and exports them beside their prompts."""

from __future__ import annotations

from typing import Any

from .llm.base import OutputSchema


def strict_object(name: str, properties: dict[str, Any]) -> OutputSchema:
    """An object schema as strict structured output wants it: every property required, no other."""
    return OutputSchema(
        name=name,
        schema={"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False},
    )


MAP_OUTPUT_SCHEMA = strict_object(
    "global_map_answer",
    {"answer": {"type": "string"}, "usefulness": {"type": "integer", "minimum": 0, "maximum": 100}},
)
"""The shape of a map reply (spec section 6)."""

REDUCE_OUTPUT_SCHEMA = strict_object("global_reduce_answer", {"answer": {"type": "string"}})
"""The shape of the reduce reply (spec section 7)."""

STRING_LIST = {"type": "array", "items": {"type": "string"}}

RATING_OUTPUT_SCHEMA = strict_object(
    "community_rating",
    {"reason": {"type": "string"}, "rating": {"type": "integer", "minimum": 0, "maximum": 5}},
)
"""The shape of a rating reply (dynamic-selection spec), in the order the rating prompt shows it."""

JUDGE_OUTPUT_SCHEMA = strict_object(
    "pairwise_judgment",
    {"winner": {"type": "integer", "enum": [0, 1, 2]}, "reason": {"type": "string"}},
)
"""The shape of a judge reply (evaluation spec section 2): winner 1, 2 or 0 (a tie)."""

CLAIMS_OUTPUT_SCHEMA = strict_object("answer_claims", {"claims": STRING_LIST})
"""The shape of a claims reply (evaluation spec section 4)."""

SUPPORT_OUTPUT_SCHEMA = strict_object(
    "support_check",
    {
        "points": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "point": {"type": "integer", "minimum": 1},
                    "verdict": {"type": "string", "enum": ["supported", "partial", "unsupported"]},
                    "evidence": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "kind": {"type": "string", "enum": ["summary", "claim", "chunk"]},
                                "id": {"type": "string"},
                                "quote": {"type": "string"},
                            },
                            "required": ["kind", "id", "quote"],
                            "additionalProperties": False,
                        },
                    },
                    "reason": {"type": "string"},
                },
                "required": ["point", "verdict", "evidence", "reason"],
                "additionalProperties": False,
            },
        }
    },
)
"""The shape of a support check reply: one entry per point, its verdict, its quotes and why."""

EXPANSION_OUTPUT_SCHEMA = strict_object("query_expansion", {"subqueries": STRING_LIST})
"""The shape of a query expansion reply (the lazy method)."""

RELEVANCE_OUTPUT_SCHEMA = strict_object(
    "relevance_tests",
    {
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"source_id": {"type": "string"}, "relevant": {"type": "boolean"}, "claims": STRING_LIST},
                "required": ["source_id", "relevant", "claims"],
                "additionalProperties": False,
            },
        }
    },
)
"""The shape of a relevance test reply (the lazy method): one test per source given."""

COMMUNITY_SUMMARY_OUTPUT_SCHEMA = strict_object(
    "community_summary", {"title": {"type": "string"}, "summary": {"type": "string"}}
)
"""The shape of a community summary reply (sample building)."""


__all__ = [
    "CLAIMS_OUTPUT_SCHEMA",
    "COMMUNITY_SUMMARY_OUTPUT_SCHEMA",
    "EXPANSION_OUTPUT_SCHEMA",
    "JUDGE_OUTPUT_SCHEMA",
    "MAP_OUTPUT_SCHEMA",
    "RATING_OUTPUT_SCHEMA",
    "REDUCE_OUTPUT_SCHEMA",
    "RELEVANCE_OUTPUT_SCHEMA",
    "STRING_LIST",
    "SUPPORT_OUTPUT_SCHEMA",
    "strict_object",
]
