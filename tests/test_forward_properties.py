"""Property tests of forward mode, driven by the op table (tests/op_table.py).

For every entry, on inputs and directions drawn by hypothesis (float64):

1. the JVP by transposition of the VJP rule (inside ``tg.transposition_only()``)
   equals central finite differences along the tangent;
2. for ops with a native JVP rule, the native JVP (which the trace shows was
   really used) equals the transposed one;
3. the dot-product test: ``<J t, u> == <t, J^T u>``, with ``J t`` from a
   ForwardAccumulator and ``J^T u`` from a GradientTape;
4. ``tg.jacfwd(f) == tg.jacrev(f)`` (ops with one output tensor).

Plus random chains of 3 to 6 ops on two primals: JVP == finite differences
(native rules and transposition alike) and the dot-product identity.
"""
import importlib
import pkgutil

import numpy as np
import pytest
import strategies as S
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from op_table import OPS

import teachgrad as tg
import teachgrad.ops
from teachgrad import nest
from teachgrad.autodiff import events
from teachgrad.ops.core.op import Op

pytestmark = pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")

SETTINGS = settings(max_examples=15, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

DIRECTION = S.Domain(-2.0, 2.0)


def _ids(spec):
    return spec.name


def _primitives():
    """Every Op object in teachgrad.ops, by name."""
    found = {}
    for info in pkgutil.walk_packages(teachgrad.ops.__path__, "teachgrad.ops."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Op):
                found[value.name] = value
    return found


PRIMITIVES = _primitives()
NATIVE = [spec for spec in OPS if PRIMITIVES[spec.op_name].jvp is not None]
SINGLE_OUTPUT = [spec for spec in OPS if spec.name not in ("split", "identity_n", "array_split",
                                                      "slogdet", "eigh", "svd", "qr",
                                                      "gradient_all_axes", "eigh_upper",
                                                      "qr_wide_complete")]


def test_some_ops_have_native_rules_and_some_do_not():
    # Both code paths of forward mode are exercised by the table.
    assert NATIVE and len(NATIVE) < len(OPS)


# -- helpers ------------------------------------------------------------------------
def leaves(out):
    return list(nest.flatten(out))


def as_numpy(t):
    if isinstance(t, tg.IndexedSlices):
        t = t.to_dense()
    return np.asarray(t.numpy(), dtype=np.float64)


def draw_like(data, shapes, label):
    """One random array (entries in [-2, 2]) per shape."""
    return [data.draw(S.arrays(tuple(shape), DIRECTION), label=label) for shape in shapes]


def forward_jvp(fn, arrays, tangents, transpose=False):
    """(outputs, their JVPs along ``tangents``) of ``fn`` at ``arrays``, by forward mode."""
    xs = [tg.constant(a) for a in arrays]
    ts = [tg.constant(t) for t in tangents]
    if transpose:
        with tg.transposition_only():
            with tg.ForwardAccumulator(xs, ts) as acc:
                out = fn(*xs)
    else:
        with tg.ForwardAccumulator(xs, ts) as acc:
            out = fn(*xs)
    outs = leaves(out)
    jvps = acc.jvp(outs, unconnected_gradients="zero")
    assert len(jvps) == len(outs)
    for o, j in zip(outs, jvps):
        assert j is not None
        # A JVP is a dense tensor shaped like its primal (never IndexedSlices).
        assert type(j) is tg.Tensor, f"the JVP is a {type(j).__name__}, not a tg.Tensor"
        assert tuple(j.shape) == tuple(o.shape), f"JVP shape {j.shape} != output {o.shape}"
        assert j.dtype == o.dtype, f"JVP dtype {j.dtype} != output {o.dtype}"
    return outs, [as_numpy(j) for j in jvps]


def finite_difference_jvp(fn, arrays, tangents, eps):
    """``(f(x + eps t) - f(x - eps t)) / (2 eps)``, one array per output."""
    def at(sign):
        moved = [tg.constant(a + sign * eps * t) for a, t in zip(arrays, tangents)]
        return [as_numpy(o) for o in leaves(fn(*moved))]
    plus, minus = at(1.0), at(-1.0)
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]


