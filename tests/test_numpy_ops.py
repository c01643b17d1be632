"""numpy's wider surface (issue 18) where the op table cannot reach: the ops with no
derivative (rounding, indices), the kinks (abs and sign at 0, ties), and the
conventions a numpy user expects (``%``, None bounds, NaN ignored).

The differentiable ops themselves are each one line of tests/op_table.py.
"""
import numpy as np
import pytest

import teachgrad as tg

X = np.array([-2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.7])


def gradient(f, x):
    x = tg.constant(x)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x, unconnected_gradients="zero").numpy()


def in_graph(f, x):
    graph = tg.Graph()
    with graph.as_default():
        p = tg.placeholder(tg.float64, (None,), name="x")
        y = f(p)
    return tg.Session(graph).run(y, feed_dict={p: x})


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "rint"])
def test_rounding_matches_numpy_and_has_no_gradient(name):
    f = getattr(tg, name)
    np.testing.assert_array_equal(f(tg.constant(X)).numpy(), getattr(np, name)(X))
    np.testing.assert_array_equal(in_graph(f, X), getattr(np, name)(X))
    assert f(tg.constant(X.astype(np.float32))).dtype == tg.float32
    np.testing.assert_array_equal(gradient(lambda x: tg.sum(f(x) * x), X), getattr(np, name)(X))


def test_abs_and_sign_at_zero_follow_autograd():
    # d|x|/dx is sign(x), 0 at the kink; sign is piecewise constant: derivative 0.
    np.testing.assert_array_equal(gradient(lambda x: tg.sum(tg.abs(x)), X), np.sign(X))
    np.testing.assert_array_equal(gradient(lambda x: tg.sum(tg.sign(x) * 3.0), X), 0 * X)


def test_ties_split_the_gradient_in_fmax_and_fmin():
    x, y = tg.constant([1.0, 2.0, 3.0]), tg.constant([1.0, 0.0, 5.0])
    for f, want in [(tg.fmax, [0.5, 1.0, 0.0]), (tg.fmin, [0.5, 0.0, 1.0])]:
        with tg.GradientTape() as tape:
            tape.watch([x, y])
            z = tg.sum(f(x, y))
        gx, gy = tape.gradient(z, [x, y])
        np.testing.assert_array_equal(gx.numpy(), want)
        np.testing.assert_array_equal(gx.numpy() + gy.numpy(), [1.0, 1.0, 1.0])


