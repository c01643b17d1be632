"""A fuzz test of the public API (issue 17's input contract).

For every public function of ``teachgrad`` (enumerated from the package and from
``tg.nn.__all__`` and ``tg.optimizers.__all__``, so a new function is fuzzed without
anyone adding it here) and the public methods of its classes, hypothesis replaces one argument of a call that works with a bad or
unusual value: None, strings, bools, ragged and empty lists, complex numbers,
object arrays, NaN and inf, size-0 arrays, wrong ranks and dtypes, negative and
huge integers. Each call must then either

* return, without a NaN that numpy would not give (None must never become NaN), or
* raise TypeError or ValueError whose message names the argument (or, for an op
  whose inputs do not fit together, the op and its input shapes), or
  RuntimeError for misuse of a tape or a graph,

and never hang: each case runs under a time limit.

A function whose parameters are not in ``GOOD`` (a working value for each
parameter name) fails ``test_every_public_function_is_fuzzed``: add a line there.
"""
import functools
import inspect
import math
import re
import signal
import types
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import teachgrad as tg

LIMIT_S = 2          # seconds a single call may take
EXAMPLES = 24        # hypothesis examples per function


# -- a call that works: a good value for each parameter name --------------------------------

def _x():
    return tg.constant([[1.0, 2.0], [3.0, 4.0]])


def _tape_and_target():
    x = tg.constant([1.0, 2.0])
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tg.sum(x * x)
    return tape, y, x


GOOD = {
    # tensors and numbers
    "x": _x, "y": _x, "a": _x, "value": _x, "params": _x, "logits": _x,
    "a_min": lambda: 0.0, "a_max": lambda: 3.0,
    "nan": lambda: 0.0, "posinf": lambda: 1e9, "neginf": lambda: -1e9,
    "fft_length": lambda: None,
    "condition": lambda: tg.constant([[True, False], [False, True]]),
    "labels": lambda: tg.constant([0, 1]), "indices": lambda: tg.constant([1, 0]),
    "values": lambda: [_x(), _x()], "inputs": lambda: [_x(), _x()],
    "tensors": lambda: _x(),
    "shape": lambda: (2, 2), "num_or_size_splits": lambda: 2,
    "axis": lambda: 0, "axes": lambda: (1, 0), "keepdims": lambda: False,
    "dtype": lambda: tg.float64, "like": lambda: None, "name": lambda: "n",
    "transpose_a": lambda: False, "transpose_b": lambda: False, "copy": lambda: True,
    "trainable": lambda: True,
    # functions and what they are differentiated at
    "f": lambda: (lambda a: tg.sum(a * a)),
    "python_function": lambda: (lambda a: a * 2.0),
    "argnums": lambda: 0,
    "primals": lambda: [tg.constant([1.0, 2.0])],
    "tangents": lambda: [tg.constant([1.0, 0.0])],
    "eps": lambda: 1e-6, "atol": lambda: 1e-5, "rtol": lambda: 1e-3,
    "raise_exception": lambda: True, "optimize": lambda: True,
    # control flow
    "pred": lambda: True, "true_fn": lambda: (lambda: tg.constant(1.0)),
    "false_fn": lambda: (lambda: tg.constant(2.0)),
    "cond": lambda: (lambda i: i < 3.0), "body": lambda: (lambda i: i + 1.0),
    "loop_vars": lambda: [tg.constant(0.0)], "maximum_iterations": lambda: 5,
    "shape_invariants": lambda: None,
    # tapes and graphs
    "persistent": lambda: False, "watch_accessed_variables": lambda: True,
    "unconnected_gradients": lambda: "none", "aggregation_method": lambda: None,
    "output_gradients": lambda: None,
    "dense_shape": lambda: (2, 2),
    # numpy's names (issue 18)
    "m": _x, "A": _x, "ary": _x, "array": _x, "v": lambda: tg.constant([1.0, 2.0]),
    "tup": lambda: [_x(), _x()], "repeats": lambda: 2, "reps": lambda: (2, 1),
    "shift": lambda: 1, "k": lambda: 1, "axis1": lambda: 0, "axis2": lambda: 1,
    "offset": lambda: 0, "ddof": lambda: 0, "n": lambda: 1, "reverse": lambda: False,
    "kind": lambda: None, "source": lambda: 0, "destination": lambda: 1,
    "indices_or_sections": lambda: 2, "pad_width": lambda: 1, "mode": lambda: "constant",
    "constant_values": lambda: 0.0, "default": lambda: 0.0,
    # issue 32's numpy surface
    "kth": lambda: 1, "val": _x, "z": _x, "arr": _x,
    # products and tg.linalg
    "b": _x,
    # tg.nn and tg.optimizers
    "input": lambda: tg.ones((1, 4, 4, 2)), "ksize": lambda: 2, "strides": lambda: 1,
    "stride": lambda: 1, "padding": lambda: "VALID", "dilations": lambda: 1,
    "mean": lambda: 0.0, "variance": lambda: 1.0, "scale": lambda: 1.0,
    "variance_epsilon": lambda: 1e-3, "rate": lambda: 0.5, "seed": lambda: 0,
    "learning_rate": lambda: 0.1,
}

