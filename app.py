"""GraphRAG Global Explorer: ``streamlit run app.py``. The pages are listed in graphrag_app.navigation."""

import streamlit as st

from graphrag_app.navigation import build_pages

st.set_page_config(page_title="GraphRAG Global Explorer", page_icon=":material/hub:", layout="wide")
st.navigation(build_pages()).run()