def test_fmax_ignores_nan_and_its_gradient_goes_to_the_number():
    x, y = tg.constant([np.nan, 2.0]), tg.constant([1.0, np.nan])
    with tg.GradientTape() as tape:
        tape.watch([x, y])
        z = tg.sum(tg.fmax(x, y))
    np.testing.assert_array_equal(tg.fmax(x, y).numpy(), [1.0, 2.0])
    gx, gy = tape.gradient(z, [x, y])
    np.testing.assert_array_equal(gx.numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(gy.numpy(), [1.0, 0.0])


def test_clip_touching_a_bound_passes_no_gradient_to_x():
    # autograd's rule: x gets the cotangent strictly inside the bounds only
    x = np.array([-1.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(gradient(lambda t: tg.sum(tg.clip(t, -1.0, 1.0)), x),
                                  [0.0, 1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="a_min, a_max"):
        tg.clip(tg.constant(x), None, None)


def test_clip_of_integers_with_one_bound():
    x = np.array([-3, 0, 7])
    np.testing.assert_array_equal(tg.clip(tg.constant(x), None, 2).numpy(), np.clip(x, None, 2))
    np.testing.assert_array_equal(tg.clip(tg.constant(x), 0, None).numpy(), np.clip(x, 0, None))


def test_the_percent_operator_is_numpys_mod():
    x = tg.constant(X)
    np.testing.assert_array_equal((x % 0.7).numpy(), X % 0.7)
    np.testing.assert_array_equal((3.0 % (x + 3)).numpy(), 3.0 % (X + 3))
    np.testing.assert_array_equal(in_graph(lambda t: t % 2.0, X), np.mod(X, 2.0))
    assert (tg.constant([7, -7]) % 3).numpy().tolist() == [1, 2]


def test_sinc_derivatives_at_zero():
    # sinc'(0) = 0 and sinc''(0) = -pi^2 / 3, although the formula is 0/0 there
    assert tg.grad(tg.sinc)(tg.constant(0.0)).numpy() == 0.0
    second = tg.grad(tg.grad(tg.sinc))(tg.constant(0.0)).numpy()
    np.testing.assert_allclose(second, -np.pi ** 2 / 3)


def test_hypot_at_the_origin_has_gradient_zero():
    np.testing.assert_array_equal(gradient(lambda t: tg.sum(tg.hypot(t, 0.0)), X), np.sign(X))


def test_nan_to_num_replaces_and_passes_gradient_where_finite():
    x = np.array([np.nan, np.inf, -np.inf, 1.5])
    got = tg.nan_to_num(tg.constant(x), nan=-1.0, posinf=9.0).numpy()
    np.testing.assert_array_equal(got, np.nan_to_num(x, nan=-1.0, posinf=9.0))
    np.testing.assert_array_equal(gradient(lambda t: tg.sum(tg.nan_to_num(t)), x),
                                  [0.0, 0.0, 0.0, 1.0])


M = np.array([[3.0, -1.0, 3.0], [0.5, 2.0, -4.0]])


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True), (-1, False)])
def test_index_reductions_match_numpy(name, axis, keepdims):
    f = getattr(tg, name)
    want = getattr(np, name)(M, axis=axis, keepdims=keepdims)
    got = f(tg.constant(M), axis=axis, keepdims=keepdims)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(in_graph(lambda t: f(t, axis=0), M[0]), getattr(np, name)(M[0]))


@pytest.mark.parametrize("name", ["any", "all"])
@pytest.mark.parametrize("axis", [None, 0, (0, 1), -1])
def test_boolean_reductions_match_numpy(name, axis):
    b = M > 0
    np.testing.assert_array_equal(getattr(tg, name)(tg.constant(b), axis=axis).numpy(),
                                  getattr(np, name)(b, axis=axis))
    np.testing.assert_array_equal(getattr(tg, name)(tg.constant(M), axis=axis, keepdims=True)
                                  .numpy(), getattr(np, name)(M, axis=axis, keepdims=True))


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_argsort_matches_numpy_and_sort_is_taking_along_it(axis):
    got = tg.argsort(tg.constant(M), axis=axis)
    np.testing.assert_array_equal(got.numpy(), np.argsort(M, axis=axis))
    flat = M.ravel() if axis is None else M
    np.testing.assert_array_equal(tg.take_along_axis(tg.constant(flat), got, axis=axis or 0)
                                  .numpy(), np.sort(M, axis=axis))


def test_index_ops_have_no_gradient():
    x = tg.constant(M)
    with tg.GradientTape() as tape:
        tape.watch(x)
        picked = tg.take_along_axis(x, tg.argmax(x, axis=1, keepdims=True), axis=1)
        y = tg.sum(picked) + tg.sum(tg.cast(tg.argsort(x), tg.float64))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[1, 0, 0], [0, 1, 0]])


def test_prod_and_cumprod_gradients_with_zeros():
    x = np.array([[2.0, 0.0, 3.0], [0.0, 5.0, 0.0], [1.0, 2.0, 4.0]])
    np.testing.assert_array_equal(gradient(lambda t: tg.sum(tg.prod(t, axis=1)), x),
                                  [[0, 6, 0], [0, 0, 0], [8, 4, 2]])
    # d/dx_i sum_k prod_{j<=k} x_j, by hand for the row [0, 5, 0]: 1 + 5 + 5 * 0, 0, 0
    g = gradient(lambda t: tg.sum(tg.cumprod(t, axis=1)), x)
    np.testing.assert_array_equal(g[1], [6, 0, 0])
    np.testing.assert_array_equal(g[0], [1 + 0 + 0, 2 + 2 * 3, 0])


