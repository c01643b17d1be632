"""Forward mode (issue 4): ForwardAccumulator, JVPs by transposition, and the functional API.

The seed's docstring examples (forwardprop.py) as tests, the accumulator's errors
and bookkeeping, strict nesting with other accumulators and tapes, the events the
visualizer replays, forward mode while building a graph, and tg.jvp / jacfwd /
hessian / hvp. The op-table properties are in tests/test_forward_properties.py.
"""
import contextlib
import warnings

import numpy as np
import pytest

import teachgrad as tg
from teachgrad.autodiff import events


def f32(value):
    return tg.constant(value, dtype=tg.float32)


def jvp_events(recorder):
    return [e for trace in recorder.traces for e in trace.events if isinstance(e, events.JVP)]


# -- the seed's examples ---------------------------------------------------------------
def test_nested_accumulators_give_higher_order_jvps():
    primal = f32(1.1)
    with tg.ForwardAccumulator(primal, f32(1.)) as outer:
        with tg.ForwardAccumulator(primal, f32(1.)) as inner:
            primal_out = primal ** f32(3.5)
    inner_jvp = inner.jvp(primal_out)
    assert inner_jvp.dtype == tg.float32 and inner_jvp.shape == ()
    np.testing.assert_allclose(inner_jvp.numpy(), np.float32(4.4417057), rtol=1e-6)  # 3.5 * 1.1 ** 2.5
    second = outer.jvp(inner_jvp)
    assert second.dtype == tg.float32
    np.testing.assert_allclose(second.numpy(), np.float32(10.094786), rtol=1e-6)  # 3.5 * 2.5 * 1.1 ** 1.5
    np.testing.assert_allclose(second.numpy(), 3.5 * 2.5 * 1.1 ** 1.5, rtol=1e-6)


def test_reversed_nesting_does_not_give_the_second_derivative():
    primal = f32(1.1)
    with tg.ForwardAccumulator(primal, f32(1.)) as outer:
        with tg.ForwardAccumulator(primal, f32(1.)) as inner:
            primal_out = primal ** f32(3.5)
    outer_jvp = outer.jvp(primal_out)   # the outer one sees the op itself ...
    np.testing.assert_allclose(outer_jvp.numpy(), np.float32(4.4417057), rtol=1e-6)
    assert inner.jvp(outer_jvp) is None  # ... but the inner one never sees its JVP computation


def test_forward_over_backward_hessian_vector_product():
    v = tg.Variable([1., 2.])
    with tg.ForwardAccumulator(v, tg.constant([1., 0.])) as acc:  # the "vector" in HVP
        with tg.GradientTape() as tape:
            y = tg.sum(v ** 3.)
        backward = tape.gradient(y, v)
    np.testing.assert_allclose(backward.numpy(), [3., 12.])    # gradient from backprop
    np.testing.assert_allclose(acc.jvp(backward).numpy(), [6., 0.])


def test_forward_over_backward_hessian_vector_product_in_float32():
    v = tg.Variable(np.array([1., 2.], dtype=np.float32))
    with tg.ForwardAccumulator(v, f32([1., 0.])) as acc:
        with tg.GradientTape() as tape:
            y = tg.sum(v ** f32(3.))
        backward = tape.gradient(y, v)
    hvp = acc.jvp(backward)
    assert backward.dtype == hvp.dtype == tg.float32
    np.testing.assert_allclose(backward.numpy(), [3., 12.])
    np.testing.assert_allclose(hvp.numpy(), [6., 0.])


