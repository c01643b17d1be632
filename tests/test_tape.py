"""GradientTape semantics, following TensorFlow's tape."""
import math

import numpy as np
import pytest

import teachgrad as tg


def test_watch_constant_and_chain_rule():
    x = tg.constant(3.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.sin(x * x)
    assert np.isclose(tape.gradient(y, x).numpy(), math.cos(9.0) * 6.0)


def test_unwatched_constant_gets_none():
    x = tg.constant(3.0)
    with tg.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None


def test_trainable_variables_are_watched_when_read():
    v = tg.Variable(2.0)
    frozen = tg.Variable(5.0, trainable=False)
    with tg.GradientTape() as tape:
        y = v * v * frozen
    dv, dfrozen = tape.gradient(y, [v, frozen])
    assert dv.numpy() == 20.0
    assert dfrozen is None
    assert tape.watched_variables() == (v,)


def test_watch_accessed_variables_false():
    v = tg.Variable(2.0)
    w = tg.Variable(3.0)
    with tg.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(w)
        y = v * w
    dv, dw = tape.gradient(y, [v, w])
    assert dv is None and dw.numpy() == 2.0
    assert tape.watched_variables() == (w,)


def test_variable_assigned_after_recording_keeps_recorded_value():
    v = tg.Variable(3.0)
    with tg.GradientTape() as tape:
        y = v * v
    v.assign(100.0)
    assert tape.gradient(y, v).numpy() == 6.0


def test_variable_assign_methods():
    v = tg.Variable([1.0, 2.0], name="v")
    v.assign_add([1.0, 1.0])
    v.assign_sub(tg.constant([0.5, 0.5]))
    np.testing.assert_allclose(v.numpy(), [1.5, 2.5])
    with pytest.raises(ValueError, match="shape"):
        v.assign([1.0, 2.0, 3.0])


def test_non_persistent_tape_used_twice_raises():
    x = tg.constant(2.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.gradient(y, x)


def test_persistent_tape():
    x = tg.constant(3.0)
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, x).numpy() == 108.0  # 4 x^3
    assert tape.gradient(y, x).numpy() == 6.0


def test_nested_tapes_second_and_third_order():
    x = tg.constant(0.7)
    with tg.GradientTape() as t3:
        t3.watch(x)
        with tg.GradientTape() as t2:
            t2.watch(x)
            with tg.GradientTape() as t1:
                t1.watch(x)
                y = tg.sin(x)
            dy = t1.gradient(y, x)
        d2y = t2.gradient(dy, x)
    d3y = t3.gradient(d2y, x)
    assert np.isclose(dy.numpy(), math.cos(0.7))
    assert np.isclose(d2y.numpy(), -math.sin(0.7))
    assert np.isclose(d3y.numpy(), -math.cos(0.7))


def test_persistent_tape_records_its_own_gradient_for_hessians():
    x = tg.constant([1.0, 2.0])
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tg.sum(x ** 3)
        g = tape.gradient(y, x)
    np.testing.assert_allclose(tape.jacobian(g, x).numpy(), np.diag([6.0, 12.0]))


def test_nested_structures_of_sources():
    a = tg.Variable(1.0)
    b = tg.Variable(2.0)
    c = tg.Variable(3.0)
    with tg.GradientTape() as tape:
        y = a * b * c
    grads = tape.gradient(y, {"a": a, "rest": [b, (c,)]})
    assert grads["a"].numpy() == 6.0
    assert grads["rest"][0].numpy() == 3.0
    assert grads["rest"][1][0].numpy() == 2.0


def test_multiple_targets_add_up():
    x = tg.constant(2.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y1 = x * x
        y2 = 3 * x
    assert tape.gradient([y1, y2], x).numpy() == 7.0


def test_unconnected_none_and_zero():
    x = tg.constant([1.0, 2.0])
    z = tg.constant([[1.0], [2.0]], dtype=tg.float32)
    with tg.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * 2
    assert tape.gradient(y, z) is None
    assert tape.gradient(y, z, unconnected_gradients=tg.UnconnectedGradients.NONE) is None
    zero = tape.gradient(y, z, unconnected_gradients="zero")
    assert zero.shape == (2, 1) and zero.dtype == tg.float32
    assert not zero.numpy().any()
    with pytest.raises(ValueError, match="unconnected_gradients"):
        tape.gradient(y, z, unconnected_gradients="nothing")


def test_non_scalar_target_is_summed_and_output_gradients():
    x = tg.constant([1.0, 2.0, 3.0])
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 4.0, 6.0])
    weights = tg.constant([1.0, 0.0, -1.0])
    np.testing.assert_allclose(tape.gradient(y, x, output_gradients=weights).numpy(),
                               [2.0, 0.0, -6.0])
    with pytest.raises(ValueError, match="shape"):
        tape.gradient(y, x, output_gradients=tg.constant([1.0, 2.0]))


