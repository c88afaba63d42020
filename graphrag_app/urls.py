"""Each search setting as the app draws and links it, the settings of a run <-> URL query
parameters, and every link the app makes. No streamlit import here.

:class:`SettingField` is one search setting read from its field's metadata in
:class:`~graphrag_core.request.SearchSettings`: its URL parameter, kind, default, bounds, choices
and help. :class:`RunSettings` is every choice of the Explore page: a
:class:`~graphrag_core.request.SearchSettings` (``search``) plus what is not a search setting
(the index, the question, the model, the spending limit); the seed is a search setting. Each
search setting's URL parameter, type, bounds and help come from its field's metadata
(:func:`setting_fields`), so a field added to
``SearchSettings`` is linked (and drawn, see :mod:`graphrag_app.widgets`) with no change here.

A link carrying these parameters reproduces a run: same index, same request, same seed, same
model. Decoding is forgiving: a value that cannot be used keeps its default and is reported, so a
hand-edited URL still opens the page.

Why this module is long: a setting's field, its words in a link and the links themselves are
one vocabulary. Each search setting is encoded and decoded through its SettingField, and
RunSettings is written and read through them; apart, one rule would live in two places.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin
from urllib.parse import urlencode

from graphrag_core.errors import GraphRAGError
from graphrag_core.levels import DYNAMIC, LevelError, level_text, parse_level
from graphrag_core.llm.settings import PROVIDERS, ModelChoice
from graphrag_core.request import DYNAMIC_SETTING_NAMES, GlobalSearchRequest, SearchSettings, check_spend_limit, check_typed_setting
from graphrag_core.samples import SAMPLES


# -- each search setting, as the app draws and links it --------------------------------------------

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


# -- a run's settings <-> the URL ------------------------------------------------------------------

MAX_LATENCY_S = 30.0
OFFLINE = ModelChoice(provider="offline", offline_latency_s=0.0)
"""The model of a page that has chosen nothing: the offline model, at full speed."""

INDEX_PARAM = "index"
RUN_PARAM = "run"
REPLAY_PARAM = "replay"
"""Explore plays a recorded run back: ``?replay=<run id>&speed=<factor>``."""
SPEED_PARAM = "speed"
PRESENTER_PARAM = "presenter"
"""Explore in presenter mode: ``?presenter=1``."""
SUPPORT_PARAM = "support"
"""Explore checks each finished run's support (issue 41): ``?support=1``."""
REPLAY_SPEEDS: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0)
"""The speeds the Replay picker offers (a link may ask for any speed in the range below)."""
MAX_REPLAY_SPEED = 100.0
COMMUNITY_PARAM = "community"
RUNS_PARAM = "runs"
"""Compare's runs: ``compare?runs=<id1>,<id2>``."""
EXPERIMENT_PARAM = "experiment"
"""Evaluate's finished experiment: ``evaluate?experiment=<id>``."""
PROVENANCE_PATH = "provenance"
COMPARE_PATH = "compare"
EXPLORE_PATH = "./"
RECORD_PARAMS: tuple[str, ...] = ("entity", "relationship", "claim", "source")
"""The provenance page's query parameter of each record kind (``?entity=5``), named as the kind."""

OWN_PARAMS: dict[str, str] = {
    "index": INDEX_PARAM,
    "query": "q",
    "model": "model",
    "model_name": "llm",
    "base_url": "base_url",
    "latency_s": "latency",
    "spend_limit_tokens": "spend_limit",
}
"""The query parameter of each choice that is not a search setting."""

