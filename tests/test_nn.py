"""tg.nn against plain numpy: convolutions and pooling against loops over output pixels
(tests/nn_strategies.py), moments and batch normalisation against their formulas,
dropout's mask; the same numbers eagerly, in tg.function, in a Graph run by a Session
and under forward mode; and bad arguments refused with a message naming them.

(The op table runs the finite-difference, second-order, JVP/VJP, float32 and
graph-vs-tape properties on the same ops.)
"""
import nn_strategies as NN
import numpy as np
import pytest

import teachgrad as tg

RNG = np.random.default_rng(7)


def _normal(*shape):
    return RNG.normal(size=shape)


# -- conv2d and conv1d ------------------------------------------------------------------
CONV_CASES = [
    # (x shape, w shape, strides, padding, dilations)
    ((2, 5, 7, 3), (3, 2, 3, 4), (1, 1), "VALID", (1, 1)),
    ((2, 5, 7, 3), (3, 2, 3, 4), (1, 1), "SAME", (1, 1)),
    ((1, 7, 6, 2), (2, 3, 2, 1), (2, 3), "VALID", (1, 1)),
    ((1, 7, 6, 2), (2, 3, 2, 1), (2, 3), "SAME", (1, 1)),
    ((1, 9, 8, 1), (3, 3, 1, 2), (1, 1), "VALID", (2, 3)),
    ((1, 9, 8, 1), (3, 3, 1, 2), (1, 1), "SAME", (2, 3)),
    ((3, 4, 4, 2), (4, 4, 2, 2), (1, 1), "SAME", (1, 1)),   # even kernel: odd pad at the end
    ((1, 5, 5, 1), (1, 1, 1, 1), (4, 4), "SAME", (1, 1)),   # stride above the kernel
]


@pytest.mark.parametrize("xs, ws, strides, padding, dilations", CONV_CASES)
def test_conv2d_matches_a_loop_and_its_gradients_a_loop_of_vjps(xs, ws, strides, padding,
                                                               dilations):
    x, w = _normal(*xs), _normal(*ws)
    want = NN.conv2d(x, w, strides, padding, dilations)
    got = tg.nn.conv2d(x, w, strides, padding, dilations)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    # TensorFlow's 4-element spelling gives the same
    four = tg.nn.conv2d(x, w, [1, *strides, 1], padding.lower(), [1, *dilations, 1])
    np.testing.assert_allclose(four.numpy(), want, rtol=1e-12, atol=1e-12)

    # the VJP is linear in the cotangent: compare with the loop's Jacobian, column by column
    ct = _normal(*want.shape)
    xt, wt = tg.constant(x), tg.constant(w)
    with tg.GradientTape() as tape:
        tape.watch([xt, wt])
        y = tg.nn.conv2d(xt, wt, strides, padding, dilations)
    gx, gw = tape.gradient(y, [xt, wt], output_gradients=tg.constant(ct))
    want_gx = np.zeros(x.shape)
    for i in np.ndindex(*x.shape):
        e = np.zeros(x.shape)
        e[i] = 1.0
        want_gx[i] = np.sum(ct * NN.conv2d(e, w, strides, padding, dilations))
    want_gw = np.zeros(w.shape)
    for i in np.ndindex(*w.shape):
        e = np.zeros(w.shape)
        e[i] = 1.0
        want_gw[i] = np.sum(ct * NN.conv2d(x, e, strides, padding, dilations))
    np.testing.assert_allclose(gx.numpy(), want_gx, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gw.numpy(), want_gw, rtol=1e-10, atol=1e-10)


def test_conv2d_same_keeps_the_size_and_valid_keeps_whole_windows():
    x = np.ones((1, 5, 5, 1))
    w = np.ones((3, 3, 1, 1))
    same = tg.nn.conv2d(x, w, 1, "SAME").numpy()[0, :, :, 0]
    assert same.shape == (5, 5)
    assert same[0, 0] == 4 and same[0, 2] == 6 and same[2, 2] == 9   # corners see 4 ones
    assert tg.nn.conv2d(x, w, 1, "VALID").shape == (1, 3, 3, 1)
    assert tg.nn.conv2d(x, w, 2, "SAME").shape == (1, 3, 3, 1)      # ceil(5 / 2)


