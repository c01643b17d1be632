"""tg.signal's FFTs: numpy's values, and gradients (another FFT) against finite differences.

TensorFlow's names and conventions: the 1-D transforms act on the innermost axis, the 2-D
ones on the two innermost; rfft and irfft take ``fft_length`` (a crop or a zero pad).
"""
import numpy as np
import pytest

import teachgrad as tg

S = tg.signal
RNG = np.random.default_rng(42)
Z = RNG.normal(size=(2, 5)) + 1j * RNG.normal(size=(2, 5))
X = RNG.normal(size=(2, 5))
Z3 = RNG.normal(size=(2, 3, 4)) + 1j * RNG.normal(size=(2, 3, 4))
X3 = Z3.real.copy()

# name -> (transform, numpy's, input)
CASES = {
    "fft": (S.fft, np.fft.fft, Z),
    "ifft": (S.ifft, np.fft.ifft, Z),
    "fft_of_real": (S.fft, np.fft.fft, X),
    "rfft": (S.rfft, np.fft.rfft, X),
    "rfft_padded": (lambda x: S.rfft(x, [8]), lambda x: np.fft.rfft(x, 8), X),
    "rfft_cropped": (lambda x: S.rfft(x, 3), lambda x: np.fft.rfft(x, 3), X),
    "irfft": (S.irfft, np.fft.irfft, Z),
    "irfft_odd": (lambda c: S.irfft(c, 9), lambda c: np.fft.irfft(c, 9), Z),
    "irfft_padded": (lambda c: S.irfft(c, [12]), lambda c: np.fft.irfft(c, 12), Z),
    "irfft_cropped": (lambda c: S.irfft(c, 3), lambda c: np.fft.irfft(c, 3), Z),
    "fft2d": (S.fft2d, np.fft.fft2, Z3),
    "ifft2d": (S.ifft2d, np.fft.ifft2, Z3),
    "rfft2d": (S.rfft2d, np.fft.rfft2, X3),
    "rfft2d_lengths": (lambda x: S.rfft2d(x, [5, 6]), lambda x: np.fft.rfft2(x, s=(5, 6)), X3),
    "irfft2d": (S.irfft2d, np.fft.irfft2, Z3),
    "irfft2d_lengths": (lambda c: S.irfft2d(c, [2, 7]), lambda c: np.fft.irfft2(c, s=(2, 7)), Z3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_are_numpys(name):
    f, ref, a = CASES[name]
    np.testing.assert_allclose(f(a).numpy(), ref(a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tg.function(f)(tg.constant(a)).numpy(), ref(a), atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("how", ["eager", "function"])
def test_gradients_match_finite_differences_on_both_parts(name, how):
    f, _, a = CASES[name]
    assert tg.gradcheck(tg.function(f) if how == "function" else f, [a])


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_mode_is_the_transform_of_the_tangent(name):
    f, _, a = CASES[name]   # every transform is linear: its JVP is itself
    t = RNG.normal(size=a.shape) + (1j * RNG.normal(size=a.shape) if a.dtype.kind == "c" else 0)
    x = tg.constant(a)
    with tg.ForwardAccumulator(x, tg.constant(t)) as acc:
        y = f(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), f(t).numpy(), atol=1e-12)


def test_the_gradient_of_the_fft_is_n_times_the_inverse_fft():
    x = tg.constant(Z)
    ct = RNG.normal(size=Z.shape) + 1j * RNG.normal(size=Z.shape)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = S.fft(x)
    np.testing.assert_allclose(tape.gradient(y, x, output_gradients=tg.constant(ct)).numpy(),
                               5 * np.fft.ifft(ct))
    # Parseval: sum abs(fft(x))^2 = n sum abs(x)^2, so its gradient is 2 n x
    with tg.GradientTape() as tape:
        tape.watch(x)
        energy = tg.sum(tg.abs(S.fft(x)) ** 2)
    np.testing.assert_allclose(tape.gradient(energy, x).numpy(), 2 * 5 * Z)


def test_rffts_gradient_weighs_the_doubled_entries_as_tensorflow():
    c = tg.constant(np.fft.rfft(X))
    with tg.GradientTape() as tape:
        tape.watch(c)
        y = tg.sum(S.irfft(c, 5))     # x_j summed: only the mean, c_0 / n, is left
    np.testing.assert_allclose(tape.gradient(y, c).numpy(), [[1, 0, 0]] * 2, atol=1e-12)
    x = tg.constant(X)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.real(S.rfft(x)[..., 0])   # the sum of x
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.ones_like(X))


def test_second_order():
    x = tg.Variable(X[0])
    with tg.GradientTape() as outer:
        with tg.GradientTape() as inner:
            y = tg.sum(tg.abs(S.rfft(x)) ** 4)
        g = inner.gradient(y, x)
        gg = tg.sum(g * g)
    h = outer.gradient(gg, x).numpy()

    def grad_of(v):
        w = tg.constant(v)
        with tg.GradientTape() as tape:
            tape.watch(w)
            y = tg.sum(tg.abs(S.rfft(w)) ** 4)
        return np.sum(tape.gradient(y, w).numpy() ** 2)
    eps = 1e-6
    numeric = [(grad_of(X[0] + eps * e) - grad_of(X[0] - eps * e)) / (2 * eps)
               for e in np.eye(5)]
    np.testing.assert_allclose(h, numeric, rtol=1e-5)


def test_dtypes_are_kept():
    assert S.fft(np.ones(4, np.complex64)).dtype == tg.complex64
    assert S.rfft(np.ones(4, np.float32)).dtype == tg.complex64
    assert S.irfft(np.ones(3, np.complex64)).dtype == tg.float32
    assert S.rfft(np.ones(4)).dtype == tg.complex128


def test_in_a_graph_and_under_vectorized_map():
    graph = tg.Graph()
    with graph.as_default():
        p = tg.placeholder(tg.complex128, shape=(2, 5))
        (g,) = tg.gradients(tg.sum(tg.abs(S.fft(p)) ** 2), [p])
    np.testing.assert_allclose(tg.Session(graph).run(g, feed_dict={p: Z}), 10 * Z)
    mapped = tg.vectorized_map(S.rfft, tg.constant(X))
    np.testing.assert_allclose(mapped.numpy(), np.fft.rfft(X))


@pytest.mark.parametrize("call, error, match", [
    (lambda: S.fft(np.arange(4)), TypeError, "cast"),
    (lambda: S.rfft(Z), TypeError, "real float"),
    (lambda: S.irfft(X), TypeError, "complex"),
    (lambda: S.fft(np.float64(1.0)), ValueError, "at least 1 axes"),
    (lambda: S.fft2d(Z[0]), ValueError, "at least 2 axes"),
    (lambda: S.rfft(X, 0), ValueError, "fft_length"),
    (lambda: S.rfft2d(X3, [3]), ValueError, "fft_length"),
])
def test_bad_input_is_refused_naming_what_was_wrong(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_an_unknown_length_is_refused():
    graph = tg.Graph()
    with graph.as_default(), pytest.raises(ValueError, match="innermost size"):
        S.fft(tg.placeholder(tg.complex128, shape=(2, None)))