def test_output_gradients_of_the_wrong_shape_name_the_target_and_both_shapes():
    x = tg.constant([1.0, 2.0, 3.0])
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = tg.sum(x)
    with pytest.raises(ValueError) as info:
        tape.gradient(y, x, output_gradients=tg.constant([1.0, 2.0]))
    assert str(info.value) == (
        "output_gradients has shape (2,), but the target (the output of multiply) has shape "
        "(3,). An output gradient is the gradient of the final result with respect to its "
        "target, so it has the target's shape: pass one of shape (3,) (or None for ones).")
    with pytest.raises(ValueError, match=r"output_gradients\[1\] has shape \(3,\), but "
                                         r"target 1 \(the output of sum\) has shape \(\)"):
        tape.gradient([y, z], x, output_gradients=[None, np.ones(3)])


def test_stop_recording():
    x = tg.constant(2.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x * x
        z = x * 3
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            y = x * x
        z = x * 3
    assert tape.gradient(y, x) is None
    assert tape.gradient(z, x).numpy() == 3.0
    with pytest.raises(RuntimeError):
        with tape.stop_recording():
            pass


def test_reentering_a_recording_tape_raises():
    tape = tg.GradientTape()
    with tape:
        with pytest.raises(RuntimeError, match="already recording"):
            tape.__enter__()


def test_integer_tensors_are_constants():
    x = tg.constant(2.0)
    n = tg.constant(3)
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with pytest.warns(UserWarning, match="floating"):
            tape.watch(n)
        y = x * tg.cast(n, tg.float64)
        k = tg.cast(x, tg.int64) * n
    assert tape.gradient(y, x).numpy() == 3.0
    assert tape.gradient(y, n) is None
    assert tape.gradient(k, x) is None  # the cast to int cuts the path


def test_no_gradient_rule_raises_lookup_error():
    floor_p = tg.ops.primitive("my_floor", lambda x: np.floor(x))
    x = tg.constant(2.5)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.ops.bind(floor_p, x) * 2
    with pytest.raises(LookupError, match="my_floor"):
        tape.gradient(y, x)


def test_stop_gradient_blocks_only_its_path():
    x = tg.constant(3.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x * tg.stop_gradient(x)
    assert tape.gradient(y, x).numpy() == 3.0


def test_gradient_with_respect_to_an_intermediate():
    x = tg.constant(2.0)
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x * x
        y = h * 5 + x
    assert tape.gradient(y, h).numpy() == 5.0
    dh, dx = tape.gradient(y, [h, x])
    assert dh.numpy() == 5.0 and dx.numpy() == 21.0


def test_target_is_source():
    x = tg.constant([1.0, 2.0])
    with tg.GradientTape() as tape:
        tape.watch(x)
    np.testing.assert_allclose(tape.gradient(x, x).numpy(), [1.0, 1.0])


def test_sparse_gradient_from_gather_and_densified_when_mixed():
    table = tg.Variable(np.arange(6.0).reshape(3, 2))
    with tg.GradientTape(persistent=True) as tape:
        rows = tg.gather(table, [0, 2, 0])
        sparse_only = tg.sum(rows)
        mixed = tg.sum(rows) + tg.sum(table * table)
    g = tape.gradient(sparse_only, table)
    assert isinstance(g, tg.IndexedSlices)
    np.testing.assert_allclose(g.numpy(), [[2, 2], [0, 0], [1, 1]])
    dense = tape.gradient(mixed, table)
    assert isinstance(dense, tg.Tensor)
    np.testing.assert_allclose(dense.numpy(),
                               np.array([[2, 2], [0, 0], [1, 1]]) + 2 * np.arange(6.0).reshape(3, 2))


def test_sparse_gradient_as_the_target_of_an_outer_tape_is_densified():
    # f(x) = x0^3 + 2 x2^3 through a gather: f' = [3 x0^2, 0, 6 x2^2] comes back from
    # the inner tape as IndexedSlices; the outer tape differentiates it again.
    x = tg.constant([1.0, 2.0, 3.0])
    with tg.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tg.GradientTape() as inner:
            inner.watch(x)
            f = tg.sum(tg.gather(x, [0, 2, 2]) ** 3)
        d = inner.gradient(f, x)
        inside = outer.gradient(d, x)            # while the outer tape records
    assert isinstance(d, tg.IndexedSlices)
    after = outer.gradient(d, x)                 # and after its block
    weighted = outer.gradient(d, x, output_gradients=tg.constant([1.0, 5.0, 2.0]))
    jac = outer.jacobian(d, x)
    for g in (inside, after):
        np.testing.assert_allclose(g.numpy(), [6.0, 0.0, 36.0])   # [6 x0, 0, 12 x2]
    np.testing.assert_allclose(weighted.numpy(), [6.0, 0.0, 72.0])
    np.testing.assert_allclose(jac.numpy(), np.diag([6.0, 0.0, 36.0]))


def test_aggregation_methods_agree():
    x = tg.constant([1.0, 2.0])
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tg.sum(x * x + tg.sin(x) + tg.exp(x) + x)
    producers = tape.recorded.producers
    expected = 2 * x.numpy() + np.cos(x.numpy()) + np.exp(x.numpy()) + 1
    for method in (tg.AggregationMethod.ADD_N, tg.AggregationMethod.EXPERIMENTAL_TREE,
                   tg.AggregationMethod.DEFAULT):
        (g,) = tg.autodiff.backward([y], [tg.ones_like(y)], [x],
                                    producers.get, aggregation_method=method)
        np.testing.assert_allclose(g.numpy(), expected)
    with pytest.raises(ValueError, match="aggregation_method"):
        tg.autodiff.backward([y], [tg.ones_like(y)], [x], producers.get,
                             aggregation_method=7)


def test_jacobian():
    x = tg.constant([1.0, 2.0, 3.0])
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.stack([x[0] * x[1], x[1] * x[2]])
    jac = tape.jacobian(y, x)
    np.testing.assert_allclose(jac.numpy(), [[2.0, 1.0, 0.0], [0.0, 3.0, 2.0]])


def test_long_chain_has_no_recursion_limit():
    x = tg.constant(1.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(5000):
            y = y * 1.0
    assert tape.gradient(y, x).numpy() == 1.0


def test_bad_sources_and_targets():
    x = tg.constant(1.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x * 2
    with pytest.raises(TypeError, match="source"):
        tape.gradient(y, 3.0)
    with pytest.raises(TypeError, match="watch"):
        tg.GradientTape().watch(3.0)


def test_unwatched_source_gets_none_even_when_connected():
    v = tg.Variable(2.0)
    c = tg.constant(3.0)
    with tg.GradientTape() as tape:
        y = v * c
    dv, dc = tape.gradient(y, [v, c])
    assert dv.numpy() == 3.0 and dc is None


def test_output_gradients_as_a_plain_list_for_one_target():
    x = tg.constant([1.0, 2.0, 3.0])
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=[1.0, 0.0, 0.5])
    np.testing.assert_allclose(g.numpy(), [2.0, 0.0, 3.0])


def test_variable_assigned_while_recording_sums_both_reads():
    v = tg.Variable(2.0)
    with tg.GradientTape() as tape:
        y1 = v * v            # reads the value 2: d/dv = 4
        v.assign(3.0)
        y2 = v * v            # reads the value 3: d/dv = 6
    assert tape.gradient([y1, y2], v).numpy() == 10.0


def test_variable_gradient_with_respect_to_itself():
    v = tg.Variable([1.0, 2.0])
    with tg.GradientTape() as tape:
        y = v * 1.0
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [1.0, 1.0])


def test_the_record_reads_through_public_methods():
    # What tg.viz and tg.debug read from a tape, without reaching into its fields.
    x = tg.constant([1.0, 2.0], name="x")
    v = tg.Variable(3.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.sin(x) * v
        n = tg.cast(y, tg.int32)
        with tape.stop_recording():
            late = x * 2
        z = y * y
    sin, mul, square = tape.recorded_nodes()               # oldest first
    assert [node.op.name for node in (sin, mul, square)] == ["sin", "multiply", "multiply"]
    assert tape.producer(y.id) is mul and tape.producer(x.id) is None
    assert tape.producer(n.id) is None                    # an integer: kept aside
    assert tape.producer(n.id, every_dtype=True) is tape.dropped_nodes()[0]
    assert tape.is_watched(x) and tape.is_watched(z) and not tape.is_watched(late)
    assert len(tape.snapshots(v)) == 1 and tape.watches_accessed_variables
    assert [tape.when_made(t) for t in (x, y, late)] == ["before", "recording", "stopped"]
    assert len(tape.recording_spans()) == 2                # stop_recording() split it
    assert not tape.released
    tape.gradient(z, x)
    assert tape.released and tape.when_made(tg.constant(1.0)) == "after"
    with pytest.raises(RuntimeError, match="persistent=True"):
        tape.recorded_nodes()
