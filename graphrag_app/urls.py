"""The settings of a run <-> URL query parameters, and links to the provenance page.

A link carrying these parameters reproduces a run: same index, same request, same seed, same
model. Decoding is forgiving: a value that cannot be used falls back to its default and is
reported, so a hand-edited URL still opens the page. No streamlit import here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal
from urllib.parse import urlencode

from graphrag_core.request import (
    DEFAULT_MAP_CONCURRENCY,
    DEFAULT_MAP_OUTPUT_RESERVE,
    DEFAULT_MAP_TOKEN_BUDGET,
    DEFAULT_REDUCE_OUTPUT_RESERVE,
    DEFAULT_REDUCE_TOKEN_BUDGET,
    REDUCE_STRATEGIES,
    GlobalSearchRequest,
)
from graphrag_core.tokens import HEURISTIC, TOKENIZER_NAMES

ModelChoice = Literal["offline", "openai"]
MODEL_CHOICES: tuple[ModelChoice, ...] = ("offline", "openai")
LEAF = "leaf"
MAX_SEED = 2**31 - 1
MAX_LATENCY_S = 30.0
PROVENANCE_PATH = "provenance"

# Query parameter name of each RunSettings field.
PARAM_NAMES: dict[str, str] = {
    "index": "index",
    "query": "q",
    "community_level": "level",
    "map_token_budget": "map_budget",
    "reduce_token_budget": "reduce_budget",
    "map_output_reserve": "map_reserve",
    "reduce_output_reserve": "reduce_reserve",
    "map_concurrency": "concurrency",
    "seed": "seed",
    "reduce_strategy": "strategy",
    "include_claims": "claims",
    "include_sources": "sources",
    "tokenizer": "tokenizer",
    "model": "model",
    "model_name": "llm",
    "base_url": "base_url",
    "latency_s": "latency",
}
RUN_PARAM = "run"
COMMUNITY_PARAM = "community"


@dataclass(frozen=True)
class RunSettings:
    """Every choice of the Explore page, as plain values. ``community_level`` is ``"leaf"`` or
    the decimal text of a level; ``index`` is a sample name or a folder path."""

    index: str = ""
    query: str = ""
    community_level: str = LEAF
    map_token_budget: int = DEFAULT_MAP_TOKEN_BUDGET
    reduce_token_budget: int = DEFAULT_REDUCE_TOKEN_BUDGET
    map_output_reserve: int = DEFAULT_MAP_OUTPUT_RESERVE
    reduce_output_reserve: int = DEFAULT_REDUCE_OUTPUT_RESERVE
    map_concurrency: int = DEFAULT_MAP_CONCURRENCY
    seed: int = 0
    reduce_strategy: str = "skip"
    include_claims: bool = True
    include_sources: bool = True
    tokenizer: str = HEURISTIC
    model: ModelChoice = "offline"
    model_name: str = ""
    base_url: str = ""
    latency_s: float = 0.0

    @property
    def level_value(self) -> int | Literal["leaf"]:
        return LEAF if self.community_level == LEAF else int(self.community_level)

    def to_request(self, *, query: str | None = None) -> GlobalSearchRequest:
        """The engine request; raises the engine's validation errors (spec messages)."""
        return GlobalSearchRequest(
            query=self.query if query is None else query,
            community_level=self.level_value,
            map_token_budget=self.map_token_budget,
            reduce_token_budget=self.reduce_token_budget,
            map_output_reserve=self.map_output_reserve,
            reduce_output_reserve=self.reduce_output_reserve,
            map_concurrency=self.map_concurrency,
            seed=self.seed,
            reduce_strategy=self.reduce_strategy,
            include_claims=self.include_claims,
            include_sources=self.include_sources,
            tokenizer=self.tokenizer,
        )

    @classmethod
    def from_request(cls, request: GlobalSearchRequest, *, index: str, seed: int | None, base: "RunSettings") -> "RunSettings":
        """The settings that repeat ``request`` on ``index`` (model choices kept from ``base``)."""
        return replace(
            base,
            index=index,
            query=request.query,
            community_level=str(request.community_level),
            map_token_budget=request.map_token_budget,
            reduce_token_budget=request.reduce_token_budget,
            map_output_reserve=request.map_output_reserve,
            reduce_output_reserve=request.reduce_output_reserve,
            map_concurrency=request.map_concurrency,
            seed=seed if seed is not None else (request.seed if request.seed is not None else base.seed),
            reduce_strategy=request.reduce_strategy,
            include_claims=request.include_claims,
            include_sources=request.include_sources,
            tokenizer=request.tokenizer,
        )


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def to_query_params(settings: RunSettings, *, run_id: str | None = None) -> dict[str, str]:
    """The query parameters of ``settings`` (OpenAI-only fields only for the OpenAI model)."""
    params: dict[str, str] = {}
    for name, param in PARAM_NAMES.items():
        value = getattr(settings, name)
        if name in ("model_name", "base_url") and (settings.model != "openai" or not value):
            continue
        if name == "latency_s" and (settings.model != "offline" or not value):
            continue
        params[param] = _format(value)
    if run_id:
        params[RUN_PARAM] = run_id
    return params


