"""Build the backward pass yourself: ``check_backward``.

The student writes ``backward(target, sources, producer)`` over the engine's
protocol (``record``, ``call_rule``: see ``protocol``), which returns the gradient
of ``target`` (seeded with ones) with respect to each source, None where no path
connects them. ``check_backward(backward)`` runs it on many small graphs and a
10,000-deep chain (``graphs``), compares its gradients with the tape's, and checks
the order of its rule calls: any order is accepted in which every node's rule runs
once, after every node that uses its outputs. It reports the first graph where the
engine goes wrong, small enough to read (and drawn, in a notebook).

The engine runs under the limits of ``guard``: a step budget of rule calls (an
engine that never takes a node off its queue is stopped at once), a time
limit, and what it prints is capped. Whatever it returns or raises, the answer
is a message that teaches.
"""
import sys
from dataclasses import dataclass, field

import numpy as np

from .. import validate
from ..tensor import Tensor
from .feedback import Feedback, NotYet
from .graphs import DEEP, cases
from .guard import Stopped, student_code
from .order import counting_problem, order_problem
from .protocol import record, steps, watching, watching_rules
from .replay import Beside, replay


@dataclass(frozen=True, repr=False)
class BackwardFeedback(Feedback):
    """A ``Feedback`` that also carries the graph where the engine went wrong."""
    recorded: object = field(default=None, compare=False)
    engine: object = field(default=None, compare=False)

    def beside(self):
        """The student's run on the graph where it went wrong, replayed beside teachgrad's
        (``Beside``); None when the engine was right, or raises there."""
        if self.recorded is None or self.engine is None or self.ok:
            return None
        run = self.recorded
        from .. import viz
        with viz.record() as rec:
            run.tape.gradient(run.target, run.sources)
        try:
            yours = replay(self.engine, run)
        except (Exception, Stopped):    # the message has said what went wrong
            return None
        return Beside(rec.traces[0], yours, run)

    def drawing(self):
        """The graph where the engine went wrong, drawn (tg.viz.draw), or None."""
        if self.recorded is None or len(self.recorded.nodes()) > 40:
            return None
        from .. import viz
        from ..viz.names import Names
        run = self.recorded      # named as the message names it: x0, n0, n1, ...
        names = Names(run.nodes(), [run.target] + run.sources, given=run.names())
        return viz.draw(run.target, tape=run.tape, names=names)

    def _repr_html_(self):
        html = super()._repr_html_()
        try:
            drawing = self.drawing()
        except Exception:       # a drawing is a bonus: the message says it all
            drawing = None
        for method in ("_repr_html_", "_repr_svg_", "_repr_image_svg_xml"):
            if drawing is not None and hasattr(drawing, method):
                return html + getattr(drawing, method)()
        return html


def check_backward(student_backward):
    """Check ``student_backward(target, sources, producer)`` on many graphs.

    It must return one gradient per source (a Tensor, or None where no path
    connects the source to the target), equal to the tape's, call each node's
    rule (``tg.exercises.call_rule``) at most once, and only after every node
    that uses the node's outputs has called its own. Returns a ``Feedback``
    (truthy when right); the first graph that goes wrong is in its message, and
    drawn in a notebook; ``feedback.beside()`` replays the engine's run on it
    beside teachgrad's.
    """
    validate.callable_(student_backward, "student_backward", "tg.exercises.check_backward")
    checked = 0
    for name, f, point in cases():
        run = record(f, *point)
        run.name = name
        try:
            problem = _check_one(student_backward, run)
        except _Stub as stub:
            return BackwardFeedback("raised", str(stub))
        if problem is not None:
            return BackwardFeedback("wrong_value", f"on {name}: {problem}{_listing(run)}",
                                    recorded=run, engine=student_backward)
        checked += 1
    return BackwardFeedback("right", f"your backward pass gives the tape's gradients on all "
                                     f"{checked} graphs, the {DEEP:,}-deep chain included, "
                                     f"calling each rule once, in a valid order.")


class _Stub(Exception):
    """The student's engine is still the stub: no graph is worth showing."""


def _check_one(student_backward, run):
    expected = run.tape.gradient(run.target, run.sources)
    deep = len(run.sources) == 1 and run.name.startswith("a chain of")
    with watching(counts=[]) as seen:
        got, problem, calls = _run_engine(student_backward, run, "deep" if deep else "engine")
    problem = problem or _result_problem(run, got, calls, expected, deep)
    counting = counting_problem(run, seen.counts) if problem is not None else None
    if counting is not None:    # the counts were wrong from the start: say that first
        return f"{counting} (What your engine did then: {problem})"
    return problem


