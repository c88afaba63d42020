"""Keeping a part of the page in view while the charts above it settle: one small script per
call, drawn into the container it is given.

Invariant: it never fights the reader: any input of theirs ends it, and it ends by itself after
``SCROLL_TICKS`` x ``SCROLL_TICK_MS``; the anchors it scrolls to are constants of this app,
never data. Its state (``running``, then ``done``) is on its span and on the page's root element
(``data-<anchor>-scroll``): a redraw of the page may drop the span while the script goes on.
"""

from __future__ import annotations

from streamlit.delta_generator import DeltaGenerator

ANSWER_ANCHOR = "graphrag-answer"
SCROLL_TICKS = 16
SCROLL_TICK_MS = 250
_SCROLL_INTO_VIEW = """<span id="{anchor}-scroll" data-nonce="{nonce}"></span><script>
(function () {{
  // Charts above it may still be growing: keep the anchor in view for a few seconds.
  // The reader wins at once: a wheel, touch, key or mouse button, or any scroll this script did
  // not make (a scrollbar drag, a link to an anchor, assistive technology, a test driver).
  var marker = document.getElementById("{anchor}-scroll");
  var root = document.documentElement;
  root.setAttribute("data-{anchor}-scroll", "running");
  var scroller = document.scrollingElement || document.documentElement;
  for (var node = marker && marker.parentElement; node; node = node.parentElement) {{
    var overflow = getComputedStyle(node).overflowY;
    if ((overflow === "auto" || overflow === "scroll") && node.scrollHeight > node.clientHeight) {{ scroller = node; break; }}
  }}
  var left = scroller.scrollTop;  // where this script last left the page
  var readerMoved = false;
  var names = ["wheel", "touchmove", "keydown", "mousedown"];
  function moved() {{ readerMoved = true; }}
  names.forEach(function (name) {{ window.addEventListener(name, moved, {{capture: true, passive: true}}); }});
  function keep() {{
    var anchor = document.getElementById("{anchor}");
    if (anchor) {{
      var box = anchor.getBoundingClientRect();
      if (box.top < 0 || box.top > window.innerHeight * 0.5) {{ anchor.scrollIntoView({{block: "start", behavior: "instant"}}); }}
    }}
    left = scroller.scrollTop;
  }}
  keep();  // at once: the page may be redrawn (and its scroll moved by the layout) right after
  var tries = 0;
  var timer = setInterval(function () {{
    tries += 1;
    // A scroll this script did not make ends it too, unless the page is being redrawn under a
    // call just opened (then only the reader's own input does).
    var done = readerMoved || tries > {ticks} || ({yield_to_scroll} && Math.abs(scroller.scrollTop - left) > 1);
    if (!done) {{ keep(); }}
    if (done) {{
      clearInterval(timer);
      names.forEach(function (name) {{ window.removeEventListener(name, moved, {{capture: true}}); }});
      if (marker) {{ marker.setAttribute("data-state", "done"); }}
      root.setAttribute("data-{anchor}-scroll", "done");
    }}
  }}, {tick_ms});
}})();
</script>"""


def scroll_into_view(container: DeltaGenerator, anchor: str, *, nonce: int = 0, yield_to_scroll: bool = True) -> None:
    """Bring the element with id ``anchor`` (a constant of this app, never data) into view and keep
    it there while the charts above it settle, for at most ``SCROLL_TICKS`` x
    ``SCROLL_TICK_MS``. It never fights the reader: any input ends it, and so does any scroll it
    did not make unless ``yield_to_scroll`` is False (a call opened from a table row: the redraw
    under it moves the page, which is not the reader). Its span (``#<anchor>-scroll``) then says
    ``data-state="done"``.

    The same script drawn in the same place on the next script run is not run again (the page
    keeps the element as it is): a new ``nonce`` makes it a new element, so it scrolls again.
    The page's root element says how the last such scroll to ``anchor`` stands in
    ``data-<anchor>-scroll`` (``running``, ``done``), also after a redraw has dropped the span."""
    script = _SCROLL_INTO_VIEW.format(
        anchor=anchor, ticks=SCROLL_TICKS, tick_ms=SCROLL_TICK_MS, nonce=int(nonce), yield_to_scroll="true" if yield_to_scroll else "false"
    )
    container.html(script, unsafe_allow_javascript=True)


def scroll_to_answer(container: DeltaGenerator) -> None:
    """Bring the answer into view (once, when a run's answer arrives: on a 1280x800 screen it
    lies below the charts); see :func:`scroll_into_view`."""
    scroll_into_view(container, ANSWER_ANCHOR)


__all__ = ["ANSWER_ANCHOR", "scroll_into_view", "scroll_to_answer"]