def test_dense_layer_forward_columns_equal_the_tape_gradient():
    x = f32([[2.0, 3.0], [1.0, 4.0]])
    kernel = tg.Variable(np.array([[0.3], [-0.7]], dtype=np.float32))
    bias = tg.Variable(np.array([0.1], dtype=np.float32))

    def dense(inputs):
        return tg.matmul(inputs, kernel) + bias

    def loss_fn():
        return tg.sum((dense(x) - f32([1., -1.])) ** f32(2.))

    kernel_fprop = []
    with tg.ForwardAccumulator(kernel, f32([[1.], [0.]])) as acc:
        kernel_fprop.append(acc.jvp(loss_fn()))
    with tg.ForwardAccumulator(kernel, f32([[0.], [1.]])) as acc:
        kernel_fprop.append(acc.jvp(loss_fn()))
    with tg.ForwardAccumulator(bias, f32([1.])) as acc:
        bias_fprop = acc.jvp(loss_fn())
    with tg.GradientTape() as tape:
        loss = loss_fn()
    kernel_grad, bias_grad = tape.gradient(loss, (kernel, bias))
    np.testing.assert_allclose(kernel_grad.numpy(), np.stack([k.numpy() for k in kernel_fprop])[:, None],
                               rtol=1e-5)
    np.testing.assert_allclose(bias_grad.numpy(), bias_fprop.numpy()[None], rtol=1e-5)
    # and the first example: one forward pass gives the directional derivative
    with tg.ForwardAccumulator(primals=kernel, tangents=f32([[1.], [0.]])) as acc:
        loss = loss_fn()
    assert acc.jvp(loss).shape == () and acc.jvp(loss).dtype == tg.float32


# -- errors ------------------------------------------------------------------------------
def test_structure_mismatch_is_a_value_error():
    x, y = tg.constant(1.), tg.constant(2.)
    with pytest.raises(ValueError, match="structure"):
        tg.ForwardAccumulator([x, y], [tg.constant(1.)])
    with pytest.raises(ValueError, match="structure"):
        tg.ForwardAccumulator({"a": x}, [tg.constant(1.)])
    with pytest.raises(ValueError, match="structure"):
        tg.ForwardAccumulator(x, [tg.constant(1.), tg.constant(1.)])


def test_tangent_of_the_wrong_shape_is_a_value_error():
    with pytest.raises(ValueError, match="shape"):
        tg.ForwardAccumulator(tg.constant(1.), tg.constant([1., 2.]))
    with pytest.raises(ValueError, match="shape"):
        tg.ForwardAccumulator(tg.constant([[1., 2.]]), tg.constant([1., 2.]))
    with pytest.raises(ValueError, match="shape"):
        tg.ForwardAccumulator(tg.Variable([1., 2.]), tg.constant([1., 2., 3.]))


def test_the_same_primal_listed_twice_is_a_value_error():
    x = tg.constant([1., 2.])
    with pytest.raises(ValueError, match="multiple times"):
        tg.ForwardAccumulator([x, x], [tg.constant([1., 0.]), tg.constant([0., 1.])])
    v = tg.Variable([1., 2.])
    with pytest.raises(ValueError, match="multiple times"):
        tg.ForwardAccumulator({"a": v, "b": [v]}, {"a": tg.constant([1., 0.]),
                                                    "b": [tg.constant([0., 1.])]})


def test_a_non_float_primal_warns():
    with pytest.warns(UserWarning, match="floating"):
        tg.ForwardAccumulator(tg.constant([1, 2]), tg.constant([1, 2]))


def test_a_float_primal_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.ForwardAccumulator(tg.constant([1., 2.]), tg.constant([1., 2.]))


def test_entering_an_accumulator_that_is_recording_raises():
    x = tg.constant(1.)
    acc = tg.ForwardAccumulator(x, tg.constant(1.))
    with acc:
        with pytest.raises(ValueError, match="already recording"):
            acc.__enter__()
        y = x * 2.
    np.testing.assert_allclose(acc.jvp(y).numpy(), 2.)   # still works after the error


def test_an_accumulator_may_be_entered_again_after_it_exits():
    x = tg.constant(3.)
    acc = tg.ForwardAccumulator(x, tg.constant(1.))
    with acc:
        y1 = x * 2.
    outside = x * 7.
    with acc:
        y2 = x * 5.
    assert [float(j) for j in acc.jvp([y1, y2])] == [2., 5.]
    assert acc.jvp(outside) is None


