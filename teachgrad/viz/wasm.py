"""Drawing in the browser when Graphviz's ``dot`` program is not installed.

A ``graphviz.Digraph`` shows itself in a notebook by running ``dot`` to make
SVG. Someone who only ran ``pip install teachgrad`` may not have ``dot``; for
them the drawing is sent as HTML instead: a ``<div>``, the Graphviz build for
WebAssembly that ships inside teachgrad (``static/viz-global.js``, Viz.js, MIT
and EPL licensed, about 1.3 MB, never fetched from the network), and a few lines
that lay out the DOT text into that div as SVG. The notebook must be trusted
for its scripts to run (a notebook you executed yourself is).
"""
import functools
import hashlib
import importlib.resources
import uuid

from .escape import js_string

VIZ_JS = "viz-global.js"
VIZ_JS_SHA256 = "c9e0b310f9883910e01c66054b48b7ff4be3d8695141116635e72b0af152692e"

INSTALL_GRAPHVIZ = (
    "Install Graphviz's `dot` program: `make lab` does it for the course, or "
    "Debian/Ubuntu: sudo apt-get install graphviz; macOS: brew install graphviz; "
    "conda: conda install -c conda-forge graphviz.")

# Runs after viz-global.js has defined `Viz`. One WebAssembly instance per page,
# shared by every drawing; failures are shown in the div rather than lost.
_RENDER = """(function () {
  var el = document.getElementById(%(id)s);
  if (!el) { return; }
  var dot = %(dot)s;
  window.teachgradViz = window.teachgradViz || Viz.instance();
  window.teachgradViz.then(function (viz) {
    el.innerHTML = viz.renderString(dot, {format: "svg"});
  }).catch(function (error) {
    el.textContent = "teachgrad could not draw this graph in the browser (" + error +
      "). " + %(install)s;
  });
})();"""


@functools.lru_cache(maxsize=1)
def viz_js():
    """The vendored Viz.js (Graphviz as WebAssembly), checked against its recorded hash."""
    resource = importlib.resources.files("teachgrad.viz") / "static" / VIZ_JS
    try:
        data = resource.read_bytes()
    except (FileNotFoundError, OSError) as error:
        raise RuntimeError(
            f"teachgrad's browser build of Graphviz (teachgrad/viz/static/{VIZ_JS}) is "
            f"missing from this installation, and the `dot` program is not installed "
            f"either, so graphs cannot be drawn. Reinstall teachgrad, or "
            f"{INSTALL_GRAPHVIZ}") from error
    if hashlib.sha256(data).hexdigest() != VIZ_JS_SHA256:
        raise RuntimeError(f"teachgrad/viz/static/{VIZ_JS} is not the file teachgrad shipped "
                           f"(its sha256 differs); reinstall teachgrad, or {INSTALL_GRAPHVIZ}")
    return data.decode("utf-8")


def html(dot_source):
    """HTML that draws ``dot_source`` in the browser with the bundled Graphviz.

    The DOT text enters the page only as an escaped JavaScript string, and what
    Graphviz makes of it is SVG whose text is XML-escaped: names in the graph
    cannot become markup.
    """
    element_id = f"teachgrad-viz-{uuid.uuid4().hex}"
    render = _RENDER % {"id": js_string(element_id), "dot": js_string(dot_source),
                        "install": js_string(INSTALL_GRAPHVIZ)}
    return (f'<div id="{element_id}" class="teachgrad-viz">Drawing the graph in the browser '
            f"(Graphviz's dot program is not installed)...</div>\n"
            f"<script>{viz_js()}</script>\n<script>{render}</script>")


def mimebundle(dot_source, text):
    """A notebook display bundle: the HTML above, and ``text`` for plain-text frontends."""
    return {"text/html": html(dot_source), "text/plain": text}
