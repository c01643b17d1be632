"""What a drawing shows, gathered from whatever ``tg.viz.draw`` was given.

Everything autodiff records comes down to engine ``Node``\\ s (one application
of an op: ``op``, ``inputs``, ``outputs``, ``params``), so every kind of object
becomes the same ``Scene``: the Nodes to draw, in creation order, and the
tensors to mark as targets (what is computed) and sources (what it is
differentiated with respect to).

* an eager tensor: walk back from the Node that made it, through the Nodes its
  tape recorded (``tape.producer(tensor_id)``), to the tensors nothing recorded made;
* a graph tensor, a ``Graph``, a ``tg.function`` or one of its traces: the
  graph's nodes (all of them, or those ``fetches`` need);
* a ``Trace`` of a backward pass: the nodes its ``Start`` event counted
  (``pending``), plus the producers of its targets and sources.
"""
from dataclasses import dataclass
from typing import Optional

from ..autodiff.events import Recorder, Trace
from ..autodiff.pending import upstream_nodes
from ..autodiff.tape import GradientTape
from ..graph.concrete import ConcreteFunction
from ..graph.function import Function
from ..graph.graph import Graph
from ..ops.core.op import Node
from ..state import state
from ..tensor import SymbolicTensor, Tensor

ACCEPTED = ("a tg.Tensor (with the tape that recorded it), a graph tensor, a tg.Graph, "
            "a tg.function or its get_concrete_function(...), or a backward-pass trace "
            "(`with tg.viz.record() as rec: ...`, then rec.traces[i])")


@dataclass
class Scene:
    """The ops to draw (creation order) and the tensors to mark."""
    nodes: list
    targets: tuple = ()
    sources: tuple = ()
    title: Optional[str] = None
    tape: Optional[GradientTape] = None   # the tape that recorded an eager tensor's history


def scene_of(obj, tape=None, fetches=None):
    """The Scene for ``obj``; ``tape`` is for eager tensors, ``fetches`` for graphs."""
    if isinstance(obj, Recorder):
        if len(obj.traces) != 1:
            raise ValueError(f"This recorder holds {len(obj.traces)} traces (one per backward "
                             f"pass run inside `record()`): draw one, e.g. rec.traces[0].")
        obj = obj.traces[0]
    if tape is not None and not isinstance(tape, GradientTape):
        raise TypeError(f"tg.viz.draw: `tape` must be the tg.GradientTape that recorded the "
                        f"tensor, but got {type(tape).__name__}.")
    if tape is not None and not _is_tensors(obj):
        raise ValueError("tape= is only used to draw an eager tensor's history; "
                         f"leave it out for a {type(obj).__name__} (the obj to draw).")
    if fetches is not None and not isinstance(obj, (Graph, Function, ConcreteFunction)):
        raise ValueError("fetches= chooses which part of a graph to draw; pass it with a "
                         f"tg.Graph or a tg.function, not a {type(obj).__name__}.")
    if isinstance(obj, Trace):
        return from_trace(obj)
    if isinstance(obj, Function):
        if obj.last_concrete_function is None:
            raise ValueError(f"The tg.function {obj.__name__!r} has not been traced yet: call it "
                             f"once (or call get_concrete_function(...)) and draw it then.")
        obj = obj.last_concrete_function
    if isinstance(obj, ConcreteFunction):
        scene = from_graph(obj.graph, fetches if fetches is not None else None)
        scene.targets = tuple(obj.outputs) if fetches is None else scene.targets
        scene.title = getattr(obj.graph, "name", None)
        return scene
    if isinstance(obj, Graph):
        return from_graph(obj, fetches)
    if _is_tensors(obj):
        return from_tensors(list(obj) if isinstance(obj, (list, tuple)) else [obj], tape)
    raise TypeError(f"tg.viz.draw() cannot draw a {type(obj).__name__}. It draws {ACCEPTED}.")


def trace_of(obj):
    """The Trace ``obj`` stands for (itself, or a recorder's only trace), or None."""
    if isinstance(obj, Recorder) and len(obj.traces) == 1:
        obj = obj.traces[0]
    return obj if isinstance(obj, Trace) else None


def _is_tensors(obj):
    if isinstance(obj, (list, tuple)):
        return bool(obj) and all(isinstance(t, Tensor) for t in obj)
    return isinstance(obj, Tensor)