# -- bookkeeping ---------------------------------------------------------------------------
def test_tangents_given_as_arrays_are_converted_to_the_primal_dtype():
    x = f32([1., 2.])
    with tg.ForwardAccumulator(x, np.array([1., 1.])) as acc:
        y = x * x
    assert acc.jvp(y).dtype == tg.float32
    np.testing.assert_allclose(acc.jvp(y).numpy(), [2., 4.])


def test_nested_structures_of_primals():
    a, b = tg.constant(2.), tg.constant([1., 3.])
    primals = {"a": a, "rest": [b]}
    tangents = {"a": tg.constant(1.), "rest": [tg.constant([0., 2.])]}
    with tg.ForwardAccumulator(primals, tangents) as acc:
        y = a * b
    np.testing.assert_allclose(acc.jvp(y).numpy(), [1. * 1. + 2. * 0., 1. * 3. + 2. * 2.])
    got = acc.jvp({"y": y, "a": [a]})
    assert set(got) == {"y", "a"} and isinstance(got["a"], list)
    np.testing.assert_allclose(got["a"][0].numpy(), 1.)


def test_watching_a_primal_again_sums_the_tangents():
    x = tg.constant([1., 2.])
    acc = tg.ForwardAccumulator(x, tg.constant([1., 0.]))
    acc._watch(x, tg.constant([0.5, 3.]))
    np.testing.assert_allclose(acc.jvp(x).numpy(), [1.5, 3.])
    with acc:
        y = x * x
    np.testing.assert_allclose(acc.jvp(y).numpy(), [2 * 1. * 1.5, 2 * 2. * 3.])


def test_an_unwatched_input_has_a_zero_tangent():
    x, w = tg.constant([1., 2.]), tg.constant([3., 4.])
    with tg.ForwardAccumulator(x, tg.constant([1., 1.])) as acc:
        y = x * w
        z = w * w
    np.testing.assert_allclose(acc.jvp(y).numpy(), [3., 4.])
    assert acc.jvp(z) is None
    np.testing.assert_array_equal(acc.jvp(z, unconnected_gradients="zero").numpy(), [0., 0.])


def test_jvp_only_looks_up():
    x = tg.constant([1., 2.])
    before = x * 3.
    acc = tg.ForwardAccumulator(x, tg.constant([1., 1.]))
    too_early = x * 4.
    with acc:
        inside = x * 5.
    after = x * 6.
    np.testing.assert_allclose(acc.jvp(inside).numpy(), [5., 5.])
    np.testing.assert_allclose(acc.jvp(inside).numpy(), [5., 5.])   # repeatable
    for t in (before, too_early, after):
        assert acc.jvp(t) is None
        zeros = acc.jvp(t, unconnected_gradients="zero")
        assert zeros.dtype == t.dtype and zeros.shape == t.shape
        np.testing.assert_array_equal(zeros.numpy(), [0., 0.])
    # the primal itself has its tangent, inside or outside the block
    np.testing.assert_allclose(acc.jvp(x).numpy(), [1., 1.])
    assert acc.jvp([before, inside], unconnected_gradients=tg.UnconnectedGradients.NONE)[0] is None


def test_a_tangent_is_forgotten_when_its_tensor_is_gone():
    import gc
    x = tg.constant([1., 2.])
    acc = tg.ForwardAccumulator(x, tg.constant([1., 1.]))
    with acc:
        y = x * x
        z = y + 1.
    count = len(acc._tangents)
    del y, z
    gc.collect()
    assert len(acc._tangents) == count - 2
    np.testing.assert_allclose(acc.jvp(x).numpy(), [1., 1.])