# Functions whose call needs more than GOOD's values (arguments that belong together).
# Each gives the keyword arguments of a working call.
SPECIAL = {
    "signal.irfft": lambda: {"input": tg.constant([1 + 1j, 2.0, 0.5j])},
    "signal.irfft2d": lambda: {"input": tg.constant([[1 + 1j, 2.0], [0.5j, 1.0]])},
    "complex": lambda: {"real": _x(), "imag": _x()},
    "explain_gradient": lambda: dict(zip(("tape_or_graph", "target", "source"),
                                         _tape_and_target())),
    "set_backend": lambda: {"name": "numpy"},
    "nn.stateless_dropout": lambda: {"x": _x(), "rate": 0.5, "seed": [1, 2]},
    "name_scope": lambda: {"name": "layer"},
    "Session": lambda: {"graph": tg.Graph()},
    "sparse_softmax_cross_entropy_with_logits": lambda: {
        "labels": tg.constant([0, 1]), "logits": _x()},
    "nn.softmax_cross_entropy_with_logits": lambda: {
        "labels": tg.constant([[0.25, 0.75], [1.0, 0.0]]), "logits": _x()},
    "nn.sigmoid_cross_entropy_with_logits": lambda: {
        "labels": tg.constant([[0.0, 1.0], [1.0, 0.5]]), "logits": _x()},
    "split": lambda: {"x": tg.constant([1.0, 2.0, 3.0, 4.0]), "num_or_size_splits": 2},
    "clip": lambda: {"a": _x(), "a_min": 0.0, "a_max": 3.0},
    "custom_gradient": lambda: {"f": lambda a: (a * a, lambda ct: ct * 2.0 * a)},
    "gradcheck": lambda: {"f": lambda a: tg.sum(a * a), "inputs": [tg.constant([1.0, 2.0])]},
    "add_n": lambda: {"inputs": [_x(), _x()]},
    "vjp": lambda: {"f": lambda a: a * a, "*": [tg.constant([1.0, 2.0])]},
    "linear_transpose": lambda: {"f": lambda a: a * 2.0, "*": [tg.constant([1.0, 2.0])]},
    "function": lambda: {"python_function": lambda a: a * 2.0},
    "arange": lambda: {"start": 0, "stop": 4, "step": 1},
    "linspace": lambda: {"start": 0.0, "stop": 1.0, "num": 5},
    "atleast_1d": lambda: {"*": [_x()]}, "atleast_2d": lambda: {"*": [_x()]},
    "atleast_3d": lambda: {"*": [_x()]},
    "select": lambda: {"condlist": [tg.constant([[True, False], [False, True]])],
                       "choicelist": [_x()]},
    "take_along_axis": lambda: {"arr": _x(), "indices": tg.constant([[0], [1]]), "axis": 1},
    "einsum": lambda: {"subscripts": "ij,jk->ik", "*": [_x(), _x()]},
    "linalg.cholesky": lambda: {"a": tg.constant([[2.0, 1.0], [1.0, 2.0]])},
    "nn.conv2d": lambda: {"input": tg.ones((1, 4, 4, 2)), "filters": tg.ones((2, 2, 2, 3)),
                          "strides": 1, "padding": "VALID"},
    "nn.conv1d": lambda: {"input": tg.ones((1, 4, 2)), "filters": tg.ones((2, 2, 3)),
                          "stride": 1, "padding": "VALID"},
    "nn.max_pool1d": lambda: {"input": tg.ones((1, 4, 2)), "ksize": 2, "strides": 1,
                              "padding": "VALID"},
    "nn.avg_pool1d": lambda: {"input": tg.ones((1, 4, 2)), "ksize": 2, "strides": 1,
                              "padding": "VALID"},
    "nn.moments": lambda: {"x": _x(), "axes": [0]},
    "switch_case": lambda: {"branch_index": 1, "branch_fns": [lambda: _x(), lambda: _x() * 2.0],
                            "default": lambda: _x() * 3.0},
    "scan": lambda: {"fn": lambda a, x: a + x, "elems": tg.constant([1.0, 2.0, 3.0])},
    "foldl": lambda: {"fn": lambda a, x: a + x, "elems": tg.constant([1.0, 2.0, 3.0])},
    "foldr": lambda: {"fn": lambda a, x: a + x, "elems": tg.constant([1.0, 2.0, 3.0])},
    "map_fn": lambda: {"fn": lambda x: x * 2.0, "elems": tg.constant([1.0, 2.0, 3.0])},
    "vectorized_map": lambda: {"fn": lambda x: x * 2.0, "elems": tg.constant([1.0, 2.0])},
    "vmap": lambda: {"fn": lambda a: a * 2.0},
    "case": lambda: {"pred_fn_pairs": [(True, lambda: _x())], "default": lambda: _x() * 2.0},
    "gradient": lambda: {"f": _x(), "*": [1.0]},
    "convolve": lambda: {"a": tg.constant([1.0, 2.0, 3.0]), "v": tg.constant([1.0, 0.5])},
}

