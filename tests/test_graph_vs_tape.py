"""Graph mode against eager mode: the same gradients, built two ways.

1. Driven by the op table (tests/op_table.py): for every entry, the op is built
   in a ``tg.Graph`` on float64 placeholders (one per input array), its
   gradient is built with ``tg.gradients`` (cotangents are placeholders too)
   and run by a ``tg.Session``; forward values and gradients must equal what
   eager mode and ``tg.GradientTape`` (with ``output_gradients``) compute on
   the same inputs and cotangents. Each op runs three times: with the
   placeholders' shapes fully known, with the first dimension of every
   placeholder unknown (None), and with every dimension unknown, where the op
   allows it (``UNKNOWN_DIMS_EXCLUDED`` says which cases are left out, and
   why). Every tensor of each graph is fetched too, and its static shape must
   fit its value.

2. Random op chains: hypothesis composes 3 to 8 elementwise and reduction ops
   over 1 or 2 inputs. Graph gradients (in a Session, and inside a
   ``tg.function``), tape gradients, tape gradients through the ``tg.function``
   call, and central finite differences must all agree.

Kept modest (15 examples per test, derandomized, no example database) so the
file runs in well under a minute.
"""
import numpy as np
import pytest
import strategies as S
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from op_table import OPS, OPS_BY_NAME, dense, leaves

import teachgrad as tg
from teachgrad.autodiff.gradcheck import numeric_jacobian
from teachgrad.ops import index_add

# The mean of an empty axis is NaN, which numpy announces (as in test_op_gradients).
pytestmark = pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")

