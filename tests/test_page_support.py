"""Explore's support check (issue 41): the "Check support" switch from the URL and back, the
verdict badges and the summary line under the answer (a run of the offline model; a stored run
whose answer holds a sentence copied from its community and a made-up one), the check kept with
the run and shown again when it is reopened, and the evidence dialog's highlighted quote."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_app.text import highlighted_markdown, verdict_badge
from graphrag_core.events import RunFinished
from graphrag_core.history import RunStore
from graphrag_core.index import load_index
from graphrag_core.samples import sample_path
from graphrag_core.sentences import split_sentences

from .apptest_support import app, run_question, stored_run

MADE_UP = "Hackers invented the telephone in 1876 to order pizza from Mars."
SUPPORTED = verdict_badge("supported")
UNSUPPORTED = verdict_badge("unsupported")


def _markdown(at) -> list[str]:
    return [m.value for m in at.markdown]


def _points(at) -> list:
    """The markdown elements that carry a verdict badge, in order."""
    return [m for m in at.markdown if "-badge[:material/" in m.value]


def _summary(at) -> list[str]:
    return [v for v in _markdown(at) if v.startswith("**Support check:**")]


def test_the_switch_is_read_from_the_url_and_kept_in_it(run_db: Path) -> None:
    at = app({"support": "1"}).run()
    assert not at.exception
    assert at.toggle(key="check_support").value is True
    assert at.query_params["support"] == ["1"] or at.query_params["support"] == "1"
    at.toggle(key="check_support").set_value(False).run()
    assert "support" not in at.query_params
    plain = app().run()
    assert plain.toggle(key="check_support").value is False and "support" not in plain.query_params


def test_a_run_with_the_switch_on_shows_each_points_verdict_and_the_summary_line(run_db: Path) -> None:
    at = run_question(app({"support": "1"}).run())
    assert not at.exception
    stored = RunStore(run_db).get(at.query_params["run"][0] if isinstance(at.query_params["run"], list) else at.query_params["run"])
    assert stored is not None and stored.support is not None, "the check is kept with the run"
    check = stored.support
    points = _points(at)
    assert len(points) == len(check.points) > 0
    assert all(p.value.startswith(SUPPORTED) for p in points)  # the offline model's answer copies its sources
    assert all(p.help and p.help.startswith("Supported.") for p in points), "each badge has its reason on hover"
    assert _summary(at) == [f"**Support check:** {len(points)} of {len(points)} points supported"]


def test_without_the_switch_nothing_is_checked(run_db: Path) -> None:
    at = run_question(app().run())
    assert not at.exception and not _points(at) and not _summary(at)
    run_id = at.query_params["run"]
    assert RunStore(run_db).get(run_id if isinstance(run_id, str) else run_id[0]).support is None


def _copied_and_made_up(run_db: Path) -> tuple[str, str, str]:
    """A stored run of the jargon sample whose answer is a sentence copied from a community's
    summary and a made-up one, both citing it: its id, the community and the copied sentence."""
    run_id = stored_run(run_db)
    store = RunStore(run_db)
    record = store.get(run_id)
    assert record is not None and record.result is not None
    index = load_index(sample_path("jargon"))
    cid = next(i for ids in record.result.diagnostics.batch_community_ids for i in ids)
    copied = split_sentences(index.community(cid).summary)[1]
    answer = f"- {copied} [Data: Reports ({cid})]\n- {MADE_UP} [Data: Reports ({cid})]"
    result = record.result.model_copy(update={"answer": answer})
    events = [e.model_copy(update={"result": result}) if isinstance(e, RunFinished) else e for e in record.events]
    store.save(record.model_copy(update={"result": result, "events": events}))
    return run_id, cid, copied


def test_a_copied_sentence_is_supported_and_a_made_up_one_not_and_a_reopened_run_shows_them(run_db: Path) -> None:
    run_id, _, copied = _copied_and_made_up(run_db)
    at = app({"run": run_id, "support": "1"}).run()
    assert not at.exception
    points = _points(at)
    assert [p.value.split("] ", 1)[0] + "]" for p in points] == [SUPPORTED, UNSUPPORTED]
    assert copied.split()[0] in points[0].value and "Mars" in points[1].value
    assert points[1].help.startswith("Not supported.")
    assert _summary(at) == ["**Support check:** 1 of 2 points supported"]
    stored = RunStore(run_db).get(run_id)
    assert stored is not None and stored.support is not None and stored.support.summary_line() == "1 of 2 points supported"
    reopened = app({"run": run_id}).run()  # the switch off: the kept check is shown, not made again
    assert reopened.toggle(key="check_support").value is False
    assert _summary(reopened) == ["**Support check:** 1 of 2 points supported"]


def test_the_evidence_dialog_highlights_the_supporting_quote_in_the_summary(run_db: Path) -> None:
    run_id, cid, copied = _copied_and_made_up(run_db)
    at = app({"run": run_id, "support": "1"}).run()
    at.session_state["evidence_community"] = cid
    at.run()
    assert not at.exception
    shown = _markdown(at)
    assert "**Support check** of the points citing it" in shown
    highlighted = [v for v in shown if ":yellow-background[" in v]
    assert highlighted, "the quote is highlighted in its unit's text"
    index = load_index(sample_path("jargon"))
    summary = index.community(cid).summary
    start = summary.index(copied)
    assert highlighted[0] == highlighted_markdown(summary, start, start + len(copied))
    assert [c.value for c in at.caption if c.value.startswith("Summary of community")] == [f"Summary of community {cid}"]
    assert any(v.startswith(UNSUPPORTED) for v in shown), "the made-up point is listed with its badge"


@pytest.mark.parametrize(
    "text, start, end, expected",
    [
        ("Alpha *beta*. Gamma [x] delta.", 14, 30, r"Alpha \*beta\*. :yellow-background[**Gamma \[x\] delta.**]"),
        ("one\n# two three", 10, 15, r"one  " + "\n" + r"\# two :yellow-background[**three**]"),
        (":red[x] <b>quote</b> end", 8, 20, r":red\[x\] :yellow-background[**\<b\>quote\</b\>**] end"),
    ],
)
def test_a_highlight_escapes_the_units_text_around_and_inside_it(text: str, start: int, end: int, expected: str) -> None:
    assert highlighted_markdown(text, start, end) == expected


def test_a_long_units_text_is_cut_around_the_quote() -> None:
    text = "a" * 1000 + " the quote " + "b" * 1000
    start = text.index("the quote")
    shown = highlighted_markdown(text, start, start + len("the quote"), context=10)
    assert shown.startswith("…") and shown.endswith("…") and "**the quote**" in shown and len(shown) < 80


def test_evaluate_shows_each_conditions_supported_share_beside_the_win_rates(run_db: Path) -> None:
    from .apptest_support import page

    at = page("evaluate", timeout=120).run()
    at.selectbox(key="eval_index").set_value("zh-tea").run()
    at.text_input(key="eval_seeds").input("1")
    at.multiselect(key="eval_criteria").set_value(["directness"])
    at.run()
    at.button(key="eval_start").click().run()
    assert not at.exception, at.exception
    figures = {m.label: m.value for m in at.metric}
    shares = [c.value for c in at.caption if " points supported · " in c.value]
    assert "**Supported share** per condition" in _markdown(at)
    assert {"C0", "leaf"} <= set(figures), figures
    assert len(shares) == 2
    for label, caption in zip(("C0", "leaf"), shares):
        supported, points = (int(n.replace(",", "")) for n in caption.split(" points supported")[0].split(" of "))
        assert points > 0 and figures[label] == f"{100 * supported / points:.1f}%"
    assert "eval_support_csv" in [b.key for b in at.get("download_button")]
