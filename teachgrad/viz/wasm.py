"""Drawing where Graphviz's ``dot`` program cannot run.

A ``graphviz.Digraph`` shows itself in a notebook by starting ``dot`` to make
SVG. Someone who only ran ``pip install teachgrad`` may have no ``dot``, and in
Pyodide (JupyterLite) no process can be started at all (``OSError(ENOSYS)``).
Any failure to start ``dot`` (``CANNOT_START``) falls back to the layout made in
Python (``plain_layout.py``): plain SVG, readable everywhere, in every saved
notebook and HTML export, with no script.

The drawing's HTML (``html``) also carries its DOT text and a few lines of
script: on a page where teachgrad's Graphviz for WebAssembly is loaded (Viz.js,
``static/viz-global.js``, MIT and EPL licensed, about 1.3 MB, never fetched from
the network), the drawing is redrawn with it, as ``dot`` would draw it. The
library is loaded once per page, never stored in a drawing: in a live notebook
each drawing's display sends it (``send_loader``) as an output of its own that
is emptied when the cell finishes, so the saved notebook stays as small as with
``dot``. Where it is not loaded (a reopened notebook, an export, a page whose
scripts do not run), the Python layout stays.
"""
import base64
import functools
import hashlib
import importlib.resources
import sys
import uuid

import graphviz

from . import plain_layout
from .escape import js_string

VIZ_JS = "viz-global.js"
VIZ_JS_SHA256 = "c9e0b310f9883910e01c66054b48b7ff4be3d8695141116635e72b0af152692e"

#: What starting ``dot`` raises where it cannot run: not installed (graphviz's
#: ExecutableNotFound), or no processes at all (OSError: ENOSYS in Pyodide, EPERM, ...).
CANNOT_START = (graphviz.ExecutableNotFound, OSError)

INSTALL_GRAPHVIZ = (
    "Install Graphviz's `dot` program: `make lab` does it for the course, or "
    "Debian/Ubuntu: sudo apt-get install graphviz; macOS: brew install graphviz; "
    "conda: conda install -c conda-forge graphviz.")
#: Said under a drawing laid out in Python, and once the browser's Graphviz redrew it.
LAID_OUT_HERE = ("Graphviz's dot program could not be started here, so teachgrad laid this "
                 "graph out itself (more simply). " + INSTALL_GRAPHVIZ)
DRAWN_IN_BROWSER = ("Drawn in the browser by teachgrad's bundled Graphviz (the dot program "
                    "could not be started here).")

# A drawing's own script: redraw with the page's Graphviz, now or once it is loaded.
# If Graphviz fails on the text, the Python layout stays.
_REDRAW = """(function () {
  var el = document.getElementById(%(id)s), note = document.getElementById(%(note_id)s);
  if (!el) { return; }
  var dot = %(dot)s;
  function draw(viz) {
    el.innerHTML = viz.renderString(dot, {format: "svg"});
    if (note) { note.textContent = %(drawn)s; }
  }
  if (window.teachgradViz) {
    window.teachgradViz.then(draw).catch(function (e) { console.warn("teachgrad:", e); });
  } else {
    (window.teachgradVizWaiting = window.teachgradVizWaiting || []).push(draw);
  }
})();"""

# The page's Graphviz, once: Viz.js run with no AMD or CommonJS in sight (so that it
# defines window.Viz wherever it runs), then every drawing that waited for it.
_LOADER = """if (!window.teachgradViz) {
(function (define, exports, module) {
%(library)s
}).call(window);
window.teachgradViz = window.Viz.instance();
}
(window.teachgradVizWaiting || []).splice(0).forEach(function (draw) {
  window.teachgradViz.then(draw).catch(function (e) { console.warn("teachgrad:", e); });
});"""


def svg(drawing):
    """``(svg, by_dot)``: the drawing as SVG text from ``dot``, or, where ``dot``
    cannot be started, laid out in Python (``by_dot`` False). What ``dot`` says
    about a graph it did start on (a CalledProcessError) is raised."""
    try:
        return drawing.pipe(format="svg").decode("utf-8"), True
    except CANNOT_START:
        return plain_layout.svg(drawing.source), False