@dataclass(frozen=True)
class RunSettings:
    """Every choice of the Explore page: the search settings (``search``, validated, with the
    engine's defaults and rules, the seed among them) plus the index (a sample's name or a
    folder path), the question, the model and the spending limit (None: no limit). Frozen;
    ``model`` never holds a key."""

    index: str = ""
    query: str = ""
    model: ModelChoice = field(default_factory=lambda: OFFLINE)
    search: SearchSettings = field(default_factory=SearchSettings.for_front_ends)
    spend_limit_tokens: int | None = None

    @property
    def seed(self) -> int | None:
        """The seed of the run these settings make (None: drawn when it starts; Explore draws one
        for a new session)."""
        return self.search.seed

    @property
    def fields(self) -> tuple[SettingField, ...]:
        return setting_fields(type(self.search))

    @property
    def dynamic(self) -> bool:
        return self.search.community_selection == DYNAMIC

    def to_request(self, *, query: str | None = None) -> GlobalSearchRequest:
        """The engine request; raises the engine's validation errors (spec messages)."""
        query = self.query if query is None else query
        return GlobalSearchRequest(query=query, spend_limit_tokens=self.spend_limit_tokens, **self.search.model_dump())

    @classmethod
    def from_request(cls, request: GlobalSearchRequest, *, index: str, seed: int | None, base: RunSettings) -> RunSettings:
        """The settings that repeat ``request`` on ``index`` with ``seed`` (the run's own, which a
        request that drew its seed does not hold; None: the request's, else ``base``'s), the
        model kept from ``base``."""
        model = type(base.search)
        values = {name: getattr(request, name) for name in model.model_fields if name in type(request).model_fields}
        values["seed"] = seed if seed is not None else (request.seed if request.seed is not None else base.seed)
        return replace(base, index=index, query=request.query, search=model(**values), spend_limit_tokens=request.spend_limit_tokens)


PARAM_NAMES: dict[str, str] = {**OWN_PARAMS, **{f.name: f.param for f in setting_fields()}}
"""The query parameter of every choice of :class:`RunSettings`, by name (a search setting's is its short name)."""


def _linked(settings: RunSettings, name: str) -> bool:
    """Dynamic selection's settings are in a link only when the selection is dynamic."""
    return name not in DYNAMIC_SETTING_NAMES or settings.dynamic


def to_query_params(
    settings: RunSettings, *, run_id: str | None = None, replay_speed: float | None = None, presenter: bool = False, support: bool = False
) -> dict[str, str]:
    """The query parameters of ``settings`` (the endpoint only for the OpenAI model, the
    simulated latency only for the offline one), the run shown (``replay`` and ``speed`` instead
    of ``run`` while it is played back), presenter mode and the support check."""
    params = {INDEX_PARAM: settings.index, OWN_PARAMS["query"]: settings.query}
    for setting in settings.fields:
        value = getattr(settings.search, setting.name)
        if _linked(settings, setting.name) and value is not None:
            params[setting.param] = setting.encode(value)
    model = settings.model
    if model.provider:
        params[OWN_PARAMS["model"]] = model.provider
    if model.provider == "openai":
        if model.model:
            params[OWN_PARAMS["model_name"]] = model.model
        if model.base_url:
            params[OWN_PARAMS["base_url"]] = model.base_url
    elif model.offline_latency_s is not None:
        params[OWN_PARAMS["latency_s"]] = f"{model.offline_latency_s:g}"
    if settings.spend_limit_tokens is not None:
        params[OWN_PARAMS["spend_limit_tokens"]] = str(settings.spend_limit_tokens)
    if run_id and replay_speed is not None:
        params[REPLAY_PARAM], params[SPEED_PARAM] = run_id, f"{replay_speed:g}"
    elif run_id:
        params[RUN_PARAM] = run_id
    if presenter:
        params[PRESENTER_PARAM] = "1"
    if support:
        params[SUPPORT_PARAM] = "1"
    return params


def replay_speed(raw: str | None) -> float:
    """The speed a ``speed`` parameter asks for (1 when absent); ``ValueError`` naming the
    parameter when it is not a number above 0 and at most :data:`MAX_REPLAY_SPEED`."""
    if raw is None or not raw.strip():
        return 1.0
    try:
        speed = float(raw)
    except ValueError:
        raise ValueError(f"Ignored the URL parameter {SPEED_PARAM}={raw[:40]!r}: not a number; the replay plays at its recorded pace.") from None
    if not 0 < speed <= MAX_REPLAY_SPEED:
        raise ValueError(f"Ignored the URL parameter {SPEED_PARAM}={raw[:40]!r}: the speed must be above 0 and at most {MAX_REPLAY_SPEED:g}; the replay plays at its recorded pace.")
    return speed


def _one(value: str | list[str] | None) -> str | None:
    if isinstance(value, list):
        return value[-1] if value else None
    return value


