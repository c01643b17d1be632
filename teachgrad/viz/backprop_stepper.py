"""``tg.viz.BackpropStepper``: step through a recorded backward pass.

    with tg.viz.record() as rec:
        grads = tape.gradient(y, [x, w])
    tg.viz.BackpropStepper(rec.traces[0])       # or BackpropStepper.from_gradient(tape, y, [x, w])

Each step is one event the engine reported (``frames.py`` folds them): the
drawing shows every node's state, and beside it come the queue, the pending
counts, each tensor's gradient contributions (and their sum, with its
method), and one sentence saying what the step did and why.

Stepping runs in the browser (see ``widget.py``). Where no widget can show
(GitHub, nbconvert, nbval), the stepper shows the final drawing and a text
table of the steps; that text is the same in every run.

What a browser test can rely on, inside the widget (class ``tg-stepper-widget``):

* ``.tg-frame``: the frame on show (only one is in the page), with
  ``data-step`` (its index) and ``data-processing`` (the DOT name of the node
  being processed, empty if none);
* ``.tg-queue``: the queue's contents, front first (``.tg-empty`` when empty);
* ``.tg-state-processing``: the chip naming the node being processed (its
  ``data-node`` is the node's DOT name);
* ``g.tg-node-<name>``: the node drawn as ``name`` in the SVG (``n3``); the
  frame's style fills the node being processed with ``render.PROCESSING_FILL``.
"""
from .. import validate
from ..autodiff import events
from ..debug.report import escape
from . import render
from .backprop_drawing import PassDrawing
from .frame_types import DONE, PROCESSING, QUEUED, SKIPPED, WAITING
from .frames import backprop_frames
from .values import format_block, format_sum, format_value, join_words, loop_label, node_label
from .widget import INTERVAL, MAX_FRAMES, Stepper, steps_words, text_table

#: Rows shown in a frame's tables before "... and N more".
MAX_ROWS = 24


