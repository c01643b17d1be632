"""tg.optimizers against their update rules written out in numpy (Keras's formulas),
over several steps, eagerly and inside tg.function; None and IndexedSlices gradients;
bad arguments refused naming them."""
import numpy as np
import pytest

import teachgrad as tg

STEPS = 5
W0 = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.5]])


def _loss(w):
    """A loss with a gradient that changes from step to step: sum(w^4)/4 + sum(sin w)."""
    return tg.sum(tg.square(tg.square(w))) / 4.0 + tg.sum(tg.sin(w))


def _grad(w):
    return w ** 3 + np.cos(w)


def sgd_reference(lr, momentum=0.0, nesterov=False):
    w, v = W0.copy(), np.zeros_like(W0)
    for _ in range(STEPS):
        g = _grad(w)
        if momentum == 0:
            w = w - lr * g
            continue
        v = momentum * v - lr * g
        w = w + (momentum * v - lr * g if nesterov else v)
    return w


def adam_reference(lr, b1=0.9, b2=0.999, eps=1e-7):
    w, m, v = W0.copy(), np.zeros_like(W0), np.zeros_like(W0)
    for t in range(1, STEPS + 1):
        g = _grad(w)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        w = w - lr_t * m / (np.sqrt(v) + eps)
    return w


CASES = [
    (lambda: tg.optimizers.SGD(0.05), lambda: sgd_reference(0.05)),
    (lambda: tg.optimizers.SGD(0.05, momentum=0.9), lambda: sgd_reference(0.05, 0.9)),
    (lambda: tg.optimizers.SGD(0.05, momentum=0.5, nesterov=True),
     lambda: sgd_reference(0.05, 0.5, True)),
    (lambda: tg.optimizers.Adam(0.1), lambda: adam_reference(0.1)),
    (lambda: tg.optimizers.Adam(0.01, beta_1=0.5, beta_2=0.9, epsilon=1e-3),
     lambda: adam_reference(0.01, 0.5, 0.9, 1e-3)),
]
IDS = ["sgd", "momentum", "nesterov", "adam", "adam_hyper"]


def _step(opt, w):
    with tg.GradientTape() as tape:
        loss = _loss(w)
    opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
    return loss


@pytest.mark.parametrize("make, reference", CASES, ids=IDS)
def test_eager_steps_match_the_numpy_rule(make, reference):
    opt, w = make(), tg.Variable(W0, name="w")
    for _ in range(STEPS):
        _step(opt, w)
    np.testing.assert_allclose(w.numpy(), reference(), rtol=1e-12, atol=1e-12)
    assert int(opt.iterations.numpy()) == STEPS