# -- eager tensors on a tape -----------------------------------------------------
def from_tensors(tensors, tape=None):
    """The recorded history of ``tensors``: every Node they were computed through."""
    symbolic = [t for t in tensors if isinstance(t, SymbolicTensor)]
    if symbolic:
        if len(symbolic) != len(tensors):
            raise TypeError("Draw graph tensors and eager tensors separately: they come from "
                            "different places (a graph, a tape).")
        graphs = {id(t.graph): t.graph for t in symbolic}
        if len(graphs) != 1:
            raise ValueError("These graph tensors belong to different graphs; draw each "
                             "graph on its own.")
        return from_graph(symbolic[0].graph, tensors)
    tape = _tape_for(tensors, tape)
    return Scene(_walk_back(tensors, tape.producer), targets=tuple(tensors), tape=tape)


def _tape_for(tensors, tape):
    """The tape that recorded how every one of ``tensors`` was made, with clear errors
    if none did."""
    candidates = [tape] if tape is not None else list(reversed(state.tapes()))
    for candidate in candidates:
        if candidate.released:
            raise RuntimeError(
                "This GradientTape has already been used by gradient() and, not being "
                "persistent, has let go of what it recorded. Draw before calling gradient(), "
                "or record with tg.GradientTape(persistent=True).")
        missing = [t for t in tensors if candidate.producer(t.id) is None]
        if not missing:
            return candidate
        if tape is not None:
            name = _describe(missing[0])
            raise ValueError(
                f"{name} (obj) has no recorded history on this tape: no op recorded by the tape "
                f"produced it. Compute it inside the tape's `with` block from a watched "
                f"tensor (tape.watch(x), or a trainable tg.Variable). A watched input itself "
                f"has no history to draw.")
    name = _describe(tensors[0])
    raise ValueError(f"{name} is an eager tensor: its history is kept by the GradientTape "
                     f"that recorded it. Pass that tape: tg.viz.draw(y, tape=tape) (inside "
                     f"the tape's `with` block the tape is found on its own).")


def _describe(tensor):
    return f"The tensor {tensor.name!r}" if tensor.name else "The tensor"


def _walk_back(tensors, producer, nodes=()):
    """The Nodes that made ``tensors``, the ``nodes`` given, and every Node they depend on
    (``producer`` is the engine's ``producer(tensor_id)``), oldest first. It is the
    engine's own walk back, through tensors of every dtype: a drawing shows integer
    steps too."""
    start = list(tensors) + [x for node in nodes for x in node.inputs]
    found = upstream_nodes(start, producer, every_dtype=True)
    found.update(dict.fromkeys(nodes))
    return sorted(found, key=lambda node: node.id)


# -- graphs ----------------------------------------------------------------------
def from_graph(graph, fetches=None):
    """All of ``graph``'s nodes, or those the ``fetches`` (tensors or nodes) need."""
    if fetches is None:
        return Scene(graph.get_operations())
    fetches = list(fetches) if isinstance(fetches, (list, tuple)) else [fetches]
    members = {id(node) for node in graph.get_operations()}
    targets, nodes = [], []
    for f in fetches:
        if isinstance(f, SymbolicTensor) and f.graph is graph:
            targets.append(f)
        elif isinstance(f, Node) and id(f) in members:
            nodes.append(f)
            targets.extend(f.outputs)
        else:
            raise ValueError(f"fetches must be tensors or nodes of the graph being drawn; "
                             f"got {f!r}, which is not part of it.")
    return Scene(_walk_back(targets, graph.producer, nodes), targets=tuple(targets))


# -- a recorded backward pass ----------------------------------------------------
def from_trace(trace):
    """The nodes a backward pass walked (its ``Start.pending``), its targets and sources."""
    start = trace.start
    if start is None:
        raise ValueError("This trace has no Start event, so there is no backward pass to draw. "
                         "Record one with `with tg.viz.record() as rec: tape.gradient(...)`.")
    return from_start(start)


def from_start(start):
    """The Scene of a backward pass's ``Start`` event (what its stepper draws and names)."""
    nodes = {id(node): node for node in start.pending}
    made_by = {t.id: node for node in start.pending for t in node.outputs}
    for t in start.targets + start.sources:
        node = t.node if isinstance(t, SymbolicTensor) else made_by.get(t.id)
        if node is not None:
            nodes.setdefault(id(node), node)
    return Scene(sorted(nodes.values(), key=lambda node: node.id),
                 targets=tuple(start.targets), sources=tuple(start.sources))
