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
top of the view; under them the drawing (shrunk to fit, full size one click
away) sits beside the Stack, each scrolling in a box at most ``VIEW`` tall, so
the controls stay in sight at every step. The header carries the shared style
sheet: it and the drawing are always on the page. A frame restyles the drawing through the
``<style>`` it carries, and that style leaves the page with the frame.
"""
import base64
import uuid

from ..debug.report import escape
from . import follow, render
from .step_controls import step_buttons, step_controls

#: Milliseconds per step when playing.
INTERVAL = 800
#: Frames built into a widget at most; a longer computation shows a window of it.
MAX_FRAMES = 600
#: The most height the drawing and the frame each take before they scroll.
VIEW = "60vh"
#: What the static view says of a notebook saved without its widgets (JupyterLab does
#: not save widget state by default, and then an export shows this view instead).
SAVE_STATE = ("To keep it stepping in a saved notebook or an HTML export, with no kernel, "
              "save its widget state: in JupyterLab, Settings > Save Widget State "
              "Automatically, then run the notebook and save it.")
#: What the Back, Step and Reset buttons say of themselves: they run Python.
KERNEL_ONLY = ("Back, Step and Reset need a running kernel; Play, the slider and the step "
               "box work without one (in a saved notebook too).")
#: What an HTML export says above its copy of the first step, shown where the widget does
#: not load (nbconvert's page loads the widget library from a CDN: offline, nothing).
EXPORT_NOTE = ("The interactive stepper cannot load here: its widget library comes from the "
               "internet, which this page cannot reach.")
#: Unhides an export's copy of the first step (hidden by its own ``style`` attribute):
#: where a widget runs, the stepper's own style sheet hides it again (``render.STYLE``,
#: more specific); where the stepper's text/html view shows (an export of a notebook saved
#: without widget state), it is hidden too. A renderer that strips ``<style>`` and keeps
#: ``style=`` (JupyterLab, for untrusted output) leaves it hidden.
EXPORT_STYLE = (f"<style>div.{render.EXPORT_CLASS} {{display: block !important;}}"
                f":root:has(.tg-stepper.tg-static) div.{render.EXPORT_CLASS} "
                f"{{display: none !important;}}</style>")
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
            first, stop = self.window
            html = [self.frame_html(i, self._scope) for i in range(first, stop)]
            svg = self.graph_html(self._scope)
            self._widget = stepper_widget(html, render.fitted(self._scope, svg),
                                          self.header_html(), self._scope, self.interval,
                                          follow.readable_width(svg))
        return self._widget

    def static_html(self):
        """What shows where no widget runs (a lesson opened fresh, before its kernel runs
        or while it is untrusted; GitHub; nbconvert): a short note, a picture of the
        first step, and the steps as text.

        The picture is an ``<img>`` of a standalone SVG (its style inside it), never
        inline SVG: a renderer that strips SVG elements would leave their text behind.
        The same steps give the same HTML."""
        note = ("An interactive stepper: run the notebook (and trust it if asked) to step "
                "through it. " + SAVE_STATE)
        return self._first_step_html("tg-static", note, "")

    def export_html(self, title=""):
        """A copy of the first step for an HTML export whose widget cannot load.

        nbconvert renders an output's widget view, not its text/html, once the notebook
        holds widget state, and its page loads the widget library from a CDN: offline, the
        stepper's box stays empty. So the stepper shows this as an output of its own
        (``_ipython_display_``): hidden (``style=``, and the widget's style sheet), unless
        ``EXPORT_STYLE`` applies and no widget and no ``static_html`` view is on the page.
        ``title`` (HTML) goes above it."""
        return EXPORT_STYLE + self._first_step_html(render.EXPORT_CLASS, EXPORT_NOTE,
                                                    ' hidden style="display:none"', title)

    def _first_step_html(self, css_class, note, attributes, title=""):
        text = self.text()
        svg = self.first_picture()
        picture = ""
        if svg is not None:
            note += " Below, its first step."
            data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
            picture = (f'<img class="tg-first-frame" alt="the drawing of the first step" '
                       f'style="max-width:100%" src="data:image/svg+xml;base64,{data}">')
        return (f'<div class="tg-stepper {css_class}"{attributes}>{title}'
                f'<p class="tg-note"><i>{note}</i></p>{picture}'
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
        display_with_export_copy(self._repr_mimebundle_(), self.export_html())


def display_with_export_copy(bundle, export_html):
    """Display ``bundle`` (a widget's, with its text/html view), then ``export_html`` as an
    output of its own (text/html only: nbval compares no HTML, so a lesson's tests see
    the same outputs as before): what an offline HTML export shows instead of the widget."""
    from IPython.display import display
    display(bundle, raw=True)
    display({"text/html": export_html}, raw=True)


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
    """A VBox: the header, the controls, then the drawing beside the frames (below
    it in a narrow column), each scrolling in a box at most ``VIEW`` tall.

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
    # The drawing and the frames scroll in boxes of their own, at most VIEW tall, under
    # the controls, which wrap to the column's width and stick to the top of the view.
    graph = _graph_box(widgets, graph_html, graph_width)
    frames.layout.max_height = VIEW
    frames.layout.overflow = "auto"
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