SETTINGS = settings(max_examples=15, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Graph and tape run the same kernels on the same arrays; only the order in
# which contributions are summed may differ.
GRAPH_RTOL, GRAPH_ATOL = 1e-12, 1e-12


# -- which cases cannot have unknown dimensions -----------------------------------------
#: Ops left out of the graph test altogether, with the reason: an op whose fn
#: needs concrete values would go here. There are none: every entry of the
#: table builds on placeholders.
GRAPH_EXCLUDED = {}


def _axis_unknown(case, unknown):
    """Whether the placeholder dimension at ``params["axis"]`` of the first input is None."""
    ndim = case.arrays[0].ndim
    axis = case.params["axis"]
    return ndim > 0 and (unknown == "all" or axis % ndim == 0)


_SIZE_NEEDED = ("needs the size of that axis when the graph is built, and teachgrad "
                "raises a ValueError that says so")

#: op name -> (predicate(case, unknown), reason): cases left out when the
#: placeholders' dimensions are unknown (``unknown`` is "first" or "all").
#: Each is a documented limitation (teachgrad raises a clear error, checked by
#: ``test_unknown_dims_exclusions_are_real``), not a wrong answer.
UNKNOWN_DIMS_EXCLUDED = {
    "concat": (_axis_unknown, "concat's VJP splits the cotangent at the inputs' sizes "
                              "along the joined axis, so it " + _SIZE_NEEDED),
    "split": (_axis_unknown, "split " + _SIZE_NEEDED),
    "split_first_piece": (_axis_unknown, "split " + _SIZE_NEEDED),
}


def _joined_axis_unknown(axis_of):
    """For numpy's stacks: whether some input's joined axis (``axis_of(rank)``, None when
    the stack joins along a new axis) is unknown."""
    return lambda case, unknown: any(
        axis_of(a.ndim) is not None and (unknown == "all" or axis_of(a.ndim) == 0)
        for a in case.arrays)


#: numpy's stacks are concats, so they need the same sizes; test_numpy_ops.py checks
#: that they say so (``test_stacks_of_unknown_sizes_say_what_they_need``).
STACKS_EXCLUDED = {
    "vstack": (_joined_axis_unknown(lambda rank: 0 if rank >= 2 else None), "vstack is a concat"),
    "hstack": (_joined_axis_unknown(lambda rank: 0 if rank == 1 else 1), "hstack is a concat"),
    "dstack": (_joined_axis_unknown(lambda rank: 2 if rank >= 3 else None), "dstack is a concat"),
    "column_stack": (_joined_axis_unknown(lambda rank: 1 if rank >= 2 else None),
                     "column_stack is a concat"),
    "array_split": (_axis_unknown, "array_split into sections is a split, which " + _SIZE_NEEDED),
}


#: Pooling over channels reshapes them into groups, which needs the height, width and
#: channels known (tests/test_nn.py checks that it says so).
POOLS_EXCLUDED = dict.fromkeys(
    ("max_pool2d_channels", "avg_pool2d_channels"),
    (lambda case, unknown: unknown == "all", "channel pooling reshapes to groups of channels"))


#: Products that need sizes (tests/test_linalg.py checks that they say so).
PRODUCTS_EXCLUDED = {
    "einsum": (lambda case, unknown: any(len(set(term)) < len(term) for term in
                                         case.params["subscripts"].split("->")[0].split(",")),
               "einsum's VJP for a repeated index (a diagonal) builds an identity matrix of "
               "that axis's size, so it " + _SIZE_NEEDED),
    "kron": (lambda case, unknown: True, "kron reshapes to products of sizes, so it "
             + _SIZE_NEEDED),
    "cross": (lambda case, unknown: True, "cross reads the number of components, so it "
              + _SIZE_NEEDED),
}


#: Issue 32's numpy surface: concats, and ops that read lengths (test_numpy_surface.py
#: checks that they say so).
SURFACE_EXCLUDED = {
    "row_stack": (STACKS_EXCLUDED["vstack"][0], "row_stack is vstack"),
    "append": (lambda case, unknown: case.params["axis"] is None or _axis_unknown(case, unknown),
               "append is a concat (of the flattened inputs for axis=None)"),
    "r_": (lambda case, unknown: any(a.ndim for a in case.arrays), "r_ is a concat on axis 0"),
    "c_": (lambda case, unknown: unknown == "all" and any(a.ndim == 2 for a in case.arrays),
           "c_ is a concat on the last axis"),
    "gradient": (lambda case, unknown: True, "gradient " + _SIZE_NEEDED),
    "gradient_all_axes": (lambda case, unknown: True, "gradient " + _SIZE_NEEDED),
    "convolve": (lambda case, unknown: True, "convolve's windows " + _SIZE_NEEDED),
    "qr_wide_complete": (lambda case, unknown: True, "qr's complete mode is its reduced one "
                         "(differentiable) only for rows <= columns, so it " + _SIZE_NEEDED),
}


def unknown_dims_excluded(spec, case, unknown):
    rule = (UNKNOWN_DIMS_EXCLUDED.get(spec.name) or STACKS_EXCLUDED.get(spec.name)
            or PRODUCTS_EXCLUDED.get(spec.name) or SURFACE_EXCLUDED.get(spec.name)
            or POOLS_EXCLUDED.get(spec.name))
    return rule is not None and rule[0](case, unknown)


# -- helpers ------------------------------------------------------------------------


def structured(out, flat):
    return flat[0] if isinstance(out, tg.Tensor) else list(flat)


def placeholder_shape(array, unknown):
    """The shape of a placeholder for ``array``: ``unknown`` is "none" (the full
    shape), "first" (the first dimension None) or "all" (every dimension None)."""
    shape = tuple(array.shape)
    if unknown == "first" and shape:
        shape = (None,) + shape[1:]
    elif unknown == "all":
        shape = (None,) * len(shape)
    return shape


def assert_shape_compatible(static, actual, what):
    """A static (graph) shape agrees with an actual one wherever it is known."""
    if static is None:
        return
    assert len(static) == len(actual) and all(
        s is None or s == a for s, a in zip(static, actual)), \
        f"{what}: static shape {static} does not fit the actual shape {actual}"


def tape_vjp(fn, arrays, cotangents):
    """(outputs, gradients) by GradientTape, as numpy arrays."""
    xs = [tg.constant(a) for a in arrays]
    with tg.GradientTape() as tape:
        tape.watch(xs)
        out = fn(*xs)
    cots = [tg.constant(c, dtype=o.dtype) for c, o in zip(cotangents, leaves(out))]
    grads = tape.gradient(out, xs, output_gradients=structured(out, cots),
                          unconnected_gradients="zero")
    return [o.numpy() for o in leaves(out)], [dense(g) for g in grads]


def graph_vjp(fn, arrays, cotangents, shapes):
    """(outputs, gradients) by tg.gradients in a graph run by a Session, as numpy arrays.

    ``shapes`` gives each input placeholder's static shape (None for unknown dims).
    """
    graph = tg.Graph()
    with graph.as_default():
        xs = [tg.placeholder(tg.float64, shape, name=f"x{i}") for i, shape in enumerate(shapes)]
        outs = leaves(fn(*xs))
        cots = [tg.placeholder(o.dtype, o.shape, name=f"cotangent{i}")
                for i, o in enumerate(outs)]
        grads = tg.gradients(outs, xs, grad_ys=cots, unconnected_gradients="zero")
    assert len(grads) == len(xs)
    for x, g in zip(xs, grads):
        assert isinstance(g, tg.SymbolicTensor) and g.graph is graph
        assert g.dtype == x.dtype, f"gradient dtype {g.dtype} != input dtype {x.dtype}"
    feed = {x: a for x, a in zip(xs, arrays)}
    feed.update({c: np.asarray(v, dtype=c.dtype) for c, v in zip(cots, cotangents)})
    # Every tensor of the graph, so that each static shape is checked against its value.
    every = [t for node in graph.get_operations() for t in node.outputs]
    out_values, grad_values, every_value = tg.Session(graph).run([outs, grads, every],
                                                                 feed_dict=feed)
    for t, v in zip(every, every_value):
        assert_shape_compatible(t.shape, np.shape(v), f"tensor {t.name}")
        assert np.asarray(v).dtype == t.dtype, f"tensor {t.name}: dtype {np.asarray(v).dtype} " \
                                               f"!= its static dtype {t.dtype}"
    for x, g, v in zip(xs, grads, grad_values):
        assert_shape_compatible(g.shape, v.shape, f"gradient {g.name}")
        assert v.shape == feed[x].shape, f"gradient shape {v.shape} != input {feed[x].shape}"
    return out_values, grad_values


def draw_cotangents(data, fn, arrays):
    """A random cotangent in [-2, 2] for each eager output of ``fn``."""
    outs = leaves(fn(*[tg.constant(a) for a in arrays]))
    return [data.draw(S.arrays(tuple(o.shape), S.Domain(-2.0, 2.0)), label="cotangent")
            .astype(o.dtype) for o in outs]


def assert_same(got, want, what, rtol=GRAPH_RTOL, atol=GRAPH_ATOL):
    assert len(got) == len(want), f"{what}: {len(got)} results, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"{what} {i}: shape {g.shape} != {w.shape}"
        assert g.dtype == w.dtype, f"{what} {i}: dtype {g.dtype} != {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"{what} {i}")


# -- 1. every op of the table ---------------------------------------------------------
GRAPH_OPS = [spec for spec in OPS if spec.name not in GRAPH_EXCLUDED]


#: How much of the placeholders' shapes a graph knows (see placeholder_shape).
UNKNOWN = pytest.mark.parametrize("unknown", ["none", "first", "all"],
                                  ids=["known_shapes", "none_first_dim", "all_dims_none"])


@UNKNOWN
@pytest.mark.parametrize("spec", GRAPH_OPS, ids=lambda spec: spec.name)
@SETTINGS
@given(data=st.data())
def test_graph_gradient_matches_tape(spec, unknown, data):
    case = data.draw(spec.inputs, label="case")
    if unknown != "none" and unknown_dims_excluded(spec, case, unknown):
        return  # see UNKNOWN_DIMS_EXCLUDED for the reason

    def fn(*ts):
        return spec.fn(*ts, **case.params)

    cotangents = draw_cotangents(data, fn, case.arrays)
    tape_outs, tape_grads = tape_vjp(fn, case.arrays, cotangents)
    shapes = [placeholder_shape(a, unknown) for a in case.arrays]
    graph_outs, graph_grads = graph_vjp(fn, case.arrays, cotangents, shapes)
    assert_same(graph_outs, tape_outs, f"{spec.name}: graph output")
    assert_same(graph_grads, tape_grads, f"{spec.name}: graph gradient of input")


def test_exclusion_lists_name_table_entries():
    names = {spec.name for spec in OPS}
    assert set(GRAPH_EXCLUDED) <= names
    assert set(UNKNOWN_DIMS_EXCLUDED) <= names
    assert set(STACKS_EXCLUDED) <= names


@pytest.mark.parametrize("name", sorted(UNKNOWN_DIMS_EXCLUDED))
@pytest.mark.parametrize("shape, axis", [((None, 2), 0), ((None, None), -1)])
def test_unknown_dims_exclusions_are_real(name, shape, axis):
    # The excluded cases really fail when the graph is built, with an error that says why.
    spec = OPS_BY_NAME[name]
    params = {"axis": axis} if name == "concat" else {"axis": axis, "num_or_size_splits": 2}
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, shape, name="x")
        with pytest.raises(ValueError, match="size"):
            tg.gradients(leaves(spec.fn(x, x, **params) if name == "concat"
                                else spec.fn(x, **params)), x)


