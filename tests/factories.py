"""Small indexes built in code, shared by the tests."""

from graphrag_core import Claim, Community, Document, Index, SourceChunk


def small_index() -> Index:
    """Two levels under one root: root 0 -> {1, 2}; 1 -> {3, 4}; 2 -> {5}. Claims on leaves 3, 4, 5."""
    communities = [
        Community(id=0, level=0, title="Hacker culture", summary="Everything about hackers, their jargon and tools."),
        Community(id=1, level=1, parent_id=0, title="People", summary="Hackers and wizards as people."),
        Community(id=2, level=1, parent_id=0, title="Machines", summary="Machines and the software on them."),
        Community(id=3, level=2, parent_id=1, title="Wizards", summary="A wizard knows how a complex system works."),
        Community(id=4, level=2, parent_id=1, title="Hackers", summary="A hacker enjoys exploring programmable systems."),
        Community(id=5, level=2, parent_id=2, title="Kludges", summary="A kludge is a clever but ugly fix."),
        Community(id=6, level=2, parent_id=2, title="Blank", summary="   "),
    ]
    chunks = [
        SourceChunk(id="k1", document_id="d1", text="WIZARD: a person who knows how a complex piece of software works."),
        SourceChunk(id="k2", document_id="d1", text="HACKER: one who enjoys exploring the details of systems."),
        SourceChunk(id="k3", document_id="d2", text="KLUDGE: a clever programming trick that is ugly."),
    ]
    claims = [
        Claim(id="c1", community_id=3, subject="wizard", object=None, description="Knows a complex system.", chunk_ids=("k1",)),
        Claim(id="c2", community_id=4, subject="hacker", object="systems", description="Explores details.", chunk_ids=("k2", "k1")),
        Claim(id="c3", community_id=5, subject="kludge", object=None, description="An ugly fix.", chunk_ids=("k3",)),
    ]
    documents = [Document(id="d1", title="People entries"), Document(id="d2", title="Machine entries")]
    return Index(communities=communities, claims=claims, chunks=chunks, documents=documents, name="small")