def test_int_outputs_get_no_tangent():
    x = tg.constant([1., -2.])
    with tg.ForwardAccumulator(x, tg.constant([1., 1.])) as acc:
        mask = tg.greater(x, 0.)
        y = tg.where(mask, x, 0.)
    assert acc.jvp(mask) is None
    np.testing.assert_allclose(acc.jvp(y).numpy(), [1., 0.])


def test_stop_gradient_blocks_the_tangent():
    x = tg.constant(2.)
    with tg.ForwardAccumulator(x, tg.constant(1.)) as acc:
        y = tg.stop_gradient(x * x) + x
    np.testing.assert_allclose(acc.jvp(y, unconnected_gradients="zero").numpy(), 1.)


def test_variables_as_primals():
    v = tg.Variable([1., 2.])
    other = tg.Variable([10., 20.])
    with tg.ForwardAccumulator(v, tg.constant([1., -1.])) as acc:
        y = v * 3. + other
        z = tg.sum(other * other)
    np.testing.assert_allclose(acc.jvp(y).numpy(), [3., -3.])
    assert acc.jvp(z) is None
    np.testing.assert_allclose(acc.jvp(v).numpy(), [1., -1.])


def test_a_variable_keeps_its_tangent_after_assignment():
    v = tg.Variable([1., 2.])
    with tg.ForwardAccumulator(v, tg.constant([1., 1.])) as acc:
        v.assign([4., 5.])
        y = v * v
    np.testing.assert_allclose(acc.jvp(y).numpy(), [8., 10.])


def test_a_variable_and_a_tensor_together():
    v, x = tg.Variable([1., 2.]), tg.constant([3., 4.])
    with tg.ForwardAccumulator([v, x], [tg.constant([1., 0.]), tg.constant([0., 1.])]) as acc:
        y = v * x
    np.testing.assert_allclose(acc.jvp(y).numpy(), [3., 2.])


# -- ops whose VJP rules give IndexedSlices ------------------------------------------------------
@pytest.mark.parametrize("mode", ["native", "transposed"])
def test_jvp_of_gather_and_indexing(mode):
    x = tg.constant([1., 2., 3.])
    t = tg.constant([10., 20., 30.])
    with (tg.transposition_only() if mode == "transposed" else contextlib.nullcontext()):
        with tg.ForwardAccumulator(x, t) as acc:
            rows = tg.gather(x, [2, 0], axis=0)
            item = x[1]
            picked = x[np.array([0, 0])]
    np.testing.assert_allclose(acc.jvp(rows).numpy(), [30., 10.])
    np.testing.assert_allclose(acc.jvp(item).numpy(), 20.)
    np.testing.assert_allclose(acc.jvp(picked).numpy(), [10., 10.])


def test_jvp_is_a_dense_tensor_when_the_transpose_is_sparse():
    x, values = tg.constant([1., 2., 3.]), tg.constant([5.])
    with tg.ForwardAccumulator(values, tg.constant([1.])) as acc:
        y = tg.ops.scatter_add(x, [1], values, 0)
    jvp = acc.jvp(y)
    assert type(jvp) is tg.Tensor, f"the JVP is a {type(jvp).__name__}"
    np.testing.assert_allclose(np.asarray(jvp.numpy()), [0., 1., 0.])


# -- nesting with tapes -----------------------------------------------------------------------
def test_a_tape_inside_an_accumulator_ignores_its_products():
    x = tg.constant(3.)
    with tg.ForwardAccumulator(x, tg.constant(1.)) as acc:
        with tg.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x ** 3.
        jvp = acc.jvp(y)
    np.testing.assert_allclose(jvp.numpy(), 27.)          # 3 x^2
    assert tape.gradient(jvp, x) is None                  # the tape never saw it
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 27.)


def test_a_tape_around_an_accumulator_sees_its_products():
    # backward over forward: the outer tape differentiates the JVP computation
    x = tg.constant(3.)
    with tg.GradientTape() as tape:
        tape.watch(x)
        with tg.ForwardAccumulator(x, tg.constant(1.)) as acc:
            y = x ** 3.
        jvp = acc.jvp(y)
    np.testing.assert_allclose(jvp.numpy(), 27.)
    np.testing.assert_allclose(tape.gradient(jvp, x).numpy(), 18.)   # 6 x