def _conv1d_loop(x, w, stride, padding, dilation):
    n, width, _ = x.shape
    k, _, cout = w.shape
    span = (k - 1) * dilation + 1
    if padding == "VALID":
        left, out = 0, (width - span) // stride + 1
    else:
        out = -(-width // stride)
        left = max((out - 1) * stride + span - width, 0) // 2
    y = np.zeros((n, out, cout))
    for i in range(out):
        for q in range(k):
            c = i * stride + q * dilation - left
            if 0 <= c < width:
                y[:, i, :] += x[:, c, :] @ w[q]
    return y


@pytest.mark.parametrize("stride, padding, dilation", [(1, "VALID", 1), (2, "SAME", 1),
                                                       (1, "SAME", 2), (3, "VALID", 1)])
def test_conv1d_matches_a_loop(stride, padding, dilation):
    x, w = _normal(2, 9, 3), _normal(3, 3, 2)
    got = tg.nn.conv1d(x, w, stride, padding, dilation)
    np.testing.assert_allclose(got.numpy(), _conv1d_loop(x, w, stride, padding, dilation),
                               rtol=1e-12, atol=1e-12)
    assert tg.nn.conv1d(x, w, [1, stride, 1], padding, dilation).shape == got.shape


def test_conv1d_gradient_matches_finite_differences():
    x, w = tg.constant(_normal(1, 6, 2)), tg.constant(_normal(3, 2, 2))
    assert tg.gradcheck(lambda a, b: tg.nn.conv1d(a, b, 2, "SAME"), [x, w])


# -- pooling ----------------------------------------------------------------------------
POOL_CASES = [((2, 5, 5, 2), (2, 2), (2, 2), "SAME"), ((2, 5, 5, 2), (2, 2), (2, 2), "VALID"),
              ((1, 6, 7, 1), (3, 2), (1, 3), "SAME"), ((1, 4, 4, 3), (3, 3), (1, 1), "SAME"),
              ((1, 7, 5, 1), (2, 3), (3, 1), "VALID")]


@pytest.mark.parametrize("xs, ksize, strides, padding", POOL_CASES)
def test_pooling_matches_a_loop(xs, ksize, strides, padding):
    x = _normal(*xs)
    for op, ref in ((tg.nn.max_pool2d, NN.max_pool2d), (tg.nn.avg_pool2d, NN.avg_pool2d)):
        got = op(x, ksize, strides, padding)
        np.testing.assert_allclose(got.numpy(), ref(x, ksize, strides, padding), rtol=1e-12)
        xt = tg.constant(x)
        with tg.GradientTape() as tape:
            tape.watch(xt)
            y = op(xt, ksize, strides, padding)
        ct = _normal(*y.shape)
        grad = tape.gradient(y, xt, output_gradients=tg.constant(ct)).numpy()
        want = (NN.max_pool2d_grad if op is tg.nn.max_pool2d else NN.avg_pool2d_grad)(
            ct, x, ksize, strides, padding)
        np.testing.assert_allclose(grad, want, rtol=1e-12, atol=1e-12)


def test_same_average_pooling_divides_by_the_real_entries():
    # TensorFlow: a window hanging over the border averages only what it covers
    x = np.ones((1, 3, 3, 1))
    y = tg.nn.avg_pool2d(x, 2, 2, "SAME").numpy()[0, :, :, 0]
    np.testing.assert_array_equal(y, np.ones((2, 2)))          # not 0.25 / 0.5 at the edge
    x = np.arange(9.0).reshape(1, 3, 3, 1)
    y = tg.nn.avg_pool2d(x, 2, 2, "SAME").numpy()[0, :, :, 0]
    np.testing.assert_array_equal(y, [[(0 + 1 + 3 + 4) / 4, (2 + 5) / 2], [(6 + 7) / 2, 8]])


def test_max_pooling_padding_never_wins():
    x = -np.ones((1, 3, 3, 1)) - np.arange(9.0).reshape(1, 3, 3, 1)
    y = tg.nn.max_pool2d(x, 2, 2, "SAME").numpy()[0, :, :, 0]
    np.testing.assert_array_equal(y, [[-1, -3], [-7, -9]])


# -- moments and batch normalisation ----------------------------------------------------
def test_moments_are_numpys_mean_and_population_variance():
    x = _normal(4, 3, 3, 2)
    mean, variance = tg.nn.moments(x, [0, 1, 2])
    np.testing.assert_allclose(mean.numpy(), x.mean(axis=(0, 1, 2)), rtol=1e-12)
    np.testing.assert_allclose(variance.numpy(), x.var(axis=(0, 1, 2)), rtol=1e-12)
    mean, variance = tg.nn.moments(x, -1, keepdims=True)
    assert mean.shape == (4, 3, 3, 1)
    np.testing.assert_allclose(variance.numpy(), x.var(axis=-1, keepdims=True), rtol=1e-12)


def test_batch_normalization_is_the_formula_and_its_gradient_matches_differences():
    x, offset, scale = _normal(5, 3), _normal(3), _normal(3)
    mean, variance = x.mean(axis=0), x.var(axis=0)
    got = tg.nn.batch_normalization(x, mean, variance, offset, scale, 1e-3)
    want = scale * (x - mean) / np.sqrt(variance + 1e-3) + offset
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    plain = tg.nn.batch_normalization(x, mean, variance, None, None, 1e-3)
    np.testing.assert_allclose(plain.numpy(), (x - mean) / np.sqrt(variance + 1e-3), rtol=1e-12)

    def normalised(a, gamma, beta):
        m, v = tg.nn.moments(a, [0])
        return tg.nn.batch_normalization(a, m, v, beta, gamma, 1e-3)
    assert tg.gradcheck(normalised, [tg.constant(x), tg.constant(scale), tg.constant(offset)])


def test_batch_normalization_keeps_float32():
    x = tg.constant(_normal(4, 2), dtype=tg.float32)
    mean, variance = tg.nn.moments(x, [0])
    y = tg.nn.batch_normalization(x, mean, variance, np.zeros(2), np.ones(2), 1e-3)
    assert y.dtype == tg.float32
    with pytest.raises(TypeError, match="mean"):
        tg.nn.batch_normalization(x, tg.constant([0.0, 0.0]), variance, None, None, 1e-3)


# -- dropout -----------------------------------------------------------------------------
def test_dropout_keeps_entries_scaled_by_one_over_one_minus_rate():
    x = tg.constant(_normal(50, 40))
    y = tg.nn.dropout(x, 0.25, seed=3).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], x.numpy()[kept] / 0.75, rtol=1e-12)
    assert 0.2 < 1 - kept.mean() < 0.3
    np.testing.assert_array_equal(tg.nn.dropout(x, 0.0).numpy(), x.numpy())