class BackpropStepper(Stepper):
    """Step through a backward pass recorded by ``tg.viz.record()``.

    Args:
      trace: a ``Trace`` (``rec.traces[i]``), or the recorder itself, whose
        first backward pass is taken.
      max_frames: how many frames the widget holds (each is HTML kept in the
        notebook). A longer pass shows frames ``start`` to
        ``start + max_frames - 1`` and says so; every frame stays in ``frames``.
      start: the first frame the widget shows.
      interval: milliseconds per step when playing.
      labels: ``{tensor id: label}`` naming some tensors (a node is named by its
        output) in place of their names or ``t1, t2, ...``: a student's run beside
        teachgrad's (``tg.exercises.Beside``) is named as the exercise's messages name it.

    Attributes:
      frames: every ``Frame`` (``frames.py``), one per engine event.
      gradients: what ``gradient()`` returned, when made by ``from_gradient``.
    """

    def __init__(self, trace, *, max_frames=MAX_FRAMES, start=0, interval=INTERVAL,
                 labels=None):
        self.trace = _backward_trace(trace)
        self.frames = backprop_frames(self.trace, labels=_checked_labels(labels))
        super().__init__(len(self.frames), max_frames, start, interval)
        self.gradients = None
        self._pass = PassDrawing(self.trace, self.frames)

    @classmethod
    def from_gradient(cls, tape, target, sources, output_gradients=None,
                      unconnected_gradients="none", **kwargs):
        """Run ``tape.gradient(target, sources, ...)`` while recording, and step through it.

        The gradients it returned are kept in ``stepper.gradients``; ``kwargs``
        go to the stepper (``max_frames``, ``start``, ``interval``).
        """
        with events.record() as rec:
            grads = tape.gradient(target, sources, output_gradients=output_gradients,
                                  unconnected_gradients=unconnected_gradients)
        stepper = cls(rec, **kwargs)
        stepper.gradients = grads
        return stepper

    # -- the drawing (backprop_drawing.PassDrawing) ------------------------------------
    def drawing(self):
        """The ``tg.viz.draw`` drawing of the pass's nodes (None if it cannot be drawn).

        It names what the frames name, and each tensor's ``grad = ...`` line is
        as wide as the longest running sum it shows (see ``graph_html``)."""
        return self._pass.drawing()

    def graph_html(self, scope):
        """The drawing as SVG, its element ids prefixed with ``scope`` ("" if not drawn),
        with every version of each running sum, for the frames to show one each."""
        return self._pass.graph_html(scope)

    def final_style(self, scope):
        return self.frame_style(len(self.frames) - 1, f"#{scope}")

    def frame_style(self, index, root):
        """The drawing's colours, running sums and travelling edges in frame ``index``,
        for the drawing under the CSS selector ``root``."""
        return self._pass.frame_style(index, root)

    # -- HTML -------------------------------------------------------------------------
    def frame_html(self, index, scope):
        """The HTML of frame ``index``: its style for the drawing (the element with
        id ``scope``), then its sentence and tables."""
        frame = self.frames[index]
        labels = self.frames.labels
        parts = [self.frame_style(index, f"#{scope}"), self._pass.follow(frame, scope),
                 f'<div class="tg-step">Step {index} (0 to {len(self.frames) - 1}): '
                 f"{frame.kind}</div>",
                 f'<p class="tg-sentence">{escape(frame.sentence)}</p>']
        if frame.loop is not None:
            parts.append(f'<div class="tg-loop">{escape(_loop_words(frame.loop, labels))}'
                         f"</div>")
        node = frame.processing
        if not self.frames.has_pass:   # a forward loop's trace: iterations only
            return (f'<div class="tg-stepper tg-frame" data-step="{index}" data-processing="">'
                    + "".join(parts) + "</div>")
        now = (_chip(self.frames, node, PROCESSING) if node is not None
               else '<span class="tg-empty">nothing</span>')
        parts.append(f"<div>Being processed: {now}</div>")
        queue = "".join(_chip(self.frames, n, QUEUED) for n in frame.queue) \
            or '<span class="tg-empty">empty</span>'
        parts.append(f'<div>Queue, front first: <span class="tg-queue">{queue}</span></div>')
        parts.append(pending_table(self.frames, frame))
        parts.append(gradient_table(self.frames, frame))
        return (f'<div class="tg-stepper tg-frame" data-step="{index}" '
                f'data-processing="{self.frames.names.get(node, "") if node else ""}">'
                + "".join(parts) + "</div>")


    def header_html(self):
        title = (f"<b>{escape(self._title())}</b>: {steps_words(len(self.frames))}, one per "
                 f"event.")
        self.graph_html("@SCOPE@")   # renders the drawing once, or finds why it cannot
        notes = [n for n in (self.window_note(), self._pass.note) if n]
        note = "".join(f'<div class="tg-note">{escape(n)}</div>' for n in notes)
        return f'{render.STYLE}<div class="tg-stepper">{title}{render.legend()}{note}</div>'

    def text(self):
        """The steps as a plain-text table (what shows where no widget runs)."""
        title = f"BackpropStepper: {len(self.frames)} steps of {self._title()[0].lower()}" \
                f"{self._title()[1:]}"
        return text_table(title, [(f.index, f.kind, f.sentence) for f in self.frames.frames])

    def _title(self):
        frames = self.frames
        if not frames.has_pass:
            return "Loop iterations, with no backward pass"
        return (f"The backward pass of {_words(frames.targets, frames)} with respect to "
                f"{_words(frames.sources, frames)}")

    def __repr__(self):
        return (f"<BackpropStepper: {len(self.frames)} steps, "
                f"{len(self.frames.nodes)} nodes>")