@pytest.mark.parametrize("make, reference", CASES, ids=IDS)
def test_a_recorded_eager_step_matches_an_unrecorded_one(make, reference):
    # Unrecorded, the update's ops run on raw arrays; under a tape they make Tensors
    # the tape sees. The same rule either way, the same numbers, the same types.
    plain, w_plain = make(), tg.Variable(W0, name="w")
    seen, w_seen = make(), tg.Variable(W0, name="w")
    for _ in range(STEPS):
        _step(plain, w_plain)
        with tg.GradientTape():
            _step(seen, w_seen)
    np.testing.assert_array_equal(w_plain.numpy(), w_seen.numpy())
    for w in (w_plain, w_seen):
        assert type(w.read_value()) is tg.Tensor and w.dtype == W0.dtype
    np.testing.assert_allclose(w_plain.numpy(), reference(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make, reference", CASES, ids=IDS)
def test_traced_steps_match_the_numpy_rule(make, reference):
    opt, w = make(), tg.Variable(W0, name="w")
    step = tg.function(lambda: _step(opt, w))
    losses = [float(step().numpy()) for _ in range(STEPS)]
    assert step.trace_count == 1
    np.testing.assert_allclose(w.numpy(), reference(), rtol=1e-12, atol=1e-12)
    assert int(opt.iterations.numpy()) == STEPS
    assert losses[-1] < losses[0]


def test_float32_variables_stay_float32():
    opt, w = tg.optimizers.Adam(0.1), tg.Variable(W0.astype(np.float32))
    for _ in range(STEPS):
        _step(opt, w)
    assert w.dtype == np.float32 and opt.get_slot(w, "m").dtype == np.float32
    np.testing.assert_allclose(w.numpy(), adam_reference(0.1), rtol=1e-4, atol=1e-5)


def test_slots_are_kept_per_variable():
    opt = tg.optimizers.SGD(0.1, momentum=0.9)
    a, b = tg.Variable([1.0, 2.0], name="a"), tg.Variable([3.0], name="b")
    opt.apply_gradients([(tg.constant([1.0, 1.0]), a), (tg.constant([2.0]), b)])
    np.testing.assert_allclose(opt.get_slot(a, "momentum").numpy(), [-0.1, -0.1])
    np.testing.assert_allclose(opt.get_slot(b, "momentum").numpy(), [-0.2])
    with pytest.raises(ValueError, match="slot_name"):
        opt.get_slot(a, "m")


def test_none_gradients_are_skipped():
    opt = tg.optimizers.SGD(0.5)
    a, b = tg.Variable([1.0]), tg.Variable([2.0])
    opt.apply_gradients(zip([None, tg.constant([1.0])], [a, b]))
    assert a.numpy().tolist() == [1.0] and b.numpy().tolist() == [1.5]
    with pytest.raises(ValueError, match="grads_and_vars"):
        opt.apply_gradients(zip([None], [a]))


@pytest.mark.parametrize("make", [lambda: tg.optimizers.SGD(0.1, momentum=0.9),
                                  lambda: tg.optimizers.Adam(0.1)], ids=["sgd", "adam"])
def test_indexed_slices_gradients_are_applied_as_their_dense_value(make):
    start = np.arange(8.0).reshape(4, 2)
    table, dense = tg.Variable(start), tg.Variable(start)
    sparse_opt, dense_opt = make(), make()
    for _ in range(3):
        with tg.GradientTape() as tape:
            loss = tg.sum(tg.square(tg.gather(table, [1, 3, 1])))
        g = tape.gradient(loss, table)
        assert isinstance(g, tg.IndexedSlices)
        sparse_opt.apply_gradients([(g, table)])
        dense_opt.apply_gradients([(tg.constant(g.numpy()), dense)])
    np.testing.assert_allclose(table.numpy(), dense.numpy(), rtol=1e-12)
    assert not np.allclose(table.numpy(), start)


def test_assignments_in_a_traced_step_are_seen_by_later_reads():
    w = tg.Variable([1.0, 2.0])

    @tg.function
    def step():
        before = tg.sum(w)
        w.assign_sub(tg.constant([1.0, 1.0]))
        return before, tg.sum(w)
    before, after = step()
    assert float(before.numpy()) == 3.0 and float(after.numpy()) == 1.0
    np.testing.assert_array_equal(w.numpy(), [0.0, 1.0])


def test_a_graph_refuses_to_assign():
    w = tg.Variable([1.0])
    with tg.Graph().as_default():
        with pytest.raises(RuntimeError, match="tg.function"):
            w.assign([2.0])


@pytest.mark.parametrize("make, argument", [
    (lambda: tg.optimizers.SGD(-0.1), "learning_rate"),
    (lambda: tg.optimizers.SGD("fast"), "learning_rate"),
    (lambda: tg.optimizers.SGD(0.1, momentum=1.5), "momentum"),
    (lambda: tg.optimizers.SGD(0.1, nesterov="yes"), "nesterov"),
    (lambda: tg.optimizers.Adam(float("nan")), "learning_rate"),
    (lambda: tg.optimizers.Adam(beta_1=1.0), "beta_1"),
    (lambda: tg.optimizers.Adam(beta_2=-0.1), "beta_2"),
    (lambda: tg.optimizers.Adam(epsilon=-1e-7), "epsilon"),
])
def test_bad_hyperparameters_are_refused_naming_them(make, argument):
    with pytest.raises((TypeError, ValueError), match=f"`{argument}`"):
        make()


@pytest.mark.parametrize("pairs, error", [
    (lambda w: 3.0, TypeError),
    (lambda w: [(tg.constant([1.0]),)], TypeError),
    (lambda w: [(tg.constant([1.0]), tg.constant([1.0]))], TypeError),
    (lambda w: [(tg.constant([1.0, 2.0]), w)], ValueError),
    (lambda w: [(tg.constant([1.0], dtype=tg.float32), w)], TypeError),
    (lambda w: [(tg.constant([1.0]), w), (tg.constant([1.0]), w)], ValueError),
    (lambda w: [(tg.constant([1]), tg.Variable([1]))], TypeError),
    (lambda w: [], ValueError),
])
def test_bad_pairs_are_refused_naming_grads_and_vars(pairs, error):
    w = tg.Variable([1.0])
    with pytest.raises(error, match="`grads_and_vars`"):
        tg.optimizers.SGD(0.1).apply_gradients(pairs(w))
    assert w.numpy().tolist() == [1.0]      # nothing half-applied


def test_a_traced_step_with_indexed_slices_matches_the_eager_one():
    start = np.arange(8.0).reshape(4, 2)
    eager, traced = tg.Variable(start), tg.Variable(start)
    eager_opt, traced_opt = tg.optimizers.Adam(0.1), tg.optimizers.Adam(0.1)

    def step(table, opt):
        with tg.GradientTape() as tape:
            loss = tg.sum(tg.square(tg.gather(table, [1, 3, 1])))
        opt.apply_gradients([(tape.gradient(loss, table), table)])
        return loss
    traced_step = tg.function(lambda: step(traced, traced_opt))
    for _ in range(3):
        step(eager, eager_opt)
        traced_step()
    np.testing.assert_allclose(traced.numpy(), eager.numpy(), rtol=1e-12)
    assert int(traced_opt.iterations.numpy()) == 3
