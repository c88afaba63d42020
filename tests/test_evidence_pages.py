"""The evidence panels of the Explore page under AppTest (offline model, no network)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrag_app.evidence import CALL_KEY
from graphrag_core.store import RunStore

from .conftest import APP_ROOT
from .test_app_pages import QUESTION, app, run_question

APP_DATA = APP_ROOT.parent / "shared" / "data" / "msgraphrag"


def _json_answer(text: str) -> object:
    try:
        return json.loads(text).get("answer", "").strip()
    except (ValueError, AttributeError):
        return None


def test_a_batch_opens_to_its_verbatim_prompt_raw_reply_and_reduce_fate(run_db: Path) -> None:
    at = run_question(app().run())
    assert not at.exception
    record = RunStore(run_db).get(at.query_params["run"])
    assert record is not None and record.result is not None
    at.selectbox(key=CALL_KEY).select("0").run()
    assert not at.exception
    codes = [c.value for c in at.code]
    assert any(f"---Question---\n{QUESTION}\n\n---Data---" in c for c in codes), "the user message, verbatim"
    assert any(c.startswith("---Role---") for c in codes), "the system message, verbatim"
    assert any('"usefulness"' in c for c in codes), "the raw reply"
    assert any("What the reduce did" in m.value for m in at.markdown)

    at.selectbox(key=CALL_KEY).select("reduce").run()
    codes = [c.value for c in at.code]
    assert any("[Usefulness: " in c and "Community IDs: " in c for c in codes), "the reduce prompt, verbatim"
    assert any(_json_answer(c) == record.result.answer for c in codes), "the reduce's raw reply"


def test_the_three_community_sets_are_tabs_named_the_same_everywhere(run_db: Path) -> None:
    at = run_question(app().run())
    labels = [t.label for t in at.tabs]
    assert any(label.startswith("Cited (") for label in labels)
    assert any(label.startswith("Behind (") for label in labels)
    assert any(label.startswith("Read but unused (") for label in labels)
    assert "Unsupported citations" in [m.label for m in at.metric]


def test_a_run_bundle_from_the_page_opens_in_another_history_and_says_when_the_index_differs(run_db: Path, tmp_path: Path, small_index_dir: Path) -> None:
    from graphrag_app.bundles import bundle_json, open_bundle
    from graphrag_app.settings import settings_from_mapping

    at = run_question(app().run())
    record = RunStore(run_db).get(at.query_params["run"])
    assert record is not None
    assert "Download run bundle" in [b.label for b in at.get("download_button")]
    other_db = tmp_path / "other.sqlite3"
    settings = settings_from_mapping({"GRAPHRAG_EXPLORER_DB": str(other_db)})
    data = bundle_json(record.replay(), index_key=record.index_name, app=settings)
    assert '"api_key"' not in data and json.loads(data)["model"] == record.model

    bundle, notices, errors = open_bundle(data.encode(), name="run.bundle.json", app=settings)
    assert errors == [] and bundle is not None
    assert notices == [f"Opened run {record.run_id[:8]} from run.bundle.json (recorded by {record.model}); no model was called."]
    reopened = RunStore(other_db).get(record.run_id)
    assert reopened is not None and reopened.events == record.events and reopened.result == record.result

    # the same run against another index: said, and still opened
    moved = data.replace(bundle.index.name, str(small_index_dir)).replace(str(bundle.index.path), str(small_index_dir))
    _, notices, errors = open_bundle(moved.encode(), name="moved.json", app=settings)
    assert errors == [] and any("is not the one this run used" in n for n in notices)

    _, _, errors = open_bundle(b'{"format": "x"}', name="bad.json", app=settings)
    assert errors == ["bad.json is not a run bundle (its format is not 'graphrag-explorer-run-bundle')."]


def _provenance(query_params: dict[str, str]):
    at = app().run()
    at.query_params.update(query_params)
    return at.switch_page("pages/provenance.py").run()


def _shown_community(at) -> str:
    return next(h.value for h in at.header if h.value.startswith("Community ")).split(":")[0].removeprefix("Community ")


def test_provenance_every_view_is_its_url_picker_links_and_back(run_db: Path) -> None:
    from graphrag_core.index import load_index
    from graphrag_core.samples import sample_path

    index = load_index(sample_path("jargon"))
    leaf = next(c for c in index.communities if c.parent_id is not None and index.parent(c.id).parent_id is not None)
    others = [c.id for c in index.communities if c.id != leaf.id][:2]
    at = _provenance({"index": "jargon", "community": leaf.id})
    assert _shown_community(at) == leaf.id
    for other in others:  # every pick, not only the first, changes the view and the URL
        at.selectbox(key="provenance_community").select(other).run()
        assert not at.exception
        assert _shown_community(at) == other and at.query_params["community"] == other

    # "Path to the root" links change the view and the URL
    at.selectbox(key="provenance_community").select(leaf.id).run()
    parent = index.parent(leaf.id)
    parent_button = next(b for b in at.button if b.key and b.key.startswith("goto-") and b.key.endswith(f"-{parent.id}"))
    parent_button.click().run()
    assert _shown_community(at) == parent.id and at.query_params["community"] == parent.id

    # Back (the browser restores the previous URL and reruns the page): the URL wins
    at.query_params["community"] = leaf.id
    at.run()
    assert _shown_community(at) == leaf.id


def test_back_to_explore_carries_the_run_in_a_fresh_session(run_db: Path) -> None:
    at = run_question(app().run())
    run_id = at.query_params["run"]
    record = RunStore(run_db).get(run_id)
    # another session that has Explore open with no run shown, then follows a citation link
    other = _provenance({"index": "jargon", "community": record.result.community_ids[0], "run": run_id})
    other.button(key="provenance_back").click().run()
    assert not other.exception
    assert other.session_state["graphrag_explorer"].view.run_id == run_id
    other.switch_page("pages/explore.py").run()  # AppTest does not follow st.switch_page by itself
    assert "Status: completed" in [t.value for t in other.text]
    assert any("](provenance?" in m.value for m in other.markdown), "the run's answer is shown again"


def test_repeated_source_chunks_are_shown_once_and_referenced(run_db: Path, tmp_path: Path) -> None:
    from graphrag_core.index import save_index
    from graphrag_core.models import Claim, Community, Document, Index, SourceChunk

    index = Index(
        communities=(Community(id="1", level=0, title="Root", summary="# Root report\\n\\nSee [Data: Reports (2); Entities (7)]."),
                     Community(id="2", level=1, parent_id="1", title="Leaf", summary="Plain prose.")),
        claims=(Claim(id="c1", community_id="2", subject="a", description="one", chunk_ids=("k1",)),
                Claim(id="c2", community_id="2", subject="b", description="two", chunk_ids=("k1",))),
        chunks=(SourceChunk(id="k1", document_id="d1", text="The one shared chunk text."),),
        documents=(Document(id="d1", title="Doc"),),
    )
    save_index(index, tmp_path / "shared")
    at = _provenance({"index": str(tmp_path / "shared"), "community": "1"})
    assert not at.exception
    assert [t.value for t in at.text].count("The one shared chunk text.") == 1
    assert any("shown above with claim c1" in c.value for c in at.caption)
    report = next(m.value for m in at.markdown if "Root report" in m.value)
    assert report.startswith("#### Root report") and "[2](provenance?index=" in report and "Entities (7)" in report


def test_a_microsoft_graphrag_report_links_its_entities_and_relationships(run_db: Path) -> None:
    source = APP_DATA / "v3-operation-dulce"
    if not source.is_dir():
        pytest.skip("the Microsoft GraphRAG outputs in ../shared are not here")
    from graphrag_core.citations import find_citations, references_of_kind
    from graphrag_core.index import load_index

    index = load_index(source)
    community = next(c for c in index.communities if "Entities (" in c.summary)
    cited = references_of_kind(find_citations(community.summary), "entity")
    entity = next(e for e in index.entities if e.short_id == cited[0])
    at = _provenance({"index": str(source), "community": community.id})
    assert not at.exception
    report = next(m.value for m in at.markdown if m.value.startswith("#### "))
    assert f'[{cited[0]}](#records-this-report-cites "Entity {cited[0]}: {entity.title}.' in report
    assert any(h.value.startswith("Records this report cites") for h in at.subheader)
    table = next(f.value for f in at.dataframe if "cited as" in f.value.columns)
    assert f"Entities ({cited[0]})" in list(table["cited as"]) and entity.title in list(table["record"])


def test_a_table_row_and_the_reduce_chart_open_their_calls_and_bring_them_into_view(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphrag_app import evidence

    session: dict[str, object] = {}
    monkeypatch.setattr(evidence.st, "session_state", session)
    session["table"] = {"selection": {"rows": [3], "columns": []}}
    evidence.table_selected("table")
    assert session[CALL_KEY] == "3"
    first = evidence.take_reveal()
    assert first is not None and evidence.take_reveal() is None, "brought into view once per opening"

    session["reduce-chart"] = {"selection": {"points": [{"x": 2, "y": 50}], "point_indices": [1]}}
    evidence.reduce_chart_selected("reduce-chart")
    assert session[CALL_KEY] == "reduce"
    second = evidence.take_reveal()
    assert second is not None and second != first, "a new opening scrolls again"

    session["map-chart"] = {"selection": {"points": [{"x": 5, "y": 40}]}}
    evidence.chart_selected("map-chart")
    assert session[CALL_KEY] == "5" and evidence.take_reveal() is None, "it opens right under the map chart"

    session["table"] = {"selection": {"rows": [], "columns": []}}  # a row unselected: the open call stays
    evidence.table_selected("table")
    assert session[CALL_KEY] == "5"


def test_the_finished_page_draws_once_per_script_run_and_scrolls_only_when_asked(run_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A finished page is idle: a script run draws the run once (no rerun of its own), and the
    scroll script appears only when the answer arrives or a call opened from below asks for it."""
    from graphrag_app import views

    at = run_question(app().run())
    drawn: list[str] = []
    render_run = views.render_run
    monkeypatch.setattr(views, "render_run", lambda *args, **kwargs: (drawn.append(kwargs["key"]), render_run(*args, **kwargs))[1])
    at = at.run()
    assert drawn == ["run"]
    assert not [h for h in at.get("html") if "scrollIntoView" in str(h.proto)]

    at.selectbox(key=CALL_KEY).select("2").run()  # the picker opens right above the call: no scroll
    assert not at.exception and drawn == ["run", "run"]
    assert not [h for h in at.get("html") if "scrollIntoView" in str(h.proto)]
