"""Issue 25: an index opens with what a search needs first (its communities and summaries) and
reads every other table when it is first asked for, with the same checks and the same errors."""

from __future__ import annotations

import copy
import pickle
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from graphrag_cli.context import EXIT_INDEX
from graphrag_cli.main import main
from graphrag_core.deferred import DEFERRED_TABLES, TableRead
from graphrag_core.errors import IndexValidationError
from graphrag_core.index import load_index, save_index
from graphrag_core.index.fingerprint import index_fingerprint
from graphrag_core.models import Index
from graphrag_core.records import IndexRecords
from graphrag_core.validation import RecordSource

from .factories import small_index
from .test_index_msgraphrag import VERSIONS, write_fixture

NULL_SUBJECT = {"covariates": {"subject_id": ["ALICE", "BOB", None, "DAVE", "X", "Y"]}}
NULL_SUBJECT_ERROR = 'covariates.parquet row 2, field "subject_id": missing value (null).'


def test_opening_reads_communities_and_summaries_only(tmp_path: Path) -> None:
    index = load_index(write_fixture(tmp_path, "v3", edit=NULL_SUBJECT))
    assert index.pending_tables == frozenset(DEFERRED_TABLES)
    assert [c.id for c in index.select_communities(1)] == ["2", "3"]
    assert index.summary_counts() == {"leaf": 3, 0: 2, 1: 2}
    assert [c.id for c in index.descendant_leaves(0)] == ["2", "3"]
    assert index.pending_tables == frozenset(DEFERRED_TABLES)  # the hierarchy needs no other table


def test_a_table_is_checked_when_it_is_read_and_raises_every_time(tmp_path: Path) -> None:
    index = load_index(write_fixture(tmp_path, "v3", edit=NULL_SUBJECT))
    for _ in range(2):
        with pytest.raises(IndexValidationError) as caught:
            index.claims
        assert str(caught.value) == NULL_SUBJECT_ERROR
        assert (caught.value.row, caught.value.field) == (2, "subject_id")
    assert "claims" in index.pending_tables
    assert [e.title for e in index.entities] == ["ALICE", "BOB", "CAROL", "DAVE"]  # the others still read
    with pytest.raises(IndexValidationError, match="row 2"):
        index.warnings  # every warning needs every table


def test_map_texts_read_claims_and_their_sources_only(tmp_path: Path) -> None:
    index = load_index(write_fixture(tmp_path, "v3"))
    text = index.map_text(0)
    assert "Alice did a." in text and "Alice met Bob." in text
    assert index.pending_tables == {"entities", "relationships"}  # chunks name documents, so those are read too
    bare = load_index(write_fixture(tmp_path / "bare", "v3"))
    bare.map_text(0, include_claims=False, include_sources=False)
    assert bare.pending_tables == frozenset(DEFERRED_TABLES)


@pytest.mark.parametrize("version", VERSIONS)
def test_an_opened_index_equals_the_one_read_whole(tmp_path: Path, version: str) -> None:
    folder = write_fixture(tmp_path, version)
    whole = load_index(folder)
    whole.load_tables()
    assert whole.pending_tables == frozenset()
    built = Index.from_records(
        communities=whole.communities, claims=whole.claims, chunks=whole.chunks, documents=whole.documents,
        entities=whole.entities, relationships=whole.relationships, name=whole.name,
        description=whole.description, warnings=whole.warnings,
    )
    opened = load_index(folder)
    assert opened == built
    assert load_index(folder).model_dump() == built.model_dump()
    assert load_index(folder).model_dump_json() == built.model_dump_json()
    assert index_fingerprint(load_index(folder)) == index_fingerprint(built)


def test_records_read_from_checked_columns_equal_validated_ones(tmp_path: Path) -> None:
    """The Microsoft GraphRAG reader builds records from columns it has checked; pydantic,
    run on the same values, gives the same records."""
    index = load_index(write_fixture(tmp_path, "v3"))
    index.load_tables()
    for table in ("communities", *DEFERRED_TABLES):
        for record in getattr(index, table):
            assert type(record).model_validate(record.model_dump()) == record
            assert record.model_fields_set == set(type(record).model_fields)


def test_a_null_id_inside_a_list_names_its_row(tmp_path: Path) -> None:
    import pyarrow as pa

    ids = pa.array([["e-a", "e-b"], ["e-c"], ["e-a", None], ["e-b"]], pa.list_(pa.string()))
    with pytest.raises(IndexValidationError) as caught:
        load_index(write_fixture(tmp_path, "v3", edit={"communities": {"entity_ids": ids}}))
    assert str(caught.value) == 'communities.parquet row 2, field "entity_ids": a missing id (null) in the list.'


def test_copies_pickles_and_comparisons_see_every_table(tmp_path: Path) -> None:
    folder = write_fixture(tmp_path, "v2")
    whole = load_index(folder)
    whole.load_tables()
    assert pickle.loads(pickle.dumps(load_index(folder))) == whole
    assert copy.deepcopy(load_index(folder)) == whole
    assert load_index(folder).model_copy(update={"name": "x"}).claims == whole.claims
    assert "claims=" in repr(load_index(folder))


