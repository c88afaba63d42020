"""GraphRAG Global Explorer: ``streamlit run app.py``. The pages are listed in graphrag_app.navigation."""

from graphrag_app.navigation import app_navigation

app_navigation().run()
