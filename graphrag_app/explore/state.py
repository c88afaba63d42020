"""Explore's state in this browser session, its widgets, and :class:`ExploreRequest`: everything
the widgets say in one script run, read once (:func:`graphrag_app.explore.sidebar.read_request`)
and passed on to whatever draws or runs from it.

The run the page shows, with the settings it was shown with, is the session's
:class:`~graphrag_app.live.ShownRun` (other pages open runs into it); :class:`ExploreState` holds
what only Explore's drawing needs. Streamlit keeps a widget's value only while the widget is
drawn, so leaving Explore drops them: :func:`seed_widgets` puts the shown settings back before
the widgets are drawn again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal, NoReturn

import streamlit as st

from graphrag_core.errors import GraphRAGError, RequestValidationError
from graphrag_core.llm.settings import ModelChoice
from graphrag_core.request import GlobalSearchRequest
from graphrag_core.tokens import planning_tokenizer_name

from ..session import PageState, Widget
from ..urls import RunSettings
from ..widgets import FOLDER_CHOICE, search_from_widgets, setting_widget

Start = Literal["run", "fresh"]


@dataclass
class ExploreState(PageState):
    """What Explore's drawing remembers between script runs: whether the URL was read, the
    messages the last drawing showed, whether the next drawing is the page's own, whether the
    level picker waits for its tokens, and a click on Run not yet acted on."""

    KEY: ClassVar[str] = "explore_page"

    url_loaded: bool = False
    shown_notices: list[str] = field(default_factory=list)
    shown_errors: list[str] = field(default_factory=list)
    """The messages the last drawing showed: a drawing the page asks for itself (``drawn_again``)
    shows them again, since the reader has not acted since."""
    drawn_again: bool = False
    """The next drawing is the page's own (:func:`draw_again`), not the reader's."""
    levels_unpriced: bool = False
    """The level picker was drawn before each level's tokens were counted: the page is drawn
    again once they are (see ``views.draw_cost_preview``)."""
    start: Start | None = None
    """Run (or Run fresh) was clicked: the script starts the run from its one read of the widgets."""


class Keys:
    """The keys of the Explore page's widgets that are not search settings (a search setting's
    widget key is its name). Stable: tests find widgets by them."""

    QUESTION = "question"
    INDEX = "index"
    FOLDER = "index_folder"
    SEED = "seed"
    NEW_SEED = "new_seed"
    MODEL = "model"
    MODEL_NAME = "model_name"
    BASE_URL = "base_url"
    API_KEY = "api_key"
    LATENCY = "latency_s"
    USE_CACHE = "use_map_cache"
    RUN = "run_global_search"
    STOP = "stop"
    RUN_FRESH = "run_fresh"
    REPLAY = "replay"
    REPLAY_SPEED = "replay_speed"
    ANSWER_FROM_READ = "answer_from_read"
    PRESENTER = "presenter_mode"
    SUPPORT = "check_support"
    SUPPORT_JUDGE = "support_judge"
    SPEND_LIMIT = "spend_limit_tokens"


QUESTION = Widget[str](Keys.QUESTION, "")
INDEX, FOLDER = Widget[str](Keys.INDEX), Widget[str](Keys.FOLDER, "")
MODEL, MODEL_NAME, BASE_URL = Widget[str](Keys.MODEL), Widget[str](Keys.MODEL_NAME), Widget[str](Keys.BASE_URL)
API_KEY = Widget[str](Keys.API_KEY, "")
LATENCY = Widget[float](Keys.LATENCY)
USE_CACHE = Widget[bool](Keys.USE_CACHE, True)
SPEND_LIMIT = Widget[int](Keys.SPEND_LIMIT)
PRESENTER = Widget[bool](Keys.PRESENTER, False)
SUPPORT = Widget[bool](Keys.SUPPORT, False)
"""The "Check support" switch (``?support=1``): each finished run's answer is support-checked."""
SUPPORT_JUDGE = Widget[str](Keys.SUPPORT_JUDGE, "offline")
"""Which judge checks support: ``offline`` (lexical, the default) or ``model`` (the run's model)."""
REPLAY_SPEED = Widget[float](Keys.REPLAY_SPEED, 1.0)
SEED = setting_widget(Keys.SEED)