def test_three_accumulators_give_the_third_derivative():
    x = tg.constant(0.7)
    with tg.ForwardAccumulator(x, tg.constant(1.)) as a3:
        with tg.ForwardAccumulator(x, tg.constant(1.)) as a2:
            with tg.ForwardAccumulator(x, tg.constant(1.)) as a1:
                y = tg.sin(x) * x
    d1 = a1.jvp(y)
    d2 = a2.jvp(d1)
    d3 = a3.jvp(d2)
    xv = 0.7
    np.testing.assert_allclose(d1.numpy(), np.cos(xv) * xv + np.sin(xv))
    np.testing.assert_allclose(d2.numpy(), -np.sin(xv) * xv + 2 * np.cos(xv))
    np.testing.assert_allclose(d3.numpy(), -np.cos(xv) * xv - 3 * np.sin(xv))


def test_forward_over_backward_through_a_small_network():
    rng = np.random.default_rng(0)
    w = tg.Variable(rng.normal(size=(3, 2)))
    x = tg.constant(rng.normal(size=(4, 3)))
    direction = rng.normal(size=(3, 2))

    def loss():
        return tg.sum(tg.tanh(tg.matmul(x, w)) ** 2.)

    with tg.ForwardAccumulator(w, tg.constant(direction)) as acc:
        with tg.GradientTape() as tape:
            value = loss()
        grad = tape.gradient(value, w)
    hvp = acc.jvp(grad).numpy()
    # central differences of the gradient along the direction
    eps = 1e-6
    grads = []
    for sign in (1., -1.):
        moved = tg.Variable(w.numpy() + sign * eps * direction)
        with tg.GradientTape() as tape:
            value = tg.sum(tg.tanh(tg.matmul(x, moved)) ** 2.)
        grads.append(tape.gradient(value, moved).numpy())
    np.testing.assert_allclose(hvp, (grads[0] - grads[1]) / (2 * eps), rtol=1e-5, atol=1e-7)


# -- how each JVP was computed ------------------------------------------------------------------
def test_events_report_native_and_transposed_jvps():
    x = tg.constant(2.)
    with tg.viz.record() as rec:
        with tg.ForwardAccumulator(x, tg.constant(1.)) as acc:
            y = tg.sin(x) * tg.maximum(x, 0.5)
    jvps = jvp_events(rec)
    assert jvps and {e.method for e in jvps} <= {"native", "transpose"}
    by_op = {e.node.op.name: e for e in jvps}
    assert by_op["sin"].method == "native"
    assert by_op["maximum"].method == "transpose"      # maximum has no native rule
    assert by_op["sin"].aids is None and by_op["sin"].backward is None
    # the last event is the multiply, whose output tangent is the JVP of y
    assert jvps[-1].node.outputs[0] is y
    np.testing.assert_allclose(jvps[-1].output_tangents[0].numpy(), acc.jvp(y).numpy())
    np.testing.assert_allclose(acc.jvp(y).numpy(), np.cos(2.) * 2. + np.sin(2.))