def tape_vjp(fn, arrays, cotangents):
    """``J^T u`` for each input, by reverse mode."""
    xs = [tg.constant(a) for a in arrays]
    with tg.GradientTape() as tape:
        tape.watch(xs)
        out = fn(*xs)
    outs = leaves(out)
    us = [tg.constant(u, dtype=o.dtype) for u, o in zip(cotangents, outs)]
    grads = tape.gradient(out, xs, output_gradients=us[0] if isinstance(out, tg.Tensor) else us,
                          unconnected_gradients="zero")
    return [as_numpy(g) for g in grads]


def finite_mask(outs):
    """Where each output is finite: a derivative is only checked there (the mean or
    logsumexp of an empty axis is NaN or -inf whatever the input)."""
    return [np.isfinite(as_numpy(o)) for o in outs]


def assert_close_where_finite(actual, desired, masks, rtol, atol, what):
    assert len(actual) == len(desired) == len(masks)
    for i, (a, d, m) in enumerate(zip(actual, desired, masks)):
        assert np.shape(a) == np.shape(d) == np.shape(m), f"{what}, output {i}: shapes"
        np.testing.assert_allclose(np.where(m, a, 0.0), np.where(m, d, 0.0), rtol=rtol,
                                   atol=atol, err_msg=f"{what}, output {i}")


def inner(xs, ys):
    return float(sum(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64))
                     for x, y in zip(xs, ys)))


def jvp_methods(trace_recorder, op):
    """The methods ("native"/"transpose") of the JVP events of ``op``'s nodes."""
    return [e.method for trace in trace_recorder.traces for e in trace.events
            if isinstance(e, events.JVP) and e.node.op is op]


# -- 1. transposition == finite differences ----------------------------------------
@pytest.mark.parametrize("spec", OPS, ids=_ids)
@SETTINGS
@given(data=st.data())
def test_transposed_jvp_matches_finite_differences(spec, data):
    case = data.draw(spec.inputs, label="case")
    tangents = draw_like(data, [a.shape for a in case.arrays], "tangent")

    def fn(*xs):
        return spec.fn(*xs, **case.params)

    with tg.viz.record() as rec:
        outs, jvps = forward_jvp(fn, case.arrays, tangents, transpose=True)
    assert all(m == "transpose" for m in jvp_methods(rec, PRIMITIVES[spec.op_name]))
    expected = finite_difference_jvp(fn, case.arrays, tangents, spec.eps)
    assert_close_where_finite(jvps, expected, finite_mask(outs), spec.rtol, spec.atol,
                              f"{spec.name}: transposed JVP vs finite differences")


# -- 2. native == transposed --------------------------------------------------------
@pytest.mark.parametrize("spec", NATIVE, ids=_ids)
@SETTINGS
@given(data=st.data())
def test_native_jvp_matches_transposed(spec, data):
    case = data.draw(spec.inputs, label="case")
    tangents = draw_like(data, [a.shape for a in case.arrays], "tangent")

    def fn(*xs):
        return spec.fn(*xs, **case.params)

    with tg.viz.record() as rec:
        outs, native = forward_jvp(fn, case.arrays, tangents)
    # The native rule really ran (where the op was applied at all).
    assert all(m == "native" for m in jvp_methods(rec, PRIMITIVES[spec.op_name]))
    _, transposed = forward_jvp(fn, case.arrays, tangents, transpose=True)
    masks = finite_mask(outs)
    tol = 1e-6 if any(o.dtype == tg.float32 for o in outs) else 1e-10
    assert_close_where_finite(native, transposed, masks, tol, tol,
                              f"{spec.name}: native vs transposed JVP")
    expected = finite_difference_jvp(fn, case.arrays, tangents, spec.eps)
    assert_close_where_finite(native, expected, masks, spec.rtol, spec.atol,
                              f"{spec.name}: native JVP vs finite differences")


