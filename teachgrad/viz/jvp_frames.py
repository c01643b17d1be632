"""Frames for the JVPStepper: forward mode, one op at a time.

A ``ForwardAccumulator`` reports one ``JVP`` event per op it differentiates,
in forward order. An op with a native JVP rule takes one frame. An op whose
JVP comes by **transposition** of its VJP rule (``forward.py``) is stepped
through inside:

1. ``aid``: the aid vector u, ones shaped like the output;
2. ``backward``: the VJP rule applied to u on a tape, g(u) = J^T u, linear in u;
3. ``transpose``: the transpose tape's backward pass, differentiating
   <g(u), x_dot> with respect to u, one frame per event it reported (when
   its trace is given: it is a trace of its own, matched to the op by its
   sources, which are the very aid tensors of the JVP event);
4. ``tangent``: the output tangent J x_dot, the gradient with respect to u.

Every number in those frames was recorded. Beside them, for comparison, the
other way of getting the tangent is **computed** (and said to be): the
native rule where the op has one, or the transposition for an op that ran
its native rule. The two must agree, which is the lesson.
"""
import contextlib
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping, Optional

import numpy as np

from ..autodiff import events
from ..autodiff.forward import jvp_of, transposition_only
from ..state import override, state
from ..tensor import SymbolicTensor
from .frames import backprop_frames
from .labels import op_text
from .names import Names
from .values import format_value, loop_label


@dataclass(frozen=True)
class JVPFrame:
    """One step of forward mode.

    ``op_index`` counts the ops in forward order (-1 for a loop iteration);
    ``phase`` is "native", "aid", "backward", "transpose", "tangent" or
    "loop"; ``inner`` is the transpose tape's ``Frame`` in phase "transpose";
    ``compared`` holds the output tangents the *other* method gives, computed
    for display (None where it cannot be: a graph, or an op with no native
    rule), and ``agree`` whether they match the recorded ones.
    """
    index: int
    op_index: int
    event: Any
    node: Any
    method: str
    phase: str
    sentence: str
    inner: Any = None
    compared: Optional[tuple] = None
    agree: Optional[bool] = None


@dataclass(frozen=True)
class JVPFrames:
    """All frames of one forward-mode computation, with the names to show them.

    ``transposes`` maps an op's index to the ``BackpropFrames`` of its
    transpose tape (when that trace was found).
    """
    trace: Any
    frames: tuple
    events: tuple
    nodes: tuple
    names: Mapping
    labels: Mapping
    transposes: Mapping
    namer: Any = None

    def __len__(self):
        return len(self.frames)

    def __getitem__(self, index):
        return self.frames[index]


def jvp_frames(trace, transpose_traces=()):
    """The frames of a forward-mode ``Trace``; ``transpose_traces`` are the other
    traces recorded with it, searched for each transposed op's backward pass."""
    event_list = getattr(trace, "events", None)
    if not isinstance(event_list, list):
        raise TypeError(f"Expected a Trace from `with tg.viz.record() as rec:` as the trace, got "
                        f"{type(trace).__name__}.")
    jvps = [e for e in event_list if isinstance(e, events.JVP)]
    if not jvps:
        raise ValueError("This trace holds no JVP events. Record forward mode with "
                         "`with tg.viz.record() as rec:` around "
                         "`with tg.ForwardAccumulator(x, x_dot) as acc: y = f(x)`, and pass rec.")
    nodes = sorted({id(e.node): e.node for e in jvps}.values(), key=lambda n: n.id)
    names = {node: f"n{k}" for k, node in enumerate(nodes)}
    namer = Names(nodes)
    labels = {node: namer.node(node) for node in nodes}
    by_aid = {}
    for other in transpose_traces:
        start = other.start if other is not trace else None
        if start is not None and start.sources:
            by_aid[id(start.sources[0])] = other

    frames, transposes, op_index, number = [], {}, 0, namer.count
    for event in event_list:
        if isinstance(event, events.LoopIteration):
            said = f"The {event.direction} loop of {loop_label(event.node)} starts iteration " \
                   f"{event.iteration} (counted from 0)."
            frames.append(JVPFrame(len(frames), -1, event, event.node, "loop", "loop", said))
            continue
        if not isinstance(event, events.JVP):
            raise ValueError(f"A forward-mode trace holds JVP events, not "
                             f"{type(event).__name__}: step through a backward pass with "
                             f"tg.viz.BackpropStepper.")
        inner = by_aid.get(id(event.aids[0])) if event.aids else None
        if inner is not None:
            # One scheme: the tape's unnamed tensors go on from the last number used.
            transposes[op_index] = backprop_frames(inner, _transpose_labels(event),
                                                   start=number)
            number = transposes[op_index].namer.count
        node = event.node
        said = labels[node] if namer.says_op(node) else f"{labels[node]} ({op_text(node.op)})"
        for phase, sentence, extra in _steps(event, said, transposes.get(op_index)):
            frames.append(JVPFrame(len(frames), op_index, event, event.node, event.method,
                                   phase, sentence, **extra))
        op_index += 1
    return JVPFrames(trace, tuple(frames), tuple(jvps), tuple(nodes),
                     MappingProxyType(names), MappingProxyType(labels),
                     MappingProxyType(transposes), namer)


