"""The engine's protocol, for a backward pass a student writes: ``record`` and ``call_rule``.

A student's engine sees a recorded computation the way teachgrad's engine does:

    run = tg.exercises.record(lambda x, y: tg.sin(x * y) + x, 0.5, 2.0)
    node = run.producer(run.target)          # the Node that made the target (None: a leaf)
    node.op.name, node.inputs, node.outputs
    tg.exercises.call_rule(node, [ct])       # its VJP rule: one cotangent per input

While a check or a replay runs the student's engine, a ``Watch`` (the calling
thread's: ``watching`` sets it for a block, as ``teachgrad.state.override`` does the
recording state, which knows nothing of exercises) sees each ``call_rule``: the
check keeps the calls (to judge their order) and stops an
engine that calls more rules than the graph has nodes, a replay reports them.
"""
import contextlib
import threading
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from .. import validate
from ..ops.core import Node
from ..ops.walk import depth_first_order, upstream_nodes
from ..tensor import Tensor, constant
from .guard import Stopped


@dataclass(frozen=True)
class Watch:
    """What sees ``call_rule`` now.

    Attributes:
      calls: ``(node, out_grads)`` of each call, in order (None: not kept).
      budget: the most calls allowed (``steps(run)``: each rule runs once, and an engine
        that runs some twice is let finish, to be told so, unless it never stops).
      reporter: where a replay's events go (None: not replaying).
      counts: the pending counts each ``tg.exercises.Pending`` started from, in order
        (None: not kept); a check compares them with the right ones, to point at
        ``count_pending`` when the counting is what went wrong.
    """
    calls: Optional[list] = None
    budget: Optional[int] = None
    reporter: object = None
    counts: Optional[list] = None


#: ``watched.now``: this thread's ``Watch`` (absent or None when nothing watches).
watched = threading.local()


def watch():
    """The ``Watch`` on now (an empty one when nothing watches)."""
    return getattr(watched, "now", None) or Watch()


class Recorded:
    """A computation recorded on a tape: ``target``, ``sources`` and ``producer(tensor)``."""

    def __init__(self, tape, target, sources, name=""):
        self.tape, self.target, self.sources, self.name = tape, target, list(sources), name

    def producer(self, tensor):
        """The Node that made ``tensor`` (None for a source, a constant, or an integer
        tensor, where gradients stop)."""
        if not isinstance(tensor, Tensor):
            validate.fail(TypeError, "producer", "tensor", "a tensor (the target, or one of "
                          "a node's inputs)", tensor)
        return self.tape.producer(tensor.id)

    def nodes(self):
        """The recorded nodes the target depends on (the engine's walk back,
        ``upstream_nodes``), each after the nodes it reads from."""
        return depth_first_order(self.upstream([self.target]))

    def upstream(self, tensors):
        """``upstream_nodes`` from ``tensors``, through every input a node reads: each
        node the tensors depend on, with the producer of each of its inputs."""
        return upstream_nodes(tensors, self.tape.producer, every_dtype=True)

    def names(self):
        """A short name for each tensor id: the sources' names, n0, n1, ... for the nodes'
        outputs in the order they were computed."""
        names = {s.id: s.name for s in self.sources}
        for k, node in enumerate(self.nodes()):
            for j, out in enumerate(node.outputs):
                names[out.id] = f"n{k}" if len(node.outputs) == 1 else f"n{k}:{j}"
        return names

    def label(self, node):
        """``multiply (n3)``: a node by its operation and the short name of its output (the
        way the BackpropStepper names nodes)."""
        return f"{node.op.name} ({self.names().get(node.outputs[0].id, '?')})"

    def __repr__(self):
        return f"<recorded {self.name or 'computation'}: {len(self.nodes())} nodes>"


