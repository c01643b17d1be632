"""What ``explain_gradient`` walks: a tape's record or a graph, as the engine sees it.

A *view* gives the engine's protocol (``producer(tensor_id)``), the tensors the
engine would differentiate with respect to, and a few facts that only a tape
or only a graph knows. The analysis in ``explain.py`` works on any view.
"""
from ..autodiff.tape import GradientTape
from ..graph.graph import Graph
from ..state import state
from ..tensor import SymbolicTensor, Tensor, Variable
from .report import a_or_an


class View:
    """The record a gradient is computed from.

    Attributes:
      mode: "tape" or "graph".
      producer: the engine's ``producer(tensor_id)`` (float tensors' producers).
      producer_all: also the producers of integer and bool tensors, where known.
      sources: what the engine differentiates with respect to for the source
        (a Variable's snapshots on a tape, its read in a graph); empty when the
        engine would not differentiate at all (an unwatched source).
      walk_sources: what stands for the source when looking for paths, even an
        unwatched one.
      stop_tensors: the ``stop_gradients=`` entries (graphs).
      problems: reasons known before any walk (an unwatched source, say), as
        ``(kind, message, fix)``.
    """

    def __init__(self, mode, producer, producer_all, sources, walk_sources, stop_tensors=()):
        self.mode = mode
        self.producer = producer
        self.producer_all = producer_all
        self.sources = list(sources)
        self.walk_sources = list(walk_sources)
        self.stop_tensors = list(stop_tensors)
        self.problems = []
        self.graph = None
        self.tape = None


def resolve(target, source, tape_or_graph, stop_gradients):
    """The View for ``tape_or_graph`` (found from the target when None)."""
    for role, value in (("target", target), ("source", source)):
        if isinstance(value, (list, tuple)):
            raise TypeError(f"explain_gradient takes one {role} tensor, not a "
                            f"{type(value).__name__}: call it once per {role}.")
        if not isinstance(value, Tensor):
            raise TypeError(f"The {role} must be a tg.Tensor or tg.Variable, not "
                            f"{type(value).__name__}.")
    if tape_or_graph is None:
        if isinstance(target, SymbolicTensor):
            tape_or_graph = target.graph
        elif state.tapes():
            tape_or_graph = state.tapes()[-1]
        else:
            raise ValueError("explain_gradient needs the tape the target was computed on: "
                             "pass it as tape_or_graph, as in tg.explain_gradient(y, x, tape).")
    if isinstance(tape_or_graph, GradientTape):
        if isinstance(target, SymbolicTensor):
            raise ValueError(f"{target.name} is a graph tensor: pass its graph, not a tape.")
        if stop_gradients:
            raise ValueError("stop_gradients= belongs to tg.gradients in graphs; on a tape, "
                             "use tg.stop_gradient in the computation itself.")
        return tape_view(tape_or_graph, target, source)
    if isinstance(tape_or_graph, Graph):
        return graph_view(tape_or_graph, target, source, stop_gradients or ())
    raise TypeError(f"explain_gradient's third argument, tape_or_graph, must be a "
                    f"tg.GradientTape or a tg.Graph, not {type(tape_or_graph).__name__}.")


# -- tapes ---------------------------------------------------------------------------
#: What each answer of ``tape.when_made(tensor)`` means for a gradient, and the fix.
WHEN_MADE = {
    "before": ("was computed before the tape started recording (before its `with` block)",
               "Compute it inside `with tg.GradientTape() as tape:`."),
    "stopped": ("was computed while the tape had stopped recording (inside "
                "`with tape.stop_recording():`), so the tape has no record of how it was made",
                "Move the computation out of the stop_recording() block."),
    "after": ("was computed after the tape stopped recording (after its `with` block ended, "
              "or after a non-persistent tape's gradient() call)",
              "Compute it inside the tape's `with` block."),
}


def tape_view(tape, target, source):
    if tape.released:
        raise RuntimeError(
            "This tape has already computed its gradient and let go of its record (a "
            "non-persistent tape keeps it for one gradient() call only). Create it with "
            "tg.GradientTape(persistent=True), or call explain_gradient before gradient().")

    def producer_all(tensor_id):
        return tape.producer(tensor_id, every_dtype=True)

    if isinstance(source, Variable):
        snapshots = list(tape.snapshots(source))
        walk = snapshots or [source.read_value()]
        sources = snapshots if tape.is_watched(source) else []
    else:
        walk = [source]
        sources = [source] if tape.is_watched(source) else []
    view = View("tape", tape.producer, producer_all, sources, walk)
    view.tape = tape
    problem = _watch_problem(tape, source)
    if problem is not None:
        view.problems.append(("not_watched",) + problem)
    return view


def _watch_problem(tape, source):
    """Why the tape does not differentiate with respect to ``source`` (None if it does)."""
    name = source.name or "the source"
    if isinstance(source, Variable):
        if tape.is_watched(source):
            if tape.snapshots(source):
                return None
            return (f"the tape watches Variable {name}, but no op read it while the tape was "
                    f"recording (it was read before the `with` block, inside "
                    f"stop_recording(), or not at all)",
                    "Use the Variable inside the tape's `with` block.")
        if not source.trainable:
            return (f"{name} is a Variable with trainable=False: tapes do not watch it when "
                    f"ops read it", "Call tape.watch(v) first, or make it trainable.")
        if not tape.watches_accessed_variables:
            return (f"the tape was created with watch_accessed_variables=False, so it only "
                    f"watches what tape.watch() was given, and {name} was not",
                    "Call tape.watch(v) inside the `with` block.")
        return (f"no op read Variable {name} while the tape was recording",
                "Use the Variable inside the tape's `with` block.")
    if tape.is_watched(source):
        return None
    if tape.producer(source.id, every_dtype=True) is not None:   # an integer or bool tensor
        return (f"{name} is {a_or_an(source.dtype)} tensor: integers and bools are constants, "
                f"the tape does not watch them", "Differentiate with respect to a float tensor.")
    moment = tape.when_made(source)
    if moment in ("stopped",):
        return (f"{name} {WHEN_MADE[moment][0]}, so the tape does not watch it",
                WHEN_MADE[moment][1])
    return (f"the tape is not watching {name}: tapes watch trainable Variables by "
            f"themselves, other tensors (tg.constant, results of ops run outside the "
            f"tape) only after tape.watch()",
            "Call tape.watch(x) inside the `with` block, before computing with x.")


# -- graphs --------------------------------------------------------------------------
def graph_view(graph, target, source, stop_gradients):
    if not isinstance(target, SymbolicTensor) or target.graph is not graph:
        raise ValueError(f"The target must be a tensor of the graph given, got {target!r}.")
    stops = []
    for t in stop_gradients:
        if not isinstance(t, SymbolicTensor) or t.graph is not graph:
            raise ValueError(f"stop_gradients entries must be tensors of the graph, got {t!r}.")
        stops.append(t)
    view = View("graph", graph.producer, graph.producer, [], [], stops)
    view.graph = graph
    if isinstance(source, Variable):
        read = graph.find_variable_read(source)
        if read is None:
            view.problems.append(("no_path", f"the graph never reads Variable "
                                  f"{source.name or ''}".rstrip(),
                                  "Use the Variable in the computation of the target."))
            return view
        view.sources = view.walk_sources = [read]
        return view
    if not isinstance(source, SymbolicTensor) or source.graph is not graph:
        raise ValueError(f"The source must be a tensor (or Variable) of the graph given, got "
                         f"{source!r}.")
    view.sources = view.walk_sources = [source]
    return view
