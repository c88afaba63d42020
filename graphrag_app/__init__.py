"""The Streamlit app over ``graphrag_core``: settings, session state, loaders, charts, runner, views.

Only :mod:`graphrag_app.settings` reads the environment or ``st.secrets``; :mod:`charts`,
:mod:`urls` and :mod:`runner` do not import streamlit, so they are testable on their own.
"""
