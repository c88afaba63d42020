"""Issue 27: a run bundle is untrusted input. Its header and events must agree and its events'
references hold; opening it never replaces a different local run, never reads a path outside
the allowed roots, and is refused early (read as a stream) when it holds too many events."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from graphrag_app.panels.bundles import open_bundle
from graphrag_app.settings import settings_from_mapping
from graphrag_cli.context import EXIT_USAGE
from graphrag_core.bundle import BundleError, bundle_to_json, make_bundle, read_bundle
from graphrag_core.history import RunRecord, RunStore
from graphrag_core.index import save_index

from .cli_support import run_cli
from .factories import small_index
from .test_safe_inputs import small_run


def bundle_document(record: RunRecord) -> dict:
    return json.loads(bundle_to_json(make_bundle(record)))


def first_event_of(document: dict, kind: str) -> dict:
    return next(e for e in document["events"] if e["kind"] == kind)


# -- event references (finding 12) -----------------------------------------------------------------


@pytest.mark.parametrize("batch_index", [999999, -1, 3])
def test_a_map_event_naming_a_batch_the_run_did_not_plan_is_refused(batch_index: int) -> None:
    record = small_run(1)
    document = bundle_document(record)
    planned = len(first_event_of(document, "batches_planned")["batches"])
    first_event_of(document, "map_batch_succeeded")["batch_index"] = batch_index if batch_index != 3 else planned
    with pytest.raises(BundleError, match=rf"x\.json: event \d+ \(map_batch_succeeded\): batch -?\d+ is not one of the run's {planned} planned batches"):
        read_bundle(json.dumps(document), source="x.json")


def test_events_out_of_order_are_refused() -> None:
    document = bundle_document(small_run(1))
    started = document["events"].pop(0)
    document["events"].insert(2, started)
    with pytest.raises(BundleError, match=r"x\.json: event 1 \(.*\): a run's events start with run_started"):
        read_bundle(json.dumps(document), source="x.json")
    document = bundle_document(small_run(1))
    planned_at = next(i for i, e in enumerate(document["events"]) if e["kind"] == "batches_planned")
    document["events"].insert(planned_at, dict(first_event_of(document, "map_batch_started")))
    with pytest.raises(BundleError, match=r"before the run planned its batches"):
        read_bundle(json.dumps(document), source="x.json")
    document = bundle_document(small_run(1))
    document["events"].append(dict(first_event_of(document, "map_batch_started")))
    with pytest.raises(BundleError, match=r"after the run ended"):
        read_bundle(json.dumps(document), source="x.json")


def test_replay_of_a_bundle_with_a_bad_batch_index_exits_2_naming_it(capsys, tmp_path: Path) -> None:
    document = bundle_document(small_run(1))
    first_event_of(document, "map_batch_succeeded")["batch_index"] = 999999
    path = tmp_path / "bad.bundle.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    code, _out, err = run_cli(capsys, "replay", path)
    assert code == EXIT_USAGE, err
    assert "batch 999999 is not one of" in err and "Traceback" not in err and "IndexError" not in err


def test_a_bundle_with_a_bad_batch_index_is_not_put_in_the_history(tmp_path: Path) -> None:
    document = bundle_document(small_run(1))
    first_event_of(document, "map_batch_succeeded")["batch_index"] = -1
    app = settings_from_mapping({"GRAPHRAG_EXPLORER_DB": str(tmp_path / "runs.sqlite3")})
    bundle, _notices, errors = open_bundle(json.dumps(document).encode(), name="bad.json", app=app)
    assert bundle is None and len(errors) == 1 and "batch -1 is not one of" in errors[0]
    assert len(RunStore(app.store_path)) == 0


# -- header and events agree; never replace a local run (finding 2) --------------------------------


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("run_id", "0" * 32, "run id"),
        ("model", "someone-else/v1", "model"),
        ("seed", 424242, "seed"),
        ("request", {"query": "Another question?"}, "request"),
        ("status", "failed", "status"),
    ],
)
def test_a_header_that_disagrees_with_the_events_is_refused(field: str, value: object, said: str) -> None:
    document = bundle_document(small_run(1))
    document[field] = value if field != "request" else {**document["request"], **value}  # type: ignore[dict-item]
    with pytest.raises(BundleError, match=rf"x\.json: its header and its events disagree about the {said}"):
        read_bundle(json.dumps(document), source="x.json")


def test_a_bundle_reusing_a_local_run_id_opens_as_its_own_run_and_leaves_the_local_one(tmp_path: Path) -> None:
    app = settings_from_mapping({"GRAPHRAG_EXPLORER_DB": str(tmp_path / "runs.sqlite3")})
    store = RunStore(app.store_path)
    mine = small_run(1)
    store.save(mine)
    theirs = small_run(2)  # another question, another answer, the same run id in header and events
    document = json.loads(bundle_to_json(make_bundle(theirs)).replace(theirs.run_id, mine.run_id))
    document["index"].update(name="/elsewhere/their-index", path="/elsewhere/their-index")

    bundle, notices, errors = open_bundle(json.dumps(document).encode(), name="forged.json", app=app)
    assert errors == [] and bundle is not None
    assert bundle.run_id != mine.run_id
    kept = store.get(mine.run_id)
    assert kept is not None and kept.query == mine.query and kept.result == mine.result and kept.index_name == mine.index_name
    opened = store.get(bundle.run_id)
    assert opened is not None and opened.query == theirs.query and opened.result == theirs.result
    assert opened.replay().run_id == bundle.run_id  # its events name the id it is stored under
    assert any(mine.run_id[:8] in n and bundle.run_id[:8] in n and "already" in n for n in notices), notices

    again, _, errors = open_bundle(json.dumps(document).encode(), name="forged.json", app=app)
    assert errors == [] and again is not None and again.run_id == bundle.run_id  # the same bundle: the same run
    assert len(store) == 2


def test_reopening_a_bundle_of_a_run_already_here_keeps_it_as_it_is(tmp_path: Path) -> None:
    app = settings_from_mapping({"GRAPHRAG_EXPLORER_DB": str(tmp_path / "runs.sqlite3")})
    store = RunStore(app.store_path)
    mine = small_run(1)
    store.save(mine.model_copy(update={"label": "my label"}))
    bundle, notices, errors = open_bundle(bundle_to_json(make_bundle(mine)).encode(), name="mine.json", app=app)
    assert errors == [] and bundle is not None and bundle.run_id == mine.run_id
    assert len(store) == 1 and store.get(mine.run_id).label == "my label"  # type: ignore[union-attr]
    assert not any("already" in n for n in notices)


def test_the_store_imports_a_record_without_replacing_a_different_one(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    mine, theirs = small_run(1), small_run(2)
    store.save(mine)
    clash = theirs.with_run_id(mine.run_id)
    stored_as = store.import_record(clash)
    assert stored_as != mine.run_id and store.get(mine.run_id) == mine
    assert store.import_record(clash) == stored_as and store.import_record(mine) == mine.run_id
    assert len(store) == 2


# -- paths only inside the allowed roots (finding 4) -------------------------------------------------


def test_a_bundle_naming_a_folder_outside_the_allowed_roots_is_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import graphrag_core.bundle as bundle_module

    allowed, outside = tmp_path / "allowed", tmp_path / "outside" / "secret-index"
    allowed.mkdir()
    save_index(small_index(), outside)
    read: list[str] = []
    real = bundle_module.fingerprint_at
    monkeypatch.setattr(bundle_module, "fingerprint_at", lambda path: read.append(str(path)) or real(path))

    app = settings_from_mapping({"GRAPHRAG_EXPLORER_DB": str(tmp_path / "runs.sqlite3"), "GRAPHRAG_EXPLORER_ALLOWED_ROOTS": str(allowed)})
    document = bundle_document(small_run(1))
    for name in (str(outside), "secret-index", "jargon/../../../outside/secret-index"):
        document["index"].update(name=name, path=str(outside))
        bundle, notices, errors = open_bundle(json.dumps(document).encode(), name="b.json", app=app)
        assert errors == [] and bundle is not None
        assert read == [], "a path outside the allowed roots was read"
        assert any("not available here" in n for n in notices), notices
        stored = RunStore(app.store_path).get(bundle.run_id)
        assert stored is not None and stored.index_path is None  # nothing outside the roots is kept to open later


def test_a_bundle_index_inside_the_allowed_roots_is_checked(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    save_index(small_index(), allowed / "small-index")
    app = settings_from_mapping({"GRAPHRAG_EXPLORER_DB": str(tmp_path / "runs.sqlite3"), "GRAPHRAG_EXPLORER_ALLOWED_ROOTS": str(allowed)})
    document = bundle_document(small_run(1))
    document["index"].update(name="/not/here/small-index", path=str(allowed / "small-index"))
    bundle, notices, errors = open_bundle(json.dumps(document).encode(), name="b.json", app=app)
    assert errors == [] and bundle is not None
    assert not any("not available here" in n or "is not the one" in n for n in notices), notices


# -- bounded uploads (finding 5) ---------------------------------------------------------------------


class CountingReader(io.BytesIO):
    """A file whose reads are counted, to see how far a reader went."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.bytes_read = 0

    def read(self, size: int | None = -1) -> bytes:  # type: ignore[override]
        chunk = super().read(size)
        self.bytes_read += len(chunk)
        return chunk