# Cases the hypothesis tests found when graph mode was new (some needed more examples
# than the settings above draw), kept as plain examples. The graph must build and
# agree with the tape, as it would in TensorFlow.
_MASK = np.array([[True, False, True], [False, True, True]])
FOUND_CASES = [
    pytest.param(tg.matmul, [(2, 3), (3, 4)], "first", id="matmul-both-batch-dims-unknown"),
    pytest.param(lambda x: tg.mean(x[::2]), [(5,)], "first", id="mean-of-strided-slice"),
    pytest.param(lambda x: x[1], [(2, 3)], "first", id="getitem-row-1-of-a-batch"),
    pytest.param(tg.squeeze, [(1, 3)], "first", id="squeeze-unknown-dim"),
    pytest.param(lambda x, v: index_add(x, v, [1]), [(2, 3), (1, 3)], "first",
                 id="index_add-row-1"),
    pytest.param(lambda x: tg.reshape(x, (4,)), [(4,)], "first", id="reshape-None-to-4"),
    pytest.param(lambda x: tg.reshape(x, (2, 2)), [(4,)], "first", id="reshape-None-to-2x2"),
    pytest.param(lambda x: tg.reshape(x, (6,)), [(2, 3)], "all", id="reshape-None-None-to-6"),
    pytest.param(lambda x: x[_MASK], [(2, 3)], "all", id="boolean-mask-None-None"),
]


