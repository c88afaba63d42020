"""The Streamlit app's parts over ``graphrag_core``: typed page state, background jobs, the
settings widgets, links, panels and pure charts (``docs/architecture.md`` lists each module).

Only :mod:`graphrag_app.settings` reads the environment or ``st.secrets``; :mod:`jobs`,
:mod:`urls` and the chart modules do not import streamlit, so they are testable on their own.
"""
