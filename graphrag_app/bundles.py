"""Run bundles in the app: "Download run bundle" for the run shown, "Open run bundle" to redraw one.

An opened bundle is put in this app's run history (so its provenance links work in any tab or
browser session) and then shown like any stored run, with no model and no key. When the index
here is not the one the run used, the page says so and opens what it can.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from graphrag_core.bundle import BundleError, RunBundle, bundle_to_json, index_mismatch, make_bundle, read_bundle
from graphrag_core.state import RunState
from graphrag_core.history import RunRecord, RunStore, StoreError

from .loaders import IndexAccessError, resolve_source
from .settings import AppSettings
from .escaping import escape_markdown

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


def render_bundle_download(container: DeltaGenerator, state: RunState, *, index_key: str, app: AppSettings, key: str) -> None:
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


def open_bundle(data: bytes, *, name: str, app: AppSettings) -> tuple[RunBundle | None, list[str], list[str]]:
    """Read a bundle and put its run in the history: ``(bundle, notices, errors)``."""
    try:
        bundle = read_bundle(data, source=name)
    except BundleError as exc:
        return None, [], [str(exc)]
    notices: list[str] = []
    path: Path | None
    try:
        path = resolve_source(bundle.index.name, app).path
    except IndexAccessError:
        path = Path(bundle.index.path) if bundle.index.path else None
    if mismatch := index_mismatch(bundle, path):
        notices.append(mismatch)
    record = bundle.to_record()
    if path is not None and path.exists():  # links and titles use the index here (found by its name), wherever the run's lay
        record = record.model_copy(update={"index_path": str(path)})
    try:
        RunStore(app.store_path).save(record)
    except (StoreError, OSError, ValueError) as exc:
        return bundle, notices, [f"The run from {name} could not be put in the run history at {app.store_path}: {exc}"]
    notices.append(f"Opened run {bundle.run_id[:8]} from {name} (recorded by {bundle.model}); no model was called.")
    return bundle, notices, []


def render_bundle_open(
    container: DeltaGenerator, *, app: AppSettings, key: str, on_open: Callable[[RunBundle, list[str], list[str]], None]
) -> None:
    """"Open run bundle": a file picker; ``on_open(bundle, notices, errors)`` runs once per file."""

    def changed() -> None:
        uploaded = st.session_state.get(key)
        if uploaded is None:
            return
        bundle, notices, errors = open_bundle(uploaded.getvalue(), name=uploaded.name, app=app)
        on_open(bundle, notices, errors)  # type: ignore[arg-type]

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


def render_messages(container: DeltaGenerator, notices: list[str], errors: list[str]) -> None:
    with container:
        for error in errors:
            st.error(escape_markdown(error), icon=":material/error:")
        for notice in notices:
            st.info(escape_markdown(notice), icon=":material/info:")


__all__ = ["bundle_file_name", "bundle_json", "open_bundle", "render_bundle_download", "render_bundle_open", "render_messages"]