def _one(value: str | list[str] | None) -> str | None:
    if isinstance(value, list):
        return value[-1] if value else None
    return value


def _int(text: str, *, low: int, high: int | None = None) -> int:
    number = int(text.strip())
    if number < low or (high is not None and number > high):
        raise ValueError
    return number


def from_query_params(params: Mapping[str, str | list[str]], *, base: RunSettings) -> tuple[RunSettings, list[str]]:
    """Settings from query parameters over ``base``; plus a note for each value ignored."""
    values = asdict(base)
    problems: list[str] = []
    known = {f.name: f for f in fields(RunSettings)}
    for name, param in PARAM_NAMES.items():
        raw = _one(params.get(param))
        if raw is None:
            continue
        try:
            if name in ("index", "query", "model_name", "base_url"):
                values[name] = raw
            elif name == "community_level":
                values[name] = LEAF if raw.strip().lower() == LEAF else str(_int(raw, low=0))
            elif name in ("map_token_budget", "reduce_token_budget", "map_concurrency"):
                values[name] = _int(raw, low=1)
            elif name in ("map_output_reserve", "reduce_output_reserve"):
                values[name] = _int(raw, low=0)
            elif name == "seed":
                values[name] = _int(raw, low=0, high=MAX_SEED)
            elif name == "reduce_strategy":
                if raw not in REDUCE_STRATEGIES:
                    raise ValueError
                values[name] = raw
            elif name in ("include_claims", "include_sources"):
                if raw.lower() not in ("1", "0", "true", "false"):
                    raise ValueError
                values[name] = raw.lower() in ("1", "true")
            elif name == "tokenizer":
                if raw not in TOKENIZER_NAMES:
                    raise ValueError
                values[name] = raw
            elif name == "model":
                if raw not in MODEL_CHOICES:
                    raise ValueError
                values[name] = raw
            elif name == "latency_s":
                latency = float(raw)
                if not 0 <= latency <= MAX_LATENCY_S:
                    raise ValueError
                values[name] = latency
        except ValueError:
            problems.append(f"Ignored the URL parameter {param}={raw[:40]!r}: not a valid {known[name].name.replace('_', ' ')}.")
    return RunSettings(**values), problems


def provenance_params(index: str, community_id: str, run_id: str | None = None) -> dict[str, str]:
    """The query parameters of the provenance page for one community (and run)."""
    params = {"index": index, COMMUNITY_PARAM: community_id}
    if run_id:
        params[RUN_PARAM] = run_id
    return params


def provenance_url(index: str, community_id: str, run_id: str | None = None) -> str:
    """A relative link to the provenance page, e.g. ``provenance?index=jargon&community=12&run=...``."""
    return f"{PROVENANCE_PATH}?{urlencode(provenance_params(index, community_id, run_id))}"
