"""Explore's Replay controls."""

from __future__ import annotations

from .apptest_support import app, run_question


def test_replay_offers_the_recorded_pace_first(run_db) -> None:  # noqa: ANN001
    """The Replay speed box starts at 1× (the house move read the widget's default, 1.0, as its
    value and never gave the box one, so it showed its first option, 0.5×, and replays ran at half pace)."""
    at = run_question(app({"level": "1", "seed": "13"}).run(), "What is a kludge?")
    assert not at.exception
    assert at.selectbox(key="replay_speed").value == 1.0