# Called inside a graph (they are graph-mode only); GOOD's tensors are made there too.
IN_GRAPH = {
    "gradients": lambda: _graph_gradients_args(),
    "placeholder": lambda: {"dtype": tg.float64, "shape": (None, 2), "name": "p"},
}


def _graph_gradients_args():
    x = tg.placeholder(tg.float64, shape=(2,), name="x")
    return {"ys": tg.sum(x * x), "xs": x}


# What a call returns that must be used to reach its checks: tg.grad(f) is a function
# until it is called, a tape's ops are not checked until they run.
RETURNS_A_FUNCTION = {"grad", "value_and_grad", "jacfwd", "jacrev", "hessian",
                      "custom_gradient", "recompute_grad", "grad_pass_through", "function"}

# Not fuzzed, and why.
SKIP = {
    "GradcheckError": "an exception class",
    "SymbolicTensor": "made by graphs, not by users",
    "Tensor": "made by tg.constant (fuzzed), not directly",
    "AggregationMethod": "a namespace of constants",
    "UnconnectedGradients": "an enum; its values are fuzzed as unconnected_gradients",
    "get_backend": "takes no arguments",
    "get_default_graph": "takes no arguments",
    "Graph": "takes no arguments",
    "transposition_only": "takes no arguments",
    "IndexedSlices": "made by gradients of gather, not by users",
}


def _public_functions():
    """``tg``'s public functions and classes, and those of ``tg.linalg``, ``tg.nn``,
    ``tg.optimizers`` and ``tg.signal`` (as ``linalg.inv``) that are not also top-level
    names."""
    found = {}
    for name, value in sorted(vars(tg).items()):
        if name.startswith("_") or isinstance(value, types.ModuleType) or not callable(value):
            continue
        found[name] = value
    # the namespaces' own functions (tg.nn.relu is tg.relu: fuzzed once, as tg.relu)
    for space in ("linalg", "nn", "optimizers", "signal"):
        module = getattr(tg, space)
        for name in module.__all__:
            value = getattr(module, name)
            if value is not getattr(tg, name, None):
                found[f"{space}.{name}"] = value
    return found


