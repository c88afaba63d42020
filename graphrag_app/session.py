"""The one door to a browser session's state (``st.session_state``): each page's typed state,
and each widget's value, typed.

A page keeps what it remembers between script runs that is not a widget's value in one object
under one key: a :class:`PageState` subclass, read with ``ExploreState.get()`` (``SweepsState.get()``,
...), made on first use. A widget's value lives under the widget's own key; a page names each of
its widgets once as a :class:`Widget` (its key, the type of its value, the value it has before
the page gives it one) and reads and sets it through that handle, never by a string key. Nothing
else in the app names ``st.session_state``.

Streamlit keeps a widget's value only while the widget is drawn; leaving a page drops them. A
page that must find its widgets as they were puts their values back before drawing them (e.g.
Explore's :func:`~graphrag_app.explore.state.seed_widgets`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, cast

import streamlit as st

S = TypeVar("S", bound="PageState")
T = TypeVar("T")


class PageState:
    """A page's state in this browser session, under the session key ``KEY``."""

    KEY: ClassVar[str]

    @classmethod
    def get(cls: type[S]) -> S:
        """This session's state of the page (a fresh one on first use, or after a code reload
        left an object of another class under the key)."""
        state = st.session_state.get(cls.KEY)
        if not isinstance(state, cls):
            state = cls()
            st.session_state[cls.KEY] = state
        return state


@dataclass(frozen=True)
class Widget(Generic[T]):
    """One widget's value in this session, by the widget's key. ``default`` (or ``make()``, for a
    value that must not be shared, like a list) is what :attr:`value` reads before the widget has
    a value; :meth:`setdefault` gives it one. Draw the widget with ``key=handle.key``."""

    key: str
    default: T | None = None
    make: Callable[[], T] | None = field(default=None, compare=False)

    @property
    def value(self) -> T:
        """The widget's value now (its default before it has one)."""
        if self.key in st.session_state:
            return cast(T, st.session_state[self.key])
        return self.make() if self.make is not None else cast(T, self.default)

    def set(self, value: T) -> None:
        """Give the widget ``value`` (before it is drawn in this script run: Streamlit refuses a
        change to a widget drawn already)."""
        st.session_state[self.key] = value

    @property
    def present(self) -> bool:
        """Whether the widget has a value in this session."""
        return self.key in st.session_state

    def setdefault(self, value: T) -> T:
        """The widget's value, after giving it ``value`` when it had none."""
        if not self.present:
            self.set(value)
        return self.value

    def pop(self) -> T | None:
        """Take the value away (the widget starts from its default next time); what it was."""
        return cast("T | None", st.session_state.pop(self.key, None))

    def selection(self) -> dict[str, Any]:
        """The selection a chart's or a table's ``on_select`` left under this key (empty: none)."""
        event = self.value
        chosen = event.get("selection") if event is not None and hasattr(event, "get") else None
        return chosen if chosen is not None and hasattr(chosen, "get") else {}


__all__ = ["PageState", "Widget"]
