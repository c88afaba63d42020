"""Provenance: where a community's text comes from, and what a run did with it.

Reached from a community link: ``/provenance?index=jargon&community=12&run=<run_id>``.
"""

from __future__ import annotations

from graphrag_app.live import ShownRun
from graphrag_app.panels.evidence import close_evidence
from graphrag_app.provenance import views as provenance
from graphrag_app.navigation import ensure_app_navigation
from graphrag_app.settings import load_settings

ensure_app_navigation()
close_evidence()  # reached from the evidence dialog: Back returns to the answer

provenance.draw_page(load_settings(), ShownRun.get())