def _methods():
    """(label, factory returning (bound method, good kwargs))."""
    def variable(method):
        key = "value" if method == "assign" else "delta"
        return lambda: (getattr(tg.Variable([1.0, 2.0]), method), {key: [3.0, 4.0]})

    def tape(method):
        def make():
            t, y, x = _tape_and_target()
            good = {"watch": {"tensor": x},
                    "gradient": {"target": y, "sources": x},
                    "jacobian": {"target": x * 2.0, "sources": x},
                    "batch_jacobian": {}}[method]
            if method == "jacobian":
                with t:
                    good["target"] = x * 2.0
            if method == "batch_jacobian":   # a batch of one example: rank 2
                with t:
                    batch = tg.reshape(x, (1, 2))
                    good = {"target": batch * 2.0, "source": batch}
            return getattr(t, method), good
        return make

    def accumulator():
        x = tg.constant([1.0, 2.0])
        with tg.ForwardAccumulator(x, tg.constant([1.0, 0.0])) as acc:
            y = x * x
        return acc.jvp, {"primals": y}

    def optimizer(method):
        def make():
            w = tg.Variable([1.0, 2.0])
            opt = tg.optimizers.SGD(0.1, momentum=0.5)
            opt.apply_gradients([(tg.constant([1.0, 1.0]), w)])
            good = {"apply_gradients": {"grads_and_vars": [(tg.constant([1.0, 1.0]), w)]},
                    "get_slot": {"variable": w, "slot_name": "momentum"}}[method]
            return getattr(opt, method), good
        return make

    def session():
        g = tg.Graph()
        with g.as_default():
            p = tg.placeholder(tg.float64, shape=(2,), name="p")
            y = p * 2.0
        return tg.Session(g).run, {"fetches": y, "feed_dict": {p: [1.0, 2.0]}}

    def tensor(method):
        good = {"sum": {}, "mean": {}, "max": {}, "min": {}, "reshape": {"*": [(4,)]},
                "transpose": {"*": []}, "astype": {"dtype": tg.float32}, "ravel": {},
                "flatten": {}}[method]
        return lambda: (getattr(_x(), method), dict(good))

    methods = {f"Variable.{m}": variable(m) for m in ("assign", "assign_add", "assign_sub")}
    methods.update({f"GradientTape.{m}": tape(m) for m in ("watch", "gradient", "jacobian",
                                                                   "batch_jacobian")})
    methods["ForwardAccumulator.jvp"] = accumulator
    methods["optimizers.Optimizer.apply_gradients"] = optimizer("apply_gradients")
    methods["optimizers.Optimizer.get_slot"] = optimizer("get_slot")
    methods["Session.run"] = session
    methods.update({f"Tensor.{m}": tensor(m) for m in
                    ("sum", "mean", "max", "min", "reshape", "transpose", "astype", "ravel",
                     "flatten")})
    return methods


# Public methods left out of the method fuzzing, and why (a new public method must be
# added to _methods or here).
METHOD_SKIP = {
    "Variable": {"read_value": "takes no arguments"},
    "GradientTape": dict.fromkeys(
        ("stop_recording", "reset", "watched_variables", "record", "output_added", "capture",
         "read_variable", "producer", "recorded_nodes", "dropped_nodes", "is_watched",
         "snapshots", "recording_spans", "when_made", "last_gradients"),
        "no arguments, or the recorder protocol and read methods the engine and tg.viz use")
        | {"differentiate": "the engine run behind gradient and the jacobians (fuzzed "
                            "through them)"},
    "ForwardAccumulator": dict.fromkeys(("output_added", "capture", "read_variable", "record"),
                                        "the recorder protocol"),
    "Session": {},
    "Tensor": {"numpy": "takes no arguments", "item": "takes no arguments",
               "take_operators": "the ops package hands Tensor its operators with it, once"},
    "optimizers.Optimizer": {},
}


# -- bad and unusual values -----------------------------------------------------------------

_FIXED = [
    None, "abc", b"bytes", True, False, [], [[1.0], [2.0, 3.0]], [1.0, None], [None],
    1 + 2j, np.array([1 + 1j]), np.array([1, "a"], dtype=object),
    np.array([1.0, 2.0], dtype=object), float("nan"), float("inf"), -float("inf"),
    np.zeros((0,)), np.zeros((2, 0)), np.ones((2, 2, 2, 2)), 10 ** 30, -10 ** 30, -1, -100,
    100, 0, 2.5, -0.5, (1, "a"), {"a": 1}, object(), (lambda: None), np.float32(1.5),
    np.int64(3), tg.constant([1, 2]), tg.constant(True), tg.constant([[1.0, 2.0]]),
]

BAD = st.one_of(
    st.sampled_from(_FIXED),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-2 ** 40, 2 ** 40),
    st.lists(st.one_of(st.floats(-10, 10), st.none(), st.integers(-3, 3)), max_size=3),
    st.text(max_size=3),
)

