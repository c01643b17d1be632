"""``tg.viz.JVPStepper``: step through forward mode, op by op.

    with tg.viz.record() as rec:
        with tg.ForwardAccumulator(x, x_dot) as acc:
            y = f(x)
    tg.viz.JVPStepper(rec)

The forward ops are drawn once, each tensor with its value and its tangent;
each step colours the op being differentiated and shows the tangents known so
far. Each op the accumulator differentiated is a step (``jvp_frames.py``); an op
whose JVP comes by transposing its VJP rule opens into its own steps: the aid
vector u, g(u) = J^T u, the transpose tape's backward pass (drawn, node by
node, when the recorder is passed), and the output tangent, with the native
rule's answer beside it, computed for comparison, where the op has one.

Pass the recorder (``rec``), not only ``rec.traces[0]``: each transposed op's
transpose tape records a backward pass of its own, in ``rec.traces``.

Classes a browser test can rely on: ``.tg-frame`` (with ``data-step``,
``data-op`` and ``data-phase``), ``.tg-jvp`` (the table of tangents, each row
marked ``recorded`` or ``computed``), and inside the transpose phase the
backward pass's ``.tg-queue``.
"""
from ..autodiff import events
from ..debug.report import escape
from . import render
from .backprop_stepper import gradient_table
from .frame_types import PROCESSING, QUEUED
from .jvp_drawings import follow_node, forward_drawing, forward_style, transpose_drawings
from .jvp_frames import jvp_frames
from .values import format_value
from .widget import INTERVAL, MAX_FRAMES, Stepper, steps_words, text_table

_PHASES = {"native": "native JVP rule", "aid": "1. the aid vector u",
           "backward": "2. g(u) = J^T u", "transpose": "3. the transpose tape",
           "tangent": "4. the output tangent", "loop": "loop iteration"}


#: What the words of forward mode mean, above the steps.
FORWARD_LEGEND = (
    '<div class="tg-legend"><b>Forward mode</b> carries, beside each value (the '
    "<i>primal</i>), its <i>tangent</i> x_dot: how fast the value changes as the inputs move "
    "along the direction given to the accumulator. Each op maps its input tangents to its "
    "output tangent y_dot = J x_dot, with its <i>native JVP rule</i>, or, where it has none, "
    "by <i>transposing its VJP rule</i> (a small backward pass of its own, on the "
    "<i>transpose tape</i>, whose unnamed tensors are numbered on from the forward ones: t4, t5, ...). Rows marked "
    "<i>recorded</i> are what the accumulator did; <i>computed</i> ones are worked out "
    "again only to compare.</div>")