def _notice(param: str, name: str, raw: str, reason: str) -> str:
    because = f" ({reason})" if reason else ""
    return f"Ignored the URL parameter {param}={raw[:40]!r}: not a valid {name.replace('_', ' ')}{because}."


def ignored_notice(name: str, raw: str, reason: str = "") -> str:
    """The notice for a URL value of :class:`RunSettings` choice ``name`` that the page could not use."""
    return _notice(PARAM_NAMES[name], name, raw, reason)


def _provider(raw: str) -> str:
    if raw not in PROVIDERS:
        raise _Ignored(f"model must be one of {', '.join(PROVIDERS)}")
    return raw


def _latency(raw: str) -> float:
    try:
        latency = float(raw)
    except ValueError:
        raise _Ignored("") from None
    if not 0 <= latency <= MAX_LATENCY_S:
        raise _Ignored(f"latency must be between 0 and {MAX_LATENCY_S:g} seconds")
    return latency


def _spend_limit(raw: str) -> int | None:
    try:
        return check_spend_limit(int(raw.strip()))
    except ValueError as exc:  # not a number, or not a positive one (the engine's message)
        raise _Ignored(str(exc).rstrip(".") if isinstance(exc, GraphRAGError) else "") from None


_OWN_DECODERS: dict[str, Callable[[str], Any]] = {
    "spend_limit_tokens": _spend_limit,
    "index": str,
    "query": str,
    "model": _provider,
    "model_name": str,
    "base_url": str,
    "latency_s": _latency,
}


def _held_together(
    base: SearchSettings, values: dict[str, Any], given: list[tuple[SettingField, str]], problems: list[str]
) -> SearchSettings:
    """The search settings ``values`` hold; when they break a rule between settings (a budget
    not above its reserve), the URL's values are dropped last first, each with a notice, until
    the rest hold together (``base`` always does)."""
    while True:
        try:
            return type(base)(**values)
        except (GraphRAGError, ValueError) as exc:
            if not given:
                raise
            setting, raw = given.pop()
            values[setting.name] = getattr(base, setting.name)
            problems.append(_notice(setting.param, setting.name, raw, str(exc).splitlines()[0].rstrip(".")))


def from_query_params(params: Mapping[str, str | list[str]], *, base: RunSettings) -> tuple[RunSettings, list[str]]:
    """Settings from query parameters over ``base``; plus a note for each value ignored (one
    that breaks a setting's rule or is outside the page's range keeps ``base``'s value)."""
    problems: list[str] = []
    own: dict[str, Any] = {}
    for name, param in OWN_PARAMS.items():
        raw = _one(params.get(param))
        if raw is None:
            continue
        try:
            own[name] = _OWN_DECODERS[name](raw)
        except _Ignored as why:
            problems.append(ignored_notice(name, raw, str(why)))
    values = base.search.model_dump()
    given: list[tuple[SettingField, str]] = []
    for setting in base.fields:
        raw = _one(params.get(setting.param))
        if raw is None:
            continue
        try:
            values[setting.name] = setting.decode(raw)
            given.append((setting, raw))
        except _Ignored as why:
            problems.append(_notice(setting.param, setting.name, raw, str(why)))
    search = _held_together(base.search, values, given, problems)
    model = base.model.model_copy(
        update={
            key: own[name]
            for name, key in (("model", "provider"), ("model_name", "model"), ("base_url", "base_url"), ("latency_s", "offline_latency_s"))
            if name in own
        }
    )
    settings = replace(
        base,
        index=own.get("index", base.index),
        query=own.get("query", base.query),
        model=model,
        search=search,
        spend_limit_tokens=own.get("spend_limit_tokens", base.spend_limit_tokens),
    )
    return settings, problems


def level_notice(params: Mapping[str, str | list[str]], levels: Sequence[int | str]) -> str | None:
    """The "ignored" notice when the URL names a community level the opened index does not have
    (``levels``: the index's levels, ``"leaf"`` included); None when it has it or names none."""
    level = next(f for f in setting_fields() if f.name == "community_level")
    raw = _one(params.get(level.param))
    if raw is None:
        return None
    try:
        value = level.decode(raw)
    except _Ignored:
        return None  # already reported by from_query_params
    if value in levels:
        return None
    names = ", ".join(level_text(v) for v in levels)  # type: ignore[arg-type]
    return _notice(level.param, level.name, raw, f"this index has the levels {names}")


