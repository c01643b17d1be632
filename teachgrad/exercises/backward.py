"""Build the backward pass yourself: the protocol, and ``check_backward``.

A student's engine sees a recorded computation the way teachgrad's engine does:

    run = tg.exercises.record(lambda x, y: tg.sin(x * y) + x, 0.5, 2.0)
    node = run.producer(run.target)          # the Node that made the target (None: a leaf)
    node.op.name, node.inputs, node.outputs
    tg.exercises.call_rule(node, [ct])       # its VJP rule: one cotangent per input

and writes ``backward(target, sources, producer)``, which returns the gradient of
``target`` (seeded with ones) with respect to each source, None where no path
connects them. ``check_backward(backward)`` runs it on many small graphs and a
10,000-deep chain, compares its gradients with the tape's, and checks the order
of its rule calls: any order is accepted in which every node's rule runs once,
after every node that uses its outputs. It reports the first graph where the
engine goes wrong, small enough to read (and drawn, in a notebook).
"""
import collections
import contextlib
import sys
from dataclasses import dataclass, field

import numpy as np

from .. import ops
from ..autodiff.tape import GradientTape
from ..tensor import Tensor, constant
from .feedback import Feedback, NotYet

DEEP = 10_000


class Recorded:
    """A computation recorded on a tape: ``target``, ``sources`` and ``producer(tensor)``."""

    def __init__(self, tape, target, sources, name=""):
        self.tape, self.target, self.sources, self.name = tape, target, list(sources), name

    def producer(self, tensor):
        """The Node that made ``tensor`` (None for a source, a constant, or an integer
        tensor, where gradients stop)."""
        return self.tape.producer(tensor._id)

    def nodes(self):
        """The recorded nodes the target depends on, each after the nodes it reads from."""
        order, done, stack = [], set(), [(self.producer(self.target), False)]
        while stack:
            node, inputs_done = stack.pop()
            if node is None or (node in done and not inputs_done):
                continue
            if inputs_done:
                if node not in done:
                    done.add(node)
                    order.append(node)
                continue
            stack.append((node, True))
            stack.extend((self.producer(x), False) for x in reversed(node.inputs)
                         if self.producer(x) not in done)
        return order

    def names(self):
        """A short name for each tensor id: the sources' names, n0, n1, ... for the nodes'
        outputs in the order they were computed."""
        names = {s._id: s.name for s in self.sources}
        for k, node in enumerate(self.nodes()):
            for j, out in enumerate(node.outputs):
                names[out._id] = f"n{k}" if len(node.outputs) == 1 else f"n{k}:{j}"
        return names

    def label(self, node):
        """``multiply (n3)``: a node by its operation and the short name of its output (the
        way the BackpropStepper names nodes)."""
        return f"{node.op.name} ({self.names().get(node.outputs[0]._id, '?')})"

    def __repr__(self):
        return f"<recorded {self.name or 'computation'}: {len(self.nodes())} nodes>"


def record(f, *values, sources=None):
    """Run ``f`` on ``values`` (made float64 constants, all watched) under a persistent
    tape; ``sources`` (indices of ``values``, all by default) are the ones to
    differentiate with respect to."""
    inputs = [constant(np.asarray(v, dtype=np.float64), name=f"x{i}" if len(values) > 1 else "x")
              for i, v in enumerate(values)]
    with GradientTape(persistent=True) as tape:
        tape.watch(inputs)
        target = f(*inputs)
    chosen = inputs if sources is None else [inputs[i] for i in sources]
    return Recorded(tape, target, chosen, getattr(f, "__name__", ""))


_calls = None     # while check_backward watches: the (node, out_grads) of each call_rule


def call_rule(node, out_grads):
    """Run ``node``'s VJP rule on its outputs' cotangents (one per output, None for an
    output that received none); returns one cotangent per input (None for an input that
    carries no gradient, an integer one for instance)."""
    from ..autodiff.engine import call_vjp, trainable
    if len(out_grads) != len(node.outputs):
        raise ValueError(f"{node.op.name} has {len(node.outputs)} output(s): give "
                         f"call_rule one cotangent for each, not {len(out_grads)}.")
    if _calls is not None:
        _calls.append((node, list(out_grads)))
    if all(g is None for g in out_grads):
        in_grads = [None] * len(node.inputs)
    else:
        in_grads = list(call_vjp(node, list(out_grads), [trainable(x) for x in node.inputs]))
    if _reporter is not None:
        if not _reporter.started:
            _reporter.start((node,))
        _reporter.emit(_events().CallVJP(node, f"{node.op.name} VJP", tuple(out_grads),
                                         tuple(in_grads)))
    return in_grads