@pytest.mark.parametrize("fn, shapes, unknown", FOUND_CASES)
def test_found_cases(fn, shapes, unknown):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape) for shape in shapes]
    outs = leaves(fn(*[tg.constant(a) for a in arrays]))
    cotangents = [rng.standard_normal(o.shape) for o in outs]
    tape_outs, tape_grads = tape_vjp(fn, arrays, cotangents)
    graph_outs, graph_grads = graph_vjp(fn, arrays, cotangents,
                                        [placeholder_shape(a, unknown) for a in arrays])
    assert_same(graph_outs, tape_outs, "graph output")
    assert_same(graph_grads, tape_grads, "graph gradient of input")


# -- 2. random op chains ---------------------------------------------------------------
UNARY = {
    "negative": tg.negative, "tanh": tg.tanh, "sin": tg.sin, "cos": tg.cos,
    "sigmoid": tg.sigmoid, "square": tg.square, "exp": tg.exp,
}
BINARY = {"add": tg.add, "subtract": tg.subtract, "multiply": tg.multiply}
REDUCTIONS = {"sum": tg.sum, "mean": tg.mean, "logsumexp": tg.logsumexp}
OPS_BY_KIND = {"unary": UNARY, "binary": BINARY, "reduction": REDUCTIONS}


class Chain:
    """A straight-line program: values v0.. are the inputs, each step adds one value.

    ``steps`` holds (op name, operand indices, params); ``outputs`` the indices
    of the values returned. Its repr is the program, so hypothesis prints
    something a student can paste.
    """

    def __init__(self, n_inputs, steps, outputs):
        self.n_inputs, self.steps, self.outputs = n_inputs, steps, outputs

    def values(self, *inputs):
        """Every value of the program, inputs first (eager tensors or graph tensors)."""
        values = list(inputs)
        for name, operands, params in self.steps:
            kind = next(k for k, table in OPS_BY_KIND.items() if name in table)
            values.append(OPS_BY_KIND[kind][name](*[values[i] for i in operands], **params))
        return values

    def __call__(self, *inputs):
        values = self.values(*inputs)
        return [values[i] for i in self.outputs]

    def __repr__(self):
        lines = [f"def chain({', '.join(f'v{i}' for i in range(self.n_inputs))}):"]
        for k, (name, operands, params) in enumerate(self.steps):
            args = [f"v{i}" for i in operands] + [f"{p}={v!r}" for p, v in params.items()]
            lines.append(f"    v{self.n_inputs + k} = tg.{name}({', '.join(args)})")
        lines.append(f"    return [{', '.join(f'v{i}' for i in self.outputs)}]")
        return "\n".join(lines)


def _reduced_shape(shape, axis, keepdims):
    axes = range(len(shape)) if axis is None else [
        a % len(shape) for a in ((axis,) if isinstance(axis, int) else axis)]
    return tuple(1 if i in axes else n for i, n in enumerate(shape) if keepdims or i not in axes)


