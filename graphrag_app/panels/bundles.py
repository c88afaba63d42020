"""Run bundles in the app: "Download run bundle" for the run shown, "Open run bundle" to redraw one.

An opened bundle is put in this app's run history (so its provenance links work in any tab or
browser session) and then shown like any stored run, with no model and no key. When the index
here is not the one the run used, the page says so and opens what it can.

A bundle is untrusted: it is read as a stream and refused past ``MAX_BUNDLE_EVENTS`` events
(one bundle at a time per process), its index is looked for only where this app may open
folders, and its run never replaces one already here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.bundle import MAX_BUNDLE_EVENTS, BundleError, RunBundle, bundle_to_json, index_mismatch, make_bundle, read_bundle
from graphrag_core.state import RunState
from graphrag_core.history import RunRecord, RunStore, StoreError

from ..loaders import IndexAccessError, resolve_source
from ..session import Widget
from ..settings import AppSettings

MAX_BUNDLE_MB = 200


def bundle_file_name(run_id: str) -> str:
    return f"run-{run_id}.bundle.json"


def bundle_json(state: RunState, *, index_key: str, app: AppSettings) -> str:
    """The bundle of the run ``state`` shows (its events are the whole run)."""
    path: Path | None
    try:
        path = resolve_source(index_key, app).path
    except IndexAccessError:
        path = None
    record = RunRecord.from_events(state.events, index_name=index_key, index_path=path)
    return bundle_to_json(make_bundle(record, index_path=path))


def draw_bundle_download(container: DeltaGenerator, state: RunState, *, index_key: str, app: AppSettings, key: str) -> None:
    """"Download run bundle": one JSON file, built only when clicked."""
    if not state.events or state.run_id is None:
        return
    with container:
        st.download_button(
            "Download run bundle",
            lambda: bundle_json(state, index_key=index_key, app=app),
            file_name=bundle_file_name(state.run_id),
            mime="application/json",
            key=f"{key}-bundle-download",
            on_click="ignore",
            icon=":material/download:",
            help="One JSON file with the request, the model's identity (never a key), the index's fingerprint, every prompt, "
            "raw reply and event, and the result. Open it on Explore or Compare, or with `graphrag-explorer replay FILE`.",
        )


BUNDLE_WAIT_S = 120.0
"""How long an upload waits for the bundles opened before it (one is read at a time)."""
_ONE_AT_A_TIME = threading.BoundedSemaphore(1)
"""Bundles are read one at a time in this process, so several large uploads at once take the
memory of one, not of all of them."""


def _index_here(bundle: RunBundle, app: AppSettings) -> Path | None:
    """The index the bundle's run used, found here: by the bundle's index name (a sample, or a
    folder), else by its path, each only where this app may open folders (``resolve_source``:
    a path outside the allowed roots is never looked at); None when neither is here."""
    for named in (bundle.index.name, bundle.index.path):
        if not named or "\x00" in named:
            continue
        try:
            path = resolve_source(named, app).path
        except IndexAccessError:
            continue
        if path.exists():
            return path
    return None


def open_bundle(data: bytes | BinaryIO, *, name: str, app: AppSettings) -> tuple[RunBundle | None, list[str], list[str]]:
    """Read a bundle (bytes or a binary file, read as a stream of at most ``MAX_BUNDLE_EVENTS``
    events) and put its run in the history: ``(bundle, notices, errors)``.

    The run is imported (``RunStore.import_record``): it never replaces another run here; when
    its id is taken, the returned bundle carries the id it was stored under, and a notice says so."""
    if not _ONE_AT_A_TIME.acquire(timeout=BUNDLE_WAIT_S):
        return None, [], [f"{name} was not opened: the app is busy opening other run bundles. Try again in a moment."]
    try:
        bundle = read_bundle(data, source=name, max_events=MAX_BUNDLE_EVENTS)
    except BundleError as exc:
        return None, [], [str(exc)]
    finally:
        _ONE_AT_A_TIME.release()
    notices: list[str] = []
    path = _index_here(bundle, app)
    if mismatch := index_mismatch(bundle, path):
        notices.append(mismatch)
    record = bundle.to_record().model_copy(update={"index_path": None if path is None else str(path)})
    try:
        stored_as = RunStore(app.store_path).import_record(record)
    except (StoreError, OSError, ValueError) as exc:
        return bundle, notices, [f"The run from {name} could not be put in the run history at {app.store_path}: {exc}"]
    if stored_as != bundle.run_id:
        notices.append(
            f"A different run here already has this bundle's run id ({bundle.run_id[:8]}): the bundle's run is opened "
            f"as run {stored_as[:8]}, and the run here is left as it was."
        )
        bundle = bundle.model_copy(update={"run_id": stored_as, "events": record.with_run_id(stored_as).events})
    notices.append(f"Opened run {stored_as[:8]} from {name} (recorded by {bundle.model}); no model was called.")
    return bundle, notices, []


def draw_bundle_open(
    container: DeltaGenerator, *, app: AppSettings, key: str, on_open: Callable[[str | None, list[str], list[str]], None]
) -> None:
    """"Open run bundle": a file picker; ``on_open(run_id, notices, errors)`` runs once per file,
    with the id the run is stored under (None when it was not opened). The bundle itself is let
    go first, so a large run is never held twice while the page reads it from the history."""

    def changed() -> None:
        uploaded = Widget[Any](key).value
        if uploaded is None:
            return
        uploaded.seek(0)
        bundle, notices, errors = open_bundle(uploaded, name=uploaded.name, app=app)
        run_id = None if bundle is None or errors else bundle.run_id
        del bundle
        on_open(run_id, notices, errors)

    with container:
        st.file_uploader(
            "Open run bundle",
            type=["json"],
            key=key,
            on_change=changed,
            max_upload_size=MAX_BUNDLE_MB,
            help="A run bundle downloaded from this app (or written by `graphrag-explorer runs export RUN_ID --bundle FILE`): "
            "the run is redrawn with no model and no key.",
        )


__all__ = ["bundle_file_name", "bundle_json", "open_bundle", "draw_bundle_download", "draw_bundle_open"]