#: What a call may raise. tg.exercises' NotYet is its teaching answer to a wrong value.
ALLOWED = (TypeError, ValueError, RuntimeError, IndexError, tg.GradcheckError,
           tg.exercises.NotYet)


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def _has_nan(value):
    if isinstance(value, tg.SymbolicTensor):
        return False
    if isinstance(value, (tg.Tensor, np.ndarray, np.generic)):
        array = np.asarray(value)
        return array.dtype.kind == "f" and bool(np.isnan(array).any())
    if isinstance(value, (list, tuple)):
        return any(_has_nan(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nan(v) for v in value.values())
    return isinstance(value, float) and math.isnan(value)


def _contains_none(value):
    if value is None:
        return True
    return isinstance(value, (list, tuple)) and any(_contains_none(v) for v in value)


def _numpy_results(name, kwargs, owner=None):
    """What numpy's function of this name gives for these arguments (after ``owner``, the
    tensor whose method was called): a list of the results of the calls it takes (by
    position, by keyword), empty if it refuses both."""
    fn = np
    for part in name.split("."):   # "linalg.inv" is np.linalg.inv
        fn = getattr(fn, part, None)
    if fn is None:
        return []
    kwargs = {k: v for k, v in kwargs.items() if k != "name"}   # teachgrad's label, not numpy's
    def plain(v):
        return np.asarray(v) if isinstance(v, tg.Tensor) else v
    results = []
    star = [plain(v) for v in kwargs.pop("*", ())]   # the values of a *args parameter
    if owner is not None:
        star = [plain(owner)] + star
    before = star[:1] if owner is not None else []
    for call in (lambda: fn(*before, *[plain(v) for v in kwargs.values()], *star[len(before):]),
                 lambda: fn(*star, **{k: plain(v) for k, v in kwargs.items()})):
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results.append(call())
        except Exception:   # noqa: BLE001 -- numpy refuses the call
            pass
    return results


def _numpy_gives_nan(name, kwargs, owner=None):
    """Does numpy's function of this name give NaN for these arguments too?"""
    return any(_has_nan(r) for r in _numpy_results(name, kwargs, owner))


def _agrees_with_numpy(result, name, kwargs, owner=None):
    """Does a tensor ``result`` hold what numpy's function of this name gives for the same
    arguments (when numpy takes them and returns one array)? True when there is nothing
    to compare."""
    if type(result) is not tg.Tensor:
        return True
    wanted = [r for r in _numpy_results(name, kwargs, owner)
              if isinstance(r, (np.ndarray, np.generic))]
    if not wanted:
        return True
    got = result.numpy()
    for want in wanted:
        want = np.asarray(want)
        if want.shape == got.shape and want.dtype.kind in "biufc":
            with np.errstate(all="ignore"):
                if np.allclose(got, want, rtol=1e-6, atol=1e-12, equal_nan=True):
                    return True
    return False


# Errors that name what is wrong by another word than the parameter's name.
ALIASES = {"feed_dict": ["placeholder"]}   # no feed for a placeholder: named the placeholder


def _names_the_argument(message, names):
    if "(input shapes:" in message:   # an op whose inputs do not fit together, with shapes
        return True
    names = [alias for n in names for alias in [n, *ALIASES.get(n, [])]]
    return any(re.search(rf"\b{re.escape(n)}\b", message) for n in names)


def _check_call(label, call, param, value, names, numpy_name=None):
    """Run ``call()`` (``value`` given for ``param``) under the time limit; check the outcome."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, LIMIT_S)
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            # numpy's warnings (a mean of nothing) and tg.function's retrace warning are
            # not what is looked for here
            warnings.simplefilter("ignore")
            result = call()
    except Hang:
        pytest.fail(f"{label}({param}={value!r}) ran for more than {LIMIT_S} s")
    except ALLOWED as error:
        if isinstance(error, (TypeError, ValueError)) and not isinstance(error, tg.GradcheckError):
            message = str(error)
            assert _names_the_argument(message, names), (
                f"{label}({param}={value!r}) raised {type(error).__name__} whose message does "
                f"not name {param!r}: {message}")
        return
    except Exception as error:   # noqa: BLE001 -- any other kind is the failure looked for
        pytest.fail(f"{label}({param}={value!r}) raised {type(error).__name__}: {error}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    owner = getattr(call.fn, "__self__", None)   # the tensor of a method (Tensor.sum)
    owner = owner if isinstance(owner, tg.Tensor) else None
    if _has_nan(result) and not _has_nan(value) and not (
            numpy_name and _numpy_gives_nan(numpy_name, call.kwargs, owner)):
        pytest.fail(f"{label}({param}={value!r}) returned NaN from finite inputs: {result!r}")
    if numpy_name and not _agrees_with_numpy(result, numpy_name, call.kwargs, owner):
        pytest.fail(f"{label}({param}={value!r}) returned {result!r}, not what numpy's "
                    f"{numpy_name} gives: {_numpy_results(numpy_name, call.kwargs, owner)!r}")


class _Call:
    """``fn(**kwargs)``, then the function it returned called on a tensor if it is one
    of the transformations (so that their own arguments are checked too)."""

    def __init__(self, name, fn, kwargs, graph=None):
        self.name, self.fn, self.kwargs, self.graph = name, fn, kwargs, graph

    def __call__(self):
        if self.graph is not None:
            with self.graph.as_default():
                return self._run()
        return self._run()

    def _run(self):
        result = _apply(self.fn, self.kwargs)
        if self.name in RETURNS_A_FUNCTION and callable(result):
            result = result(tg.constant([1.0, 2.0]))
        return result


def _apply(fn, kwargs):
    """``fn`` called with ``kwargs``; those before a ``*args`` parameter go by position,
    and ``kwargs["*"]`` fills the ``*args`` (tg.vjp(f, *primals), tg.identity_n(*tensors))."""
    kwargs = dict(kwargs)
    star = kwargs.pop("*", None)
    if star is None:
        return fn(**kwargs)
    args = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            break
        args.append(kwargs.pop(p.name))
    return fn(*args, *star, **kwargs)


def _good_kwargs(name, fn):
    """A working call of ``fn``: (keyword arguments, graph to call it in or None)."""
    graph = None
    if name in IN_GRAPH:
        graph = tg.Graph()
        with graph.as_default():
            return IN_GRAPH[name](), graph
    if name in SPECIAL:
        return SPECIAL[name](), None
    kwargs = {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            kwargs["*"] = [GOOD[p.name]()] if p.name == "tensors" else GOOD[p.name]()
        elif p.kind is not p.VAR_KEYWORD and p.default is p.empty:
            kwargs[p.name] = GOOD[p.name]()
    return kwargs, graph


def _fuzzable_parameters(name, fn):
    params = [p for p in inspect.signature(fn).parameters.values()
              if p.kind is not p.VAR_KEYWORD]
    return ["*" if p.kind is p.VAR_POSITIONAL else p.name for p in params]


def _drawn():
    """A tensor with the tape that recorded it, and a backward-pass trace of it."""
    x = tg.constant([1.0, 2.0])
    with tg.viz.record() as rec:
        with tg.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tg.sum(x * x)
        tape.gradient(y, x)
    return y, tape, rec.traces[0]


def _jvp_recorded():
    """What tg.viz.record saw of one JVP: the JVPStepper's input."""
    x = tg.constant([1.0, 2.0])
    with tg.viz.record() as rec:
        with tg.ForwardAccumulator(x, tg.constant([1.0, 0.0])) as acc:
            acc.jvp(tg.sin(x) * x)
    return rec


# The other namespaces' entry points (visualizers, debug checks, nest, exercise checks):
# working keyword arguments for each.
VIZ = {
    "viz.JVPStepper": (tg.viz.JVPStepper, lambda: {"trace": _jvp_recorded()}),
    "viz.PassStepper": (tg.viz.PassStepper, lambda: {"fn": lambda x: tg.sin(x) * 2.0,
                                                     "*": [np.ones(2)], "timing": False}),
    "nest.flatten": (tg.nest.flatten, lambda: {"structure": {"a": [1.0, (2.0,)]}}),
    "nest.is_nested": (tg.nest.is_nested, lambda: {"structure": [1.0]}),
    "nest.pack_sequence_as": (tg.nest.pack_sequence_as,
                              lambda: {"structure": [0, (0,)], "leaves": [1.0, 2.0]}),
    "nest.assert_same_structure": (tg.nest.assert_same_structure,
                                   lambda: {"a": [1.0, (2.0,)], "b": [3.0, (4.0,)]}),
    "exercises.check_value": (tg.exercises.check_value,
                              lambda: {"got": 2.0, "expected": 2.0, "about": "x"}),
    "exercises.check_prediction": (tg.exercises.check_prediction,
                                   lambda: {"predicted": {"a": 1}, "actual": {"a": 1},
                                            "about": "the counts"}),
    "exercises.check_loss": (tg.exercises.check_loss,
                             lambda: {"losses": [1.0, 0.01], "below": 0.1}),
    "exercises.check_vjp": (tg.exercises.check_vjp, lambda: {
        "f": tg.sin, "rules": lambda g, ans, x: g * tg.cos(x), "inputs": [0.3, 1.2]}),
    "exercises.check_jvp": (tg.exercises.check_jvp, lambda: {
        "f": tg.sin, "rules": lambda t, ans, x: t * tg.cos(x), "inputs": [0.3, 1.2]}),
    "exercises.check_backward": (tg.exercises.check_backward, lambda: {
        "student_backward": lambda target, sources, producer: [None] * len(sources)}),
    "exercises.record": (tg.exercises.record, lambda: {"f": tg.sin, "*": [0.5]}),
    "exercises.call_rule": (tg.exercises.call_rule, lambda: {
        "node": _recorded_node(), "out_grads": [tg.constant(1.0)]}),
    "viz.draw": (tg.viz.draw, lambda: dict(zip(("obj", "tape"), _drawn()[:2]))),
    "viz.BackpropStepper": (tg.viz.BackpropStepper, lambda: {"trace": _drawn()[2]}),
    "debug.verify_gradients": (lambda raise_on_failure=True, seed=0, custom_gradients=True:
                               _entered(tg.debug.verify_gradients(
                                   raise_on_failure=raise_on_failure, seed=seed,
                                   custom_gradients=custom_gradients)),
                               lambda: {"raise_on_failure": True, "seed": 0,
                                        "custom_gradients": False}),
}


def _recorded_node():
    run = tg.exercises.record(tg.sin, 0.5)
    return run.producer(run.target)


def _entered(context):
    """A context manager entered around a small gradient (its arguments act on entering)."""
    with context:
        x = tg.constant([1.0, 2.0])
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = tg.sum(x * x)
        return tape.gradient(y, x)

FUNCTIONS = {n: f for n, f in _public_functions().items() if n not in SKIP}


def test_every_public_function_is_fuzzed():
    """Each public function either has working values for its parameters or is in SKIP."""
    missing = []
    for name, fn in FUNCTIONS.items():
        try:
            _good_kwargs(name, fn)
        except KeyError as error:
            missing.append(f"{name}: parameter {error}")
    assert not missing, f"add a working value to GOOD (or SPECIAL) for: {missing}"
    for cls_name, skipped in METHOD_SKIP.items():
        cls = functools.reduce(getattr, cls_name.split("."), tg)
        public = {n for n, v in vars(cls).items() if not n.startswith("_") and callable(v)}
        fuzzed = {label.rsplit(".", 1)[1] for label in _methods()
                  if label.startswith(cls_name + ".")}
        assert public <= fuzzed | set(skipped), (
            f"tg.{cls_name} has public methods neither fuzzed nor skipped: "
            f"{sorted(public - fuzzed - set(skipped))}")


def test_the_working_calls_work():
    """The baseline calls themselves succeed (else the fuzzing proves nothing)."""
    for name, fn in FUNCTIONS.items():
        kwargs, graph = _good_kwargs(name, fn)
        _Call(name, fn, kwargs, graph)()
    for label, make in _methods().items():
        method, kwargs = make()
        _apply(method, kwargs)


def _fuzz(label, fn, kwargs, graph, data, numpy_name):
    """Replace one argument of the working call ``fn(**kwargs)`` by a drawn bad value."""
    params = _fuzzable_parameters(label, fn)
    if not params:
        return
    param = data.draw(st.sampled_from(params), label="parameter")
    value = data.draw(BAD, label="value")
    names = [param]
    if param == "*":
        kwargs["*"] = [value]
        names = [p.name for p in inspect.signature(fn).parameters.values()
                 if p.kind is p.VAR_POSITIONAL]
    else:
        kwargs[param] = value
    _check_call(label, _Call(label.removeprefix("tg."), fn, kwargs, graph), param, value,
                names, numpy_name=numpy_name)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_function_contract(name, data):
    kwargs, graph = _good_kwargs(name, FUNCTIONS[name])
    _fuzz(f"tg.{name}", FUNCTIONS[name], kwargs, graph, data, numpy_name=name)


@pytest.mark.parametrize("label", sorted(VIZ))
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_visualizer_contract(label, data):
    fn, make = VIZ[label]
    _fuzz(f"tg.{label}", fn, make(), None, data, numpy_name=None)


@pytest.mark.parametrize("label", sorted(_methods()))
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_method_contract(label, data):
    method, kwargs = _methods()[label]()
    _fuzz(label, method, kwargs, None, data,
          numpy_name=label.split(".")[1] if label.startswith("Tensor.") else None)


# -- the errors page says what is raised ----------------------------------------------------

ERRORS_PAGE = Path(__file__).resolve().parent.parent / "docs" / "errors.md"
_EXAMPLE = re.compile(r"### (?P<title>[^\n]+)\n\s*```python\n(?P<code>.*?)```\s*"
                      r"```text\n(?P<said>.*?)```", re.S)


def _examples_on_the_errors_page():
    text = ERRORS_PAGE.read_text()
    return [pytest.param(m["code"], m["said"], id=m["title"]) for m in _EXAMPLE.finditer(text)]


def test_the_errors_page_has_examples():
    assert len(_examples_on_the_errors_page()) >= 20


@pytest.mark.parametrize("code, said", _examples_on_the_errors_page())
def test_each_message_on_the_errors_page_is_the_one_raised(code, said):
    """Each example on docs/errors.md raises (or warns) with the message the page shows,
    word for word (the page wraps long messages; whitespace is not compared)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # the page's warnings are raised, to be compared
        try:
            exec(compile(code, str(ERRORS_PAGE), "exec"), {"tg": tg, "np": np})
        except (Exception, Warning) as error:   # noqa: BLE001 -- compared below
            raised = f"{type(error).__name__}: {error}"
        else:
            pytest.fail(f"this example on {ERRORS_PAGE.name} raised nothing:\n{code}")
    assert raised.split() == said.split(), (
        f"{ERRORS_PAGE.name} says\n  {' '.join(said.split())}\nbut the example raises\n  {raised}")


# -- the exercise checks meet a student's code ------------------------------------------------

def _stub(*args):
    raise NotImplementedError()


def _writes_into_its_inputs(*args):
    for a in args:
        if isinstance(a, tg.Tensor):
            a.numpy()[...] = 0.0
    return args[0]


def _prints_megabytes(*args):
    print("y" * 2_000_000)
    return args[0]


def _never_returns(*args):
    while True:
        pass


def _calls_itself(*args):
    return _calls_itself(*args)


#: Student-shaped bad code: each takes whatever a rule or an engine is given.
STUDENT_CODE = {
    "raises": lambda *args: 1 / 0, "is the stub": _stub, "returns None": lambda *args: None,
    "returns a string": lambda *args: "grad", "returns bytes": lambda *args: b"1",
    "returns strings": lambda *args: ["1", "2"], "returns a tuple": lambda *args: (args[0], None),
    "returns a dict": lambda *args: {"g": args[0]}, "wrong shape": lambda *args: tg.ones((7, 3)),
    "returns NaN": lambda *args: args[0] * np.nan, "writes into its inputs": _writes_into_its_inputs,
    "prints megabytes": _prints_megabytes, "never returns": _never_returns,
    "calls itself": _calls_itself, "takes no arguments": lambda: None,
}

EXERCISE_CHECKS = {
    "check_vjp": lambda code: tg.exercises.check_vjp(tg.sin, code, [0.3, 1.2]),
    "check_jvp": lambda code: tg.exercises.check_jvp(tg.multiply, [code, code],
                                                     [[1.0, 2.0], [0.5, -1.0]]),
    "check_backward": tg.exercises.check_backward,
    "a catalogue exercise": lambda code: tg.exercises.get("matmul").check(code, code),
    "check_value of what it computes": lambda code: tg.exercises.check_value(
        _fetched(code)(tg.constant(2.0)), 3.0, about="the slope"),
    "check_backward, fetched by answer": lambda code: tg.exercises.check_backward(
        _fetched(code)),
}


def _fetched(code):
    """``code`` as a check cell gets it: ``tg.exercises.answer("slope")``."""
    slope = code   # noqa: F841 -- answer() finds it here
    return tg.exercises.answer("slope")


@pytest.mark.parametrize("check", sorted(EXERCISE_CHECKS))
@pytest.mark.parametrize("code", sorted(STUDENT_CODE))
def test_exercise_checks_answer_any_student_code_in_words(check, code, monkeypatch, capsys):
    """Whatever the student's function does, the check answers "Not yet: ..." (a Feedback
    or NotYet), in time, printing little; never "Right!", never another exception."""
    from teachgrad.exercises import guard
    monkeypatch.setattr(guard, "LIMITS", guard.Limits(rule=0.2, again=0.5, engine=0.2,
                                                      deep=0.5, answer=0.3))
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, LIMIT_S)
    try:
        said = str(EXERCISE_CHECKS[check](STUDENT_CODE[code]))
    except Hang:
        pytest.fail(f"{check} of code that {code} ran for more than {LIMIT_S} s")
    except tg.exercises.NotYet as error:
        said = str(error)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert said.startswith("Not yet: ") and "Traceback" not in said, said
    assert len(capsys.readouterr().out) < 20_000