@dataclass(frozen=True)
class ExploreRequest:
    """Everything Explore's widgets say in one script run: the settings (a SearchSettings with its
    seed, and the index, question, model and spending limit), why its search settings cannot run
    (None: they can; the settings then keep the last good ones), whether the map cache is read,
    the key typed in this session (never in the settings, the URL or a record), and the
    tokenizer a plan made before the run counts with (``"auto"`` resolved for the chosen model)."""

    settings: RunSettings
    problem: str | None = None
    use_cache: bool = True
    api_key: str = field(default="", repr=False)
    counted_with: str = "heuristic"

    def request(self) -> GlobalSearchRequest:
        """The run's request; raises the engine's errors (spec messages), e.g. an empty question."""
        return self.settings.to_request()

    def priced(self) -> GlobalSearchRequest:
        """The request a plan before the run prices, as the level picker labels each level: the
        question (``?`` while it is empty), the settings and seed. Raises the engine's errors
        (spec messages) when the settings cannot run, :attr:`problem` first."""
        if self.problem is not None:
            raise RequestValidationError(self.problem)
        return self.settings.to_request(query=self.settings.query if self.settings.query.strip() else "?")

    def previewed(self) -> GlobalSearchRequest:
        """The request the cost preview plans: :meth:`priced` counted with :attr:`counted_with`
        (its spending limit kept: the limit's forecast is drawn from the preview)."""
        return self.priced().model_copy(update={"tokenizer": self.counted_with})


def read_choices(base: RunSettings) -> ExploreRequest:
    """The widgets' values, read once into an :class:`ExploreRequest` over ``base`` (a widget
    with no value keeps ``base``'s). The search settings are read from their widgets
    (:func:`~graphrag_app.widgets.search_from_widgets`); when they break a rule, ``base``'s are
    kept and :attr:`ExploreRequest.problem` says why."""
    latency, limit = LATENCY.value, SPEND_LIMIT.value
    model = ModelChoice(
        provider=MODEL.value or base.model.provider,
        model=str((MODEL_NAME.value if MODEL_NAME.present else base.model.model) or ""),
        base_url=str((BASE_URL.value if BASE_URL.present else base.model.base_url) or ""),
        offline_latency_s=float(latency) if latency is not None else base.model.offline_latency_s,
    )
    choice = INDEX.value if INDEX.present else base.index
    settings = replace(
        base,
        index=str(FOLDER.value or "").strip() if choice == FOLDER_CHOICE else str(choice),
        query=str((QUESTION.value if QUESTION.present else base.query) or ""),
        model=model,
        spend_limit_tokens=(int(limit) if limit else None) if SPEND_LIMIT.present else base.spend_limit_tokens,
    )
    problem = None
    try:
        settings = replace(settings, search=search_from_widgets(base.search))
    except (GraphRAGError, ValueError) as exc:  # the engine's errors, with the spec's messages
        problem = str(exc).splitlines()[0]
    counted_with = planning_tokenizer_name(settings.search.tokenizer, real_endpoint=settings.model.provider == "openai")
    return ExploreRequest(settings=settings, problem=problem, use_cache=bool(USE_CACHE.value), api_key=str(API_KEY.value or ""), counted_with=counted_with)


def widget_values(settings: RunSettings, *, index_options: list[str]) -> dict[Widget[Any], Any]:
    """The widget values that draw ``settings``."""
    values: dict[Widget[Any], Any] = {}
    for setting in settings.fields:
        value = getattr(settings.search, setting.name)
        values[setting_widget(setting)] = setting.encode(value) if setting.kind == "level" else value
    model = settings.model
    values.update(
        {
            QUESTION: settings.query,
            MODEL: model.provider or "offline",
            MODEL_NAME: model.model,
            BASE_URL: model.base_url,
            LATENCY: model.offline_latency_s or 0.0,
            SPEND_LIMIT: settings.spend_limit_tokens or 0,
        }
    )
    in_samples = settings.index in index_options
    values[INDEX], values[FOLDER] = (settings.index, "") if in_samples else (FOLDER_CHOICE, settings.index)
    return values


def seed_widgets(settings: RunSettings, *, index_options: list[str], overwrite: bool = False) -> None:
    """Put ``settings`` into the widgets (only where a widget has no value, unless ``overwrite``)."""
    for widget, value in widget_values(settings, index_options=index_options).items():
        if overwrite or not widget.present:
            widget.set(value)


def presenting() -> bool:
    """Whether Explore is in presenter mode (its switch, or ``?presenter=1``)."""
    return bool(PRESENTER.value)


def checking_support() -> bool:
    """Whether Explore checks each finished run's support (its switch, or ``?support=1``)."""
    return bool(SUPPORT.value)


def draw_again(page: ExploreState) -> NoReturn:
    """The whole page drawn again by the page itself (its figures are counted, a run ended), not
    for the reader: what it said stays on it."""
    page.drawn_again = True
    st.rerun()


__all__ = [
    "API_KEY",
    "BASE_URL",
    "FOLDER",
    "INDEX",
    "LATENCY",
    "MODEL",
    "MODEL_NAME",
    "PRESENTER",
    "QUESTION",
    "REPLAY_SPEED",
    "SEED",
    "SPEND_LIMIT",
    "SUPPORT",
    "SUPPORT_JUDGE",
    "USE_CACHE",
    "ExploreRequest",
    "ExploreState",
    "Keys",
    "Start",
    "checking_support",
    "draw_again",
    "presenting",
    "read_choices",
    "seed_widgets",
    "widget_values",
]