def many_events_bundle(count: int) -> bytes:
    """A bundle of a run followed by ``count`` more model notices (each a small valid event)."""
    document = bundle_document(small_run(1))
    end = document["events"].pop()
    document["events"] += [{"kind": "model_notice", "at": 0.5, "message": f"note {i}"} for i in range(count)]
    document["events"].append(end)
    return json.dumps(document).encode()


def test_a_bundle_with_too_many_events_is_refused_early_as_it_is_read(tmp_path: Path) -> None:
    data = many_events_bundle(5000)
    stream = CountingReader(data)
    with pytest.raises(BundleError, match=r"big\.json holds more than 1,000 events"):
        read_bundle(stream, source="big.json", max_events=1000)
    assert stream.bytes_read < len(data) / 2, "the reader went on after the limit"


def test_the_app_refuses_a_bundle_over_its_event_limit_with_a_clear_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import graphrag_app.panels.bundles as bundles

    monkeypatch.setattr(bundles, "MAX_BUNDLE_EVENTS", 1000)
    app = settings_from_mapping({"GRAPHRAG_EXPLORER_DB": str(tmp_path / "runs.sqlite3")})
    bundle, _notices, errors = open_bundle(io.BytesIO(many_events_bundle(5000)), name="big.json", app=app)
    assert bundle is None and errors and "holds more than 1,000 events" in errors[0]
    assert len(RunStore(app.store_path)) == 0


