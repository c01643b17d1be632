"""Issue 32's numpy surface beyond the op table: r_/c_ directives and slices, the
complex functions on real input, partition against numpy, the errors, batching, and
the sizes the graph-built ones need (test_graph_vs_tape.py's SURFACE_EXCLUDED)."""
import numpy as np
import pytest

import teachgrad as tg

A, B = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0])
M = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("key", [
    (A, B), (A, 0, B), (slice(0, 4),), (slice(0, 1, 5j), A), (1, 2.5), ("0,2", A, A),
    ("0,2,0", A, A), ("1", M, M), ("-1,3,1", A, A), (A, np.arange(3)), (slice(1, 7, 2),),
], ids=str)
@pytest.mark.parametrize("ours, theirs", [(tg.r_, np.r_), (tg.c_, np.c_)], ids=["r_", "c_"])
def test_index_tricks_match_numpy(ours, theirs, key):
    try:
        expected = theirs[key]
    except ValueError:
        with pytest.raises(ValueError):
            ours[key]
        return
    got = ours[key].numpy()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_index_tricks_are_differentiable_and_refuse_bad_directives():
    x = tg.Variable(A)
    with tg.GradientTape() as tape:
        y = tg.sum(tg.r_[x, 0.0, x] * tg.r_[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [6.0, 8.0, 10.0])
    for key in [("r", A), (A, "0"), ("x,y", A), ()]:
        with pytest.raises(ValueError, match="`key`"):
            tg.r_[key]


def test_complex_functions_on_real_input():
    x = np.array([-2.0, -0.0, 0.0, 3.0])
    np.testing.assert_array_equal(tg.angle(x).numpy(), np.angle(x))
    np.testing.assert_array_equal(tg.angle(x, deg=True).numpy(), np.angle(x, deg=True))
    np.testing.assert_array_equal(tg.imag(x).numpy(), np.imag(x))
    for f in (tg.real, tg.conj, tg.conjugate, tg.real_if_close):
        np.testing.assert_array_equal(f(x).numpy(), x)
    assert tg.fabs([-1, 2]).dtype == np.float64 and tg.real([1, 2]).dtype == np.int64
    v = tg.Variable(x)
    with tg.GradientTape(persistent=True) as tape:
        a, i = tg.sum(tg.angle(v)), tg.sum(tg.imag(v))
    assert tape.gradient(a, v, unconnected_gradients="zero").numpy().tolist() == [0.0] * 4
    assert tape.gradient(i, v, unconnected_gradients="zero").numpy().tolist() == [0.0] * 4
    np.testing.assert_allclose(tg.angle(np.array([1 + 1j])).numpy(), [np.pi / 4])
    with pytest.raises(TypeError, match="`x`"):
        tg.fabs(np.array([1 + 1j]))


@pytest.mark.parametrize("kth", [0, 3, -1, [1, 4], (0, 2, 5)])
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_partition_is_numpys_arrangement(kth, axis):
    x = np.random.default_rng(3).normal(size=(6, 6))
    np.testing.assert_array_equal(tg.partition(x, kth, axis).numpy(),
                                  np.partition(x, kth, axis=axis))
    np.testing.assert_array_equal(tg.argpartition(x, kth, axis).numpy(),
                                  np.argpartition(x, kth, axis=axis))


@pytest.mark.parametrize("call, argument", [
    (lambda: tg.partition(A, 3), "kth"), (lambda: tg.partition(A, 1.5), "kth"),
    (lambda: tg.partition(A, []), "kth"), (lambda: tg.argpartition([], 0), "a"),
    (lambda: tg.rollaxis(M, 2), "axis"), (lambda: tg.rollaxis(M, 0, 3), "start"),
    (lambda: tg.append(M, A, axis=0), "values"), (lambda: tg.append(1.0, A, axis=0), "arr"),
    (lambda: tg.gradient(A, edge_order=3), "edge_order"),
    (lambda: tg.gradient(B, edge_order=2), "f"), (lambda: tg.gradient(5.0), "f"),
    (lambda: tg.gradient(M, 1.0, 2.0, 3.0), "varargs"),
    (lambda: tg.gradient(M, [1.0, 2.0], axis=1), "varargs"),
    (lambda: tg.convolve(A, [], "full"), "v"), (lambda: tg.convolve(M, A), "a"),
    (lambda: tg.convolve(A, B, "circular"), "mode"),
    (lambda: tg.real_if_close(A, tol="big"), "tol"), (lambda: tg.angle(A, deg="no"), "deg"),
])
def test_bad_arguments_are_refused_naming_them(call, argument):
    with pytest.raises((TypeError, ValueError), match=f"`{argument}`"):
        call()


def test_ops_that_need_sizes_say_so_in_a_graph():
    with tg.Graph().as_default():
        x = tg.placeholder(tg.float64, (None,), name="x")
        with pytest.raises(ValueError, match="unknown"):
            tg.gradient(x)
        with pytest.raises(ValueError, match="known length"):
            tg.convolve(x, [1.0, 2.0])
        y = tg.partition(x, 1)       # argpartition needs no sizes
        assert tuple(y.shape) == (None,)


# Some ops these are made of (take_along_axis, pad) may still run once per example,
# with a warning, until their blocks get batching rules; the numbers are the same.
@pytest.mark.filterwarnings("ignore:tg.vectorized_map:UserWarning")
def test_new_ops_batch_inside_vmap():
    xs = np.random.default_rng(4).normal(size=(3, 5))
    for fn, ref in [(lambda x: tg.partition(x, 2), lambda x: np.partition(x, 2)),
                    (lambda x: tg.angle(x), np.angle), (lambda x: tg.imag(x), np.imag),
                    (lambda x: tg.gradient(x, 0.5), lambda x: np.gradient(x, 0.5)),
                    (lambda x: tg.convolve(x, [1.0, -1.0], "same"),
                     lambda x: np.convolve(x, [1.0, -1.0], "same")),
                    (lambda x: tg.r_[x, 1.0], lambda x: np.r_[x, 1.0])]:
        got = tg.vmap(fn)(tg.constant(xs)).numpy()
        np.testing.assert_allclose(got, np.stack([ref(x) for x in xs]), rtol=1e-12)
