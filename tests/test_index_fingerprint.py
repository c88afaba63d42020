"""One fingerprint of an index (graphrag_core.index.fingerprint), for run bundles and experiments:
a hash of the index's records, not of its files."""

from __future__ import annotations

import json
from pathlib import Path

from graphrag_core.bundle import BUNDLE_VERSION, bundle_to_json, index_mismatch, make_bundle, read_bundle
from graphrag_core.history.records import RunRecord
from graphrag_core.index import load_index, save_index
from graphrag_core.index.fingerprint import index_fingerprint

from .factories import make_index
from .test_history_store import run_events


def test_the_same_records_anywhere_have_one_fingerprint(tmp_path: Path) -> None:
    index = make_index(with_claim=True)
    save_index(index, tmp_path / "one")
    save_index(index, tmp_path / "two")
    (tmp_path / "two" / "NOTES.txt").write_text("a file the index does not read", encoding="utf-8")
    fingerprint = index_fingerprint(index)
    assert fingerprint.startswith("sha256:") and len(fingerprint) == len("sha256:") + 64
    assert index_fingerprint(load_index(tmp_path / "one")) == index_fingerprint(load_index(tmp_path / "two")) == fingerprint
    assert index_fingerprint(index.model_copy(update={"name": "renamed", "description": "other words"})) == fingerprint


def test_a_change_to_what_a_run_reads_or_a_page_shows_changes_it() -> None:
    index = make_index(with_claim=True)
    base = index_fingerprint(index)
    retitled = index.model_copy(update={"communities": (index.communities[0].model_copy(update={"title": "Other"}), *index.communities[1:])})
    reclaimed = index.model_copy(update={"claims": (index.claims[0].model_copy(update={"description": "closed"}),)})
    resourced = index.model_copy(update={"chunks": (index.chunks[0].model_copy(update={"text": "The mill opened in 1851."}),)})
    assert len({base, index_fingerprint(retitled), index_fingerprint(reclaimed), index_fingerprint(resourced)}) == 4


def test_experiments_and_bundles_use_the_same_function() -> None:
    from graphrag_core import bundle
    from graphrag_core.evaluation import experiment

    assert experiment.index_fingerprint is index_fingerprint is bundle.index_fingerprint


def test_a_bundle_records_the_fingerprint_and_checks_it_against_the_index_here(tmp_path: Path) -> None:
    index = make_index()
    save_index(index, tmp_path / "here")
    record = RunRecord.from_events(run_events(), index_name="tiny", index_path=tmp_path / "here")
    bundle = read_bundle(bundle_to_json(make_bundle(record)))
    assert bundle.format_version == BUNDLE_VERSION and bundle.index.fingerprint == index_fingerprint(index)

    save_index(index, tmp_path / "copy")  # the same index elsewhere, beside a file it does not read
    (tmp_path / "copy" / "README.md").write_text("notes", encoding="utf-8")
    assert index_mismatch(bundle, tmp_path / "copy") is None

    save_index(make_index(river="The river is calm."), tmp_path / "other")
    mismatch = index_mismatch(bundle, tmp_path / "other")
    assert mismatch is not None and "is not the one this run used" in mismatch and str(tmp_path / "other") in mismatch

    (tmp_path / "empty").mkdir()
    unreadable = index_mismatch(bundle, tmp_path / "empty")
    assert unreadable is not None and "could not be read" in unreadable and str(tmp_path / "empty") in unreadable


def test_a_version_1_bundle_still_opens_and_says_its_fingerprint_cannot_be_compared(tmp_path: Path) -> None:
    save_index(make_index(), tmp_path / "here")
    record = RunRecord.from_events(run_events(), index_name="tiny", index_path=tmp_path / "here")
    document = json.loads(bundle_to_json(make_bundle(record)))
    document["format_version"] = 1
    document["index"]["fingerprint"] = "sha256:" + "0" * 64  # a hash of the folder's files, as version 1 wrote
    old = read_bundle(json.dumps(document), source="old.bundle.json")
    assert old.to_record().figures == record.figures
    notice = index_mismatch(old, tmp_path / "here")
    assert notice is not None and "format version 1" in notice and "could not be checked" in notice
