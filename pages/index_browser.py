"""Index browser: the community hierarchy, counts and tokens per level, a searchable community
table linking to provenance, and a community's entity graph.

Opens the index named by ``?index=`` (a sample name or a folder, as on the Explore page), and
``?community=`` picks the community whose entity graph is drawn. Index text is shown as text.
"""

from __future__ import annotations

import streamlit as st

from graphrag_app.index_browser import views
from graphrag_app.index_browser.state import FOLDER, INDEX
from graphrag_app.loaders import default_index_key, folder_signature
from graphrag_app.navigation import ensure_app_navigation
from graphrag_app.settings import load_settings
from graphrag_app.widgets import open_picked_index, seed_from_url
from graphrag_core.deferred import DEFERRED_TABLES

ensure_app_navigation()

st.title("Index browser")
st.caption("The index itself: how its communities nest, what each level costs, and what is inside a community.")

app = load_settings()
seed_from_url(INDEX, FOLDER, views.url_index() or default_index_key())
opened = open_picked_index(app, INDEX, FOLDER, tables=DEFERRED_TABLES)  # counts, warnings, graphs
assert opened.index is not None and opened.source is not None  # open_picked_index stops the page otherwise
key, index = opened.source.key, opened.index
signature = folder_signature(opened.source.path)
views.keep_url(key)

views.draw_overview(st.container(), opened)
views.draw_hierarchy(st.container(), index)
views.draw_levels(st.container(), index, key, signature)
views.draw_table(st.container(), index, key, signature)
views.draw_graph(st.container(), index, key)
