"""tg.sparse_softmax_cross_entropy_with_logits: one fused op that agrees with the loss
composed of log_softmax and indexing, to every order, in every mode, and says what is
wrong with bad labels."""
import numpy as np
import pytest

import teachgrad as tg

RNG = np.random.default_rng(7)
LOGITS = RNG.standard_normal((6, 5))
LABELS = np.array([0, 4, 2, 2, 1, 3])


def fused(z, labels=LABELS):
    return tg.mean(tg.sparse_softmax_cross_entropy_with_logits(labels, z))


def composed(z, labels=LABELS):
    return -tg.mean(tg.log_softmax(z)[np.arange(len(labels)), labels])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_value_and_gradient_match_the_composed_loss(dtype):
    z = tg.constant(LOGITS.astype(dtype))
    (a, ga), (b, gb) = tg.value_and_grad(fused)(z), tg.value_and_grad(composed)(z)
    assert a.dtype == dtype and ga.dtype == dtype
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol)
    np.testing.assert_allclose(ga.numpy(), gb.numpy(), rtol=tol, atol=tol)


def test_its_gradient_is_softmax_minus_onehot_over_the_batch():
    g = tg.grad(fused)(tg.constant(LOGITS)).numpy()
    e = np.exp(LOGITS)
    want = (e / e.sum(axis=1, keepdims=True) - np.eye(5)[LABELS]) / len(LABELS)
    np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-15)


def test_second_derivatives_flow_through_the_saved_backprop():
    z, v = tg.constant(LOGITS), tg.constant(RNG.standard_normal(LOGITS.shape))
    np.testing.assert_allclose(tg.hvp(fused, (z,), (v,))[0].numpy(),
                               tg.hvp(composed, (z,), (v,))[0].numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(tg.hessian(fused)(z).numpy(), tg.hessian(composed)(z).numpy(),
                               rtol=1e-10, atol=1e-14)


def test_forward_mode_matches_reverse_mode():
    z, v = tg.constant(LOGITS), tg.constant(RNG.standard_normal(LOGITS.shape))
    with tg.ForwardAccumulator(z, v) as acc:
        loss = fused(z)
    want = np.vdot(tg.grad(fused)(z).numpy(), v.numpy())
    np.testing.assert_allclose(acc.jvp(loss).numpy(), want, rtol=1e-12)


def test_graph_mode_with_fed_labels_matches_eager_and_checks_them():
    g = tg.Graph()
    with g.as_default():
        z = tg.placeholder(tg.float64, (None, 5))
        labels = tg.placeholder(tg.int64, (None,))
        loss = tg.mean(tg.sparse_softmax_cross_entropy_with_logits(labels, z))
        (grad,) = tg.gradients(loss, [z])
    got_loss, got_grad = tg.Session(g).run([loss, grad], {z: LOGITS, labels: LABELS})
    want_loss, want_grad = tg.value_and_grad(fused)(tg.constant(LOGITS))
    np.testing.assert_allclose(got_loss, want_loss.numpy(), rtol=1e-12)
    np.testing.assert_allclose(got_grad, want_grad.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match=r"label value of 5, outside the valid range \[0, 5\)"):
        tg.Session(g).run(loss, {z: LOGITS, labels: np.array([0, 1, 2, 3, 4, 5])})


def test_tg_function_optimised_or_not_agrees():
    steps = [tg.function(lambda z: tg.value_and_grad(fused)(z), optimize=opt)
             for opt in (True, False)]
    (a, ga), (b, gb) = (step(tg.constant(LOGITS)) for step in steps)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(ga.numpy(), gb.numpy())


@pytest.mark.parametrize("labels, logits, error, message", [
    ([0, -1], np.zeros((2, 3)), ValueError, r"label value of -1, outside the valid range \[0, 3\)"),
    ([0, 3], np.zeros((2, 3)), ValueError, r"label value of 3"),
    ([0.0, 1.0], np.zeros((2, 3)), TypeError, "labels must be integer class indices"),
    ([0, 1], np.zeros((2, 3), dtype=np.int64), TypeError, "logits must be floating point"),
    ([0, 1, 2], np.zeros((2, 3)), ValueError, r"labels must have the shape of logits without "
                                              r"its last axis .* so labels \(2,\), got \(3,\)"),
    (0, np.zeros(()), ValueError, "labels must have the shape of logits"),
    ([0, 0], np.zeros((2, 0)), ValueError, "logits have no classes"),
])
def test_bad_input_says_what_is_wrong(labels, logits, error, message):
    with pytest.raises(error, match=message):
        tg.sparse_softmax_cross_entropy_with_logits(labels, logits)
