"""Lesson 14's exercises (tracing and compiling): their contracts and checks.

1. ``predicted_ops``: what a trace of the lesson's ``mystery`` records, op by op; the
   check traces it afresh and counts the graph's own nodes.
2. ``merge_duplicates``: a common-subexpression pass over teachgrad's graph API
   (``Rewriter``); the check runs it on random graphs it makes after the answer was
   defined, with the built-in pass refused while it runs, and compares the nodes kept, the
   numbers the graph computes, and that the graph it was given is left as it was.
3. ``run_schedule``: a loop of ``tg.function`` steps that must not retrace on every call;
   the check counts the traces and the traced calls.
"""
import collections
import contextlib
import io
import warnings

import numpy as np

from ..graph import optimize
from ..graph.function import Function, function
from ..graph.graph import Graph, const_p, placeholder, placeholder_p
from ..graph.optimize import cse
from ..graph.session import Session
from ..ops.elementwise import arithmetic, math as unary
from ..tensor import constant
from .calls import Answer, given, tensor_result, undefined
from .contracts import Contract, register_contract
from .differences import must_match
from .feedback import NotYet
from .guard import Stopped
from .kinds import made_sure
from .prediction import check_prediction


def recorded_ops(concrete):
    """``{op name: count}`` of a trace's nodes, placeholders and constants left out."""
    return dict(collections.Counter(node.op.name for node in concrete.graph.nodes
                                    if node.op is not placeholder_p and node.op is not const_p))


def _check_predicted_ops(lesson):
    if PREDICTED_OPS.name not in lesson:
        raise NotYet(undefined(PREDICTED_OPS))
    predicted = lesson[PREDICTED_OPS.name]
    made_sure(predicted, PREDICTED_OPS, f"`{PREDICTED_OPS.name}`")
    mystery, = given(lesson, "mystery")
    with contextlib.redirect_stdout(io.StringIO()):     # its print runs in this trace too
        concrete = function(mystery).get_concrete_function(
            constant(np.ones(3)), 5)
    actual = recorded_ops(concrete)
    check_prediction(predicted, actual, about="the ops a trace of mystery(x, 5) records",
                     hint="the for loop runs in Python, five times (i = 0 to 4), and each "
                          "time the if picks one of its two branches by i: only the op of "
                          "the branch taken is recorded. Then comes the last line.")
    return f"the trace recorded {actual}: Python's loop and if left only their ops"


# -- exercise 2: a pass ---------------------------------------------------------------
_BINARY = (arithmetic.add, arithmetic.multiply, arithmetic.subtract)
_UNARY = (unary.sin, unary.tanh, unary.exp)


def random_graph(seed, size):
    """A GraphFunction of two placeholders with ``size`` random elementwise ops, about a
    third of them repeating an earlier op on the same inputs (or an equal constant)."""
    rng = np.random.default_rng(seed)
    graph = Graph()
    with graph.as_default():
        pool = [placeholder(np.float64, (3,), name="a"), placeholder(np.float64, (3,), name="b")]
        inputs = list(pool)
        made = []
        for _ in range(size):
            if made and rng.random() < 0.35:
                op, args = made[rng.integers(len(made))]
            elif rng.random() < 0.5:
                op = _BINARY[rng.integers(len(_BINARY))]
                other = float(rng.integers(1, 3)) if rng.random() < 0.3 else \
                    pool[rng.integers(len(pool))]
                args = (pool[rng.integers(len(pool))], other)
            else:
                op, args = _UNARY[rng.integers(len(_UNARY))], (pool[rng.integers(len(pool))],)
            made.append((op, args))
            pool.append(op(*[a if not isinstance(a, float) else constant(a) for a in args]))
    return optimize.GraphFunction(graph, inputs, pool[-2:])


def _run(fn, feeds):
    return [np.asarray(v) for v in Session(fn.graph).run(
        list(fn.outputs), feed_dict=dict(zip(fn.inputs, feeds)))]


@contextlib.contextmanager
def _refused(names):
    """While the block runs, the built-in pass (wherever ``names`` can reach it) stops it."""
    builtin = cse.eliminate_common_subexpressions

    def refused(*args, **kwargs):
        raise Stopped("`merge_duplicates` called the built-in pass, "
                      "eliminate_common_subexpressions, which does the exercise for you: "
                      "walk the nodes with a Rewriter yourself.")
    places = [vars(cse), vars(optimize), names]
    patched = [(d, k) for d in places for k, v in list(d.items()) if v is builtin]
    for d, k in patched:
        d[k] = refused
    try:
        yield
    finally:
        for d, k in patched:
            d[k] = builtin


