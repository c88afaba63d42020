"""The Streamlit app over ``graphrag_core``: a small shared layer (settings, session state, jobs,
live runs, loaders, previews, URLs, widgets, text, labels, and the shared panels in
:mod:`graphrag_app.panels`) and one package per page (explore, compare, sweeps, evaluate,
provenance, index_browser), each holding that page's views, charts and state and importing no
other page's (``docs/architecture.md`` lists each module).

Only :mod:`graphrag_app.settings` reads the environment or ``st.secrets``; :mod:`jobs`,
:mod:`urls`, :mod:`text`, :mod:`labels` and every page's charts do not import streamlit, so they
are testable on their own.
"""
