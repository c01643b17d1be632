"""The stepping widget shared by BackpropStepper and JVPStepper (ipywidgets 8).

Every frame is rendered to HTML once, in Python, and becomes one child of an
``ipywidgets.Stack``. A Stack's view puts only its selected child in the page
(ipywidgets 8's ``StackView.update_children`` renders
``[children[selected_index]]``), so choosing a frame is a change of one
number, ``selected_index``, made in the browser:

* ``Play`` (play/pause, and its stop button goes back to step 0), the step
  ``IntSlider``, the step box (its up/down arrows step one at a time) and the
  speed slider are joined with ``jslink``: they work with no kernel round trip,
  and still work in a notebook saved with its widget state and rendered
  statically (the docs site).
* The Back, Step and Reset buttons run Python callbacks, so they need a live
  kernel (one round trip each); where there is none, use the slider, its
  arrow keys or the step box instead.

The controls come first, wrap to the notebook column's width and stick to the
top of the view; under them the drawing (shrunk to fit, never so far that its text
gets under 12 px, full size one click away), the one box that scrolls (at most
``VIEW`` tall: the frame's style keeps the node being processed inside it,
``follow.py``), beside the Stack, which takes the height its frame needs. The header
carries the shared style sheet: it and the drawing are always on the page. A frame
restyles the drawing through the ``<style>`` it carries, and that style leaves the page
with the frame.

Where no widget manager holds the widget's model (a reopened notebook saved without
widget state, VS Code, an nbconvert export offline), the stepper's HTML view
(``html_view.py``), displayed as a second output, steps in its place.
"""
import base64
import uuid

from ..debug.report import escape
from . import follow, html_view, render
from .step_controls import step_buttons, step_controls

#: Milliseconds per step when playing.
INTERVAL = 800
#: Frames built into a widget at most; a longer computation shows a window of it.
MAX_FRAMES = 600
#: The most height the drawing and the frame each take before they scroll.
VIEW = "60vh"
#: What the Back, Step and Reset buttons say of themselves: they run Python.
KERNEL_ONLY = ("Back, Step and Reset need a running kernel; Play, the slider and the step "
               "box work without one (in a saved notebook too).")
#: What the widget output's text/html says: it shows where no script runs (GitHub, an
#: untrusted notebook), and where one does, the stepper's HTML view takes its place.
STATIC_NOTE = ("An interactive stepper: run the notebook in Jupyter (trust it if asked) to "
               "step through it.")
#: Steps listed in the text shown where no widget runs.
MAX_TEXT_STEPS = 200