def _check_merge_duplicates(lesson):
    answer = Answer(MERGE_DUPLICATES, lesson)
    names = getattr(answer.fn, "__globals__", {})
    rng = np.random.default_rng(5)
    for seed, size in [(1, 14), (2, 22), (3, 9)]:
        fn = random_graph(seed, size)
        nodes = list(fn.nodes)
        expected = cse.eliminate_common_subexpressions(fn)
        feeds = [rng.standard_normal(3), rng.standard_normal(3)]
        about = f"your pass on a random graph of {len(nodes)} nodes"
        with _refused(names):
            got = answer.call(fn)
        if list(fn.nodes) != nodes:
            raise NotYet(f"Not yet: {about} changed the graph it was given (its nodes). A "
                         f"pass builds a new graph with a Rewriter and leaves the old one as "
                         f"it was traced.")
        if not isinstance(got, optimize.GraphFunction):
            raise NotYet(f"Not yet: {about} returned {type(got).__name__}, not a "
                         f"GraphFunction: return rw.finish().")
        if got.graph is fn.graph:
            raise NotYet(f"Not yet: {about} returned the graph it was given. Build a new one: "
                         f"rw = Rewriter(fn), one decision per node, then rw.finish().")
        kept = sorted(n.label for n in got.nodes)
        want = sorted(n.label for n in expected.nodes)
        if len(kept) > len(want):
            raise NotYet(f"Not yet: {about} kept {len(kept)} nodes, but {len(want)} of them "
                         f"compute something new; the others repeat an earlier node (the same "
                         f"op, the same inputs once merged, equal params). Hint: look the key "
                         f"up before copying, and key on rw.inputs_of(node), the new graph's "
                         f"tensors, so that a merge makes the nodes after it equal too.")
        if kept != want:
            raise NotYet(f"Not yet: {about} kept {len(kept)} nodes where {len(want)} are "
                         f"needed: it merged nodes that differ (in their op, their inputs, or "
                         f"their params: compare params with freeze), or dropped a "
                         f"placeholder or an impure node, which are never merged.")
        for k, (mine, right) in enumerate(zip(_run(got, feeds), _run(fn, feeds))):
            must_match(mine, right, f"output {k} of the graph your pass made",
                       "a merged node's outputs must stand for the earlier node's: "
                       "rw.alias_outputs(node, earlier).")
    return ("your pass keeps the nodes the built-in one keeps, on three random graphs, and "
            "the graphs compute what they did")


# -- exercise 3: no retracing ----------------------------------------------------------
def _check_run_schedule(lesson):
    answer = Answer(RUN_SCHEDULE, lesson)
    cls = Function
    trace, call = cls._trace, cls.__call__
    counts = {"traces": 0, "calls": 0}

    def counted_trace(self, *args, **kwargs):
        counts["traces"] += 1
        return trace(self, *args, **kwargs)

    def counted_call(self, *args, **kwargs):
        counts["calls"] += 1
        return call(self, *args, **kwargs)
    cls._trace, cls.__call__ = counted_trace, counted_call
    try:
        for shape, steps, seed in [((5,), 6, 31), ((2, 4), 4, 32)]:
            rng = np.random.default_rng(seed)
            x0 = rng.standard_normal(shape)
            traces = 0
            for attempt in range(2):
                rates = [float(r) for r in np.round(rng.uniform(0.05, 0.3, steps), 4)]
                expected = x0.copy()
                for lr in rates:
                    expected = expected - lr * np.sin(expected)
                counts.update(traces=0, calls=0)
                about = f"run_schedule on x of shape {shape} with {steps} rates"
                with warnings.catch_warnings():    # the check says why it retraced
                    warnings.simplefilter("ignore")
                    out = answer.call(constant(x0.copy()), rates)
                got = tensor_result(RUN_SCHEDULE, out, about, shape)
                must_match(got, expected, about, "each step is x = x - lr * tg.sin(x), with "
                           "the rates in order.")
                if not counts["calls"]:
                    raise NotYet(f"Not yet: the numbers are right, but {about} called no "
                                 f"tg.function: the steps ran eagerly. Run each step through "
                                 f"one traced function.")
                traces += counts["traces"]
            if traces > 1:
                raise NotYet(f"Not yet: the numbers are right, but two calls of run_schedule "
                             f"with x of shape {shape} traced {traces} times. A Python number "
                             f"is part of a trace's key, so each new rate is a new trace: pass "
                             f"the rate as a tensor, and make the tg.function once, outside "
                             f"run_schedule.")
    finally:
        cls._trace, cls.__call__ = trace, call
    return "run_schedule traces once per shape of x, whatever the rates, and is right"


