"""The shared words and parsers of every front end: levels, statuses, typed lists, the model choice."""

from __future__ import annotations

import pytest

from graphrag_core.inputs import InputError, parse_ints
from graphrag_core.levels import DYNAMIC, LEAF, LevelError, level_label, level_text, parse_level
from graphrag_core.llm.settings import ModelChoice, ModelSettings, resolve_model_settings
from graphrag_core.status import RunStatus, status_word


@pytest.mark.parametrize(
    ("text", "level"),
    [("leaf", LEAF), (" Leaf ", LEAF), ("dynamic", DYNAMIC), ("2", 2), ("level 2", 2), ("C3", 3), (0, 0)],
)
def test_a_level_is_parsed_from_what_people_type(text: str | int, level: object) -> None:
    assert parse_level(text) == level


@pytest.mark.parametrize("text", ["", "lvl", "-1", "1.5", -1, True])
def test_text_that_names_no_level_is_refused_with_its_words(text: object) -> None:
    with pytest.raises(LevelError, match="is not a level: use leaf, dynamic or an integer >= 0"):
        parse_level(text)  # type: ignore[arg-type]


@pytest.mark.parametrize("level", [LEAF, DYNAMIC, 0, 12])
def test_a_level_survives_its_text(level: object) -> None:
    assert parse_level(level_text(level)) == level  # type: ignore[arg-type]


def test_level_labels_read_as_words() -> None:
    assert [level_label(x) for x in (LEAF, DYNAMIC, 1)] == ["leaf", "dynamic", "level 1"]


def test_typed_lists_accept_commas_and_blanks_and_name_the_box_when_wrong() -> None:
    assert parse_ints("1, 2 3", what="Seeds") == [1, 2, 3]
    with pytest.raises(InputError, match=r"^Seeds: 'x' is not a whole number\.$"):
        parse_ints("1 x", what="Seeds")
    with pytest.raises(InputError, match=r"^Budgets: 0 is below 1\.$"):
        parse_ints("0", what="Budgets", minimum=1)


def test_a_stopped_run_reads_stopped_and_unknown_values_pass_through() -> None:
    assert RunStatus("cancelled").word == "stopped" and status_word("cancelled") == "stopped"
    assert RunStatus.NO_RESULTS.word == "no results"
    assert status_word("something-new") == "something-new"
    assert [s for s in RunStatus if s.answered] == [RunStatus.COMPLETED, RunStatus.PARTIAL]


CONFIGURED = {"GRAPHRAG_LLM_BASE_URL": "http://127.0.0.1:9/v1", "GRAPHRAG_LLM_API_KEY": "sk-configured", "GRAPHRAG_LLM_MODEL": "m"}


def test_no_choice_keeps_the_configured_model() -> None:
    configured = ModelSettings.from_mapping(CONFIGURED)
    assert resolve_model_settings(configured) == configured


def test_the_configured_key_never_goes_to_another_endpoint() -> None:
    configured = ModelSettings.from_mapping(CONFIGURED)
    elsewhere = resolve_model_settings(configured, ModelChoice(base_url="http://127.0.0.2:9/v1"))
    assert elsewhere.base_url == "http://127.0.0.2:9/v1" and elsewhere.api_key is None
    typed = resolve_model_settings(configured, ModelChoice(base_url="http://127.0.0.2:9/v1", api_key="sk-typed"))
    assert typed.api_key is not None and typed.api_key.get_secret_value() == "sk-typed"
    renamed = resolve_model_settings(configured, ModelChoice(model="other"))
    assert renamed.model == "other" and renamed.api_key is not None  # same endpoint: the configured key


def test_an_offline_choice_sets_its_pace_around_the_chosen_mean() -> None:
    configured = ModelSettings.from_mapping({"GRAPHRAG_LLM_OFFLINE_LATENCY": "1,2"})
    assert resolve_model_settings(configured, ModelChoice(provider="offline")).offline_latency == (1.0, 2.0)
    paced = resolve_model_settings(configured, ModelChoice(provider="offline", offline_latency_s=0.4))
    assert paced.provider == "offline" and paced.offline_latency == pytest.approx((0.2, 0.6))
    assert resolve_model_settings(configured, ModelChoice(offline_latency_s=0)).offline_latency is None