def _steps(event, label, transpose):
    """(phase, sentence, extra fields) for each frame of one op."""
    x_dot = _values(event.input_tangents)
    y_dot = _values(event.output_tangents)
    compared, agree, said = _compare(event)
    if event.method == "native":
        yield ("native", f"{label} has a native JVP rule: it maps the input tangents "
                         f"x_dot = {x_dot} straight to the output tangent y_dot = {y_dot}.{said}",
               {"compared": compared, "agree": agree})
        return
    why = ("no native JVP rule" if event.node.op.jvp is None
           else "a native JVP rule, but transposition was asked for (tg.transposition_only())")
    yield ("aid", f"{label} has {why}, so forward mode transposes its VJP rule. First, the "
                  f"aid vector u, ones shaped like the output: u = {_values(event.aids)}.", {})
    yield ("backward", f"Its VJP rule applied to u gives g(u) = J^T u = "
                       f"{_values(event.backward)}; g is linear in u, and it was recorded on "
                       f"the transpose tape.", {})
    if transpose is not None:
        count = len(transpose.frames)
        for frame in transpose.frames:
            yield ("transpose", f"Transpose tape, step {frame.index} of {count - 1}: the "
                                f"gradient of <g(u), x_dot> with respect to u. "
                                f"{frame.sentence}", {"inner": frame})
    yield ("tangent", f"The gradient of <g(u), x_dot> with respect to u, for x_dot = {x_dot}, "
                      f"is J x_dot: the output tangent y_dot = {y_dot}.{said}",
           {"compared": compared, "agree": agree})


def _transpose_labels(event):
    """In the transpose tape, the sources are the aids u and the targets g(u)."""
    one = len(event.aids) == 1
    labels = {u.id: "u" if one else f"u{i}" for i, u in enumerate(event.aids)}
    for i, g in enumerate(event.backward or ()):
        if g is not None:
            labels[g.id] = "g(u)" if len(event.backward) == 1 else f"g(u)[{i}]"
    return labels


def _compare(event):
    """The other method's output tangents, computed now: (tangents, agree, sentence)."""
    node = event.node
    other = "the transposed VJP rule" if event.method == "native" else "the native JVP rule"
    if event.method == "transpose" and node.op.jvp is None:
        return None, None, ""
    if any(isinstance(t, SymbolicTensor) for t in node.outputs):
        return None, None, (f" (In a graph, {other} is not computed here for comparison: it "
                            f"would add nodes to the graph.)")
    with _quietly():
        if event.method == "native":
            with transposition_only():
                compared = jvp_of(node, list(event.input_tangents))
        else:
            compared = node.op.jvp(node, list(event.input_tangents))
    agree = all(_close(a, b) for a, b in zip(compared, event.output_tangents))
    verdict = "they agree" if agree else "they DISAGREE"
    return tuple(compared), agree, (f" Computed now for comparison (not recorded): {other} "
                                    f"gives {_values(compared)}, and {verdict}.")


@contextlib.contextmanager
def _quietly():
    """Compute without being recorded: no tape or accumulator sees it, and any
    backward pass it runs goes to a recorder of its own, not the user's."""
    with events.record(), override(recorders=state.without_derivatives()):
        yield


def _close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return bool(np.allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-9))


def _values(tensors):
    if tensors is None:
        return "None"
    items = [format_value(t) for t in tensors]
    return items[0] if len(items) == 1 else "(" + ", ".join(items) + ")"