PREDICTED_OPS = register_contract(Contract(
    "predicted_ops", lesson=14, number=1, kind="prediction", cell="l14-ex1-check",
    check=_check_predicted_ops, returns="dict",
    expect='a dict from op name to how many nodes of that op the trace records, '
           '{"multiply": ..., ...} (placeholders and constants left out)',
    forbidden={"the loop as one op": 'predicted_ops = {"multiply": 1, "sin": 1, "add": 1}\n',
               "both branches every time": (
                   'predicted_ops = {"multiply": 5, "sin": 5, "add": 1}\n')}))

MERGE_DUPLICATES = register_contract(Contract(
    "merge_duplicates", lesson=14, number=2, kind="function", cell="l14-ex2-check",
    check=_check_merge_duplicates,
    expect="a pass merge_duplicates(fn) that returns a new GraphFunction in which each node "
           "repeating an earlier one is merged into it",
    forbidden={
        "calls the built-in pass": (
            "def merge_duplicates(fn):\n"
            "    return tg.graph.optimize.eliminate_common_subexpressions(fn)\n"),
        "keys on the old graph's inputs": (
            "def merge_duplicates(fn):\n"
            "    rw = Rewriter(fn)\n"
            "    seen = {}\n"
            "    for node in fn.nodes:\n"
            "        key = (node.op, tuple(x.id for x in node.inputs), freeze(node.params))\n"
            "        if is_pure(node.op) and node.op is not placeholder_p and key in seen:\n"
            "            rw.alias_outputs(node, seen[key])\n"
            "            continue\n"
            "        new = rw.copy(node)\n"
            "        if is_pure(node.op):\n"
            "            seen[key] = new\n"
            "    return rw.finish()\n"),
        "merges on the op alone": (
            "def merge_duplicates(fn):\n"
            "    rw = Rewriter(fn)\n"
            "    seen = {}\n"
            "    for node in fn.nodes:\n"
            "        inputs = rw.inputs_of(node)\n"
            "        key = (node.op, tuple(x.id for x in inputs))\n"
            "        if is_pure(node.op) and node.op is not placeholder_p and key in seen:\n"
            "            rw.alias_outputs(node, seen[key])\n"
            "            continue\n"
            "        new = rw.copy(node, inputs)\n"
            "        if is_pure(node.op):\n"
            "            seen[key] = new\n"
            "    return rw.finish()\n"),
        "returns the graph it was given": "def merge_duplicates(fn):\n    return fn\n"},
    accepted={
        "the built-in key function": (
            "def merge_duplicates(fn):\n"
            "    rw = Rewriter(fn)\n"
            "    seen = {}\n"
            "    for node in fn.nodes:\n"
            "        inputs = rw.inputs_of(node)\n"
            "        key = tg.graph.optimize.cse.node_key(node, inputs)\n"
            "        if key is not None and key in seen:\n"
            "            rw.alias_outputs(node, seen[key])\n"
            "        else:\n"
            "            new = rw.copy(node, inputs)\n"
            "            if key is not None:\n"
            "                seen[key] = new\n"
            "    return rw.finish()\n")}))

RUN_SCHEDULE = register_contract(Contract(
    "run_schedule", lesson=14, number=3, kind="function", cell="l14-ex3-check",
    check=_check_run_schedule,
    expect="a function run_schedule(x, rates) that applies x = x - lr * tg.sin(x) for each "
           "rate in turn, through a tg.function traced once per shape of x",
    forbidden={
        "the rate as a Python number": (
            "@tg.function\n"
            "def _float_step(x, lr):\n"
            "    return x - lr * tg.sin(x)\n"
            "def run_schedule(x, rates):\n"
            "    for lr in rates:\n"
            "        x = _float_step(x, lr)\n"
            "    return x\n"),
        "a new tg.function on every call": (
            "def run_schedule(x, rates):\n"
            "    step = tg.function(lambda x, lr: x - lr * tg.sin(x))\n"
            "    for lr in rates:\n"
            "        x = step(x, tg.constant(lr))\n"
            "    return x\n"),
        "eager, no tg.function": (
            "def run_schedule(x, rates):\n"
            "    for lr in rates:\n"
            "        x = x - lr * tg.sin(x)\n"
            "    return x\n")},
    accepted={
        "every rate in one traced call": (
            "@tg.function\n"
            "def _all_steps(x, rates):\n"
            "    for i in range(rates.shape[0]):\n"
            "        x = x - rates[i] * tg.sin(x)\n"
            "    return x\n"
            "def run_schedule(x, rates):\n"
            "    return _all_steps(x, tg.constant(rates))\n")}))
