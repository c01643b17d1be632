"""Pooling's options (issue 32): dilated windows (``dilations=``, as ``tf.nn.pool``'s)
and windows over the channel axis (``ksize=[1, kh, kw, kc]``, TensorFlow's depthwise
pooling), against loops written from the definitions (``nn_strategies.py``) and
TensorFlow's documented numbers. The op table's property tests cover their gradients,
JVPs, graphs and batching (``max_pool2d_channels``, dilated ``pool_params``)."""
import nn_strategies as NN
import numpy as np
import pytest

import teachgrad as tg

RNG = np.random.default_rng(0)


def test_tensorflows_documented_max_pool_numbers():
    # tf.nn.max_pool's docs: a 4x4 matrix, 2x2 and 3x3 windows, strides 2, "SAME".
    m = np.array([[0, 0, 1, 7], [0, 2, 0, 0], [5, 2, 0, 0], [0, 0, 9, 8.0]]).reshape(1, 4, 4, 1)
    assert tg.nn.max_pool2d(m, 2, 2, "SAME").numpy().ravel().tolist() == [2, 7, 5, 9]
    assert tg.nn.max_pool2d(m, 3, 2, "SAME").numpy().ravel().tolist() == [5, 7, 9, 9]
    assert tg.nn.max_pool2d(m, 3, 3, "SAME").numpy().ravel().tolist() == [2, 7, 5, 9]


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize("pool, reference", [(tg.nn.max_pool2d, NN.max_pool2d),
                                             (tg.nn.avg_pool2d, NN.avg_pool2d)])
def test_dilated_windows_match_tf_nn_pools_formula(pool, reference, padding):
    x = RNG.normal(size=(2, 7, 6, 3))
    for ksize, strides, dilations in [((2, 2), (1, 1), (2, 2)), ((3, 2), (2, 1), (2, 3)),
                                      ((2, 3), (1, 2), [1, 2, 1, 1])]:
        y = pool(x, ksize, strides, padding, dilations=dilations)
        d = tuple(dilations[1:3]) if len(dilations) == 4 else dilations
        np.testing.assert_allclose(y.numpy(), reference(x, ksize, strides, padding, d))


def test_a_dilated_window_skips_the_entries_between_its_taps():
    x = np.arange(5.0).reshape(1, 1, 5, 1)   # 0 1 2 3 4
    y = tg.nn.avg_pool2d(x, (1, 2), 1, "VALID", dilations=(1, 2))
    assert y.numpy().ravel().tolist() == [1.0, 2.0, 3.0]   # (0+2)/2, (1+3)/2, (2+4)/2


def test_one_dimensional_pools_take_dilations():
    x = RNG.normal(size=(2, 9, 2))
    y = tg.nn.max_pool1d(x, 3, 2, "SAME", dilations=2)
    np.testing.assert_allclose(y.numpy(), NN.max_pool2d(x[:, None], (1, 3), (1, 2), "SAME",
                                                         (1, 2))[:, 0])


def test_pooling_over_channels_takes_each_group_of_channels():
    x = RNG.normal(size=(2, 3, 3, 6))
    y = tg.nn.max_pool2d(x, [1, 1, 1, 3], [1, 1, 1, 3], "VALID")
    np.testing.assert_array_equal(y.numpy(), x.reshape(2, 3, 3, 2, 3).max(axis=-1))
    y = tg.nn.avg_pool2d(x, [1, 1, 1, 2], [1, 1, 1, 2], "SAME")
    np.testing.assert_allclose(y.numpy(), x.reshape(2, 3, 3, 3, 2).mean(axis=-1))
    y = tg.nn.avg_pool1d(x[:, 0], [1, 1, 3], [1, 1, 3], "VALID")
    np.testing.assert_allclose(y.numpy(), x[:, 0].reshape(2, 3, 2, 3).mean(axis=-1))


def test_a_box_over_pixels_and_channels_is_pooled_whole():
    x = RNG.normal(size=(1, 4, 4, 4))
    y = tg.nn.max_pool2d(x, [1, 2, 2, 2], [1, 2, 2, 2], "VALID")
    box = x.reshape(1, 2, 2, 2, 2, 2, 2).max(axis=(2, 4, 6))
    np.testing.assert_array_equal(y.numpy(), box)


def test_gradients_of_channel_pooling_go_to_the_winners():
    x = tg.constant(np.array([1.0, 5.0, 3.0, 2.0]).reshape(1, 1, 1, 4))
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.nn.max_pool2d(x, [1, 1, 1, 2], [1, 1, 1, 2], "VALID")
    assert tape.gradient(y, x).numpy().ravel().tolist() == [0, 1, 1, 0]


def test_vmap_of_dilated_and_channel_pools_matches_the_loop():
    xs = RNG.normal(size=(3, 2, 5, 5, 4))
    for f in (lambda x: tg.nn.max_pool2d(x, 2, 1, "SAME", dilations=2),
              lambda x: tg.nn.avg_pool2d(x, [1, 2, 1, 2], [1, 1, 1, 2], "VALID")):
        batched = tg.vectorized_map(f, tg.constant(xs)).numpy()
        np.testing.assert_allclose(batched, np.stack([f(tg.constant(x)).numpy() for x in xs]))


@pytest.mark.parametrize("call, match", [
    (lambda x: tg.nn.max_pool2d(x, [1, 1, 1, 2], [1, 1, 1, 1], "VALID"),
     r"tg.nn.max_pool2d: `strides` must be a channel entry equal to ksize's \(2\)"),
    (lambda x: tg.nn.avg_pool2d(x, [1, 1, 1, 4], [1, 1, 1, 4], "VALID"),
     r"tg.nn.avg_pool2d: `ksize` must be a channel entry that divides the input's 6"),
    (lambda x: tg.nn.max_pool2d(x, [2, 1, 1, 1], 1, "VALID"), r"tg.nn.max_pool2d: `ksize`"),
    (lambda x: tg.nn.max_pool2d(x, 2, 1, "VALID", dilations=0),
     r"tg.nn.max_pool2d: `dilations`"),
    (lambda x: tg.nn.max_pool2d(x, 2, 1, "VALID", dilations=3),
     r"tg.nn.max_pool2d: `input` must be at least 4 entries along axis 1"),
    (lambda x: tg.nn.max_pool2d(x, 2, 1, "SAME", dilations=5),
     r"tg.nn.max_pool2d: every window must hold at least one entry of `input`"),
    (lambda x: tg.nn.max_pool1d(x[:, 0], [1, 2, 4], [1, 2, 4], "VALID"),
     r"tg.nn.max_pool1d: `ksize`"),
])
def test_bad_pool_options_are_refused_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call(tg.ones((1, 3, 3, 6)))


def test_channel_pooling_of_unknown_sizes_says_what_it_needs():
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, (None, None, None, 4))
        with pytest.raises(ValueError, match="height, width and channels are known"):
            tg.nn.max_pool2d(x, [1, 1, 1, 2], [1, 1, 1, 2], "VALID")