def test_dropout_seeds_follow_tensorflows_rules_and_stateless_dropout_repeats():
    x = tg.ones((20, 20))
    tg.random.set_seed(9)
    a, b = tg.nn.dropout(x, 0.5, seed=1).numpy(), tg.nn.dropout(x, 0.5, seed=1).numpy()
    assert not np.array_equal(a, b)                        # an op seed's stream moves on
    tg.random.set_seed(9)                                  # the program run again
    np.testing.assert_array_equal(a, tg.nn.dropout(x, 0.5, seed=1).numpy())
    np.testing.assert_array_equal(b, tg.nn.dropout(x, 0.5, seed=1).numpy())
    tg.random.set_seed(None)
    assert not np.array_equal(tg.nn.dropout(x, 0.5).numpy(), tg.nn.dropout(x, 0.5).numpy())
    c = tg.nn.stateless_dropout(x, 0.5, seed=[1, 2]).numpy()
    np.testing.assert_array_equal(c, tg.nn.stateless_dropout(x, 0.5, seed=[1, 2]).numpy())
    assert not np.array_equal(c, tg.nn.stateless_dropout(x, 0.5, seed=[1, 3]).numpy())
    assert set(np.unique(c)) == {0.0, 2.0}


def test_dropout_gradient_is_the_same_mask():
    x = tg.constant(_normal(6, 6))
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.nn.dropout(x, 0.5, seed=4)
    mask = y.numpy() / x.numpy()
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), mask, rtol=1e-12)


@pytest.mark.parametrize("rate", [1.0, 1.5, -0.1, float("nan")])
def test_dropout_refuses_a_rate_outside_zero_to_one(rate):
    with pytest.raises(ValueError, match="rate"):
        tg.nn.dropout(tg.ones((2, 2)), rate)