def _result_problem(run, got, calls, expected, deep):
    """What is wrong with what the engine returned, and the order of its rule calls."""
    if not isinstance(got, (list, tuple)) or len(got) != len(run.sources):
        what = f"{len(got)} values" if isinstance(got, (list, tuple)) else \
            f"{_a(got)} ({_short(got)})"
        return f"return a list with one gradient per source ({len(run.sources)}), not {what}."
    order = order_problem(run, calls)
    if order is not None:
        return order
    for k, (source, g, e) in enumerate(zip(run.sources, got, expected)):
        problem = _gradient_problem(source.name or f"source {k}", g, e, deep)
        if problem is not None:
            return problem
    return None


def _run_engine(student_backward, run, limit):
    """``(what the engine returned, a problem, its rule calls)``: the problem (in words)
    when it raised or was stopped, else None."""
    with watching_rules(budget=steps(run)) as calls:
        try:
            with student_code("your backward pass", limit):
                got = student_backward(run.target, list(run.sources), run.producer)
            return got, None, calls
        except Stopped as stop:
            if stop.steps:      # some rule ran twice: say that first
                return None, f"{order_problem(run, calls) or ''} {stop.why}".lstrip(), calls
            return None, stop.why, calls
        except RecursionError:
            return None, (f"your backward pass raised RecursionError: a walk that calls "
                          f"itself once per node needs a Python stack as deep as the graph "
                          f"(the limit is {sys.getrecursionlimit():,}). Walk with a queue, and "
                          f"count with a loop over a stack or a queue, not with "
                          f"recursion."), calls
        except NotImplementedError as error:
            said = str(error)           # a stub fetched by tg.exercises.answer says what it is
            raise _Stub(said[len("Not yet: "):] if said.startswith("Not yet: ") else
                        "your backward pass is not written yet: it still raises "
                        "NotImplementedError.") from None
        except NotYet as error:         # fetched by tg.exercises.answer: already in words
            return None, str(error)[len("Not yet: "):], calls
        except Exception as error:
            return None, f"your backward pass raised {type(error).__name__}: {error}", calls


def _gradient_problem(label, g, e, deep):
    """What is wrong with the gradient ``g`` of a source (the tape's is ``e``), or None."""
    g_array = None if g is None else _numbers(g)
    if g is not None and g_array is None:
        return (f"the gradient of {label} should be a tensor of numbers (or None), but you "
                f"returned {_a(g)} ({_short(g)}).")
    if e is None and g is not None:
        if not np.allclose(g_array, 0.0):
            return (f"the gradient of {label} should be None: no path connects it to the "
                    f"target, but you returned {_show(g_array)}.")
        return (f"the gradient of {label} should be None, not zeros: no path connects it "
                f"to the target, and None says so.")
    if e is not None and g is None:
        return (f"the gradient of {label} is None, but the target depends on it (the "
                f"tape's gradient is {_show(_array(e))}). Did the cotangents reach it? Collect "
                f"every cotangent handed to a source.")
    if e is None:
        return None
    e_array = _array(e)
    if g_array.shape != e_array.shape:
        return (f"the gradient of {label} has shape {g_array.shape}, but {label} has shape "
                f"{e_array.shape}.")
    if not np.allclose(g_array, e_array, rtol=1e-6, atol=1e-9):
        hint = (" A tensor used by several operations receives a cotangent from each: "
                "add them all up before its producer's rule runs." if not deep else "")
        return f"the gradient of {label} is {_show(g_array)}, the tape's is {_show(e_array)}.{hint}"
    return None


def _array(value):
    if isinstance(value, Tensor):
        return np.asarray(value.numpy(), dtype=np.float64)
    return np.asarray(value, dtype=np.float64)


def _numbers(value):
    """``value`` (a gradient the engine returned) as a float64 array, or None when it is
    not numbers (a string, a list of strings, a dict...)."""
    if isinstance(value, Tensor):
        value = value.numpy()
    if isinstance(value, (str, bytes, bool, dict, set)) or value is None:
        return None
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        return None
    if array.dtype.kind not in "iuf":
        return None
    return array.astype(np.float64)


def _a(value):
    kind = type(value).__name__
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _show(array):
    return f"{float(array):.6g}" if array.ndim == 0 else np.array2string(array, precision=4)


def _listing(run):
    """The graph in a few lines, when it is small: each node with its inputs."""
    nodes = run.nodes()
    if len(nodes) > 16:
        return ""
    names = run.names()

    def name(t):
        return names.get(t.id, "const")
    lines = [f"{', '.join(name(o) for o in node.outputs)} = {node.op.name}"
             f"({', '.join(name(x) for x in node.inputs)})" for node in nodes]
    return " The graph: " + "; ".join(lines) + f"; the target is {name(run.target)}."
