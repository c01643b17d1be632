"""Issue 32's tg.nn surface: dropout's noise_shape, the 1-D pools, dilated and
channel pooling, against TensorFlow's stated semantics written out in numpy."""
import numpy as np
import pytest

import teachgrad as tg


def test_dropout_noise_shape_drops_whole_slices():
    x = tg.ones((2, 3, 3, 4))
    y = tg.nn.dropout(x, 0.5, noise_shape=[2, 1, 1, 4], seed=5).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert (y == y[:, :1, :1, :]).all()            # one draw per (image, channel)
    z = tg.nn.stateless_dropout(x, 0.5, noise_shape=[2, 1, 1, 4], seed=[5, 0]).numpy()
    np.testing.assert_array_equal(z, tg.nn.stateless_dropout(
        x, 0.5, noise_shape=[None, 1, 1, None], seed=[5, 0]).numpy())
    w = tg.Variable(np.ones((4, 5)))
    with tg.GradientTape() as tape:
        out = tg.sum(tg.nn.dropout(w, 0.5, noise_shape=[4, 1], seed=1))
    g = tape.gradient(out, w).numpy()
    assert (g == g[:, :1]).all() and set(np.unique(g)) <= {0.0, 2.0}


@pytest.mark.parametrize("noise_shape", [[2, 3], [3, 3, 1], [1, 2], "x", [None, -1]])
def test_dropout_refuses_a_noise_shape_that_does_not_broadcast(noise_shape):
    with pytest.raises((TypeError, ValueError), match="`noise_shape`"):
        tg.nn.dropout(tg.ones((3, 4)), 0.5, noise_shape=noise_shape)


def _pool1d_reference(x, k, s, padding, reduce):
    """TensorFlow's 1-D pooling: windows s apart; SAME pads (k - 1 + ...) // 2 before,
    and the padded entries never count (max ignores them, the mean leaves them out)."""
    n = x.shape[1]
    if padding == "VALID":
        out, before = (n - k) // s + 1, 0
    else:
        out = -(-n // s)
        before = max((out - 1) * s + k - n, 0) // 2
    rows = []
    for i in range(out):
        lo, hi = max(i * s - before, 0), min(i * s - before + k, n)
        rows.append(reduce(x[:, lo:hi, :], axis=1))
    return np.stack(rows, axis=1)


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize("k, s", [(1, 1), (2, 2), (3, 1), (3, 2), (2, 3)])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool1d_matches_tensorflows_rule(kind, k, s, padding):
    x = np.random.default_rng(k * 10 + s).normal(size=(2, 7, 3))
    pool = tg.nn.max_pool1d if kind == "max" else tg.nn.avg_pool1d
    expected = _pool1d_reference(x, k, s, padding, np.max if kind == "max" else np.mean)
    np.testing.assert_allclose(pool(x, k, [1, s, 1], padding).numpy(), expected, rtol=1e-12)
    w = tg.Variable(x)
    assert tg.gradcheck(lambda v: pool(v, k, s, padding), [w]) is not False


@pytest.mark.parametrize("call, argument", [
    (lambda: tg.nn.max_pool1d(tg.ones((1, 4, 4, 2)), 2, 1, "VALID"), "input"),
    (lambda: tg.nn.avg_pool1d(tg.ones((1, 4, 2)), 0, 1, "VALID"), "ksize"),
    (lambda: tg.nn.avg_pool1d(tg.ones((1, 4, 2)), 2, [2, 2], "VALID"), "strides"),
    (lambda: tg.nn.max_pool1d(tg.ones((1, 4, 2)), 5, 1, "VALID"), "ksize"),
    (lambda: tg.nn.max_pool1d(tg.ones((1, 4, 2)), 2, 1, "FULL"), "padding"),
])
def test_pool1d_refuses_bad_arguments_naming_them(call, argument):
    with pytest.raises((TypeError, ValueError), match=f"`{argument}`"):
        call()