def record(f, *values, sources=None):
    """Run ``f`` on ``values`` (made float64 constants, all watched) under a persistent
    tape; ``sources`` (indices of ``values``, all by default) are the ones to
    differentiate with respect to. ``f`` must return one float tensor."""
    from ..autodiff.tape import GradientTape
    where = "tg.exercises.record"
    validate.callable_(f, "f", where)
    validate.arity(f, len(values), "f", where)
    inputs = [constant(validate.tensor_like(v, "values", where).astype(np.float64),
                       name=f"x{i}" if len(values) > 1 else "x") for i, v in enumerate(values)]
    if sources is not None and (not isinstance(sources, (list, tuple)) or not all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(values)
            for i in sources)):
        validate.fail(ValueError, where, "sources", f"a list of indices of the values "
                      f"(0 to {len(values) - 1})", sources)
    with GradientTape(persistent=True) as tape:
        tape.watch(inputs)
        target = f(*inputs)
    if not isinstance(target, Tensor) or target.dtype.kind != "f":
        validate.fail(TypeError, where, "f", "a function that returns one float tensor (the "
                      "target)", target, "Did it forget to `return` its result?")
    chosen = inputs if sources is None else [inputs[i] for i in sources]
    return Recorded(tape, target, chosen, getattr(f, "__name__", ""))


def _check_call(node, out_grads):
    if not isinstance(node, Node):
        validate.fail(TypeError, "tg.exercises.call_rule", "node", "a recorded node (what "
                      "producer(tensor) gives)", node, "producer gives None for a source or a "
                      "constant: it has no rule to call, so skip it.")
    if not isinstance(out_grads, (list, tuple)):
        validate.fail(TypeError, "tg.exercises.call_rule", "out_grads", "a list with one "
                      "cotangent per output of the node", out_grads)
    if len(out_grads) != len(node.outputs):
        raise ValueError(f"{node.op.name} has {len(node.outputs)} output(s): give "
                         f"call_rule one cotangent for each, not {len(out_grads)}.")
    for g in out_grads:
        if g is not None and not isinstance(g, Tensor):
            validate.tensor_like(g, "out_grads", "tg.exercises.call_rule")


def call_rule(node, out_grads):
    """Run ``node``'s VJP rule on its outputs' cotangents (one per output, None for an
    output that received none); returns one cotangent per input (None for an input that
    carries no gradient, an integer one for instance)."""
    from ..autodiff.pending import trainable
    from ..autodiff.rule_calls import call_vjp
    _check_call(node, out_grads)
    seen = watch()
    if seen.calls is not None:
        seen.calls.append((node, list(out_grads)))
        if seen.budget is not None and len(seen.calls) > seen.budget:
            raise Stopped(f"The check stopped your backward pass at its call_rule number "
                          f"{len(seen.calls)}, far more calls than the graph has nodes (each "
                          f"node's rule runs once): a loop that looks at the front of its "
                          f"queue (queue[0]) without taking the node off (popleft)?", steps=True)
    out_grads = [g if g is None or isinstance(g, Tensor) else constant(g) for g in out_grads]
    if all(g is None for g in out_grads):
        in_grads = [None] * len(node.inputs)
    else:
        in_grads = list(call_vjp(node, list(out_grads), [trainable(x) for x in node.inputs]))
    if seen.reporter is not None:
        seen.reporter.called(node, out_grads, in_grads)
    return in_grads


@contextlib.contextmanager
def watching(**fields):
    """Set fields of the ``Watch`` for the block (the others stay as they are)."""
    saved = getattr(watched, "now", None)
    watched.now = replace(watch(), **fields)
    try:
        yield watched.now
    finally:
        watched.now = saved


@contextlib.contextmanager
def watching_rules(budget=None):
    """Inside: ``calls`` lists ``(node, out_grads)`` for every ``call_rule``, in order;
    with a ``budget``, a call beyond it stops the engine (``Stopped``)."""
    with watching(calls=[], budget=budget) as now:
        yield now.calls


def steps(run):
    """The most ``call_rule`` calls a backward pass over ``run`` may make before it is
    stopped: far more than a right one makes (one per node), few enough to stop a
    loop that never ends at once."""
    return 10 * len(run.nodes()) + 100