def pending_table(frames, frame):
    """The nodes with their states and pending counts (those under way, in a big pass)."""
    nodes = frames.nodes
    if len(nodes) > MAX_ROWS:   # a big pass: the nodes under way, and how many are not
        nodes = [n for n in nodes if frame.states[n] in (WAITING, QUEUED, PROCESSING)]
    counts = {}
    for state in frame.states.values():
        counts[state] = counts.get(state, 0) + 1
    rows = [(render.chip(frames.labels[n], frame.states[n], frames.names[n]),
             _count(frame.pending.get(n, 0)), render.WORDS[frame.states[n]])
            for n in nodes[:MAX_ROWS]]
    summary = ", ".join(f"{counts[s]} {render.WORDS[s]}" for s in render.WORDS if s in counts)
    return ("<div><b>Pending counts</b> (" + summary + ")</div>"
            + render.table("tg-pending", ["node", "pending", "state"], rows,
                           more=max(0, len(nodes) - MAX_ROWS)))


def gradient_table(frames, frame):
    """Each tensor's contributions so far, and their sum once aggregated."""
    items = list(frame.gradients.items())
    if len(items) > MAX_ROWS:   # a big pass: the gradients still being gathered or used
        sources = {s.id for s in frames.sources}
        done = {t.id for n in frames.nodes if frame.states[n] in (DONE, SKIPPED)
                for t in n.outputs}
        items = [(k, g) for k, g in items if k in sources or k not in done]
    # all in: the node that made the tensor is in the queue (its pending count is 0) or
    # has been popped; until then more contributions may come
    all_in = {t.id for n in frames.nodes
              if frame.states[n] in (QUEUED, PROCESSING, DONE, SKIPPED) for t in n.outputs}
    rows = []
    for key, grad in items[:MAX_ROWS]:
        if grad.total is not None:
            how = ("one contribution, nothing to add" if grad.method == "nop"
                   else f"summed by {grad.method}")
        elif len(grad.contributions) == 1:
            how = ("one contribution, nothing to add" if key in all_in
                   else "so far: more may come")
        else:
            how = ("all in: added up when its node leaves the queue" if key in all_in
                   else "so far: the running sum")
        blocks = "".join(f'<pre class="tg-value tg-array">{escape(block)}</pre>'
                         for block in map(format_block, grad.contributions) if block)
        rows.append((escape(grad.label),
                     render.value(format_sum([format_value(c) for c in grad.contributions]))
                     + blocks, f"{render.value(grad.text)} ({how})"))
    if not rows:
        return '<div><b>Gradients</b>: <span class="tg-empty">none received yet</span></div>'
    return ("<div><b>Gradients</b>: contributions received so far, and their sum</div>"
            + render.table("tg-gradients", ["tensor", "contributions", "gradient"], rows,
                           more=max(0, len(items) - MAX_ROWS)))


def _chip(frames, node, state):
    """A node's chip. A student's engine (``tg.exercises.replay``) may queue a node the
    pass never counted: it is named as the sentences name it, and has no DOT name."""
    label = frames.labels.get(node) or node_label(node)
    return render.chip(label, state, frames.names.get(node))


def _count(count):
    """A pending count as the table shows it (None: the engine did not count the node)."""
    return '<span class="tg-empty">not counted</span>' if count is None else str(count)


def _backward_trace(trace):
    if isinstance(trace, events.Recorder):
        passes = [t for t in trace.traces if t.start is not None]
        if not passes:
            raise ValueError("This recorder holds no backward pass: call tape.gradient(...) "
                             "or tg.gradients(...) inside `with tg.viz.record() as rec:`.")
        return passes[0]   # the outermost pass: it starts before any pass nested in it
    return trace


def _words(tensors, frames):
    return join_words([frames.labels.get(t.id, t.name or "a tensor") for t in tensors]) \
        or "nothing"


def _loop_words(loop, labels):
    name = loop_label(loop.node, labels)
    return f"Iteration {loop.iteration} of the {loop.direction} loop of {name}"


def _checked_labels(labels):
    """``labels`` checked: None, or a dict from tensor ids (ints) to names (strings)."""
    if labels is None:
        return None
    if not isinstance(labels, dict) or not all(
            isinstance(k, int) and isinstance(v, str) for k, v in labels.items()):
        validate.fail(TypeError, "tg.viz.BackpropStepper", "labels", "a dict from tensor ids "
                      "(ints) to names (strings), or None", labels)
    return labels
