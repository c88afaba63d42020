"""Small indexes built in code, and offline runs on the samples, shared by the tests."""

import asyncio

from graphrag_core import Claim, Community, Document, GlobalSearchRequest, Index, SourceChunk, retrieve_global
from graphrag_core.index import load_index
from graphrag_core.llm.offline import OfflineChatModel
from graphrag_core.samples import SAMPLES
from graphrag_core.history import RunRecord


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


def make_index(
    *,
    root: str = "Everything about the town and its valley.",
    river: str = "The river floods every spring.",
    gamma: str | None = None,
    repeat: int = 1,
    with_claim: bool = False,
) -> Index:
    """The "tiny" town: root ``r`` (level 0) over ``a`` (the mill), ``b`` (the river) and, when
    ``gamma`` is given, ``c``. Leaf summaries are repeated ``repeat`` times (for several batches
    at small budgets); ``with_claim`` adds claim ``k1`` on ``a`` citing chunk ``s1`` of ``d1``."""
    leaves = [("a", "Alpha", "The mill employs most people."), ("b", "Beta", river)]
    if gamma is not None:
        leaves.append(("c", "Gamma", gamma))
    communities = [Community(id="r", level=0, title="Root", summary=root)]
    communities += [
        Community(id=cid, level=1, parent_id="r", title=title, summary=(text + " ") * repeat if repeat > 1 else text)
        for cid, title, text in leaves
    ]
    if not with_claim:
        return Index(name="tiny", communities=communities)
    return Index(
        name="tiny",
        communities=communities,
        claims=[Claim(id="k1", community_id="a", subject="mill", object="town", description="employs", chunk_ids=("s1",))],
        chunks=[SourceChunk(id="s1", document_id="d1", text="The mill opened in 1850.")],
        documents=[Document(id="d1", title="History")],
    )


def sample_run(request: GlobalSearchRequest, *, sample: str = "jargon", label: str = "") -> RunRecord:
    """The record of ``request`` run by the offline model on the sample index ``sample``."""
    events: list = []
    asyncio.run(retrieve_global(load_index(SAMPLES[sample]), request, OfflineChatModel(), on_event=events.append))
    return RunRecord.from_events(events, index_name=sample, index_path=str(SAMPLES[sample]), label=label)