def test_events_under_transposition_only_are_all_transposed():
    x = tg.constant([0.5, 2.])
    t = tg.constant([1., -3.])
    with tg.viz.record() as rec:
        with tg.transposition_only():
            with tg.ForwardAccumulator(x, t) as acc:
                y = tg.sum(tg.exp(x) * x)
    jvps = jvp_events(rec)
    assert len(jvps) == 3
    for e in jvps:
        assert e.method == "transpose"
        assert e.aids is not None and e.backward is not None
        assert len(e.aids) == len(e.node.outputs)
        for aid, out in zip(e.aids, e.node.outputs):
            assert aid.shape == out.shape
            np.testing.assert_array_equal(aid.numpy(), np.ones(out.shape))   # u = ones
        assert len(e.backward) == len(e.node.inputs)   # g(u), one per input
        assert len(e.input_tangents) == len(e.node.inputs)
    first = jvps[0]                      # exp: g(u) = exp(x) * u, tangent out = exp(x) * t
    assert first.node.op.name == "exp"
    np.testing.assert_allclose(first.backward[0].numpy(), np.exp([0.5, 2.]))
    np.testing.assert_allclose(first.output_tangents[0].numpy(), np.exp([0.5, 2.]) * [1., -3.])
    np.testing.assert_allclose(acc.jvp(y).numpy(),
                               np.sum(np.exp([0.5, 2.]) * (1 + np.array([0.5, 2.])) * [1., -3.]))


def test_defjvp_is_public_and_gives_a_new_op_a_native_rule():
    assert tg.ops.defjvp is tg.ops.core.user_rules.defjvp   # a user's rules: on Tensors
    cube_p = tg.ops.primitive("my_cube", lambda x: x ** 3)
    tg.ops.defvjp(cube_p, lambda g, ans, x: g * 3 * x * x)
    tg.ops.defjvp(cube_p, lambda x_dot, ans, x: x_dot * 3 * x * x)
    assert not cube_p.array_jvp
    x = tg.constant(2.)
    with tg.viz.record() as rec:
        with tg.ForwardAccumulator(x, tg.constant(1.)) as acc:
            y = tg.ops.bind(cube_p, x)
    assert [e.method for e in jvp_events(rec)] == ["native"]
    assert acc.jvp(y).numpy() == 12.


def test_transposition_only_gives_the_same_jvps_as_native_rules():
    x = tg.constant([[0.3, -1.2], [2.0, 0.4]])
    t = tg.constant([[1., 2.], [-1., 0.5]])

    def f(x):
        return tg.log_softmax(tg.matmul(tg.tanh(x), x), axis=-1) + tg.logsumexp(x, axis=0)

    with tg.ForwardAccumulator(x, t) as native:
        y1 = f(x)
    with tg.transposition_only():
        with tg.ForwardAccumulator(x, t) as transposed:
            y2 = f(x)
    np.testing.assert_allclose(native.jvp(y1).numpy(), transposed.jvp(y2).numpy(), rtol=1e-12)


def test_no_events_without_a_recorder():
    x = tg.constant(1.)
    with tg.ForwardAccumulator(x, tg.constant(1.)) as acc:
        y = tg.sin(x)
    assert acc._observer is None
    np.testing.assert_allclose(acc.jvp(y).numpy(), np.cos(1.))


# -- graph mode ----------------------------------------------------------------------------
def test_an_accumulator_in_a_graph_gives_symbolic_jvps():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(3,), name="x")
        t = tg.placeholder(tg.float64, shape=(3,), name="t")
        with tg.ForwardAccumulator(x, t) as acc:
            y = tg.sum(tg.sin(x) * x)
        jy = acc.jvp(y)
    assert isinstance(jy, tg.SymbolicTensor) and jy.shape == ()
    sess = tg.Session(g)
    for xv, tv in [([0.1, 0.5, 1.0], [1., 2., 3.]), ([-2., 0., 3.], [0., 1., 0.])]:
        xv, tv = np.array(xv), np.array(tv)
        expected = np.sum((np.cos(xv) * xv + np.sin(xv)) * tv)
        np.testing.assert_allclose(sess.run(jy, feed_dict={x: xv, t: tv}), expected)


def test_transposed_jvps_in_a_graph():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(None,), name="x")
        with tg.transposition_only():
            with tg.ForwardAccumulator(x, tg.ones_like(x)) as acc:
                y = tg.maximum(x, 0.) ** 2. + tg.exp(x) * x
        jy = acc.jvp(y)
    xv = np.array([-0.5, 0.5, 1.5, 2.])
    expected = 2 * np.maximum(xv, 0) + np.exp(xv) * (1 + xv)
    np.testing.assert_allclose(tg.Session(g).run(jy, feed_dict={x: xv}), expected)


