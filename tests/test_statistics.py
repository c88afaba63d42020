"""Index statistics per level: one engine function for the command line and the app."""

from graphrag_app.index_browser import charts as ic
from graphrag_core.models import Community, Index
from graphrag_core.statistics import index_statistics, level_statistics
from graphrag_core.tokens import HeuristicTokenizer, estimate_tokens
from tests.factories import small_index


def test_the_app_and_the_command_line_read_the_same_figures():
    index = small_index()
    engine = level_statistics(index)
    assert ic.level_stats(index) == engine
    report = index_statistics(index, tokenizer=HeuristicTokenizer())
    by_level = {row["level"]: row for row in report["levels"]}
    assert [row["level"] for row in report["levels"]] == ["leaf", 0, 1, 2]
    for entry in engine:
        assert by_level[entry.level] == entry.model_dump()


def test_summaries_are_counted_as_the_search_sends_them():
    index = Index(communities=[Community(id="r", level=0, summary="   padded summary   \n\n\n")])
    (level0, leaf) = level_statistics(index)
    assert level0.summary_tokens == leaf.summary_tokens == estimate_tokens("padded summary")
    assert level0.map_text_tokens == estimate_tokens(index.map_text("r"))