def test_a_bundle_is_read_from_a_file_object_and_from_text_alike(tmp_path: Path) -> None:
    text = bundle_to_json(make_bundle(small_run(1)))
    assert read_bundle(io.BytesIO(text.encode()), source="a") == read_bundle(text, source="a") == read_bundle(text.encode(), source="a")
    assert read_bundle(b"\xef\xbb\xbf" + text.encode(), source="a").run_id == read_bundle(text, source="a").run_id  # a BOM is fine


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"", "is not JSON"),
        (b"[1, 2]", "is not a run bundle"),
        (b'{"format": "graphrag-explorer-run-bundle", "events": {}}', "events"),
        (b'{"format": "graphrag-explorer-run-bundle", "events": [1]}', "event 1"),
        (b'{"format": "graphrag-explorer-run-bundle", "events": [{"kind": "nope"}]}', "event 1"),
    ],
)
def test_what_is_not_a_bundle_is_said_plainly(data: bytes, said: str) -> None:
    with pytest.raises(BundleError, match=said):
        read_bundle(data, source="x.json")



@pytest.mark.parametrize("text", [b'"x\\udcff"', b'"x\xff"'])
def test_a_bundle_with_text_that_is_not_unicode_is_refused_plainly(text: bytes, tmp_path: Path) -> None:
    document = bundle_document(small_run(1))
    document["label"] = "LABEL"
    data = json.dumps(document).encode().replace(b'"LABEL"', text)
    with pytest.raises(BundleError, match=r"x\.json holds text that is not valid Unicode"):
        read_bundle(data, source="x.json")
