"""The search options of ``query`` and ``sweep`` are views of the settings model: every setting
of ``GlobalSearchRequest`` has its option, help, choices and default from the model."""

import pytest

from graphrag_app.urls import PARAM_NAMES
from graphrag_cli.commands.query import build_request
from graphrag_cli.main import build_parser
from graphrag_cli.options import GRID_SETTINGS, SHARED_SETTING_OPTIONS, setting_option
from graphrag_core.evaluation.conditions import CONDITION_ALIASES
from graphrag_core.request import GlobalSearchRequest, SearchSettings

SETTINGS = [name for name in GlobalSearchRequest.model_fields if name != "query"]


def _other_value(name: str):
    """A valid value of setting ``name`` other than its default, as the option's text."""
    field = GlobalSearchRequest.model_fields[name]
    choices = GlobalSearchRequest.choices(name)
    if name == "community_level":
        return 0, "0"
    if name == "seed":
        return 7, "7"
    if name == "spend_limit_tokens":  # no limit by default
        return 50_000, "50000"
    if choices is not None:
        value = next(c for c in choices if c != field.default)
        return value, value
    return field.default + 1, str(field.default + 1)


@pytest.mark.parametrize("name", SETTINGS)
def test_every_setting_has_a_query_option_that_sets_it(name):
    option = setting_option(name)
    field = GlobalSearchRequest.model_fields[name]
    if isinstance(field.default, bool):
        argv, expected = [option], not field.default
    else:
        expected, text = _other_value(name)
        argv = [option, text]
    args = build_parser().parse_args(["query", "jargon", "a question", *argv])
    request = build_request(args)
    assert getattr(request, name) == expected
    assert getattr(build_request(build_parser().parse_args(["query", "jargon", "a question"])), name) == (
        GlobalSearchRequest.front_end_default(name) if name not in ("seed", "spend_limit_tokens") else None
    )


def test_the_help_of_each_option_is_the_settings_description_bounds_and_default():
    query = next(a for a in build_parser()._actions if a.dest == "command").choices["query"]
    actions = {a.option_strings[0]: a for a in query._actions if a.option_strings}
    for name in SETTINGS:
        field = GlobalSearchRequest.model_fields[name]
        action = actions[setting_option(name)]
        assert field.description and field.description in action.help
        if not isinstance(field.default, bool) and field.default is not None:
            assert action.help.endswith(f"default {GlobalSearchRequest.front_end_default(name)})")
        if GlobalSearchRequest.choices(name) is not None and name != "community_level":
            assert tuple(action.choices) == GlobalSearchRequest.choices(name)
    assert actions["--rating-threshold"].help == "rating a community needs to be kept (0-5, default 1)"
    assert actions["--map-budget"].help == "map token budget (>= 1, default 8000)"
    assert actions["--no-claims"].help == "do not put supporting claims in the map texts"


def test_the_sweep_has_every_setting_but_its_grid_and_query_and_sweep_share_the_rest():
    sweep = next(a for a in build_parser()._actions if a.dest == "command").choices["sweep"]
    options = {s for a in sweep._actions for s in a.option_strings}
    for name in SETTINGS:
        assert (setting_option(name) in options) == (name not in GRID_SETTINGS)
    assert set(SHARED_SETTING_OPTIONS) == {
        n for n in SearchSettings.model_fields if n not in (*GRID_SETTINGS, "community_selection", "include_claims", "include_sources")
    }
    selection = next(a for a in sweep._actions if "--selection" in a.option_strings)
    assert selection.default == "level" and "--levels grid" in selection.help


def test_short_names_are_one_spelling_for_options_links_and_conditions():
    for name in SearchSettings.model_fields:
        short = SearchSettings.short_name(name)
        assert setting_option(name).removeprefix("--no-").removeprefix("--") == short.replace("_", "-")
        if short != name:
            assert CONDITION_ALIASES[short] == name
        if name != "fallback_max_level":  # fallback_level: the links made before short names
            assert PARAM_NAMES[name] == short


def test_the_settings_bounds_are_the_rules_with_the_spec_messages():
    from graphrag_core.errors import RequestValidationError
    from graphrag_core.request import check_setting

    checked = 0
    for name in SearchSettings.model_fields:
        low, high = SearchSettings.bounds(name)
        if low is None:
            continue
        check_setting(name, low)
        with pytest.raises(RequestValidationError, match=name):
            check_setting(name, low - 1)
        if high is not None:
            check_setting(name, high)
            with pytest.raises(RequestValidationError, match=f"^{name} must be an integer from {low} to {high}.$"):
                check_setting(name, high + 1)
        checked += 1
    assert checked == 11


def test_inspect_reads_its_map_text_options_from_the_settings_model():
    inspect = next(a for a in build_parser()._actions if a.dest == "command").choices["inspect"]
    actions = {a.option_strings[0]: a for a in inspect._actions if a.option_strings}
    assert tuple(actions["--tokenizer"].choices) == GlobalSearchRequest.choices("tokenizer")
    assert actions["--no-sources"].help == "do not " + GlobalSearchRequest.model_fields["include_sources"].description
    args = build_parser().parse_args(["inspect", "jargon", "--no-claims"])
    assert (args.tokenizer, args.no_claims, args.no_sources) == (None, True, False)  # None: the settings' default
