"""Each of conv2d's kernel formulations (``teachgrad/ops/nn/conv_kernels.py``) against the
loop over output pixels written from the definition (``nn_strategies.conv2d``), on random
shapes, strides, dilations, paddings and dtypes, with the input as the rules hand it over
(contiguous, or a transposed view), and blocks of rows small enough to split an image;
and max pooling's kernels by taps (``windows.max_of_windows``, ``windows.add_at_maxima``)
against the loops, ties included."""
import nn_strategies as NN
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import teachgrad as tg
from teachgrad import backend
from teachgrad.ops.nn import conv_kernels, pooling
from teachgrad.ops.nn.windows import geometry_2d, pad_2d


@st.composite
def conv_inputs(draw):
    """(x, w, strides, padding, dilations): the op table's geometry (``conv_params``) with
    more images and channels; x NHWC, or a transposed view of a CHWN array (as the
    filters' rule hands it over)."""
    (_, height, width, _), (kh, kw, _, _), params = draw(NN.conv_params())
    n, cin, cout = draw(st.integers(0, 4)), draw(st.integers(0, 5)), draw(st.integers(0, 5))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    if draw(st.booleans()):
        x = rng.standard_normal((n, height, width, cin)).astype(dtype)
    else:
        x = rng.standard_normal((cin, height, width, n)).astype(dtype).transpose(3, 1, 2, 0)
    w = rng.standard_normal((kh, kw, cin, cout)).astype(dtype)
    return x, w, params["strides"], params["padding"], params["dilations"]


@settings(max_examples=200, deadline=None)
@given(conv_inputs(), st.sampled_from(sorted(conv_kernels.FORMULATIONS)),
       st.sampled_from([64, 1000, 1 << 20]))
def test_each_formulation_matches_the_reference(case, name, block_bytes):
    x, w, strides, padding, dilations = case
    (top, bottom, oh), (left, right, ow) = geometry_2d(x.shape, w.shape[:2], strides,
                                                       dilations, padding)
    # the kernels take arrays of the backend in use (CuPy's under make test-gpu)
    padded = pad_2d(backend.xp.asarray(x), (top, bottom), (left, right))
    kept, conv_kernels.BLOCK_BYTES = conv_kernels.BLOCK_BYTES, block_bytes
    try:
        got = conv_kernels.FORMULATIONS[name](padded, backend.xp.asarray(w), strides,
                                              dilations, (oh, ow))
    finally:
        conv_kernels.BLOCK_BYTES = kept
    got = backend.to_numpy(got)
    want = NN.conv2d(x.astype(np.float64), w.astype(np.float64), strides, padding, dilations)
    assert got.shape == want.shape and got.dtype == x.dtype
    tolerance = 1e-4 if x.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * 10)


@pytest.mark.parametrize("x_shape, w_shape, strides, out, itemsize, expected", [
    ((32, 34, 34, 16), (3, 3, 16, 32), (1, 1), (32, 32), 4, "windows"),      # forward
    ((32, 34, 34, 32), (3, 3, 32, 16), (1, 1), (32, 32), 4, "windows"),      # input's cotangent
    ((16, 34, 34, 32), (32, 32, 32, 32), (1, 1), (3, 3), 4, "windows transposed"),  # filters'
    ((16, 34, 34, 32), (32, 32, 32, 32), (1, 1), (3, 3), 8, "row offsets"),  # ... in float64
    ((16, 67, 67, 32), (32, 32, 32, 32), (2, 2), (3, 3), 8, "windows transposed"),  # dilated
    ((0, 5, 5, 2), (3, 3, 2, 4), (1, 1), (3, 3), 4, "windows"),              # nothing to multiply
])
def test_the_choice(x_shape, w_shape, strides, out, itemsize, expected):
    with tg.backend.using("numpy"):   # (on a GPU every convolution takes "windows")
        assert conv_kernels.choose(x_shape, w_shape, strides, (1, 1), out, itemsize) == expected


