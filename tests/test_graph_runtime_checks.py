"""conv and pool check, when a graph runs, what a placeholder of unknown rank or channel
count hid when the graph was built (issue 41, item 11): the error names the channel
counts or the rank, not "cannot reshape array of size 72"."""
import numpy as np
import pytest

import teachgrad as tg

FILTERS = np.ones((3, 3, 2, 1), np.float32)   # 2 in_channels


def _run(build, shape, fed):
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, shape=shape)
        y = build(x)
    return tg.Session(g).run(y, {x: np.ones(fed, np.float32)})


def _conv(x):
    return tg.nn.conv2d(x, tg.constant(FILTERS), strides=1, padding="VALID")


def _max_pool(x):
    return tg.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID")


def _avg_pool(x):
    return tg.nn.avg_pool2d(x, ksize=2, strides=2, padding="VALID")


def test_conv2d_channel_mismatch_names_both_channel_counts():
    with pytest.raises(ValueError, match=r"`filters` have 2 in_channels.*has 3 channels"):
        _run(_conv, (None, 4, 4, None), (2, 4, 4, 3))


@pytest.mark.parametrize("build", [_conv, _max_pool, _avg_pool],
                         ids=["conv2d", "max_pool2d", "avg_pool2d"])
def test_a_rank_3_value_at_run_time_names_the_rank(build):
    with pytest.raises(ValueError, match=r"`input` must be a tensor of rank 4 .*rank 3"):
        _run(build, None, (4, 4, 2))


@pytest.mark.parametrize("build, out", [(_conv, (2, 2, 2, 1)), (_max_pool, (2, 2, 2, 2)),
                                        (_avg_pool, (2, 2, 2, 2))],
                         ids=["conv2d", "max_pool2d", "avg_pool2d"])
def test_right_values_still_run(build, out):
    assert _run(build, None, (2, 4, 4, 2)).shape == out


def test_vectorized_map_over_images_is_unaffected():
    """Under vmap the kernel sees the merged batch of images: rank 4 still."""
    xs = tg.constant(np.ones((3, 2, 4, 4, 2), np.float32))
    ys = tg.vectorized_map(_max_pool, xs)
    assert ys.shape == (3, 2, 2, 2, 2)