# -- links -----------------------------------------------------------------------------------


def provenance_params(index: str, community_id: str, run_id: str | None = None) -> dict[str, str]:
    """The query parameters of the provenance page for one community (and run)."""
    params = {INDEX_PARAM: index, COMMUNITY_PARAM: community_id}
    if run_id:
        params[RUN_PARAM] = run_id
    return params


def provenance_url(index: str, community_id: str, run_id: str | None = None) -> str:
    """A relative link to the provenance page, e.g. ``provenance?index=jargon&community=12&run=...``."""
    return f"{PROVENANCE_PATH}?{urlencode(provenance_params(index, community_id, run_id))}"


RECORDS_ANCHOR = "records-of-this-community"
"""The anchor of a community's list of entities and relationships on its provenance page
(where a citation's ``+more`` leads)."""


def community_records_url(index: str, community_id: str, run_id: str | None = None) -> str:
    """A relative link to a community's list of entities and relationships on its provenance page."""
    return f"{provenance_url(index, community_id, run_id)}#{RECORDS_ANCHOR}"


def record_params(index: str, kind: str, ref: str, run_id: str | None = None) -> dict[str, str]:
    """The query parameters of the provenance page for one entity, relationship, claim or source
    (``ref`` is the id a report cites it by), and the run it is seen from."""
    if kind not in RECORD_PARAMS:
        raise ValueError(f"not a record kind: {kind!r} (one of {', '.join(RECORD_PARAMS)})")
    params = {INDEX_PARAM: index, kind: ref}
    if run_id:
        params[RUN_PARAM] = run_id
    return params


def record_url(index: str, kind: str, ref: str, run_id: str | None = None) -> str:
    """A relative link to a record's provenance view, e.g. ``provenance?index=...&entity=5``."""
    return f"{PROVENANCE_PATH}?{urlencode(record_params(index, kind, ref, run_id))}"


def run_url(run_id: str) -> str:
    """A relative link that opens a stored run on Explore: ``./?run=<id>``."""
    return f"{EXPLORE_PATH}?{urlencode({RUN_PARAM: run_id})}"


def compare_url(run_ids: Sequence[str]) -> str:
    """A relative link to Compare with these runs chosen: ``compare?runs=<id1>,<id2>``."""
    return f"{COMPARE_PATH}?{urlencode({RUNS_PARAM: ','.join(run_ids)})}"


def run_ids_param(raw: str | None) -> list[str]:
    """The run ids of a ``runs`` parameter (comma-separated; blanks dropped)."""
    return [part.strip() for part in str(raw or "").split(",") if part.strip()]


def index_param(index_path: str | Path | None, *, name: str) -> str:
    """The ``index`` value that reopens an index stored as ``index_path`` (named ``name``): a
    bundled sample's name when the path is a sample's, else the path; ``name`` with no path."""
    if not index_path:
        return name
    try:
        path = Path(index_path).expanduser().resolve()
    except (OSError, RuntimeError):
        return str(index_path)
    for sample, sample_path in SAMPLES.items():
        if path == Path(sample_path).resolve():
            return sample
    return str(index_path)


__all__ = [
    "COMMUNITY_PARAM",
    "EXPERIMENT_PARAM",
    "INDEX_PARAM",
    "MAX_LATENCY_S",
    "OFFLINE",
    "PARAM_NAMES",
    "PRESENTER_PARAM",
    "RECORDS_ANCHOR",
    "RECORD_PARAMS",
    "REPLAY_PARAM",
    "REPLAY_SPEEDS",
    "RUNS_PARAM",
    "RUN_PARAM",
    "SPEED_PARAM",
    "SUPPORT_PARAM",
    "RunSettings",
    "Kind",
    "LINK_NAMES",
    "SettingField",
    "community_records_url",
    "compare_url",
    "from_query_params",
    "ignored_notice",
    "index_param",
    "level_notice",
    "level_option",
    "provenance_params",
    "provenance_url",
    "record_params",
    "record_url",
    "replay_speed",
    "run_ids_param",
    "run_url",
    "setting_fields",
    "to_query_params",
]
