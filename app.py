"""GraphRAG Global Explorer: ``streamlit run app.py``. The pages are listed in graphrag_app.navigation.

This file is both the script each session runs (as ``__main__``: it draws the page the URL
names) and the server ``streamlit run app.py`` starts: that command finds ``app`` below, an
``st.App`` serving this same script, whose start warms what Explore's first session needs
(graphrag_app.warmup) before the server answers.
"""

import streamlit as st

from graphrag_app.navigation import app_navigation

if __name__ == "__main__":  # a session's script run
    from graphrag_app.warmup import wait_for_warm_up

    wait_for_warm_up()  # a warm-up still going past the server's wait: its imports are not raced
    app_navigation().run()
else:  # imported by `streamlit run app.py` (or an ASGI server) to serve it
    from graphrag_app.warmup import warm_lifespan

    app = st.App(__file__, lifespan=warm_lifespan)
