"""The browser loads the charts' code (Streamlit's Plotly chart, 4.7 MB of script) as Explore
opens, not when a run's first chart needs it.

Streamlit fetches that script the first time a page draws a Plotly chart. A click on Run
before the cost preview's chart was drawn left it to the live view's first chart: fetching,
compiling and running it took 1-4.5 s on a busy 2-core machine, and the run's first bar waited
behind it. Loading the same module (the same URL, so the page's own import finds it done) once
the page shows Run, when the browser is next idle (so Run is ready for a click first), takes
that work off the run.

Invariant: nothing here changes what a page shows; with a Streamlit whose chart script is not
found by its name, nothing is loaded early and the chart loads as it always did.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import streamlit as st

CHART_CODE_KEY = "chart-code"
"""The key of the (hidden) container the loading script is drawn in."""
CHART_CODE_CSS = f".st-key-{CHART_CODE_KEY} {{ display: none; }}"
"""The rule that keeps that container out of the page's layout (its script still runs)."""

_LOAD = """<script>
(() => {{
  const name = {name};
  const app = [...document.scripts].find((s) => /\\/static\\/js\\/index\\.[^/]+\\.js$/.test(s.src));
  if (!app) return;
  const url = new URL("./" + name, app.src).href;  // where Streamlit's own import of it points
  if (window.__graphragChartCode === url) return;
  window.__graphragChartCode = url;
  const load = () => import(url).catch(() => {{ window.__graphragChartCode = null; }});
  // when the page is idle (Run drawn and ready for a click), within two seconds at the latest
  if (window.requestIdleCallback) window.requestIdleCallback(load, {{timeout: 2000}}); else setTimeout(load, 0);
}})();
</script>"""


@functools.cache
def plotly_chart_script() -> str | None:
    """The file name of Streamlit's Plotly chart script (its name carries a content hash), or
    None when its static files hold no single one."""
    static = Path(st.__file__).parent / "static" / "static" / "js"
    found = sorted(static.glob("PlotlyChart.*.js"))
    return found[0].name if len(found) == 1 else None


def load_chart_code() -> None:
    """Have the browser load the Plotly chart's code now, once per page: a script drawn where
    this is called, in a container the page's CSS keeps out of the layout (it must hold
    :data:`CHART_CODE_CSS`)."""
    name = plotly_chart_script()
    if name is None:
        return
    st.container(key=CHART_CODE_KEY).html(_LOAD.format(name=json.dumps(name)), unsafe_allow_javascript=True)


__all__ = ["CHART_CODE_CSS", "CHART_CODE_KEY", "load_chart_code", "plotly_chart_script"]