class Stepper:
    """What both steppers share: the frame window, the widget, the static fallback.

    A subclass sets ``frames`` (with ``len``) and writes ``frame_html(i, scope)``,
    ``graph_html(scope)`` (the drawing, or "" when there is none),
    ``header_html()``, ``text()`` and ``final_style(scope)``.
    """

    def __init__(self, count, max_frames, start, interval):
        self.window = _window(count, max_frames, start)
        if isinstance(interval, bool) or not isinstance(interval, int) or interval < 1:
            raise ValueError(f"interval is milliseconds per step, a whole number >= 1; got "
                             f"{interval!r}.")
        self.interval = interval
        self._scope = "tg-" + uuid.uuid4().hex[:12]
        self._widget = None

    def window_note(self):
        """A sentence when the widget holds only part of the frames, else ""."""
        first, stop = self.window
        count = len(self.frames)
        if (first, stop) == (0, count):
            return ""
        return (f"This computation has {count} steps; the widget holds steps {first} to "
                f"{stop - 1} (max_frames={stop - first}). Pass start= or max_frames= to see "
                f"others; every step is in stepper.frames.")

    @property
    def widget(self):
        """The ipywidgets view (built on first use)."""
        if self._widget is None:
            svg = self.graph_html(self._scope)
            self._widget = stepper_widget(self._frames_html(), render.fitted(self._scope, svg),
                                          self.header_html() + html_view.hide_style(self._scope),
                                          self._scope, self.interval,
                                          follow.readable_width(svg))
        return self._widget

    def close(self):
        """Close the widget and everything it made: its child widgets, their Layouts and
        Styles, and the jslink Links between the controls (``close_widgets``). ipywidgets
        keeps every widget in a registry until it is closed, so a stepper dropped in a
        loop would otherwise keep about 900 KiB alive. The stepper itself stays usable:
        ``stepper.widget`` builds a fresh widget."""
        if self._widget is not None:
            close_widgets(self._widget)
            self._widget = None

    def _frames_html(self):
        """The HTML of the frames the widget holds (made once: the widget and the HTML
        view share it)."""
        if getattr(self, "_frames_cache", None) is None:
            first, stop = self.window
            self._frames_cache = [self.frame_html(i, self._scope) for i in range(first, stop)]
        return self._frames_cache

    def html_view(self, title="", wait=html_view.WAIT):
        """The stepper as one HTML output that steps with no widget manager
        (``html_view.py``): the frames the widget holds, under ``title`` (HTML). Its
        drawing's ids are its own (the stepper's scope and ``-v``), so that the widget's
        frames never restyle it."""
        scope = self._scope + "-v"
        svg = self.graph_html(scope)
        graph = ""
        if svg:
            least = follow.readable_width(svg)
            width = f"min({max(least, 300)}px, 100%)" if least else "300px"
            graph = (f'<div class="tg-graph-box" style="min-width:{width};max-height:{VIEW}">'
                     f"{render.fitted(scope, svg)}</div>")
        frames = [h.replace(self._scope, scope) for h in self._frames_html()]
        return html_view.view_html(self._scope, title + self.header_html(), graph, frames,
                                   self.window[0], self.interval, wait)

    def static_html(self):
        """What shows where no script runs (GitHub, an untrusted notebook) and where the
        widget cannot render and the HTML view has not replaced it: a short note, a
        picture of the first step, and the steps as text.

        The picture is an ``<img>`` of a standalone SVG (its style inside it), never
        inline SVG: a renderer that strips SVG elements would leave their text behind.
        The same steps give the same HTML."""
        return self._first_step_html("tg-static", STATIC_NOTE)

    def _first_step_html(self, css_class, note):
        text = self.text()
        svg = self.first_picture()
        picture = ""
        if svg is not None:
            note += " Below, its first step."
            data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
            picture = (f'<img class="tg-first-frame" alt="the drawing of the first step" '
                       f'style="max-width:100%" src="data:image/svg+xml;base64,{data}">')
        first = self.frames[self.window[0]]
        return (f'<div class="tg-stepper {css_class}">'
                f'<p class="tg-note"><i>{note}</i></p>{picture}'
                f'<p class="tg-first-step">Step {first.index}: {escape(first.sentence)}</p>'
                f"<details><summary>All {len(self.frames)} steps, as text</summary>"
                f'<pre class="tg-steps">{escape(text)}</pre></details></div>')

    def first_picture(self):
        """The drawing as it looks at the widget's first step, as a standalone SVG
        (its colours in a ``<style>`` inside it), or None when there is no drawing."""
        svg = self.graph_html("tg-static")
        start = svg.find("<svg")
        if start < 0:
            return None
        css = render.STANDALONE_CSS + self.frame_style(self.window[0], "svg")
        css = css.replace("</style><style>", "").replace("<style>", "").replace("</style>", "")
        svg = svg[start:svg.index("</svg>", start) + len("</svg>")]   # the first drawing
        head = svg.index(">") + 1
        return svg[:head] + f"<style>{css}</style>" + svg[head:]

    def frame_style(self, index, root):
        """The ``<style>`` that colours the drawing for frame ``index`` under the CSS
        selector ``root`` ("" by default: a stepper with a drawing writes its own)."""
        return ""

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget._repr_mimebundle_()
        bundle["text/plain"] = self.text()
        bundle["text/html"] = self.static_html()
        return bundle

    def _ipython_display_(self):
        display_with_view(self._repr_mimebundle_, self.html_view)


def display_with_view(bundle, view):
    """Display ``bundle()`` (a widget's mimebundle, with its static text/html), then
    ``view()`` (``html_view.py``) as an output of its own (text/html only: nbval compares
    no HTML, so a lesson's tests see the same outputs as before): the stepper wherever
    the widget cannot render. In Colab, where each output is a frame of its own, the view
    alone (``html_view.in_colab``)."""
    from IPython.display import display
    if html_view.in_colab():
        display({"text/html": view(wait=0), "text/plain": bundle()["text/plain"]}, raw=True)
        return
    display(bundle(), raw=True)
    display({"text/html": view()}, raw=True)


def close_widgets(root):
    """Close ``root`` and every widget reachable from it: the widgets its traits hold
    (children, a Stack's pages, ``layout``, ``style``...) and the ``tg_parts`` links."""
    from ipywidgets import Widget
    seen, todo = {}, [root, *getattr(root, "tg_parts", {}).get("links", [])]
    while todo:
        widget = todo.pop()
        if id(widget) in seen:
            continue
        seen[id(widget)] = widget
        for name in widget.keys:
            value = getattr(widget, name, None)
            items = value if isinstance(value, (list, tuple)) else [value]
            todo.extend(v for v in items if isinstance(v, Widget))
    for widget in seen.values():
        widget.close()


