"""A stepper that steps with no widget manager: the whole stepper as one HTML output.

A stepper's live view is an ipywidgets widget, and a widget shows only where a widget
manager holds its model: a running kernel, or widget state saved in the notebook.
JupyterLab saves no widget state by default, so a reopened notebook says "Error
displaying widget: model not found"; VS Code never saves it; nbconvert's page fetches the
widget library from a CDN; GitHub runs no script at all. So each stepper also displays
this view, an output of its own (``widget.display_with_view``):

* every frame the widget holds, its drawing once, its header, Back, Play, Step and a
  slider, driven by a small inline script (``static/stepper-view.js``): no network, no
  kernel. The frames travel gzipped and base64-encoded (the browser's
  ``DecompressionStream`` unpacks them): frames repeat much of each other, and a lesson
  with a dozen steppers stays small;
* hidden until its script has looked for the stepper's live widget: where the widget
  renders (its root carries the stepper's scope as a class, and its style sheet hides this
  view, ``hide_style``), the view stays hidden, so one stepper shows, never two. Where the
  widget said "model not found", or fell back to its static text/html, the view shows
  in its place and hides that. Where no script runs (GitHub, untrusted output) the view
  is an empty hidden div, and the widget output's static text/html (the first step and
  the list of steps) is what a reader sees.
"""
import base64
import functools
import gzip
import importlib.resources
import json
import sys

SCRIPT = "stepper-view.js"
#: The class of the view's root (hidden by ``style=`` until its script shows it).
VIEW_CLASS = "tg-html-view"
#: Milliseconds the script waits for the live widget before it shows the view instead.
WAIT = 2500
#: What the view says of itself, true wherever it shows.
NOTE = ("This stepper runs in the page itself, from the steps saved in the notebook (no "
        "kernel needed). In a running notebook, run the cell again for the live stepper.")
#: The view's own layout: controls that stick to the top, the drawing (the one box that
#: scrolls) beside the step's text and tables, or above them in a narrow column.
STYLE = f"""<style>
.{VIEW_CLASS} .tg-view-controls {{display: flex; flex-wrap: wrap; align-items: center;
  gap: 6px; position: sticky; top: 0; z-index: 3; padding: 4px 0;
  background: var(--jp-layout-color0, white);}}
.{VIEW_CLASS} .tg-view-controls button {{font-size: 13px; padding: 2px 10px;
  min-width: 80px; cursor: pointer;}}
.{VIEW_CLASS} .tg-view-controls label {{font-size: 13px;}}
.{VIEW_CLASS} .tg-view-slider {{width: 260px; max-width: 60vw; vertical-align: middle;}}
.{VIEW_CLASS} .tg-view-at {{font-size: 13px;}}
.{VIEW_CLASS} .tg-view-body {{display: flex; flex-wrap: wrap; gap: 8px;
  align-items: flex-start;}}
.{VIEW_CLASS} .tg-graph-box {{flex: 1 1 40%; overflow: auto; position: relative;}}
.{VIEW_CLASS} .tg-view-frame {{flex: 1 1 50%; min-width: 320px;}}
div.{VIEW_CLASS} table :is(td, th) {{text-align: left !important;}}
</style>"""


@functools.lru_cache(maxsize=None)
def script():
    """The view's script (``static/stepper-view.js``, shipped inside teachgrad)."""
    return importlib.resources.files("teachgrad.viz").joinpath("static", SCRIPT) \
        .read_text(encoding="utf-8")


def pack(data):
    """``data`` as JSON, gzipped (with no timestamp: the same data give the same text) and
    base64-encoded: what the script unpacks."""
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, mtime=0)).decode("ascii")


def unpack(text):
    """What ``pack`` packed (tests read a view's frames with it)."""
    return json.loads(gzip.decompress(base64.b64decode(text)).decode("utf-8"))


def view_html(scope, header, graph, frames, first=0, interval=800, wait=WAIT):
    """The stepper as one HTML output.

    ``scope`` is the stepper's (its live widget's root has it as a class); ``header`` and
    ``graph`` are HTML (the graph inside its scrolling box, "" when there is none);
    ``frames`` one HTML string per frame, numbered from ``first``; ``interval`` the
    milliseconds per step when playing; ``wait`` how long the script waits for the live
    widget before it shows the view (0 where none is displayed). ``data-lm-suppress-shortcuts``
    asks JupyterLab to keep its notebook shortcuts out of the view (the script itself keeps
    the slider's keys the slider's)."""
    if not frames:
        raise ValueError("A stepper's HTML view needs at least one frame to show.")
    data = {"header": STYLE + header + f'<div class="tg-note"><i>{NOTE}</i></div>',
            "graph": graph, "frames": list(frames), "first": first, "interval": interval}
    return (f'<div class="tg-html-stepper"><div class="tg-stepper {VIEW_CLASS} {scope}" '
            f'data-scope="{scope}" data-wait="{wait}" data-lm-suppress-shortcuts="true" '
            f'style="display:none"></div>'
            f'<script type="application/x-teachgrad-frames" class="tg-view-data">'
            f"{pack(data)}</script><script>{script()}</script></div>")


def frames_of(html):
    """The data a view's HTML carries (``header``, ``graph``, ``frames``, ...)."""
    start = html.index('class="tg-view-data">') + len('class="tg-view-data">')
    return unpack(html[start:html.index("</script>", start)])


def hide_style(scope):
    """The style the live widget carries: it hides the view of the same stepper."""
    return f"<style>div.{VIEW_CLASS}.{scope} {{display: none !important;}}</style>"


def in_colab():
    """True in a Google Colab kernel: each output there is a frame of its own, so a view
    cannot see whether the widget rendered, and Colab renders ipywidgets 8 only through a
    widget manager of its own; there the stepper shows this view alone."""
    return "google.colab" in sys.modules
