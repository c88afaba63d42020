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

from graphrag_core.errors import GraphRAGError
from graphrag_core.llm.settings import PROVIDERS, Provider
from graphrag_core.models import LEAF
from graphrag_core.request import DYNAMIC_SETTING_NAMES, SEARCH_SETTING_NAMES, GlobalSearchRequest, SearchSettings, check_setting

ModelChoice = Provider
MODEL_CHOICES: tuple[ModelChoice, ...] = PROVIDERS
MAX_SEED = 2**31 - 1
MAX_LATENCY_S = 30.0
PROVENANCE_PATH = "provenance"

DYNAMIC_FIELDS = DYNAMIC_SETTING_NAMES
"""Dynamic selection's settings: in the URL only when the selection is dynamic."""
RUN_PARAM = "run"
COMMUNITY_PARAM = "community"

_DEFAULTS = SearchSettings()


@dataclass(frozen=True)
class RunSettings:
    """Every choice of the Explore page, as plain values: the search settings
    (:class:`~graphrag_core.request.SearchSettings`, whose defaults and rules they take) plus the
    index, the question, the seed and the model. ``community_level`` is ``"leaf"`` or the decimal
    text of a level; ``index`` is a sample name or a folder path."""

    index: str = ""
    query: str = ""
    community_level: str = str(_DEFAULTS.community_level)
    map_token_budget: int = _DEFAULTS.map_token_budget
    reduce_token_budget: int = _DEFAULTS.reduce_token_budget
    map_output_reserve: int = _DEFAULTS.map_output_reserve
    reduce_output_reserve: int = _DEFAULTS.reduce_output_reserve
    map_concurrency: int = _DEFAULTS.map_concurrency
    seed: int = 0
    reduce_strategy: str = _DEFAULTS.reduce_strategy
    include_claims: bool = _DEFAULTS.include_claims
    include_sources: bool = _DEFAULTS.include_sources
    tokenizer: str = _DEFAULTS.tokenizer
    model: ModelChoice = "offline"
    model_name: str = ""
    base_url: str = ""
    latency_s: float = 0.0
    community_selection: str = _DEFAULTS.community_selection
    rating_threshold: int = _DEFAULTS.rating_threshold
    keep_parent: bool = _DEFAULTS.keep_parent
    rating_repeats: int = _DEFAULTS.rating_repeats
    fallback_max_level: int = _DEFAULTS.fallback_max_level
    rating_output_reserve: int = _DEFAULTS.rating_output_reserve

    @property
    def level_value(self) -> int | Literal["leaf"]:
        return LEAF if self.community_level == LEAF else int(self.community_level)

    def search_settings(self) -> dict[str, Any]:
        """The engine's search settings these choices hold, by name (the level as a value)."""
        values = {name: getattr(self, name) for name in SEARCH_SETTING_NAMES}
        values["community_level"] = self.level_value
        return values

    def to_request(self, *, query: str | None = None) -> GlobalSearchRequest:
        """The engine request; raises the engine's validation errors (spec messages)."""
        return GlobalSearchRequest(query=self.query if query is None else query, seed=self.seed, **self.search_settings())

    @classmethod
    def from_request(cls, request: GlobalSearchRequest, *, index: str, seed: int | None, base: "RunSettings") -> "RunSettings":
        """The settings that repeat ``request`` on ``index`` (model choices kept from ``base``)."""
        values: dict[str, Any] = {name: getattr(request, name) for name in SEARCH_SETTING_NAMES}
        values["community_level"] = str(request.community_level)
        return replace(
            base,
            index=index,
            query=request.query,
            seed=seed if seed is not None else (request.seed if request.seed is not None else base.seed),
            **values,
        )


_OWN_PARAMS: dict[str, str] = {"query": "q", "model_name": "llm", "latency_s": "latency", "fallback_max_level": "fallback_level"}
"""The query parameters not named by a setting's short name (``fallback_level``: links made before short names)."""

PARAM_NAMES: dict[str, str] = {
    field.name: _OWN_PARAMS.get(field.name) or (SearchSettings.short_name(field.name) if field.name in SEARCH_SETTING_NAMES else field.name)
    for field in fields(RunSettings)
}
"""Query parameter name of each RunSettings field (a search setting's is its short name)."""


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
        if name == "latency_s" and settings.model != "offline":
            continue
        if name in DYNAMIC_FIELDS and settings.community_selection != "dynamic":
            continue
        params[param] = _format(value)
    if run_id:
        params[RUN_PARAM] = run_id
    return params


def _one(value: str | list[str] | None) -> str | None:
    if isinstance(value, list):
        return value[-1] if value else None
    return value


class _Ignored(ValueError):
    """A URL value that cannot be used; the message says why (or is empty)."""


def _int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise _Ignored("") from None


def _in_range(name: str, value: int, *, high: int | None) -> int:
    if high is not None and value > high:
        raise _Ignored(f"{name} must be at most {high}")
    return value