def test_the_benchmarks_gradients_match_the_reference():
    """The three convolutions of one conv2d's forward and backward pass, each formulation
    chosen by ``choose``, against the loops (a smaller batch of the benchmark's shapes)."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 9, 7, 3)), rng.standard_normal((3, 3, 3, 4))
    ct = rng.standard_normal((2, 9, 7, 4))
    tx, tw = tg.constant(x), tg.constant(w)
    with tg.GradientTape() as tape:
        tape.watch([tx, tw])
        y = tg.nn.conv2d(tx, tw, strides=1, padding="SAME")
    gx, gw = tape.gradient(y, [tx, tw], output_gradients=tg.constant(ct))
    eps, step = 1e-6, np.zeros_like(w)
    np.testing.assert_allclose(y.numpy(), NN.conv2d(x, w, (1, 1), "SAME", (1, 1)), rtol=1e-12)
    step[1, 2, 0, 3] = eps
    slope = (NN.conv2d(x, w + step, (1, 1), "SAME", (1, 1)) -
             NN.conv2d(x, w - step, (1, 1), "SAME", (1, 1))) / (2 * eps)
    np.testing.assert_allclose(gw.numpy()[1, 2, 0, 3], np.sum(slope * ct), rtol=1e-6)
    assert gx.shape == x.shape


@settings(max_examples=100, deadline=None)
@given(NN.pool_params(), st.integers(0, 2 ** 32 - 1))
def test_max_pool_kernels_route_ties_to_the_first_maximum(case, seed):
    """max_pool2d and its VJP by taps (``max_of_windows``, ``add_at_maxima``) against the
    loops, on values with many ties (small integers): each window's cotangent goes to its
    first maximum, row by row, as ``max_pool2d_pick``'s argmax reads it."""
    shape, params = case
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(np.float64)
    y = tg.nn.max_pool2d(x, **params).numpy()
    np.testing.assert_array_equal(y, NN.max_pool2d(x, **params))
    g = rng.standard_normal(y.shape)
    got = pooling.max_pool2d_grad(tg.constant(g), tg.constant(x), **params).numpy()
    np.testing.assert_allclose(got, NN.max_pool2d_grad(g, x, **params), rtol=1e-12)


def test_max_pool_grad_sends_a_nan_windows_cotangent_to_its_first_nan():
    x = np.array([1.0, np.nan, 5.0, np.nan]).reshape(1, 2, 2, 1)
    g = np.array([3.0]).reshape(1, 1, 1, 1)
    params = {"ksize": (2, 2), "strides": (2, 2), "padding": "VALID"}
    got = pooling.max_pool2d_grad(tg.constant(g), tg.constant(x), **params).numpy()
    np.testing.assert_array_equal(got.ravel(), [0.0, 3.0, 0.0, 0.0])
    picked = pooling.max_pool2d_pick(tg.constant(np.arange(4.0).reshape(x.shape)),
                                     tg.constant(x), **params).numpy()
    assert picked.ravel().tolist() == [1.0]


@pytest.mark.parametrize("strides", [1, 2])
def test_float32_gradients_stay_close_to_float64(strides):
    """conv2d and both cotangents in float32, each convolution by the formulation
    ``choose`` picks for float32 (at steps 1 ``windows transposed`` for the filters'
    cotangent), against the same in float64: within 1e-4 of the largest entry."""
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((32, 16, 16, 8)), rng.standard_normal((3, 3, 8, 16)) * 0.1
    ct = rng.standard_normal((32, 16 // strides, 16 // strides, 16))
    if strides == 1:   # the filters' cotangent: the input framed (8, 18, 18, 32), ct as filters
        assert conv_kernels.choose((8, 18, 18, 32), (16, 16, 32, 16), (1, 1), (1, 1), (3, 3),
                                   4) == "windows transposed"
    results = {}
    for dtype in (np.float32, np.float64):
        tx, tw = tg.constant(x.astype(dtype)), tg.constant(w.astype(dtype))
        with tg.GradientTape() as tape:
            tape.watch([tx, tw])
            y = tg.nn.conv2d(tx, tw, strides=strides, padding="SAME")
        grads = tape.gradient(y, [tx, tw], output_gradients=tg.constant(ct.astype(dtype)))
        results[dtype] = [y.numpy()] + [g.numpy() for g in grads]
    for low, high in zip(results[np.float32], results[np.float64]):
        assert low.dtype == np.float32
        np.testing.assert_allclose(low, high, rtol=1e-4, atol=1e-4 * np.abs(high).max())