@functools.lru_cache(maxsize=1)
def viz_js():
    """The vendored Viz.js (Graphviz as WebAssembly), checked against its recorded hash."""
    resource = importlib.resources.files("teachgrad.viz") / "static" / VIZ_JS
    try:
        data = resource.read_bytes()
    except (FileNotFoundError, OSError) as error:
        raise RuntimeError(
            f"teachgrad's browser build of Graphviz (teachgrad/viz/static/{VIZ_JS}) is "
            f"missing from this installation, and the `dot` program cannot be started "
            f"either, so graphs cannot be drawn as Graphviz draws them. Reinstall "
            f"teachgrad, or {INSTALL_GRAPHVIZ}") from error
    if hashlib.sha256(data).hexdigest() != VIZ_JS_SHA256:
        raise RuntimeError(f"teachgrad/viz/static/{VIZ_JS} is not the file teachgrad shipped "
                           f"(its sha256 differs); reinstall teachgrad, or {INSTALL_GRAPHVIZ}")
    return data.decode("utf-8")


def loader_html():
    """The ``<script>`` that loads the bundled Graphviz into a page (once, however
    often it runs) and redraws the drawings waiting for it. A page that shows
    drawings made without ``dot`` (``html``) may include it once, anywhere."""
    return f"<script>{_LOADER % {'library': viz_js()}}</script>"


def html(dot_source, svg_text):
    """The HTML of a drawing made without ``dot``: ``svg_text`` (the Python layout) as
    an image, with a note under it, redrawn by the page's Graphviz (as inline SVG)
    where ``loader_html`` ran.

    The DOT text enters the page only as an escaped JavaScript string, and what
    either layout makes of it is SVG whose text is XML-escaped: names in the graph
    cannot become markup.
    """
    element_id = f"teachgrad-viz-{uuid.uuid4().hex}"
    redraw = _REDRAW % {"id": js_string(element_id), "note_id": js_string(element_id + "-note"),
                        "dot": js_string(dot_source), "drawn": js_string(DRAWN_IN_BROWSER)}
    return (f'<div id="{element_id}" class="teachgrad-viz">'
            f'{svg_img(svg_text, "the graph, laid out by teachgrad")}</div>\n'
            f'<div id="{element_id}-note" class="teachgrad-viz-note" '
            f'style="color:#555;font-size:12px">{LAID_OUT_HERE}</div>\n<script>{redraw}</script>')


def svg_img(svg_text, alt):
    """An ``<img>`` showing ``svg_text`` (a data: URL). Inline SVG would lose its
    shapes to the sanitizer of an untrusted notebook, which keeps their text as a
    jumble of names; an image keeps the picture, and has no text to jumble."""
    data = base64.b64encode(svg_text[svg_text.index("<svg"):].encode("utf-8")).decode("ascii")
    return (f'<img alt="{alt}" style="max-width:100%" '
            f'src="data:image/svg+xml;base64,{data}">')


def mimebundle(dot_source, svg_text, text):
    """A notebook display bundle: the HTML above, and ``text`` for plain-text frontends.
    In a live notebook it sends the page's Graphviz first (``send_loader``)."""
    send_loader()
    return {"text/html": html(dot_source, svg_text), "text/plain": text}


def send_loader():
    """In a notebook kernel, display ``loader_html`` as an output of its own and empty
    that output when the cell finishes: the page has run the script by then, and the
    saved notebook keeps none of the library. Sent with every drawing, because the
    kernel cannot know what the page holds (the page reloaded, a Colab output in its
    own frame). Without the vendored file it sends nothing. Outside a kernel (a script, a terminal IPython) it does nothing."""
    shell = _notebook_shell()
    if shell is None:
        return
    try:
        loader = loader_html()
    except RuntimeError:    # a broken install: the Python layout is drawn all the same
        return
    from IPython.display import display, update_display
    display_id = f"teachgrad-viz-loader-{uuid.uuid4().hex}"
    display({"text/html": loader}, raw=True, display_id=display_id)

    def empty(*args):
        shell.events.unregister("post_execute", empty)
        update_display({"text/html": ""}, raw=True, display_id=display_id)
    shell.events.register("post_execute", empty)


def _notebook_shell():
    """The IPython shell of a notebook kernel (ipykernel, Pyodide's), or None."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or "Terminal" in type(shell).__name__:
        return None
    return shell