# -- 3. dot-product test -------------------------------------------------------------
@pytest.mark.parametrize("spec", OPS, ids=_ids)
@SETTINGS
@given(data=st.data())
def test_dot_product_identity(spec, data):
    case = data.draw(spec.inputs, label="case")
    tangents = draw_like(data, [a.shape for a in case.arrays], "tangent")

    def fn(*xs):
        return spec.fn(*xs, **case.params)

    outs, jvps = forward_jvp(fn, case.arrays, tangents)
    cotangents = draw_like(data, [o.shape for o in outs], "cotangent")
    # No cotangent on non-finite outputs (NaN * 0 would still be NaN on the left).
    cotangents = [np.where(m, u, 0.0) for u, m in zip(cotangents, finite_mask(outs))]
    jvps = [np.where(m, j, 0.0) for j, m in zip(jvps, finite_mask(outs))]
    vjps = tape_vjp(fn, case.arrays, cotangents)
    lhs, rhs = inner(jvps, cotangents), inner(tangents, vjps)
    tol = 1e-4 if any(o.dtype == tg.float32 for o in outs) else 1e-9
    assert lhs == pytest.approx(rhs, rel=tol, abs=tol), f"{spec.name}: <Jt,u>={lhs} <t,J^T u>={rhs}"


# -- 4. jacfwd == jacrev -------------------------------------------------------------
@pytest.mark.parametrize("spec", SINGLE_OUTPUT, ids=_ids)
@settings(SETTINGS, max_examples=8)
@given(data=st.data())
def test_jacfwd_equals_jacrev(spec, data):
    case = data.draw(spec.inputs, label="case")
    argnums = tuple(range(len(case.arrays)))

    def fn(*xs):
        return spec.fn(*xs, **case.params)

    xs = [tg.constant(a) for a in case.arrays]
    forward = tg.jacfwd(fn, argnums=argnums)(*xs)
    reverse = tg.jacrev(fn, argnums=argnums)(*xs)
    out = fn(*xs)
    assert len(forward) == len(reverse) == len(xs)
    for i, (f, r, x) in enumerate(zip(forward, reverse, xs)):
        assert tuple(f.shape) == tuple(out.shape) + tuple(x.shape)
        assert tuple(f.shape) == tuple(r.shape)
        tol = 1e-6 if out.dtype == tg.float32 else 1e-10
        np.testing.assert_allclose(as_numpy(f), as_numpy(r), rtol=tol, atol=tol,
                                   err_msg=f"{spec.name}: jacfwd vs jacrev, input {i}")


# -- random op chains -----------------------------------------------------------------
# Each step maps a rank-2 tensor to a rank-2 tensor, smoothly and with bounded values
# (so that finite differences stay meaningful); ``c`` holds fixed random constants.
def _mul_const(x, c):
    return x * c["row"][: x.shape[-1]]


def _matmul(x, c):
    return tg.matmul(x, c["matrix"][: x.shape[-1], :])


def _gather(x, c):
    return tg.gather(x, c["rows"] % x.shape[0], axis=0)


def _where(x, c):
    mask = np.resize(c["mask"], tuple(x.shape))
    return tg.where(mask, x, tg.cos(x))


