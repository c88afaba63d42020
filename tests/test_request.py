import pytest

from graphrag_core import (
    BudgetError,
    GlobalSearchRequest,
    RequestValidationError,
    SearchDefaults,
)


def test_defaults_and_prompt_budgets():
    request = GlobalSearchRequest(query="  What are the themes?  ")
    assert request.query == "What are the themes?"
    assert request.community_level == "leaf"
    assert (request.map_token_budget, request.reduce_token_budget) == (8000, 8000)
    assert (request.map_output_reserve, request.reduce_output_reserve) == (512, 1024)
    assert request.map_concurrency == 4
    assert request.seed is None
    assert request.reduce_strategy == "skip"
    assert request.map_prompt_budget == 7488
    assert request.reduce_prompt_budget == 6976


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query(query):
    with pytest.raises(ValueError) as info:
        GlobalSearchRequest(query=query)
    assert str(info.value) == "Global retrieval query must not be empty."
    assert isinstance(info.value, RequestValidationError)


@pytest.mark.parametrize("level", [-1, 1.5, "1", True, "root", None])
def test_bad_community_level(level):
    with pytest.raises(ValueError, match='^community_level must be "leaf" or a non-negative integer.$'):
        GlobalSearchRequest(query="q", community_level=level)


@pytest.mark.parametrize("field", ["map_token_budget", "reduce_token_budget", "map_concurrency"])
@pytest.mark.parametrize("value", [0, -5, 1.5, "100", True, None])
def test_positive_integers(field, value):
    with pytest.raises(ValueError) as info:
        GlobalSearchRequest(query="q", **{field: value})
    assert str(info.value) == f"{field} must be a positive integer."


@pytest.mark.parametrize("field", ["map_output_reserve", "reduce_output_reserve"])
@pytest.mark.parametrize("value", [-1, 0.5, "0", False])
def test_non_negative_reserves(field, value):
    with pytest.raises(ValueError) as info:
        GlobalSearchRequest(query="q", **{field: value})
    assert str(info.value) == f"{field} must be a non-negative integer."


def test_zero_reserves_are_allowed():
    request = GlobalSearchRequest(query="q", map_output_reserve=0, reduce_output_reserve=0)
    assert request.map_prompt_budget == 8000


@pytest.mark.parametrize(
    "fields",
    [
        {"map_token_budget": 512},
        {"map_token_budget": 100, "map_output_reserve": 200},
        {"reduce_token_budget": 1024},
    ],
)
def test_budgets_must_exceed_reserves(fields):
    with pytest.raises(BudgetError) as info:
        GlobalSearchRequest(query="q", **fields)
    assert str(info.value) == "Token budgets must exceed their output reserves."
    assert isinstance(info.value, ValueError)


def test_values_come_from_request_then_defaults_then_table():
    defaults = SearchDefaults(map_concurrency=9, map_token_budget=4000)
    request = GlobalSearchRequest.with_defaults("q", defaults, map_token_budget=3000, seed=7)
    assert request.map_token_budget == 3000  # request
    assert request.map_concurrency == 9  # configured default
    assert request.reduce_token_budget == 8000  # table
    assert request.seed == 7


def test_request_is_frozen_and_round_trips_json():
    request = GlobalSearchRequest(query="q", community_level=2, seed=3, reduce_strategy="stop")
    assert GlobalSearchRequest.model_validate_json(request.model_dump_json()) == request
    with pytest.raises(Exception):
        request.seed = 4


def test_configured_defaults_follow_the_request_rules():
    with pytest.raises(RequestValidationError, match="^map_concurrency must be a positive integer.$"):
        SearchDefaults(map_concurrency=0, tokenizer="nope")
    with pytest.raises(RequestValidationError, match="^tokenizer must be one of "):
        SearchDefaults(tokenizer="nope")
    with pytest.raises(BudgetError, match="^Token budgets must exceed their output reserves.$"):
        SearchDefaults(map_token_budget=512)
    with pytest.raises(RequestValidationError, match='^community_level must be "leaf" or a non-negative integer.$'):
        SearchDefaults(community_level=True)


def test_request_and_defaults_share_one_settings_declaration():
    from graphrag_core.request import SEARCH_SETTING_NAMES, SearchSettings

    assert issubclass(SearchDefaults, SearchSettings) and issubclass(GlobalSearchRequest, SearchSettings)
    assert set(GlobalSearchRequest.model_fields) == {*SEARCH_SETTING_NAMES, "query", "seed", "spend_limit_tokens"}
    assert SearchSettings.ui_max("map_token_budget") > 8000 and SearchSettings.ui_max("tokenizer") is None


# -- the seed: a search setting, one range where people give one -----------------------------------


def test_the_seed_is_a_search_setting_with_the_range_people_give_seeds_in():
    from graphrag_core.request import SEED_MAX, SEED_MIN, SearchSettings, check_seed

    assert "seed" in SearchSettings.model_fields and SearchSettings(seed=7).seed == 7 and SearchSettings().seed is None
    assert GlobalSearchRequest(query="q", **SearchSettings(seed=7).model_dump()).seed == 7
    assert (SearchSettings.ui_min("seed"), SearchSettings.ui_max("seed")) == (SEED_MIN, SEED_MAX) == (0, 2**31 - 1)
    assert check_seed(0) == 0 and check_seed(SEED_MAX) == SEED_MAX and check_seed(None) is None
    for typed in (-1, SEED_MAX + 1, 2**40):
        with pytest.raises(RequestValidationError, match=rf"^seed must be between 0 and {SEED_MAX}, not {typed}\.$"):
            check_seed(typed)


def test_the_engine_draws_its_seeds_in_that_range(monkeypatch):
    import random

    from graphrag_core.request import SEED_MAX, SEED_MIN
    from graphrag_core.search import draw_seed

    monkeypatch.setattr(random.SystemRandom, "randint", lambda self, low, high: (low, high))
    assert draw_seed() == (SEED_MIN, SEED_MAX)


def test_a_stored_seed_outside_the_range_still_reads_back():
    """Runs and bundles recorded before the range was one keep their seeds: only what people type
    is held to it, not what a request read back holds."""
    for stored in (-5, 2**40, 2**63 - 1):
        request = GlobalSearchRequest.model_validate_json(GlobalSearchRequest(query="q", seed=stored).model_dump_json())
        assert request.seed == stored


def test_answer_keys_stay_the_ones_experiments_stored_before_the_seed_became_a_setting():
    """An experiment's rerun finds its answers by these keys; they were computed (on the code
    before the move) from the request's JSON with the seed after the question."""
    from graphrag_core.evaluation.keys import answer_key

    class Model:
        identity = "offline-test"

    request = GlobalSearchRequest(query="Wer sind die Zauberer? 茶", seed=7, community_level=1, map_token_budget=6000)
    assert answer_key("fp", Model(), request) == "e0babcb6a6e970c52d14c0d3c2e8314764f0080efa9a6d12302cc6e55abe6619"
    assert answer_key("fp", Model(), request.model_copy(update={"method": "text"})) == "88fd2bc05d2c0dcfb9478533a630ce521c2bbd0fe8cf225d63dcb2c0a64a351b"
    vector = GlobalSearchRequest(query="q", method="vector", seed=None, spend_limit_tokens=5000)
    assert answer_key("fp", Model(), vector, ranker="bm25") == "d4026b9597997e434e6445e7ef65c73444ae61273f4f981b2c1582e7e931a3fd"