class JVPStepper(Stepper):
    """Step through what a ``ForwardAccumulator`` did, recorded by ``tg.viz.record()``.

    Args:
      trace: the recorder (``rec``; its first trace with JVP events is
        stepped through and its other traces give the transpose tapes), or one
        ``Trace``.
      transposes: with a ``Trace``, the traces to search for the transpose
        tapes' backward passes (``rec.traces``).
      max_frames, start, interval: as for ``BackpropStepper``.

    Attributes:
      frames: every ``JVPFrame`` (``jvp_frames.py``).
    """

    def __init__(self, trace, *, transposes=None, max_frames=MAX_FRAMES, start=0,
                 interval=INTERVAL):
        if transposes is not None and (not isinstance(transposes, (list, tuple)) or not all(
                isinstance(t, events.Trace) for t in transposes)):
            raise TypeError(f"JVPStepper: `transposes` must be a list of traces (rec.traces), "
                            f"but got {type(transposes).__name__} {transposes!r:.60}.")
        if isinstance(trace, events.Recorder):
            found = [t for t in trace.traces if any(isinstance(e, events.JVP) for e in t.events)]
            if not found:
                raise ValueError("This recorder holds no forward-mode trace: run the "
                                 "computation inside `with tg.ForwardAccumulator(x, x_dot) as "
                                 "acc:` within `with tg.viz.record() as rec:`.")
            trace, transposes = found[0], trace.traces if transposes is None else transposes
        elif transposes is None and _transposes_ops(trace):
            raise ValueError(
                "JVPStepper(trace): this forward-mode trace transposes VJP rules, and each "
                "transposition's backward pass is recorded as a trace of its own, beside it in "
                "the recorder. Pass the recorder itself, tg.viz.JVPStepper(rec), not "
                "rec.traces[0] (or pass transposes=rec.traces).")
        self.trace = trace
        self.frames = jvp_frames(trace, transposes or ())
        super().__init__(len(self.frames), max_frames, start, interval)
        self._drawings = None
        self._forward = None      # (drawing, svg with "@SCOPE@", tangent lines), or ()
        self._notes = []
        self._centres = {}        # id(svg) -> follow.centres(svg)

    # -- drawings (jvp_drawings) -------------------------------------------------------
    def _drawn_ops(self):
        """{op index: (drawing, svg with "@SCOPE@")} for the transpose tapes in the window."""
        if self._drawings is None:
            self._drawings = transpose_drawings(self.frames, self.window, self._notes)
        return self._drawings

    def _forward_drawn(self):
        """The forward ops drawn once, each tensor with its value and tangent; () if not."""
        if self._forward is None:
            self._forward = forward_drawing(self.frames, self._notes)
        return self._forward

    def frame_style(self, index, root):
        """The forward drawing in frame ``index``: the ops done, the op being
        differentiated, and the tangents known so far (under the CSS selector ``root``)."""
        return forward_style(self.frames, self._forward_drawn(), index, root)

    def graph_html(self, scope):
        parts = []
        forward = self._forward_drawn()
        if forward:
            parts.append(f'<div class="tg-forward-graph"><div><b>The forward computation</b>: '
                         f"each value with its tangent, once its op has run</div>"
                         f'{forward[1].replace("@SCOPE@", f"{scope}-fwd")}</div>')
        for k, (_, svg) in self._drawn_ops().items():
            label = self.frames.labels[self.frames.events[k].node]
            parts.append(f'<div class="tg-op-graph tg-op-{k}"><div><b>Transpose tape of '
                         f"{escape(label)}</b>: the graph of g(u), differentiated "
                         f"with respect to u</div>"
                         f'{svg.replace("@SCOPE@", f"{scope}-op{k}")}</div>')
        if not parts:
            return ""
        return "".join(parts[:1] if forward else []) + (
            f"<style>#{scope} .tg-op-graph{{display:none}}"
            f"#{scope}{{display:flex;flex-direction:column}}</style>"
            + "".join(parts[1:] if forward else parts))

    def final_style(self, scope):
        return self._style(self.frames[len(self.frames) - 1], scope)

    def _style(self, frame, scope):
        forward = self.frame_style(frame.index, f"#{scope} .tg-forward-graph")
        k = frame.op_index
        drawn = self._drawn_ops().get(k)
        if drawn is None or frame.phase not in ("backward", "transpose", "tangent"):
            return forward + self._follow(self._forward_drawn(), frame.node,
                                          f"#{scope} .tg-forward-graph")
        transpose = self.frames.transposes[k]
        inner = frame.inner if frame.phase == "transpose" else None
        if frame.phase == "tangent":
            inner = transpose.frames[-1]
        node = None if inner is None else inner.processing
        if inner is not None:
            drawing = drawn[0]
            forward += render.state_style(f"#{scope} .tg-op-{k}", render.drawn_states(
                inner.states, inner.tensor_states, drawing.node_names, drawing.tensor_names))
        if node is None:      # no tape node being processed: the tape shows under the ops
            return (forward + f"<style>#{scope} .tg-op-{k}{{display:block}}</style>"
                    + self._follow(self._forward_drawn(), frame.node,
                                   f"#{scope} .tg-forward-graph"))
        # The tape being walked goes first in the box, its node being processed in view.
        return (forward + f"<style>#{scope} .tg-op-{k}{{display:block;order:-1}}</style>"
                + self._follow(drawn, node, f"#{scope} .tg-op-{k}"))

    def _follow(self, drawn, node, root):
        return follow_node(self._centres, drawn, node, root)

    # -- HTML -------------------------------------------------------------------------
    def frame_html(self, index, scope):
        frame = self.frames[index]
        ops = len(self.frames.events)
        where = (f"op {frame.op_index + 1} of {ops} ({self.frames.labels[frame.node]})"
                 if frame.op_index >= 0 else "a loop")
        parts = [self._style(frame, scope),
                 f'<div class="tg-step">Step {index} (0 to {len(self.frames) - 1}) · '
                 f"{escape(where)} · {_PHASES[frame.phase]}</div>",
                 f'<p class="tg-sentence">{escape(frame.sentence)}</p>']
        if frame.op_index >= 0:
            parts.append(self._tangent_table(frame))
        if frame.inner is not None:
            transpose = self.frames.transposes[frame.op_index]
            inner = frame.inner
            queue = "".join(render.chip(transpose.labels[n], QUEUED, transpose.names[n])
                            for n in inner.queue) or '<span class="tg-empty">empty</span>'
            now = (render.chip(transpose.labels[inner.processing], PROCESSING,
                               transpose.names[inner.processing])
                   if inner.processing is not None else '<span class="tg-empty">nothing</span>')
            parts.append(f"<div><b>Transpose tape</b>: being processed: {now}; queue, front "
                         f'first: <span class="tg-queue">{queue}</span></div>')
            parts.append(gradient_table(transpose, inner))
        return (f'<div class="tg-stepper tg-frame" data-step="{index}" '
                f'data-op="{frame.op_index}" data-phase="{frame.phase}">'
                + "".join(parts) + "</div>")

    def _tangent_table(self, frame):
        event = frame.event
        order = ("aid", "backward", "transpose", "tangent")
        reached = order.index(frame.phase) if frame.phase in order else len(order)
        rows = [("input tangents x_dot", _values(event.input_tangents), "recorded")]
        if event.method == "transpose":
            rows.append(("aid vector u", _values(event.aids), "recorded"))
            if reached >= 1:
                rows.append(("g(u) = J^T u", _values(event.backward), "recorded"))
        if frame.phase in ("native", "tangent"):
            rows.append(("output tangent y_dot", _values(event.output_tangents), "recorded"))
            if frame.compared is not None:
                other = ("by transposition" if event.method == "native"
                         else "by the native rule")
                verdict = "agrees" if frame.agree else "DISAGREES"
                rows.append((f"output tangent {other} ({verdict})", _values(frame.compared),
                             "computed now for comparison"))
        cells = [(escape(name), render.value(text),
                  f'<span class="tg-{"recorded" if how == "recorded" else "computed"}">'
                  f"{how}</span>") for name, text, how in rows]
        return render.table("tg-jvp", ["", "value", "where it comes from"], cells)

    def header_html(self):
        ops = len(self.frames.events)
        transposed = sum(e.method == "transpose" for e in self.frames.events)
        title = (f"<b>Forward mode</b>: {ops} ops, {transposed} of them by transposition of "
                 f"their VJP rule; {steps_words(len(self.frames))}.")
        self._drawn_ops()
        if transposed and not self.frames.transposes:
            self._notes.append("The transpose tapes are not shown: pass the recorder, "
                               "tg.viz.JVPStepper(rec), to step through them too.")
        notes = [n for n in [self.window_note()] + self._notes if n]
        note = "".join(f'<div class="tg-note">{escape(n)}</div>' for n in notes)
        legend = FORWARD_LEGEND + (render.legend() if self.frames.transposes else "")
        return f'{render.STYLE}<div class="tg-stepper">{title}{legend}{note}</div>'

    def text(self):
        """The steps as a plain-text table (what shows where no widget runs)."""
        title = (f"JVPStepper: {len(self.frames)} steps of forward mode through "
                 f"{len(self.frames.events)} ops")
        return text_table(title, [(f.index, f.phase, f.sentence) for f in self.frames.frames])

    def __repr__(self):
        return f"<JVPStepper: {len(self.frames)} steps, {len(self.frames.events)} ops>"


def _transposes_ops(trace):
    return any(isinstance(e, events.JVP) and e.method == "transpose"
               for e in getattr(trace, "events", None) or ())


def _values(tensors):
    if tensors is None:
        return "None"
    return ", ".join(format_value(t) for t in tensors)