@contextlib.contextmanager
def watching_rules():
    """Inside: ``calls`` lists ``(node, out_grads)`` for every ``call_rule``, in order."""
    global _calls
    outer, _calls = _calls, []
    try:
        yield _calls
    finally:
        _calls = outer


# -- replaying a student's run -----------------------------------------------------------------

_reporter = None   # while replay() runs a student's engine: where its events go


class Pending(dict):
    """Pending counts (node -> count) that report each change to the run being replayed.

    Use it like a dict: ``pending = tg.exercises.Pending(count_pending(target, producer))``;
    ``pending[node] -= 1`` reports a Release. Outside ``replay`` it is a plain dict."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if _reporter is not None:
            _reporter.pending = self

    def __setitem__(self, node, count):
        super().__setitem__(node, count)
        if _reporter is not None and _reporter.started:
            _reporter.emit(_events().Release(node, count))


class Queue(collections.deque):
    """A queue of nodes that reports to the run being replayed: the first ``popleft`` (or
    ``pop``) starts the pass (Start, with the pending counts and the queue), each one is
    a Pop, each later ``append`` an Enqueue. Outside ``replay`` it is a plain deque."""

    def popleft(self):
        return self._report_pop(super().popleft)

    def pop(self):
        """The last node in (a stack: last in, first out); reported as a Pop too."""
        return self._report_pop(super().pop)

    def _report_pop(self, take):
        if _reporter is not None and not _reporter.started:
            _reporter.start(tuple(self))
        node = take()
        if _reporter is not None:
            _reporter.emit(_events().Pop(node, tuple(self)))
        return node

    def append(self, node):
        super().append(node)
        if _reporter is not None and _reporter.started:
            _reporter.emit(_events().Enqueue(node))


def _events():
    from ..autodiff import events
    return events


class _Reporter:
    def __init__(self, run):
        # Inside `with tg.viz.record() as rec:` the events go to rec, like the engine's.
        self.run = run
        self.trace = _events().current_observer() or _events().Trace()
        self.pending, self.started = {}, False

    def start(self, queue):
        self.started = True
        self.emit(_events().Start((self.run.target,), tuple(self.run.sources),
                                  dict(self.pending), queue))

    def emit(self, event):
        self.trace.events.append(event)


def replay(student_backward, run):
    """Run ``student_backward`` on ``run`` (from ``record``) and return its events as a
    ``Trace`` for ``tg.viz.BackpropStepper``: what the engine reported through
    ``Queue``, ``Pending`` and ``call_rule``, then its result. Inside
    ``with tg.viz.record() as rec:`` the trace is also one of ``rec.traces``, as a run
    of teachgrad's engine would be. Nothing is simulated: an engine that uses a plain
    deque and dict reports its rule calls only."""
    global _reporter
    outer, _reporter = _reporter, _Reporter(run)
    try:
        grads = student_backward(run.target, list(run.sources), run.producer)
        reporter = _reporter
    finally:
        _reporter = outer
    if not reporter.started:
        reporter.start(())
    reporter.emit(_events().Finish(tuple(grads)))
    return reporter.trace


def first_difference(reference, yours, run):
    """Where two traces of ``run`` first differ (the kind of event, or its node):
    ``(step in reference, step in yours)``, or None when they agree throughout.
    Aggregate events are passed over (a student's engine sums without reporting)."""
    def steps(trace):
        return [(k, type(e).__name__, run.label(e.node) if getattr(e, "node", None) is not None
                 else None) for k, e in enumerate(trace.events)
                if type(e).__name__ != "Aggregate"]
    ref, mine = steps(reference), steps(yours)
    for a, b in zip(ref, mine):
        if a[1:] != b[1:]:
            return a[0], b[0]
    if len(ref) == len(mine):
        return None
    k = min(len(ref), len(mine))
    return (ref[k][0] if k < len(ref) else len(reference.events) - 1,
            mine[k][0] if k < len(mine) else len(yours.events) - 1)


class Beside:
    """teachgrad's run and a student's (``replay``), in two BackpropSteppers side by side,
    with the first step where they differ named above them."""

    def __init__(self, reference, yours, run):
        from .. import viz
        self.first = first_difference(reference, yours, run)
        self.reference = viz.BackpropStepper(reference)
        self.yours = viz.BackpropStepper(yours)
        if self.first is None:
            self.note = ("Your run and teachgrad's take the same steps (teachgrad's also "
                         "reports each sum of several contributions).")
        else:
            self.note = (f"The runs part at teachgrad's step {self.first[0]} and your step "
                         f"{self.first[1]} (teachgrad's run on the left, yours on the right): "
                         f"step both steppers there.")

    def _repr_mimebundle_(self, include=None, exclude=None):
        import ipywidgets as widgets
        box = widgets.VBox([widgets.HTML(f"<b>{self.note}</b>"),
                            widgets.HBox([self.reference.widget, self.yours.widget])])
        bundle = box._repr_mimebundle_()
        bundle["text/plain"] = "\n\n".join([self.note, "teachgrad's run:",
                                             self.reference.text(), "your run:",
                                             self.yours.text()])
        bundle["text/html"] = (f"<p><b>{self.note}</b></p>" + self.reference.static_html()
                               + self.yours.static_html())
        return bundle


# -- the graphs check_backward tries ---------------------------------------------------------

def _chain(x):
    return ops.sin(ops.cos(x) * 2.0)


def _fan_out(x, y):               # lesson 2's: a is used three times
    a = x * y
    return ops.sin(a) * ops.exp(a) + a


def _diamond(x):
    a = x * 1.5
    return ops.sin(a) * ops.cos(a)


def _unconnected(x, w):
    return x * x + 0 * ops.stop_gradient(w)


def _bool_input(x, y):            # where(): its condition is a bool tensor, with no gradient
    return ops.sum(ops.where(x > 0.0, x * y, y))


def _int_input(x):                # power's exponent is an integer tensor: no gradient
    return ops.sum(x ** constant(3) * ops.cast(constant([1, 2]), np.float64))


def _vector(x, w):                # broadcasting and a reduction
    return ops.sum(ops.tanh(x * w) * x)


def _deep(x):
    h = x
    for _ in range(DEEP):
        h = ops.sin(h)
    return h


CASES = [
    ("a chain: sin(2 cos x)", _chain, (0.7,)),
    ("a value used three times (lesson 2's z)", _fan_out, (0.5, 2.0)),
    ("a diamond: sin(a) cos(a), a = 1.5 x", _diamond, (0.3,)),
    ("a source with no path to the target", _unconnected, (1.5, -2.0)),
    ("a bool tensor among a node's inputs", _bool_input, ([1.0, -2.0, 0.5], [0.3, 0.4, 0.5])),
    ("an integer tensor among a node's inputs: x ** 3, 3 an int64 tensor", _int_input,
     ([0.5, 2.0],)),
    ("vectors: sum(tanh(x w) x), w of shape (1,)", _vector, ([0.5, -1.0, 2.0], [0.7])),
]

_UNARY = [ops.sin, ops.cos, ops.tanh, lambda v: v * 0.5]
_BINARY = [ops.add, ops.multiply, ops.subtract]


def _random_case(seed):
    """A random graph of 8 to 14 operations on three inputs, many values used more than once."""
    rng = np.random.default_rng(seed)
    steps = []
    for n in range(3, 3 + int(rng.integers(8, 15))):
        if rng.random() < 0.4:
            steps.append((_UNARY[int(rng.integers(0, len(_UNARY)))], int(rng.integers(0, n))))
        else:
            steps.append((_BINARY[int(rng.integers(0, len(_BINARY)))], int(rng.integers(0, n)),
                          int(rng.integers(0, n))))

    def random_graph(a, b, c):
        values = [a, b, c]
        for op, *picks in steps:
            values.append(op(*[values[k] for k in picks]))
        return values[-1] + values[-2] * values[3]
    point = tuple(float(v) for v in rng.uniform(-1.0, 1.0, 3))
    return (f"random graph {seed}", random_graph, point)


def cases():
    """The graphs ``check_backward`` tries, in order: ``(name, f, point)``."""
    yield from CASES
    for seed in range(6):
        yield _random_case(seed)
    yield (f"a chain of {DEEP:,} sin operations", _deep, (0.3,))


# -- the check ---------------------------------------------------------------------------------

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
        except Exception:
            return None
        return Beside(rec.traces[0], yours, run)

    def drawing(self):
        """The graph where the engine went wrong, drawn (tg.viz.draw), or None."""
        if self.recorded is None or len(self.recorded.nodes()) > 40:
            return None
        from .. import viz
        return viz.draw(self.recorded.target, tape=self.recorded.tape)

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
    with watching_rules() as calls:
        try:
            got = student_backward(run.target, list(run.sources), run.producer)
        except RecursionError:
            return (f"your backward pass raised RecursionError: a walk that calls itself once "
                    f"per node needs a Python stack as deep as the graph (the limit is "
                    f"{sys.getrecursionlimit():,}). Walk with a queue, and count with a loop "
                    f"over a stack or a queue, not with recursion.")
        except NotImplementedError as error:
            said = str(error)           # a stub fetched by tg.exercises.answer says what it is
            raise _Stub(said[len("Not yet: "):] if said.startswith("Not yet: ") else
                        "your backward pass is not written yet: it still raises "
                        "NotImplementedError.") from None
        except NotYet as error:         # fetched by tg.exercises.answer: already in words
            return str(error)[len("Not yet: "):]
        except Exception as error:
            return f"your backward pass raised {type(error).__name__}: {error}"
    if not isinstance(got, (list, tuple)) or len(got) != len(run.sources):
        what = f"{len(got)} values" if isinstance(got, (list, tuple)) else type(got).__name__
        return f"return a list with one gradient per source ({len(run.sources)}), not {what}."
    order = _order_problem(run, calls)
    if order is not None:
        return order
    for k, (source, g, e) in enumerate(zip(run.sources, got, expected)):
        label = source.name or f"source {k}"
        if e is None and g is not None:
            if not np.allclose(_array(g), 0.0):
                return (f"the gradient of {label} should be None: no path connects it to the "
                        f"target, but you returned {_show(g)}.")
            return (f"the gradient of {label} should be None, not zeros: no path connects it "
                    f"to the target, and None says so.")
        if e is not None and g is None:
            return (f"the gradient of {label} is None, but the target depends on it (the "
                    f"tape's gradient is {_show(e)}). Did the cotangents reach it? Collect "
                    f"every cotangent handed to a source.")
        if e is None:
            continue
        g_array, e_array = _array(g), _array(e)
        if g_array.shape != e_array.shape:
            return (f"the gradient of {label} has shape {g_array.shape}, but {label} has shape "
                    f"{e_array.shape}.")
        if not np.allclose(g_array, e_array, rtol=1e-6, atol=1e-9):
            hint = (" A tensor used by several operations receives a cotangent from each: "
                    "add them all up before its producer's rule runs." if not deep else "")
            return (f"the gradient of {label} is {_show(g)}, the tape's is {_show(e)}.{hint}")
    return None


def _order_problem(run, calls):
    """Was each rule called once, after all the nodes that use its outputs?"""
    nodes = run.nodes()
    index = {}
    for position, (node, _) in enumerate(calls):
        if node in index:
            return (f"you ran the rule of {run.label(node)} twice. A node's rule runs once, when "
                    f"its gradient is complete: count how many uses of its outputs are still "
                    f"to report (its pending count), and run it when that reaches 0.")
        index[node] = position
    consumers = {node: [] for node in nodes}
    for node in nodes:
        for x in node.inputs:
            parent = run.producer(x)
            if parent is not None and parent in consumers:
                consumers[parent].append(node)
    for node, position in index.items():
        for user in consumers.get(node, ()):
            if user in index and index[user] > position:
                return (f"you ran the rule of {run.label(node)} before that of {run.label(user)}, "
                        f"which uses its output: the cotangent {run.label(node)} got was not "
                        f"complete yet. Run a node's rule only when every node that uses its "
                        f"outputs has run its own (its pending count is 0).")
    missing = [n for n in nodes if n not in index and _reaches_source(run, n)]
    if missing and len(nodes) < 100:
        return (f"the rule of {run.label(missing[0])} never ran, though the target depends on it "
                f"and it leads to a source: its pending count never reached 0? Count only "
                f"the uses by nodes that the target depends on.")
    return None


def _reaches_source(run, node):
    ids = {s._id for s in run.sources}
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        for x in n.inputs:
            if x._id in ids:
                return True
            parent = run.producer(x)
            if parent is not None:
                stack.append(parent)
    return False


def _array(value):
    if isinstance(value, Tensor):
        return np.asarray(value.numpy(), dtype=np.float64)
    return np.asarray(value, dtype=np.float64)


def _show(value):
    array = _array(value)
    return f"{float(array):.6g}" if array.ndim == 0 else np.array2string(array, precision=4)


def _listing(run):
    """The graph in a few lines, when it is small: each node with its inputs."""
    nodes = run.nodes()
    if len(nodes) > 16:
        return ""
    names = run.names()

    def name(t):
        return names.get(t._id, "const")
    lines = [f"{', '.join(name(o) for o in node.outputs)} = {node.op.name}"
             f"({', '.join(name(x) for x in node.inputs)})" for node in nodes]
    return " The graph: " + "; ".join(lines) + f"; the target is {name(run.target)}."
