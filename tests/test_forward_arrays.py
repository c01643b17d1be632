"""One rule, two speeds, in forward mode (issue 33): a ForwardAccumulator whose tangent
computations nothing sees runs its JVP rules on raw arrays, and gives the same
tangents as on Tensors.

The op table (tests/op_table.py) drives the comparison, as tests/test_unboxed_rules.py
does for the backward pass. The Tensor run is forced the way a user forces it: a
GradientTape entered before the accumulator sees its tangent computations (it could
differentiate them), so they must build Tensors.
"""
import contextlib

import numpy as np
import pytest
import strategies as S
from hypothesis import HealthCheck, given, settings, strategies as st
from op_table import OPS, leaves

import teachgrad as tg
from teachgrad.ops.core.op import Op

pytestmark = pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")

SETTINGS = settings(max_examples=6, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _tangents(spec, case, xs, ts, seen, transpose):
    """The accumulator's JVPs of ``spec``'s outputs, and its tangents as it kept them
    before ``acc.jvp`` boxed them. ``seen``: a tape entered first sees the tangent
    computations. ``transpose``: every JVP by transposing the VJP rule."""
    with tg.GradientTape(persistent=True) if seen else contextlib.nullcontext() as tape:
        with tg.transposition_only() if transpose else contextlib.nullcontext():
            with tg.ForwardAccumulator(xs, ts) as acc:
                out = spec.fn(*xs, **case.params)
    outs = [t for t in leaves(out) if t.dtype.kind == "f"]
    kept = [acc._lookup(o) for o in outs]
    del tape
    return outs, kept, acc.jvp(outs, unconnected_gradients="zero")


def _assert_same(a, t, spec):
    assert type(a) is tg.Tensor and type(t) is tg.Tensor, "a JVP came back as no Tensor"
    assert a.dtype == t.dtype, f"{spec.name}: dtype {a.dtype} on arrays, {t.dtype} on Tensors"
    assert tuple(a.shape) == tuple(t.shape)
    np.testing.assert_allclose(a.numpy(), t.numpy(), rtol=1e-12, atol=0,
                               err_msg=f"{spec.name}: tangents on arrays and on Tensors")


@pytest.mark.parametrize("spec", OPS, ids=lambda spec: spec.name)
@SETTINGS
@given(data=st.data(), dtype=st.sampled_from([np.float64, np.float32]),
       transpose=st.booleans())
def test_every_jvp_gives_the_same_tangents_on_arrays_and_on_tensors(spec, data, dtype,
                                                                      transpose):
    case = data.draw(spec.inputs, label="case")
    xs = [tg.constant(a, dtype=dtype) for a in case.arrays]
    ts = [tg.constant(data.draw(S.arrays(tuple(x.shape), S.Domain(-2.0, 2.0)),
                                label="tangent"), dtype=dtype) for x in xs]
    outs, kept_a, on_arrays = _tangents(spec, case, xs, ts, False, transpose)
    _, kept_t, on_tensors = _tangents(spec, case, xs, ts, True, transpose)
    for o, a, t in zip(outs, kept_a, kept_t):
        if any(o is x for x in xs):   # diff with n=0 returns its input: its tangent
            continue
        # Unseen, tangents are kept as arrays; seen by a tape, as Tensors it recorded.
        assert a is None or not isinstance(a, tg.Tensor), f"{spec.name}: a Tensor tangent"
        assert t is None or isinstance(t, tg.Tensor)
    for a, t in zip(on_arrays, on_tensors):
        _assert_same(a, t, spec)


def test_teachgrads_native_rules_run_on_arrays_and_a_students_get_tensors():
    ops = [v for module in list(__import__("sys").modules.values())
           if getattr(module, "__name__", "").startswith("teachgrad.")
           for v in vars(module).values() if isinstance(v, Op)]
    natives = [op for op in ops if op.jvp is not None]
    assert natives and all(op.array_jvp for op in natives
                           if op.name not in ("einsum", "custom_gradient"))
    seen = []

    def rule(x_dot, ans, x):
        seen.append((type(x_dot), type(x)))
        return x_dot * tg.constant(3 * x.numpy() ** 2)   # needs .numpy(): a Tensor

    cube = tg.ops.primitive("cube_jvp_for_test", lambda x: x ** 3)
    tg.ops.defjvp(cube, rule)
    assert not cube.array_jvp
    x = tg.constant(2.0)
    with tg.ForwardAccumulator(x, tg.constant(1.0)) as acc:
        y = tg.sin(tg.ops.bind(cube, x))
    np.testing.assert_allclose(acc.jvp(y).numpy(), np.cos(8.0) * 12.0)
    assert seen == [(tg.Tensor, tg.Tensor)]


def _tensors_made(fn):
    """How many Tensors ``fn()`` made (Tensor ids come from a counter)."""
    before = tg.constant(0.0).id
    fn()
    return tg.constant(0.0).id - before - 1


def test_an_unseen_jvp_makes_no_tensor_per_tangent_op_and_boxes_once():
    x = tg.constant(0.5)

    def chain():
        y = x
        for _ in range(50):
            y = tg.tanh(y * 1.5) * y   # native rules: 100 ops, and 100 tangent ops
        return y

    forward = _tensors_made(chain)
    with tg.ForwardAccumulator(x, tg.constant(1.0)) as acc:
        with_tangents = _tensors_made(chain)
        y = chain()
    assert with_tangents - forward < 5   # on Tensors, 100 or more
    j = acc.jvp(y)
    assert isinstance(j, tg.Tensor) and acc.jvp(y) is j


def _hvp_reference(x):
    """``f(x) = sum(sin(x) * x)``: its gradient, and its Hessian (diagonal)."""
    return np.sin(x) + x * np.cos(x), 2 * np.cos(x) - x * np.sin(x)


def test_nested_accumulators_and_an_accumulator_under_a_tape_use_tensors():
    x0 = np.array([0.5, -1.0, 2.0])
    x, v = tg.constant(x0), tg.constant([1.0, 2.0, -1.0])
    grad, hess = _hvp_reference(x0)
    with tg.ForwardAccumulator(x, v) as outer:
        with tg.ForwardAccumulator(x, tg.ones_like(x)) as inner:
            y = tg.sum(tg.sin(x) * x)
        first = inner.jvp(y)           # the inner's tangents: seen by the outer
        assert isinstance(inner._lookup(y), tg.Tensor)
    assert not isinstance(outer._lookup(y), tg.Tensor)   # nothing sees the outer's
    np.testing.assert_allclose(first.numpy(), grad.sum())
    np.testing.assert_allclose(outer.jvp(first).numpy(), hess @ v.numpy())
    with tg.GradientTape() as tape:    # a tape around: it differentiates the JVP
        tape.watch(x)
        with tg.ForwardAccumulator(x, v) as acc:
            y = tg.sum(tg.sin(x) * x)
        assert isinstance(acc._lookup(y), tg.Tensor)
        jvp = acc.jvp(y)
    np.testing.assert_allclose(jvp.numpy(), grad @ v.numpy())
    np.testing.assert_allclose(tape.gradient(jvp, x).numpy(), hess * v.numpy())


def test_forward_over_reverse_keeps_its_own_tangents_as_arrays():
    x0 = np.array([0.5, -1.0, 2.0])
    x, v = tg.constant(x0), tg.constant([1.0, 2.0, -1.0])
    with tg.ForwardAccumulator(x, v) as acc:
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = tg.sum(tg.sin(x) * x)
        g = tape.gradient(y, x)        # its rules' ops are seen by acc: Tensors
        assert not isinstance(acc._lookup(g), tg.Tensor)
    np.testing.assert_allclose(acc.jvp(g).numpy(), _hvp_reference(x0)[1] * v.numpy())
    np.testing.assert_allclose(tg.hvp(lambda x: tg.sum(tg.sin(x) * x), [x], [v])[0].numpy(),
                               _hvp_reference(x0)[1] * v.numpy())


def test_what_watches_the_accumulator_sees_tensors():
    x = tg.constant([0.5, -1.0])
    with tg.viz.record() as rec:
        with tg.ForwardAccumulator(x, tg.ones_like(x)) as acc:
            y = tg.sigmoid(x) * x
    jvps = [e for t in rec.traces for e in t.events if type(e).__name__ == "JVP"]
    assert jvps
    for event in jvps:
        for t in (*event.input_tangents, *event.output_tangents):
            assert t is None or isinstance(t, tg.Tensor)
    s = 1 / (1 + np.exp(-x.numpy()))
    np.testing.assert_allclose(acc.jvp(y).numpy(), s * (1 - s) * x.numpy() + s)
