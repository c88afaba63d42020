import re

from graphrag_app.text import community_linker, demote_headings, link, linked_markdown, safe_markdown


def test_safe_markdown_keeps_structure_and_neutralises_html_links_images_and_maths():
    text = "# Title\n- **bold** point\n<script>alert(1)</script> ![x](http://evil/x.png) [click](http://evil) $x$ :red[hi]"
    out = safe_markdown(text)
    assert out.startswith("# Title\n- **bold** point\n")
    assert re.search(r"(?<!\\)[<\[\]$]", out) is None  # every <, [, ] and $ is escaped
    assert "\\<script>" in out
    assert "![x](" not in out and "!\\[x\\](http://evil/x.png)" in out
    assert "[click](" not in out
    assert "\\$x\\$" in out
    assert ":red[" not in out


def test_link_escapes_its_label_and_title():
    assert link("12", "provenance?community=12", title='Say "hi"') == "[12](provenance?community=12 \"Say 'hi'\")"
    assert link("a]b", "u") == "[a\\]b](u)"


def _linker(unsupported=None):
    unsupported = unsupported or {}
    return community_linker(
        lambda cid: f"provenance?community={cid}&run=r1",
        title_for=lambda cid: {"3": "Wizards", "5": "Kludges"}.get(cid),
        unsupported=unsupported.get,
    )


def test_every_cited_community_becomes_a_link_with_its_title():
    text = "Wizards know <b>systems</b> [Communities: 3, 5]. Kludges [Data: Reports (5, +more)]."
    out = linked_markdown(text, _linker())
    assert '[3](provenance?community=3&run=r1 "Community 3: Wizards")' in out
    assert out.count('[5](provenance?community=5&run=r1 "Community 5: Kludges")') == 2
    assert "\\[Communities: [3](" in out and "+more)\\]" in out
    assert "\\<b>systems\\</b>" in out


def test_unsupported_ids_are_flagged_in_place():
    text = "A [Communities: 3, 99] and B [Community 5]"
    out = linked_markdown(text, _linker({"99": "not_in_index", "5": "not_behind"}))
    assert "[99](" not in out and ":red-badge[⚠ 99: unsupported, not in the index]" in out
    assert '[5](provenance?community=5&run=r1 "Community 5: Kludges (unsupported: in no selected map answer)")' in out
    assert ":orange-badge[⚠ unsupported: in no selected map answer]" in out
    assert '[3](provenance?community=3&run=r1 "Community 3: Wizards")' in out


def test_entity_references_are_left_as_text_by_the_community_linker():
    out = linked_markdown("x [Data: Entities (4); Reports (3)]", _linker())
    assert "Entities (4)" in out and "[3](" in out and "[4](" not in out


def test_headings_are_demoted_below_the_page_headings():
    assert demote_headings("# Title\n## Part\ntext #1\n##### Deep", by=3) == "#### Title\n##### Part\ntext #1\n###### Deep"


def test_more_in_a_citation_becomes_the_given_link_and_stays_text_elsewhere() -> None:
    from graphrag_app.text import linked_markdown

    text = "Ada [Data: Entities (1, +more); Relationships (2)] and +more outside."
    shown = linked_markdown(text, lambda r: f"<{r.kind[0]}{r.id}>", more=lambda citation: "[+more](#all)")
    assert shown == "Ada \\[Data: Entities (<e1>, [+more](#all)); Relationships (<r2>)\\] and +more outside."
    assert "[+more]" not in linked_markdown(text, lambda r: None), "no link without a target"


def test_a_final_answer_links_or_flags_every_citation_form_the_reports_use():
    """``[Data: Entities (10)]`` in an answer on a Microsoft GraphRAG index is a link to entity 10
    (not plain text); an entity the index lacks is flagged; ``+more`` leads to the cited
    community's record list."""
    from graphrag_app.panels.evidence import answer_markdown
    from graphrag_core import Community, Index
    from graphrag_core.rows import Entity, Relationship

    index = Index(
        communities=[Community(id="3", level=0, title="Wizards", summary="Wizards.")],
        entities=[Entity(id="e-uuid-10", short_id="10", title="WIZARD", description="A person who knows a system.", community_ids=("3",))],
        relationships=[Relationship(id="r-uuid-7", short_id="7", source="WIZARD", target="WIZARD", description="Knows itself.")],
    )
    text = "Wizards know systems [Data: Reports (3, +more); Entities (10, 99); Relationships (7)]."
    out = answer_markdown(text, None, index=index, index_key="folder", run_id="r1")
    assert "[10](provenance?index=folder&entity=10&run=r1 \"Entity 10: WIZARD. A person who knows a system.\")" in out
    assert "[7](provenance?index=folder&relationship=7&run=r1" in out
    assert ":orange-badge[⚠ Entity 99: not in the index]" in out
    assert "[3](provenance?index=folder&community=3&run=r1" in out
    assert "[+more](provenance?index=folder&community=3&run=r1#records-of-this-community" in out
    no_records = Index(communities=[Community(id="3", level=0, title="Wizards", summary="Wizards.")])
    flagged = answer_markdown("See [Data: Entities (10)].", None, index=no_records, index_key="folder", run_id=None)
    assert ":orange-badge[⚠ Entity 10: the index holds no entity records]" in flagged
