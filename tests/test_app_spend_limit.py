"""The app's spending limit: the Budgets input and its URL parameter, the cost preview's forecast,
and a run that reaches the limit answering from what it read, labelled so."""

from __future__ import annotations

from pathlib import Path

from graphrag_app.urls import RunSettings, from_query_params, to_query_params
from graphrag_core.history import RunStore
from graphrag_core.request import SearchSettings

from .apptest_support import app, messages, run_question


def test_the_limit_round_trips_through_the_url_and_a_bad_one_is_named():
    settings = RunSettings(index="jargon", query="q", search=SearchSettings(seed=3), spend_limit_tokens=60_000)
    params = to_query_params(settings)
    assert params["spend_limit"] == "60000"
    back, problems = from_query_params(params, base=RunSettings())
    assert back.spend_limit_tokens == 60_000 and not problems
    assert "spend_limit" not in to_query_params(RunSettings(index="jargon"))
    kept, problems = from_query_params({"spend_limit": "0"}, base=RunSettings())
    assert kept.spend_limit_tokens is None and any("spend_limit" in p for p in problems)


def test_the_preview_forecasts_the_limit_and_a_run_reaching_it_answers_from_what_it_read(run_db: Path) -> None:
    at = app({"level": "1", "seed": "3", "spend_limit": "60000"}).run()
    assert not at.exception
    assert at.number_input(key="spend_limit_tokens").value == 60_000
    assert any(w.startswith("The spending limit of 60,000 tokens will be reached: the map stops after about") for w in messages(at, "warning"))
    at = run_question(at, "What are the main themes?")
    assert not at.exception
    assert any(w.startswith("Stopped at the spending limit of 60,000 tokens after reading ") for w in messages(at, "warning"))
    assert at.query_params["spend_limit"] == "60000"
    record = RunStore(run_db).get(at.query_params["run"])
    assert record is not None and record.status == "partial" and record.result is not None
    assert record.result.diagnostics.stopped_at_limit == 60_000 and record.result.answer


def test_no_limit_by_default_and_a_roomy_one_says_it_is_within(run_db: Path) -> None:
    at = app().run()
    assert at.number_input(key="spend_limit_tokens").value == 0
    assert not any("spending limit" in w for w in messages(at, "warning") + [c.value for c in at.caption])
    at.number_input(key="spend_limit_tokens").set_value(10_000_000).run()
    assert any(c.value.startswith("Within the spending limit of 10,000,000 tokens") for c in at.caption)


def test_compare_shows_each_run_s_question_reserve_and_spending_limit():
    import asyncio

    from graphrag_app.compare.charts import settings_table
    from graphrag_core import GlobalSearchRequest, retrieve_global
    from graphrag_core.history.records import RunRecord
    from graphrag_core.llm.offline import OfflineChatModel

    from .factories import small_index

    records = []
    for update in ({}, {"question_reserve": 256, "spend_limit_tokens": 90_000}):
        events = []
        request = GlobalSearchRequest(query="What do hackers know?", community_level=1, seed=1, **update)
        asyncio.run(retrieve_global(small_index(), request, OfflineChatModel(), on_event=events.append))
        records.append(RunRecord.from_events(events, index_name="small"))
    rows = {row["setting"]: list(row.values())[1:] for row in settings_table(records)}
    assert rows["question reserve (prompt cache)"] == ["0", "256", True]
    assert rows["spending limit (tokens)"] == ["none", "90000", True]