# -- the same numbers eagerly, traced, in a graph and under forward mode ----------------
def _net(x, w, gamma):
    h = tg.nn.relu(tg.nn.conv2d(x, w, (1, 2), "SAME", name="conv"))
    h = tg.nn.max_pool2d(h, 2, 1, "SAME") + tg.nn.avg_pool2d(h, (2, 3), 2, "SAME")[:, :1, :1]
    mean, variance = tg.nn.moments(h, [0, 1, 2])
    h = tg.nn.batch_normalization(h, mean, variance, None, gamma, 1e-3)
    return tg.sum(tg.square(h)) + tg.sum(tg.nn.conv1d(x[:, 0], w[0], 1, "VALID"))


def _inputs():
    return _normal(2, 5, 6, 2), _normal(3, 2, 2, 3), _normal(3)


def _eager(x, w, gamma):
    xs = [tg.constant(a) for a in (x, w, gamma)]
    with tg.GradientTape() as tape:
        tape.watch(xs)
        y = _net(*xs)
    return [y.numpy()] + [g.numpy() for g in tape.gradient(y, xs)]


def test_eager_traced_and_graph_agree():
    x, w, gamma = _inputs()
    want = _eager(x, w, gamma)

    @tg.function
    def traced(a, b, c):
        with tg.GradientTape() as tape:
            tape.watch([a, b, c])
            y = _net(a, b, c)
        return [y] + tape.gradient(y, [a, b, c])
    got = [t.numpy() for t in traced(tg.constant(x), tg.constant(w), tg.constant(gamma))]
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-10)

    graph = tg.Graph()
    with graph.as_default():
        ps = [tg.placeholder(tg.float64, shape=(None, 5, 6, 2), name="x"),
              tg.placeholder(tg.float64, shape=(3, 2, 2, 3), name="w"),
              tg.placeholder(tg.float64, shape=(3,), name="gamma")]
        y = _net(*ps)
        assert y.shape == ()
        fetches = [y] + tg.gradients(y, ps)
    got = tg.Session(graph).run(fetches, feed_dict=dict(zip(ps, (x, w, gamma))))
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-10)


def test_forward_mode_agrees_with_reverse_mode():
    x, w, gamma = _inputs()
    tangents = [_normal(*a.shape) for a in (x, w, gamma)]
    _, y_dot = tg.jvp(_net, [tg.constant(a) for a in (x, w, gamma)],
                      [tg.constant(t) for t in tangents])
    grads = _eager(x, w, gamma)[1:]
    want = sum(np.sum(g * t) for g, t in zip(grads, tangents))
    np.testing.assert_allclose(y_dot.numpy(), want, rtol=1e-9)


def test_the_activations_are_the_top_level_ops_and_every_nn_op_takes_a_name():
    for name in ("relu", "sigmoid", "softmax", "log_softmax",
                 "sparse_softmax_cross_entropy_with_logits"):
        assert getattr(tg.nn, name) is getattr(tg, name)
    assert tg.nn.conv2d(np.ones((1, 2, 2, 1)), np.ones((1, 1, 1, 1)), 1, "VALID",
                        name="c").name == "c"
    assert tg.nn.max_pool2d(np.ones((1, 2, 2, 1)), 2, 2, "VALID", name="p").name == "p"
    assert tg.nn.moments(np.ones(3), 0, name="m")[1].name == "m:1"
    graph = tg.Graph()
    with graph.as_default():
        y = tg.nn.conv1d(tg.placeholder(tg.float64, (1, 4, 1)), np.ones((2, 1, 1)), 1,
                         "VALID", name="c1")
    assert y.node.name == "c1"


# -- bad input ---------------------------------------------------------------------------
X, W = np.ones((1, 4, 4, 2)), np.ones((2, 2, 2, 3))


