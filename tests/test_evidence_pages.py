"""The evidence panels of the Explore page under AppTest (offline model, no network)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrag_app.explore.inspector import CALL_KEY
from graphrag_core.history import RunStore

from . import APP_ROOT
from .apptest_support import QUESTION, app, provenance, run_question

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
    # the app's question reserve (256) sends the data first and the question last (a cacheable prefix)
    assert any(c.startswith("---Data---\n") and c.endswith(f"\n\n---Question---\n{QUESTION}") for c in codes), "the user message, verbatim"
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
    from graphrag_app.panels.bundles import bundle_json, open_bundle
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


def _shown_community(at) -> str:
    return next(h.value for h in at.header if h.value.startswith("Community ")).split(":")[0].removeprefix("Community ")


def test_provenance_every_view_is_its_url_picker_links_and_back(run_db: Path) -> None:
    from graphrag_core.index import load_index
    from graphrag_core.samples import sample_path

    index = load_index(sample_path("jargon"))
    leaf = next(c for c in index.communities if c.parent_id is not None and index.parent(c.id).parent_id is not None)
    others = [c.id for c in index.communities if c.id != leaf.id][:2]
    at = provenance({"index": "jargon", "community": leaf.id})
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
    other = provenance({"index": "jargon", "community": record.result.community_ids[0], "run": run_id})
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
    at = provenance({"index": str(tmp_path / "shared"), "community": "1"})
    assert not at.exception
    assert [t.value for t in at.text].count("The one shared chunk text.") == 1
    assert any("shown above with claim c1" in c.value for c in at.caption)
    report = next(m.value for m in at.markdown if "Root report" in m.value)
    assert report.startswith("#### Root report") and "[2](provenance?index=" in report and "Entities (7)" in report


MS_VERSIONS = ("v1-operation-dulce", "v2-christmas-carol", "v3-operation-dulce")


def _words(text: str) -> str:
    """Text compared by its words (``st.text`` drops the spaces of blank lines)."""
    return " ".join(text.split())


def _ms_source(version: str) -> Path:
    source = APP_DATA / version
    if not source.is_dir():
        pytest.skip(f"the Microsoft GraphRAG output {version} in ../shared is not here")
    return source


@pytest.mark.parametrize("version", MS_VERSIONS)
def test_a_microsoft_graphrag_report_links_its_entities_and_relationships_to_their_views(run_db: Path, version: str) -> None:
    from graphrag_core.citations import find_citations, references_of_kind
    from graphrag_core.index import load_index
    from graphrag_app.urls import record_url

    source = _ms_source(version)
    index = load_index(source)
    community = next(c for c in index.communities if "Entities (" in c.summary and "Relationships (" in c.summary)
    citations = find_citations(community.summary)
    entity_ref = references_of_kind(citations, "entity")[0]
    rel_ref = references_of_kind(citations, "relationship")[0]
    entity = next(e for e in index.entities if e.short_id == entity_ref)
    at = provenance({"index": str(source), "community": community.id})
    assert not at.exception
    report = next(m.value for m in at.markdown if m.value.startswith("#### "))
    # each reference is a link to its record's view, the record on hover
    assert f'[{entity_ref}]({record_url(str(source), "entity", entity_ref)} "Entity {entity_ref}: {entity.title}.' in report
    assert f"[{rel_ref}]({record_url(str(source), 'relationship', rel_ref)} \"Relationship {rel_ref}: " in report
    if any(c.more for c in citations):  # "+more" leads to the community's records
        assert "[+more](#records-of-this-community" in report
    table = next(f.value for f in at.dataframe if "cited by the report" in f.value.columns)
    assert f"Entity {entity_ref}" in list(table["record"])
    assert record_url(str(source), "entity", entity_ref) in list(table["view"])


@pytest.mark.parametrize("version", MS_VERSIONS)
def test_an_entity_view_shows_its_description_communities_and_source_text(run_db: Path, version: str) -> None:
    from graphrag_core.index import load_index

    source = _ms_source(version)
    index = load_index(source)
    entity = next(e for e in index.entities if e.community_ids and e.chunk_ids and e.description)
    at = provenance({"index": str(source), "entity": entity.short_id})
    assert not at.exception
    assert at.header[0].value == f"Entity {entity.short_id}: {entity.title}"
    assert entity.description in [t.value for t in at.text]
    community_buttons = [b for b in at.button if b.key and b.key.startswith("record-community-")]
    assert [b.key.removeprefix("record-community-") for b in community_buttons] == [c for c in entity.community_ids if index.has_community(c)]
    chunk = index.chunk(entity.chunk_ids[0])
    assert _words(chunk.text) in [_words(t.value) for t in at.text], "the source text unit, in full"
    assert any(h.value.startswith(f"Source text units ({len(entity.chunk_ids)})") for h in at.subheader)

    # a community link changes the view and the URL (in this tab: Back returns)
    community_buttons[0].click().run()
    assert not at.exception
    assert at.query_params.get("community") == entity.community_ids[0] and "entity" not in at.query_params
    assert _shown_community(at) == entity.community_ids[0]
    # Back: the browser restores the entity's URL
    at.query_params.clear()
    at.query_params.update({"index": str(source), "entity": entity.short_id})
    at.run()
    assert at.header[0].value.startswith(f"Entity {entity.short_id}:")


@pytest.mark.parametrize("version", MS_VERSIONS)
def test_a_relationship_view_links_its_ends_communities_and_sources(run_db: Path, version: str) -> None:
    from graphrag_core.index import load_index

    source = _ms_source(version)
    index = load_index(source)
    titles = {e.title for e in index.entities}
    rel = next(r for r in index.relationships if r.community_ids and r.chunk_ids and r.source in titles)
    at = provenance({"index": str(source), "relationship": rel.short_id})
    assert not at.exception
    assert at.header[0].value == f"Relationship {rel.short_id}: {rel.source} → {rel.target}"
    assert rel.description in [t.value for t in at.text]
    assert _words(index.chunk(rel.chunk_ids[0]).text) in [_words(t.value) for t in at.text]
    assert {b.key.removeprefix("record-community-") for b in at.button if b.key and b.key.startswith("record-community-")} == set(rel.community_ids)
    at.button(key="record-end-source").click().run()
    end = next(e for e in index.entities if e.title == rel.source)
    assert at.query_params.get("entity") == end.short_id
    assert at.header[0].value == f"Entity {end.short_id}: {end.title}"


def test_sources_and_claims_references_link_and_an_unknown_record_is_said(run_db: Path, tmp_path: Path) -> None:
    from graphrag_core.index import save_index
    from graphrag_core.models import Claim, Community, Document, Entity, Index, SourceChunk
    from graphrag_app.urls import record_url

    index = Index(
        communities=(Community(id="1", level=0, title="Root", summary="# Root\n\nAda wrote it [Data: Sources (4); Claims (9, +more)]. Also [Data: Entities (77)].",
                               entity_ids=("e1",)),),
        claims=(Claim(id="c1", community_id="1", subject="ADA", description="Ada wrote the notes.", chunk_ids=("k1",), short_id="9"),),
        chunks=(SourceChunk(id="k1", document_id="d1", text="Ada Lovelace wrote the notes on the engine.", short_id="4"),),
        documents=(Document(id="d1", title="Notes"),),
        entities=(Entity(id="e1", title="ADA", description="A writer.", community_ids=("1",), chunk_ids=("k1",), short_id="0"),),
    )
    folder = tmp_path / "records"
    save_index(index, folder)
    at = provenance({"index": str(folder), "community": "1"})
    assert not at.exception
    report = next(m.value for m in at.markdown if m.value.startswith("#### "))
    assert f"[4]({record_url(str(folder), 'source', '4')} " in report
    assert f"[9]({record_url(str(folder), 'claim', '9')} " in report
    assert "(#records-of-this-community" in report
    assert "Entity 77: not in the index" in report

    source = provenance({"index": str(folder), "source": "4"})
    assert source.header[0].value == "Source 4"
    assert "Ada Lovelace wrote the notes on the engine." in [t.value for t in source.text]
    assert [list(f.value["record"]) for f in source.dataframe][:1] == [["Entity 0"]]

    claim = provenance({"index": str(folder), "claim": "9"})
    assert claim.header[0].value == "Claim 9: ADA"
    assert "Ada wrote the notes." in [t.value for t in claim.text]

    missing = provenance({"index": str(folder), "entity": "77"})
    assert [e.value for e in missing.error] == [f"No entity 77 in the index {folder}."]


def test_a_bundle_from_another_machine_opens_against_the_index_here_of_the_same_name(run_db: Path, tmp_path: Path) -> None:
    from graphrag_app.panels.bundles import bundle_json, open_bundle
    from graphrag_app.compare.charts import index_key_for
    from graphrag_app.settings import settings_from_mapping

    at = run_question(app().run())
    record = RunStore(run_db).get(at.query_params["run"])
    assert record is not None
    data = json.loads(bundle_json(record.replay(), index_key=record.index_name, app=settings_from_mapping({})))
    data["index"]["path"] = "/home/someone-else/site-packages/graphrag_core/sample_data/jargon"  # where it lay there
    other_db = tmp_path / "other.sqlite3"
    settings = settings_from_mapping({"GRAPHRAG_EXPLORER_DB": str(other_db)})
    bundle, notices, errors = open_bundle(json.dumps(data).encode(), name="theirs.json", app=settings)
    assert errors == [] and bundle is not None
    assert notices == [f"Opened run {record.run_id[:8]} from theirs.json (recorded by {record.model}); no model was called."], "the same index: nothing to say"
    reopened = RunStore(other_db).get(record.run_id)
    assert reopened is not None and index_key_for(reopened) == "jargon", "its links open the sample here, not a path that is not here"

    # an index that is nowhere here: said, and the run is still opened from the bundle alone
    data["index"].update(name="/home/someone-else/lost-index", path="/home/someone-else/lost-index")
    _, notices, errors = open_bundle(json.dumps(data).encode(), name="lost.json", app=settings)
    assert errors == [] and notices[0].startswith("The run's index (/home/someone-else/lost-index) is not available here")
    assert RunStore(other_db).get(record.run_id).result == record.result


def test_long_source_chunks_of_claims_show_the_passage_naming_the_subject_once(run_db: Path) -> None:
    from graphrag_core.index import load_index
    from graphrag_app.urls import record_url

    source = _ms_source("v3-operation-dulce")
    index = load_index(source)
    community = next(c for c in index.communities if index.leaf_claims(c.id))
    claim = index.leaf_claims(community.id)[0]
    chunk = index.claim_chunks(claim)[0]
    at = provenance({"index": str(source), "community": community.id})
    assert not at.exception
    texts = [_words(t.value) for t in at.text]
    assert texts.count(_words(chunk.text)) == 1, "the whole chunk once, however many claims cite it"
    assert any(t.startswith("…") and claim.subject.lower() in t.lower() and len(t) < 800 for t in texts), "the passage naming the subject"
    label = f"Source chunk {chunk.short_id} · document {index.document(chunk.document_id).title}"
    captions = [c.value for c in at.caption]
    assert any(c.startswith(label) and record_url(str(source), "source", chunk.short_id) in c for c in captions)
    assert not any(chunk.id in c for c in captions), "no 128-character hash in the captions"


def test_provenance_names_the_communitys_set_in_the_run_as_explore_does(run_db: Path) -> None:
    from graphrag_core.citations import community_sets

    at = run_question(app().run())
    run_id = at.query_params["run"]
    record = RunStore(run_db).get(run_id)
    sets = community_sets(record.result)
    behind_only = next(c for c in sets.behind if c not in sets.cited)
    cited = next(c for c in sets.cited if c in sets.behind)

    view = provenance({"index": "jargon", "community": behind_only, "run": run_id})
    assert "**This community in the run:** behind the answer" in [m.value for m in view.markdown]
    assert "Cited in the final answer." not in [c.value for c in view.caption], "behind is not cited"

    view = provenance({"index": "jargon", "community": cited, "run": run_id})
    assert "**This community in the run:** cited, behind the answer" in [m.value for m in view.markdown]
    assert "Cited in the final answer." in [c.value for c in view.caption]
    if sets.read_but_unused:
        unused = sets.read_but_unused[0]
        view = provenance({"index": "jargon", "community": unused.community_id, "run": run_id})
        assert f"**This community in the run:** read but unused (best score {unused.best_score:g})" in [m.value for m in view.markdown]


def test_a_stale_level_label_from_the_browser_runs_the_level_it_names() -> None:
    """Streamlit 1.67 hands back a selectbox's label when its text changed since it was drawn (the
    level labels gain their token counts once ready); a click on Run right then sent the label on
    and failed with "invalid literal for int()" (seen in test_browser_evidence on a cold server)."""
    from streamlit.testing.v1 import AppTest

    from graphrag_app.urls import level_option

    assert level_option("leaf (262 summaries)") == "leaf" and level_option("level 1 · ≈50k tokens · 70 summaries") == "1"
    assert level_option("2") == "2" and level_option("leaf") == "leaf"

    def script() -> None:  # what Run's callback does before the page draws its widgets again
        import streamlit as st

        from graphrag_app.explore.state import read_choices
        from graphrag_app.urls import RunSettings

        st.session_state["community_level"] = "level 1 (70 summaries)"
        st.text(str(read_choices(RunSettings(index="jargon")).settings.to_request(query="What is a hacker?").community_level))

    at = AppTest.from_function(script).run()
    assert not at.exception and [t.value for t in at.text] == ["1"]


def test_a_table_row_and_the_reduce_chart_open_their_calls_and_bring_them_into_view(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphrag_app.explore import inspector as evidence

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
    from graphrag_app.explore import run_view as views

    at = run_question(app().run())
    drawn: list[str] = []
    draw_run = views.draw_run
    monkeypatch.setattr(views, "draw_run", lambda *args, **kwargs: (drawn.append(kwargs["key"]), draw_run(*args, **kwargs))[1])
    at = at.run()
    assert drawn == ["run"]
    assert not [h for h in at.get("html") if "scrollIntoView" in str(h.proto)]

    at.selectbox(key=CALL_KEY).select("2").run()  # the picker opens right above the call: no scroll
    assert not at.exception and drawn == ["run", "run"]
    assert not [h for h in at.get("html") if "scrollIntoView" in str(h.proto)]


def test_a_reports_more_leads_somewhere_when_the_community_has_no_records(run_db: Path, tmp_path: Path) -> None:
    from graphrag_core.index import save_index
    from graphrag_core.models import Community, Index

    index = Index(communities=(Community(id="1", level=0, title="Root", summary="# Root\n\nAda wrote it [Data: Reports (1, +more)]."),))
    folder = tmp_path / "no-records"
    save_index(index, folder)
    at = provenance({"index": str(folder), "community": "1"})
    assert not at.exception
    report = next(m.value for m in at.markdown if m.value.startswith("#### "))
    assert "(#records-of-this-community" in report
    assert "Entities and relationships of this community (0)" in [h.value for h in at.subheader]
    assert "The index holds no entity or relationship records for this community." in [c.value for c in at.caption]


def test_cited_in_the_final_answer_holds_only_the_final_answers_sentences(run_db: Path, small_index_dir: Path) -> None:
    """A map answer that cites the community too is shown under its batch, labelled as a map
    answer, never under "Cited in the final answer." (community 87 of the issue)."""
    import asyncio

    from graphrag_app.panels.evidence import MAP_ANSWER_LABEL
    from graphrag_core import GlobalSearchRequest, ScriptedChatModel, retrieve_global
    from graphrag_core.history import RunRecord
    from graphrag_core.index import load_index

    final = "Wizards know systems [Communities: 3]. Machines are separate [Communities: 5].\n\n- Hackers explore [Communities: 3, 4]."

    def script(request):  # type: ignore[no-untyped-def]
        if request.purpose == "reduce":
            return json.dumps({"answer": final})
        return json.dumps({"answer": "Map-only remark about wizards [Communities: 3]. Another map remark [Communities: 3].", "usefulness": 60})

    events: list = []
    request = GlobalSearchRequest(query="Who are the wizards?", community_level="leaf", seed=1)
    asyncio.run(retrieve_global(load_index(small_index_dir), request, ScriptedChatModel(script), on_event=events.append))
    record = RunRecord.from_events(events, index_name="small", index_path=str(small_index_dir))
    RunStore(run_db).save(record)

    view = provenance({"index": str(small_index_dir), "community": "3", "run": record.run_id})
    assert not view.exception
    captions = [c.value for c in view.caption]
    assert "Cited in the final answer." in captions
    assert "The final answer cites this community 2 times, in 2 sentences." in captions
    cited = [m.value for m in view.markdown if "Wizards know systems" in m.value]
    assert len(cited) == 1 and "Hackers explore" in cited[0]
    assert "Map-only" not in cited[0] and "Machines are separate" not in cited[0]
    batch = next(b for b in record.replay().batches if "3" in b.community_ids)
    assert MAP_ANSWER_LABEL.format(index=batch.index) in captions  # the map answer is labelled as one
    assert any("Map-only remark" in m.value for m in view.markdown)

    other = provenance({"index": str(small_index_dir), "community": "5", "run": record.run_id})
    assert "The final answer cites this community once, in 1 sentence." in [c.value for c in other.caption]