def test_std_of_equal_entries_has_gradient_zero():
    np.testing.assert_array_equal(gradient(lambda t: tg.std(t), np.ones(4)), np.zeros(4))
    np.testing.assert_allclose(tg.std(tg.constant(M), axis=1, ddof=1).numpy(),
                               np.std(M, axis=1, ddof=1))


def test_linspace_and_arange_are_numpys_constants():
    np.testing.assert_array_equal(tg.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5))
    np.testing.assert_array_equal(tg.linspace(0, 1, 4, endpoint=False, dtype=tg.float32)
                                  .numpy(), np.linspace(0, 1, 4, endpoint=False, dtype=np.float32))
    for args in [(5,), (2, 7), (1.0, 2.0, 0.25), (5, 0, -2)]:
        got, want = tg.arange(*args), np.arange(*args)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(ValueError, match="step"):
        tg.arange(0, 3, 0)


def test_tensor_methods_numpy_users_type():
    x = tg.constant(M)
    assert x.T.shape == (3, 2) and x.transpose().shape == (3, 2)
    assert x.transpose(1, 0).shape == (3, 2)
    assert x.reshape(3, 2).shape == (3, 2) and x.reshape((6,)).shape == (6,)
    np.testing.assert_array_equal(x.ravel().numpy(), M.ravel())
    np.testing.assert_array_equal(x.flatten().numpy(), M.flatten())
    assert x.sum().numpy() == M.sum() and x.mean(axis=0).shape == (3,)
    assert x.max().numpy() == M.max() and x.min(axis=1).numpy().tolist() == M.min(axis=1).tolist()
    assert x.astype(tg.float32).dtype == tg.float32
    assert len(x) == 2
    rows = list(x)
    assert len(rows) == 2 and all(isinstance(r, tg.Tensor) for r in rows)
    np.testing.assert_array_equal(rows[1].numpy(), M[1])
    with pytest.raises(TypeError, match="0-d"):
        len(tg.constant(1.0))


def test_iterating_over_a_tensor_is_differentiable():
    # each row is x[i]: the gradient of a loop over the rows reaches every row
    np.testing.assert_array_equal(gradient(lambda t: sum(tg.sum(row) * i for i, row in
                                                         enumerate(t)), M),
                                  [[0, 0, 0], [1, 1, 1]])


@pytest.mark.parametrize("stack", ["vstack", "hstack", "column_stack"])
def test_stacks_of_unknown_sizes_say_what_they_need(stack):
    # numpy's stacks are concats: joining along an axis of unknown size has no gradient
    # in a graph (see STACKS_EXCLUDED in test_graph_vs_tape.py)
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, (None, None), name="x")
        with pytest.raises(ValueError, match="size"):
            tg.gradients(getattr(tg, stack)([x, x]), x)


def test_array_split_of_an_unknown_size_says_so():
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, (None,), name="x")
        with pytest.raises(ValueError, match="size"):
            tg.array_split(x, 2)


def test_pad_modes_that_are_not_copies_are_refused():
    with pytest.raises(ValueError, match="mode"):
        tg.pad(tg.constant(M), 1, mode="mean")


def test_rot90_four_times_and_flip_twice_give_the_input_back():
    x = tg.constant(M)
    np.testing.assert_array_equal(tg.rot90(tg.rot90(x, 3), 1).numpy(), M)
    np.testing.assert_array_equal(tg.flip(tg.flip(x)).numpy(), M)
    np.testing.assert_array_equal(tg.rot90(x, 1, axes=(1, 0)).numpy(), np.rot90(M, 1, (1, 0)))