@pytest.mark.parametrize("call, error, argument", [
    (lambda: tg.nn.conv2d(np.ones((4, 4, 2)), W, 1, "VALID"), ValueError, "input"),
    (lambda: tg.nn.conv2d(X, np.ones((2, 2, 2)), 1, "VALID"), ValueError, "filters"),
    (lambda: tg.nn.conv2d(X, np.ones((2, 2, 3, 3)), 1, "VALID"), ValueError, "filters"),
    (lambda: tg.nn.conv2d(X, W, 1, "FULL"), ValueError, "padding"),
    (lambda: tg.nn.conv2d(X, W, 1, None), TypeError, "padding"),
    (lambda: tg.nn.conv2d(X, W, 0, "VALID"), ValueError, "strides"),
    (lambda: tg.nn.conv2d(X, W, -1, "VALID"), ValueError, "strides"),
    (lambda: tg.nn.conv2d(X, W, [1, 2, 2, 2], "VALID"), ValueError, "strides"),
    (lambda: tg.nn.conv2d(X, W, 1.5, "VALID"), TypeError, "strides"),
    (lambda: tg.nn.conv2d(X, W, 1, "VALID", dilations=0), ValueError, "dilations"),
    (lambda: tg.nn.conv2d(X, np.ones((5, 5, 2, 1)), 1, "VALID"), ValueError, "input"),
    (lambda: tg.nn.conv2d(X.astype(int), W, 1, "VALID"), TypeError, "input"),
    (lambda: tg.nn.conv2d(X, W.astype(np.float32), 1, "VALID"), TypeError, "filters"),
    (lambda: tg.nn.conv1d(X, W, 1, "VALID"), ValueError, "input"),
    (lambda: tg.nn.conv1d(np.ones((1, 4, 2)), np.ones((2, 3, 1)), 1, "VALID"), ValueError,
     "filters"),
    (lambda: tg.nn.conv1d(np.ones((1, 4, 2)), np.ones((2, 2, 1)), 0, "VALID"), ValueError,
     "stride"),
    (lambda: tg.nn.max_pool2d(X, 0, 1, "VALID"), ValueError, "ksize"),
    (lambda: tg.nn.max_pool2d(X, 2, 1, "same-ish"), ValueError, "padding"),
    (lambda: tg.nn.avg_pool2d(np.ones((4, 4)), 2, 2, "VALID"), ValueError, "input"),
    (lambda: tg.nn.avg_pool2d(X, 2, (0, 1), "VALID"), ValueError, "strides"),
    (lambda: tg.nn.avg_pool2d(X, 5, 1, "VALID"), ValueError, "input"),
    (lambda: tg.nn.moments(X, [0, 0]), ValueError, "axes"),
    (lambda: tg.nn.moments(X, 4), ValueError, "axes"),
    (lambda: tg.nn.moments(X, 0, keepdims="yes"), TypeError, "keepdims"),
    (lambda: tg.nn.batch_normalization(X, 0.0, 1.0, None, None, -1.0), ValueError,
     "variance_epsilon"),
    (lambda: tg.nn.batch_normalization(X, "a", 1.0, None, None, 1e-3), TypeError, "mean"),
    (lambda: tg.nn.dropout(X, 0.5, seed=-1), ValueError, "seed"),
    (lambda: tg.nn.dropout(X, "half"), TypeError, "rate"),
    (lambda: tg.nn.dropout(X.astype(int), 0.5), TypeError, "x"),
])
def test_bad_arguments_are_refused_naming_them(call, error, argument):
    with pytest.raises(error, match=rf"`{argument}`"):
        call()


def test_the_gradient_of_a_traced_dropout_is_the_mask_of_that_call():
    f = tg.function(lambda a: tg.nn.dropout(a * 1.0, 0.5))
    x = tg.constant(np.ones(40))
    for _ in range(3):
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        np.testing.assert_array_equal(tape.gradient(y, x).numpy(), y.numpy())


def test_traced_dropout_draws_a_new_mask_each_call_unless_stateless():
    x = tg.ones((30, 30))
    fresh = tg.function(lambda a: tg.nn.dropout(a, 0.5))
    seeded = tg.function(lambda a: tg.nn.dropout(a, 0.5, seed=5))
    stateless = tg.function(lambda a: tg.nn.stateless_dropout(a, 0.5, seed=[5, 5]))
    assert not np.array_equal(fresh(x).numpy(), fresh(x).numpy())
    assert not np.array_equal(seeded(x).numpy(), seeded(x).numpy())
    np.testing.assert_array_equal(stateless(x).numpy(), stateless(x).numpy())
    np.testing.assert_array_equal(stateless(x).numpy(),
                                  tg.nn.stateless_dropout(x, 0.5, seed=[5, 5]).numpy())