CHAIN_STEPS = {
    "sin": lambda x, c: tg.sin(x),
    "cos": lambda x, c: tg.cos(x),
    "tanh": lambda x, c: tg.tanh(x),
    "sigmoid": lambda x, c: tg.sigmoid(x),
    "exp_tanh": lambda x, c: tg.exp(tg.tanh(x)),
    "log1p_square": lambda x, c: tg.log1p(tg.square(x)),
    "sqrt": lambda x, c: tg.sqrt(1.0 + x * x),
    "rational": lambda x, c: x / (1.0 + tg.square(x)),
    "power": lambda x, c: tg.power(1.0 + tg.sigmoid(x), 1.5),
    "fan_out": lambda x, c: x * tg.sin(x),
    "mul_const": _mul_const,
    "add_const": lambda x, c: x + c["row"][: x.shape[-1]],
    "matmul": _matmul,
    "transpose": lambda x, c: tg.transpose(x),
    "reshape": lambda x, c: tg.reshape(x, (x.shape[1], x.shape[0])),
    "reverse": lambda x, c: x[::-1],
    "concat": lambda x, c: tg.concat([x, tg.tanh(x)], axis=-1)[:, :3],
    "stack_sum": lambda x, c: tg.sum(tg.stack([x, 2.0 * x], axis=0), axis=0),
    "gather": _gather,
    "where": _where,
    "sum_keep": lambda x, c: tg.sum(x, axis=-1, keepdims=True) + x,
    "mean0": lambda x, c: tg.mean(x, axis=0, keepdims=True) * x,
    "softmax": lambda x, c: tg.softmax(x, axis=-1),
    "log_softmax": lambda x, c: tg.log_softmax(x, axis=-1),
    "logsumexp": lambda x, c: tg.logsumexp(x, axis=0, keepdims=True) - x,
    "add_n": lambda x, c: tg.add_n([x, tg.sin(x), x]),
    "split": lambda x, c: tg.concat(tg.split(x, [1, x.shape[-1] - 1], axis=-1)[::-1], axis=-1),
}
COMBINE = {
    "add": lambda x, y: x + y,
    "subtract": lambda x, y: x - y,
    "multiply": lambda x, y: x * y,
    "mixed": lambda x, y: tg.sin(x) * y + tg.tanh(y),
}


@st.composite
def chains(draw):
    """Two primals of one shape, how they are combined, and 3 to 6 chain steps."""
    shape = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    x = draw(S.arrays(shape, S.Domain(-2.0, 2.0)))
    y = draw(S.arrays(shape, S.Domain(-2.0, 2.0)))
    combine = draw(st.sampled_from(sorted(COMBINE)))
    steps = draw(st.lists(st.sampled_from(sorted(CHAIN_STEPS)), min_size=3, max_size=6))
    consts = {
        "row": draw(S.arrays((3,), S.Domain(-1.5, 1.5))),
        "matrix": draw(S.arrays((3, 3), S.Domain(-1.0, 1.0))),
        "rows": draw(hnp.arrays(np.int64, (3,), elements=st.integers(0, 5))),
        "mask": draw(hnp.arrays(np.bool_, (9,))),
    }
    return (x, y), combine, steps, consts


def chain_function(combine, steps, consts):
    def f(x, y):
        z = COMBINE[combine](x, y)
        for name in steps:
            z = CHAIN_STEPS[name](z, consts)
        return z
    return f


@pytest.mark.parametrize("transpose", [False, True], ids=["native", "transposed"])
@settings(SETTINGS, max_examples=40)
@given(chain=chains(), data=st.data())
def test_chain_jvp_matches_finite_differences(transpose, chain, data):
    arrays, combine, steps, consts = chain
    f = chain_function(combine, steps, consts)
    tangents = draw_like(data, [a.shape for a in arrays], "tangent")
    _, jvps = forward_jvp(f, arrays, tangents, transpose=transpose)
    expected = finite_difference_jvp(f, arrays, tangents, 1e-6)
    np.testing.assert_allclose(jvps[0], expected[0], rtol=1e-5, atol=1e-6,
                               err_msg=f"chain {combine} -> {steps}")


@settings(SETTINGS, max_examples=40)
@given(chain=chains(), data=st.data())
def test_chain_dot_product_identity(chain, data):
    arrays, combine, steps, consts = chain
    f = chain_function(combine, steps, consts)
    tangents = draw_like(data, [a.shape for a in arrays], "tangent")
    outs, jvps = forward_jvp(f, arrays, tangents)
    cotangents = draw_like(data, [o.shape for o in outs], "cotangent")
    vjps = tape_vjp(f, arrays, cotangents)
    lhs, rhs = inner(jvps, cotangents), inner(tangents, vjps)
    assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-9), f"chain {combine} -> {steps}"
