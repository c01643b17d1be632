"""Issue 32's tg.linalg surface: eigh(UPLO="U"), qr's modes (numpy's numbers), and
which of them are differentiable (the op table checks the gradients themselves)."""
import numpy as np
import pytest

import teachgrad as tg

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 5)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r", "raw"])
def test_qr_modes_give_numpys_numbers(mode, shape):
    if mode == "raw" and len(shape) > 2:
        pytest.skip("numpy's raw mode is for one matrix")
    a = RNG.normal(size=shape)
    got, expected = tg.linalg.qr(a, mode), np.linalg.qr(a, mode)
    got = got if isinstance(got, tuple) else (got,)
    expected = tuple(expected) if isinstance(expected, tuple) else (expected,)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g.numpy(), e)


@pytest.mark.parametrize("UPLO", ["L", "U"])
def test_eigh_reads_the_triangle_numpy_reads(UPLO):
    a = RNG.normal(size=(4, 4))
    for got, expected in zip(tg.linalg.eigh(a, UPLO), np.linalg.eigh(a, UPLO)):
        np.testing.assert_array_equal(got.numpy(), expected)
    x = tg.Variable(a)
    with tg.GradientTape() as tape:
        y = tg.sum(tg.linalg.eigh(x, UPLO)[0] ** 2)
    g = tape.gradient(y, x).numpy()
    unread = np.triu(g, 1) if UPLO == "L" else np.tril(g, -1)
    assert not unread.any() and g.any()


@pytest.mark.parametrize("mode, shape", [("complete", (4, 2)), ("raw", (3, 3))])
def test_modes_without_a_gradient_say_so(mode, shape):
    x = tg.Variable(RNG.normal(size=shape))
    with tg.GradientTape() as tape:
        y = tg.sum(tg.linalg.qr(x, mode)[0])
    with pytest.raises(ValueError, match=f"mode='{mode}' has no gradient"):
        tape.gradient(y, x)


def test_wide_qr_gradient_matches_finite_differences():
    a = tg.constant(RNG.normal(size=(2, 2, 4)))
    tg.gradcheck(lambda x: tg.linalg.qr(x)[1], [a])
    tg.gradcheck(lambda x: tg.linalg.qr(x)[0], [a])


@pytest.mark.parametrize("call, argument", [
    (lambda: tg.linalg.eigh(np.eye(2), UPLO="X"), "UPLO"),
    (lambda: tg.linalg.qr(np.eye(2), "economic"), "mode"),
    (lambda: tg.linalg.qr(np.ones(3), "r"), "a"),
])
def test_bad_arguments_are_refused_naming_them(call, argument):
    with pytest.raises((TypeError, ValueError), match=f"`{argument}`"):
        call()