def test_a_constant_tangent_in_a_graph_and_two_primals():
    g = tg.Graph()
    with g.as_default():
        a = tg.placeholder(tg.float64, shape=(2, 2), name="a")
        b = tg.placeholder(tg.float64, shape=(2,), name="b")
        tav, tbv = np.array([[1., 0.], [0., 0.]]), np.array([0., 1.])
        ta, tb = tg.constant(tav), tg.constant(tbv)
        with tg.ForwardAccumulator([a, b], [ta, tb]) as acc:
            y = tg.matmul(a, b[:, None])[:, 0]
        jy = acc.jvp(y)
    av, bv = np.array([[1., 2.], [3., 4.]]), np.array([5., 6.])
    expected = tav @ bv + av @ tbv
    np.testing.assert_allclose(tg.Session(g).run(jy, feed_dict={a: av, b: bv}), expected)


def test_forward_over_backward_in_a_graph():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(2,), name="x")
        with tg.ForwardAccumulator(x, tg.constant([1., 0.])) as acc:
            y = tg.sum(x ** 3.)
            (grad,) = tg.gradients(y, [x])
        hvp = acc.jvp(grad)
    grad_value, hvp_value = tg.Session(g).run([grad, hvp], feed_dict={x: [1., 2.]})
    np.testing.assert_allclose(grad_value, [3., 12.])
    np.testing.assert_allclose(hvp_value, [6., 0.])


def test_a_variable_primal_in_a_graph():
    v = tg.Variable([1., 2.])
    g = tg.Graph()
    with g.as_default():
        with tg.ForwardAccumulator(v, tg.constant([1., 0.])) as acc:
            y = tg.sum(v ** 3.)
        jy = acc.jvp(y)
    assert jy is not None, "a Variable primal gives no JVP in a graph"
    np.testing.assert_allclose(tg.Session(g).run(jy), 3.)


# -- functional API -----------------------------------------------------------------------------
def test_jvp_function():
    def f(x, y):
        return tg.sin(x) * y

    x, y = tg.constant([0.2, 1.0]), tg.constant([3., -1.])
    tx, ty = tg.constant([1., 0.5]), tg.constant([0., 2.])
    out, tangent = tg.jvp(f, [x, y], [tx, ty])
    np.testing.assert_allclose(out.numpy(), np.sin([0.2, 1.0]) * [3., -1.])
    expected = np.cos([0.2, 1.0]) * [1., 0.5] * [3., -1.] + np.sin([0.2, 1.0]) * [0., 2.]
    np.testing.assert_allclose(tangent.numpy(), expected)


def test_jvp_function_of_an_unconnected_output_is_zeros():
    out, tangent = tg.jvp(lambda x: tg.constant([1., 2.]), [tg.constant(1.)], [tg.constant(1.)])
    np.testing.assert_array_equal(tangent.numpy(), [0., 0.])


def test_jvp_function_with_python_numbers():
    out, tangent = tg.jvp(lambda x: x ** 3., [2.], [1.])
    np.testing.assert_allclose([float(out), float(tangent)], [8., 12.])


@pytest.mark.parametrize("f", [
    lambda x: tg.sin(x) * x,
    lambda x: tg.softmax(x, axis=-1),
    lambda x: tg.matmul(x, tg.transpose(x)),
    lambda x: tg.sum(x ** 2., axis=0),
    lambda x: tg.concat([tg.exp(x), x[:, :1]], axis=1),
], ids=["sin_times_x", "softmax", "gram", "sum_squares", "concat"])
def test_jacfwd_equals_jacrev(f):
    x = tg.constant([[0.3, -1.2, 0.5], [2.0, 0.4, -0.1]])
    forward, reverse = tg.jacfwd(f)(x), tg.jacrev(f)(x)
    assert forward.shape == reverse.shape == tuple(f(x).shape) + (2, 3)
    np.testing.assert_allclose(forward.numpy(), reverse.numpy(), rtol=1e-12, atol=1e-12)