@st.composite
def chains(draw):
    """(chain, input arrays): 3 to 8 ops over 1 or 2 inputs whose shapes broadcast.

    Each op applies to the latest value (a binary op also to any earlier one), so
    the result depends on every step.
    """
    n_inputs = draw(st.integers(1, 2))
    shapes = draw(hnp_broadcastable(n_inputs))
    arrays = [draw(S.arrays(s, S.Domain(-2.0, 2.0)), label=f"v{i}") for i, s in enumerate(shapes)]
    known = list(shapes)                 # the shape of every value so far
    steps = []
    for _ in range(draw(st.integers(3, 8), label="length")):
        kind = draw(st.sampled_from(["unary", "unary", "binary", "binary", "reduction"]))
        i = len(known) - 1               # each op takes the latest value: a real chain
        if kind == "unary":
            steps.append((draw(st.sampled_from(sorted(UNARY))), (i,), {}))
            known.append(known[i])
        elif kind == "binary":
            others = [j for j in range(len(known)) if _broadcasts(known[i], known[j])]
            j = draw(st.sampled_from(others))   # any earlier value (itself included)
            if draw(st.booleans()):
                i, j = j, i
            steps.append((draw(st.sampled_from(sorted(BINARY))), (i, j), {}))
            known.append(np.broadcast_shapes(known[i], known[j]))
        else:
            axis = draw(S.axes_for(len(known[i])))
            keepdims = draw(st.booleans())
            steps.append((draw(st.sampled_from(sorted(REDUCTIONS))), (i,),
                          {"axis": axis, "keepdims": keepdims}))
            known.append(_reduced_shape(known[i], axis, keepdims))
    outputs = [len(known) - 1]
    if draw(st.booleans()):              # a second output: an earlier value (maybe an input)
        outputs.append(draw(st.integers(0, len(known) - 2)))
    return Chain(n_inputs, steps, outputs), arrays


def hnp_broadcastable(n):
    return hnp.mutually_broadcastable_shapes(
        num_shapes=n, min_dims=0, max_dims=3, min_side=1, max_side=3).map(
            lambda b: list(b.input_shapes))


def _broadcasts(a, b):
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def function_vjp(chain, arrays, cotangents):
    """(outputs, gradients) from one tg.function that calls tg.gradients inside."""
    n = len(arrays)

    @tg.function
    def outputs_and_gradients(*args):
        xs, cots = list(args[:n]), list(args[n:])
        outs = chain(*xs)
        return outs, tg.gradients(outs, xs, grad_ys=cots, unconnected_gradients="zero")

    args = [np.asarray(a) for a in arrays] + [np.asarray(c) for c in cotangents]
    outs, grads = outputs_and_gradients(*args)
    outputs_and_gradients(*args)         # the second call runs the traced graph
    assert outputs_and_gradients.trace_count == 1
    return [o.numpy() for o in outs], [g.numpy() for g in grads]


def tape_through_function_vjp(chain, arrays, cotangents):
    """Gradients by a GradientTape around a call of the chain as a tg.function."""
    traced = tg.function(lambda *xs: chain(*xs))
    xs = [tg.constant(a) for a in arrays]
    with tg.GradientTape() as tape:
        tape.watch(xs)
        outs = traced(*xs)
    grads = tape.gradient(list(outs), xs, output_gradients=[tg.constant(c) for c in cotangents],
                          unconnected_gradients="zero")
    return [o.numpy() for o in outs], [dense(g) for g in grads]


@UNKNOWN
@SETTINGS
@given(data=st.data())
def test_random_chain_graph_tape_and_finite_differences_agree(unknown, data):
    chain, arrays = data.draw(chains(), label="chain")
    values = chain.values(*[tg.constant(a) for a in arrays])
    # Keep central differences accurate: their error grows with the third derivative,
    # which exp(exp(x)) and the like make huge. Bounded values keep it small.
    assume(all(np.all(np.abs(v.numpy()) < 20) for v in values))
    cotangents = draw_cotangents(data, chain, arrays)

    tape_outs, tape_grads = tape_vjp(chain, arrays, cotangents)
    shapes = [placeholder_shape(a, unknown) for a in arrays]
    graph_outs, graph_grads = graph_vjp(chain, arrays, cotangents, shapes)
    assert_same(graph_outs, tape_outs, "graph output")
    assert_same(graph_grads, tape_grads, "graph gradient of input")

    v = np.concatenate([np.ravel(c) for c in cotangents])
    jacobians = numeric_jacobian(chain, arrays, eps=1e-6)
    numeric = [(v @ J).reshape(a.shape) for J, a in zip(jacobians, arrays)]
    scale = max([1.0] + [float(np.max(np.abs(n), initial=0)) for n in numeric])
    assert_same(tape_grads, numeric, "tape gradient vs finite differences", rtol=1e-5,
                atol=1e-6 * scale)

    if unknown == "none":   # tg.function traces with the arguments' full shapes
        fn_outs, fn_grads = function_vjp(chain, arrays, cotangents)
        assert_same(fn_outs, tape_outs, "tg.function output")
        assert_same(fn_grads, tape_grads, "tg.function gradient of input")
        call_outs, call_grads = tape_through_function_vjp(chain, arrays, cotangents)
        assert_same(call_outs, tape_outs, "output of the tg.function call")
        assert_same(call_grads, tape_grads, "tape gradient through the tg.function call")