def steps_words(count):
    """``23 steps, 0 to 22``: how many steps, numbered as the slider and the frames number
    them (from 0), so that a header's count and the last frame's number agree."""
    return f"{count} steps, 0 to {count - 1}" if count > 1 else "1 step, step 0"


def text_table(title, rows):
    """``title``, then one line per (index, kind, sentence), at most MAX_TEXT_STEPS."""
    lines = [title, f"{'step':>5}  {'event':<13} what happened"]
    for index, kind, sentence in rows[:MAX_TEXT_STEPS]:
        lines.append(f"{index:>5}  {kind:<13} {sentence}")
    if len(rows) > MAX_TEXT_STEPS:
        lines.append(f"  ... and {len(rows) - MAX_TEXT_STEPS} more steps "
                     f"(stepper.frames holds them all)")
    return "\n".join(lines)


def _window(count, max_frames, start):
    if isinstance(max_frames, bool) or not isinstance(max_frames, int) or max_frames < 1:
        raise ValueError(f"max_frames must be a whole number >= 1, got {max_frames!r}.")
    if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start < count:
        raise ValueError(f"start must be a step index from 0 to {count - 1}, got {start!r}.")
    return start, min(count, start + max_frames)


def stepper_widget(frame_html, graph_html, header_html, scope, interval=INTERVAL,
                   graph_width=None):
    """A VBox: the header, the controls, then the drawing (scrolling in a box at most
    ``VIEW`` tall) beside the frames (below it in a narrow column).

    ``frame_html`` is one HTML string per frame; ``scope`` is the stepper's
    unique id, given to the widget as a CSS class as well. ``graph_width`` (CSS
    pixels) is the narrowest the drawing's box may get, its text still readable
    (``follow.readable_width``): a wide drawing takes a row of its own, above
    the frames, and scrolls sideways in a narrow column.
    """
    import ipywidgets as widgets  # here: importing teachgrad should not pay for it
    if not frame_html:
        raise ValueError("A stepper needs at least one frame to show.")
    last = len(frame_html) - 1
    frames = widgets.Stack([widgets.HTML(value=h) for h in frame_html], selected_index=0,
                           layout=widgets.Layout(flex="1 1 50%", min_width="320px"))
    play, slider, box, speed = step_controls(widgets, last, interval)
    links = [widgets.jslink((play, "value"), (slider, "value")),
             widgets.jslink((slider, "value"), (frames, "selected_index")),
             widgets.jslink((slider, "value"), (box, "value")),
             widgets.jslink((speed, "value"), (play, "interval"))]
    back, step, reset = step_buttons(widgets, play, slider, last)
    # The drawing is the one box that scrolls (at most VIEW tall); the frame beside it, or
    # under it in a narrow column, takes the height it needs, with no fold of its own. The
    # controls wrap to the column's width and stick to the top of the view.
    graph = _graph_box(widgets, graph_html, graph_width)
    kernel = widgets.HTML(f'<span class="tg-kernel-note" title="{KERNEL_ONLY}">'
                          f"(▶ and the slider also work in a saved notebook)</span>")
    controls = widgets.HBox([play, back, step, reset, kernel, slider, box, speed],
                            layout=widgets.Layout(flex_flow="row wrap", align_items="center"))
    controls.add_class("tg-controls")
    root = widgets.VBox([
        widgets.HTML(value=header_html),
        controls,
        widgets.HBox([graph, frames], layout=widgets.Layout(flex_flow="row wrap")),
    ], layout=widgets.Layout(max_width="100%"))
    root.add_class("tg-stepper-widget")
    root.add_class(scope)
    # Kept on the widget so that tests (and curious students) can find the parts.
    root.tg_parts = {"frames": frames, "play": play, "slider": slider, "box": box,
                     "speed": speed, "back": back, "step": step, "reset": reset,
                     "graph": graph, "links": links, "controls": controls, "kernel": kernel}
    return root


def _graph_box(widgets, graph_html, graph_width):
    """The drawing's box, scrolling, at most ``VIEW`` tall and at least ``graph_width``
    (or 300 px) wide."""
    least = f"min({max(graph_width, 300)}px, 100%)" if graph_width else "300px"
    graph = widgets.HTML(value=graph_html,
                         layout=widgets.Layout(flex="1 1 40%", min_width=least,
                                               overflow="auto", max_height=VIEW))
    graph.add_class("tg-graph-box")    # a CSS container: follow.follow_style reads its width
    return graph