def test_an_unknown_table_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="No table 'claim'; an index has communities, documents, chunks, claims"):
        load_index(write_fixture(tmp_path, "v3")).load_tables("claim")


def test_a_native_index_reads_its_files_when_needed(tmp_path: Path) -> None:
    folder = tmp_path / "native"
    save_index(small_index(), folder)
    lines = (folder / "claims.jsonl").read_text(encoding="utf-8").splitlines()
    (folder / "claims.jsonl").write_text("\n".join([lines[0], "{broken", *lines[2:]]) + "\n", encoding="utf-8")
    index = load_index(folder)
    assert index.select_communities(2)[0].title == "Wizards"
    assert index.chunk("k1").document_id == "d1"
    with pytest.raises(IndexValidationError, match=r"^claims\.jsonl line 2: invalid JSON"):
        index.map_text(3)


def test_record_lookups_read_only_the_kind_asked_for(tmp_path: Path) -> None:
    index = load_index(write_fixture(tmp_path, "v3", edit=NULL_SUBJECT))
    records = IndexRecords(index)
    entity = records.get("entity", "0")
    assert entity is not None and entity.title == "ALICE"
    assert records.chunks_of(entity)[0][0].text == "Alice met Bob."
    assert "claims" in index.pending_tables
    with pytest.raises(IndexValidationError, match="row 2"):
        records.get("claim", "0")


# -- the reader seam -----------------------------------------------------------------------------------


class CountingReader:
    """A reader of tables built in code that counts its reads (and can be slow, to race threads)."""

    def __init__(self, index: Index, *, pause: threading.Event | None = None) -> None:
        self.whole = index
        self.reads: list[str] = []
        self.pause = pause

    def read(self, table: str, index: Any) -> TableRead:
        if self.pause is not None:
            self.pause.wait(5)
        self.reads.append(table)
        records = getattr(self.whole, table)
        return TableRead(records, RecordSource(f"{table}.txt", "line", range(1, len(records) + 1)), [f"{table} read"])

    def final_warnings(self, index: Any) -> Sequence[str]:
        return ["all read"]


def opened(reader: CountingReader) -> Index:
    return Index.open(communities=reader.whole.communities, reader=reader, name="coded", warnings=["opened"])


def test_each_table_is_read_once_whichever_thread_asks_first() -> None:
    gate = threading.Event()
    reader = CountingReader(small_index(), pause=gate)
    index = opened(reader)
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(index.claims)) for _ in range(8)]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(10)
    assert len(seen) == 8 and all(claims is seen[0] for claims in seen)
    assert sorted(reader.reads) == ["chunks", "claims", "documents"]


def test_warnings_come_in_one_order_however_the_tables_were_read() -> None:
    reader = CountingReader(small_index())
    index = opened(reader)
    index.entities  # out of order
    assert index.warnings == ("opened", "documents read", "chunks read", "claims read", "entities read", "relationships read", "all read")
    assert index.pending_tables == frozenset()


def test_a_table_read_by_a_reader_is_checked_as_a_whole_index_is() -> None:
    whole = small_index()
    bad = whole.model_copy(update={"claims": (whole.claims[0].model_copy(update={"community_id": "1"}), *whole.claims[1:])})
    index = opened(CountingReader(bad))
    with pytest.raises(IndexValidationError) as caught:
        index.claims
    assert str(caught.value).startswith('claims.txt line 1, field "community_id": claim "c1" names community "1", which is not a leaf')


# -- the command line reads what a command needs, and says so as the index's error ----------------------


def test_query_reports_an_unreadable_claims_table_as_the_index_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_fixture(tmp_path / "out", "v3", edit=NULL_SUBJECT)
    code = main(["query", str(folder), "What?", "--level", "1", "--model", "offline", "--no-store", "--no-cache"], environ={})
    err = capsys.readouterr().err
    assert code == EXIT_INDEX and NULL_SUBJECT_ERROR in err and "Traceback" not in err
    code = main(["query", str(folder), "What?", "--level", "1", "--model", "offline", "--no-store", "--no-cache", "--no-claims", "--no-sources"], environ={})
    assert code == 0  # without claims and sources the search never reads that table


def test_a_search_on_a_parquet_output_does_not_import_pandas(tmp_path: Path) -> None:
    """pyarrow imports pandas (a second on a cold command line) when a Python value is turned into
    an arrow one; opening an output and reading what a search needs never does that."""
    import subprocess
    import sys

    from . import APP_ROOT

    folder = write_fixture(tmp_path, "v2")
    script = (
        "import sys; from graphrag_core.index import load_index; index = load_index(sys.argv[1]); "
        "text = index.map_text(0); print(len(index.claims), 'pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True, cwd=APP_ROOT, check=True)
    assert done.stdout.split() == ["5", "False"]