def test_jacfwd_with_several_arguments():
    def f(x, y):
        return tg.matmul(x, y)

    x = tg.constant([[1., 2.], [3., 4.]])
    y = tg.constant([[0.5], [-1.]])
    jx, jy = tg.jacfwd(f, argnums=(0, 1))(x, y)
    rx, ry = tg.jacrev(f, argnums=(0, 1))(x, y)
    assert jx.shape == (2, 1, 2, 2) and jy.shape == (2, 1, 2, 1)
    np.testing.assert_allclose(jx.numpy(), rx.numpy())
    np.testing.assert_allclose(jy.numpy(), ry.numpy())


def test_hessian_matches_the_analytic_one():
    def f(x):
        return tg.sum(x ** 3.) + x[0] * x[1] * x[2]

    xv = np.array([0.5, -1., 2.])
    h = tg.hessian(f)(tg.constant(xv))
    expected = np.diag(6 * xv) + np.array([[0., xv[2], xv[1]],
                                          [xv[2], 0., xv[0]],
                                          [xv[1], xv[0], 0.]])
    assert h.shape == (3, 3)
    np.testing.assert_allclose(h.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_hessian_of_a_matrix_argument():
    def f(w):
        return tg.logsumexp(tg.reshape(w, (-1,)), axis=0)

    wv = np.array([[0.1, 0.2], [-0.3, 0.4]])
    h = tg.hessian(f)(tg.constant(wv))
    p = np.exp(wv.ravel()) / np.exp(wv.ravel()).sum()
    assert h.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(h.numpy().reshape(4, 4), np.diag(p) - np.outer(p, p), atol=1e-12)


def test_hessian_with_several_arguments_gives_the_blocks():
    # JAX's layout: h[i][j] is the block d2f / d(arg i) d(arg j)
    def f(a, b):
        return tg.sum(a * a * b)

    a, b = tg.constant([1., 2.]), tg.constant([3., 4.])
    h = tg.hessian(f, argnums=(0, 1))(a, b)
    assert len(h) == 2 and all(len(row) == 2 for row in h)
    np.testing.assert_allclose(h[0][0].numpy(), np.diag(2 * b.numpy()))
    np.testing.assert_allclose(h[0][1].numpy(), np.diag(2 * a.numpy()))
    np.testing.assert_allclose(h[1][0].numpy(), np.diag(2 * a.numpy()))
    np.testing.assert_allclose(h[1][1].numpy(), np.zeros((2, 2)))


def test_hvp_equals_hessian_times_vector():
    def f(x):
        return tg.sum(tg.tanh(x) * tg.sin(x[::-1]))

    xv = np.array([0.3, -0.8, 1.1, 0.2])
    vv = np.array([1., -2., 0.5, 3.])
    (hv,) = tg.hvp(f, [tg.constant(xv)], [tg.constant(vv)])
    h = tg.hessian(f)(tg.constant(xv)).numpy()
    np.testing.assert_allclose(hv.numpy(), h @ vv, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h, h.T, atol=1e-12)


def test_hvp_with_two_arguments():
    def f(x, y):
        return tg.sum(x * x * y)

    x, y = tg.constant([1., 2.]), tg.constant([3., 4.])
    hx, hy = tg.hvp(f, [x, y], [tg.constant([1., 0.]), tg.constant([0., 1.])])
    # d2f/dx2 = diag(2y), d2f/dxdy = diag(2x), d2f/dy2 = 0
    np.testing.assert_allclose(hx.numpy(), [2 * 3. * 1., 2 * 2. * 1.])
    np.testing.assert_allclose(hy.numpy(), [2 * 1. * 1., 0.])