def _setting(name: str, value: Any) -> Any:
    """``value`` under the engine's rule for setting ``name`` and the page's maximum for it."""
    try:
        check_setting(name, value)
    except GraphRAGError as exc:
        raise _Ignored(str(exc).rstrip(".")) from None
    return _in_range(name, value, high=SearchSettings.ui_max(name)) if isinstance(value, int) else value


def _decode(name: str, raw: str) -> Any:
    """The value of RunSettings field ``name`` written as ``raw`` in a URL; ``_Ignored`` when it
    cannot be used (the engine's rules, then the page's ranges)."""
    if name in ("index", "query", "model_name", "base_url"):
        return raw
    if name == "community_level":
        if raw.strip().lower() == LEAF:
            return LEAF
        return str(_setting(name, _int(raw)))
    if name == "seed":
        seed = _setting(name, _int(raw))
        if seed < 0:
            raise _Ignored("seed must be a non-negative integer")
        return _in_range(name, seed, high=MAX_SEED)
    if name in ("include_claims", "include_sources", "keep_parent"):
        if raw.lower() not in ("1", "0", "true", "false"):
            raise _Ignored("")
        return raw.lower() in ("1", "true")
    if name in SEARCH_SETTING_NAMES:
        field_type = SearchSettings.model_fields[name].annotation
        return _setting(name, _int(raw) if field_type is int else raw)
    if name == "model":
        if raw not in MODEL_CHOICES:
            raise _Ignored(f"model must be one of {', '.join(MODEL_CHOICES)}")
        return raw
    if name == "latency_s":
        try:
            latency = float(raw)
        except ValueError:
            raise _Ignored("") from None
        if not 0 <= latency <= MAX_LATENCY_S:
            raise _Ignored(f"latency must be between 0 and {MAX_LATENCY_S:g} seconds")
        return latency
    raise _Ignored("")


def from_query_params(params: Mapping[str, str | list[str]], *, base: RunSettings) -> tuple[RunSettings, list[str]]:
    """Settings from query parameters over ``base``; plus a note for each value ignored (one
    that breaks a setting's rule or is outside the page's range keeps ``base``'s value)."""
    values = asdict(base)
    problems: list[str] = []
    for name, param in PARAM_NAMES.items():
        raw = _one(params.get(param))
        if raw is None:
            continue
        try:
            values[name] = _decode(name, raw)
        except _Ignored as why:
            problems.append(ignored_notice(name, raw, str(why)))
    return RunSettings(**values), problems


def ignored_notice(name: str, raw: str, reason: str = "") -> str:
    """The notice for a URL value of RunSettings field ``name`` that the page could not use."""
    because = f" ({reason})" if reason else ""
    return f"Ignored the URL parameter {PARAM_NAMES[name]}={raw[:40]!r}: not a valid {name.replace('_', ' ')}{because}."


def level_notice(params: Mapping[str, str | list[str]], levels: list[int | str]) -> str | None:
    """The "ignored" notice when the URL names a community level the opened index does not have
    (``levels``: the index's levels, ``"leaf"`` included); None when it has it or names none."""
    raw = _one(params.get(PARAM_NAMES["community_level"]))
    if raw is None:
        return None
    try:
        level = _decode("community_level", raw)
    except _Ignored:
        return None  # already reported by from_query_params
    if level in {str(value) for value in levels}:
        return None
    names = ", ".join(str(value) for value in levels)
    return ignored_notice("community_level", raw, f"this index has the levels {names}")


def provenance_params(index: str, community_id: str, run_id: str | None = None) -> dict[str, str]:
    """The query parameters of the provenance page for one community (and run)."""
    params = {"index": index, COMMUNITY_PARAM: community_id}
    if run_id:
        params[RUN_PARAM] = run_id
    return params


def provenance_url(index: str, community_id: str, run_id: str | None = None) -> str:
    """A relative link to the provenance page, e.g. ``provenance?index=jargon&community=12&run=...``."""
    return f"{PROVENANCE_PATH}?{urlencode(provenance_params(index, community_id, run_id))}"


RECORD_PARAMS: tuple[str, ...] = ("entity", "relationship", "claim", "source")
"""The provenance page's query parameter of each record kind (``?entity=5``), named as the kind."""


def record_params(index: str, kind: str, ref: str, run_id: str | None = None) -> dict[str, str]:
    """The query parameters of the provenance page for one entity, relationship, claim or source
    (``ref`` is the id a report cites it by), and the run it is seen from."""
    if kind not in RECORD_PARAMS:
        raise ValueError(f"not a record kind: {kind!r} (one of {', '.join(RECORD_PARAMS)})")
    params = {"index": index, kind: ref}
    if run_id:
        params[RUN_PARAM] = run_id
    return params


def record_url(index: str, kind: str, ref: str, run_id: str | None = None) -> str:
    """A relative link to a record's provenance view, e.g. ``provenance?index=...&entity=5``."""
    return f"{PROVENANCE_PATH}?{urlencode(record_params(index, kind, ref, run_id))}"

