"""The complex column of the op table (tests/op_table.py is the real one).

``COMPLEX_OPS`` lists, for each op whose rules hold for complex numbers, how to call it,
numpy's answer, and where its inputs may lie (away from branch cuts and poles):
``name -> (fn on tensors, numpy's reference, strategy of argument tuples, primitive or
None for the name)``. ``tests/test_complex_properties.py`` runs every entry.
"""
import numpy as np
from hypothesis import strategies as st

import teachgrad as tg


def _parts(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)


@st.composite
def complex_arrays(draw, shape=None, re=(-2.0, 2.0), im=(-2.0, 2.0), margin=0.0):
    """A complex128 array of a small shape; ``margin``: abs(z) at least that."""
    if shape is None:
        shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    n = int(np.prod(shape, dtype=int))
    real = draw(st.lists(_parts(*re), min_size=n, max_size=n))
    imag = draw(st.lists(_parts(*im), min_size=n, max_size=n))
    z = (np.array(real) + 1j * np.array(imag)).reshape(shape)
    if margin:
        z = np.where(np.abs(z) < margin, z + margin * (1 + 1j), z)
    return z


def _unary(domain=None):
    return st.tuples(complex_arrays(**(domain or {})))


def _same_shape(*domains):
    @st.composite
    def draw(draw_):
        shape = tuple(draw_(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
        return tuple(draw_(complex_arrays(shape=shape, **d)) for d in domains)
    return draw()


@st.composite
def _matrices(draw, n=None):
    k, m, p = (draw(st.integers(1, 3)) for _ in range(3))
    return draw(complex_arrays(shape=(k, m))), draw(complex_arrays(shape=(m, p)))


@st.composite
def _well_conditioned(draw):
    """A 2 x 2 complex matrix, shifted to keep it invertible and its eigenvalues apart."""
    a = draw(complex_arrays(shape=(2, 2), re=(-0.5, 0.5), im=(-0.5, 0.5)))
    return a + np.diag([2.0, -1.0 + 1.0j])


@st.composite
def _hermitian(draw):
    """A 2 x 2 Hermitian positive definite matrix with distinct eigenvalues."""
    m = draw(complex_arrays(shape=(2, 2), re=(-0.5, 0.5), im=(-0.5, 0.5)))
    return m @ m.conj().T + np.diag([1.0, 2.5])


#: Right half-plane (off the branch cut of log, sqrt and powers) and away from 0.
RIGHT = {"re": (0.3, 2.0), "im": (-2.0, 2.0)}
NONZERO = {"margin": 0.3}
SMALL = {"re": (-0.6, 0.6), "im": (-0.6, 0.6)}      # inside the unit disc: arcsin, arctanh

MASK = np.array([[True, False], [False, True]])

# name -> (fn on tensors, numpy's reference, strategy of argument tuples, primitive)
COMPLEX_OPS = {
    "add": (lambda x, y: x + y, np.add, _same_shape({}, {}), None),
    "subtract": (lambda x, y: x - y, np.subtract, _same_shape({}, {}), None),
    "multiply": (lambda x, y: x * y, np.multiply, _same_shape({}, {}), None),
    "divide": (lambda x, y: x / y, np.divide, _same_shape({}, NONZERO), None),
    "power": (lambda x, y: x ** y, np.power, _same_shape(RIGHT, SMALL), None),
    "negative": (lambda x: -x, np.negative, _unary(), None),
    "exp": (tg.exp, np.exp, _unary(), None),
    "log": (tg.log, np.log, _unary(RIGHT), None),
    "log1p": (tg.log1p, np.log1p, _unary(RIGHT), None),
    "sqrt": (tg.sqrt, np.sqrt, _unary(RIGHT), None),
    "square": (tg.square, np.square, _unary(), None),
    "abs": (tg.abs, np.abs, _unary(NONZERO), None),
    "sin": (tg.sin, np.sin, _unary(), None),
    "cos": (tg.cos, np.cos, _unary(), None),
    "tan": (tg.tan, np.tan, _unary(SMALL), None),
    "tanh": (tg.tanh, np.tanh, _unary(SMALL), None),
    "sinh": (tg.sinh, np.sinh, _unary(), None),
    "cosh": (tg.cosh, np.cosh, _unary(), None),
    "arcsin": (tg.arcsin, np.arcsin, _unary(SMALL), None),
    "arccos": (tg.arccos, np.arccos, _unary(SMALL), None),
    "arctan": (tg.arctan, np.arctan, _unary(SMALL), None),
    "arcsinh": (tg.arcsinh, np.arcsinh, _unary(SMALL), None),
    "arccosh": (tg.arccosh, np.arccosh, _unary(RIGHT | {"re": (1.5, 2.5), "im": (0.2, 1.0)}), None),
    "arctanh": (tg.arctanh, np.arctanh, _unary(SMALL), None),
    "log2": (tg.log2, np.log2, _unary(RIGHT), None),
    "log10": (tg.log10, np.log10, _unary(RIGHT), None),
    "expm1": (tg.expm1, np.expm1, _unary(), None),
    "exp2": (tg.exp2, np.exp2, _unary(), None),
    "reciprocal": (tg.reciprocal, np.reciprocal, _unary(NONZERO), None),
    "real": (tg.real, np.real, _unary(), None),
    "imag": (tg.imag, np.imag, _unary(), None),
    "conj": (tg.conj, np.conj, _unary(), None),
    "angle": (tg.angle, np.angle, _unary(NONZERO | {"re": (0.1, 2.0)}), None),
    "complex": (lambda x, y: tg.complex(tg.real(x), tg.imag(y)),
                lambda x, y: x.real + 1j * y.imag, _same_shape({}, {}), None),
    "cast": (lambda x: tg.cast(x, tg.float64), np.real, _unary(), None),
    "sum": (tg.sum, np.sum, _unary(), None),
    "mean": (lambda x: tg.mean(x, axis=-1), lambda x: np.mean(x, axis=-1),
             st.tuples(complex_arrays(shape=(2, 3))), None),
    "prod": (tg.prod, np.prod, _unary(), None),
    "cumsum": (tg.cumsum, np.cumsum, _unary(), None),
    "cumprod": (tg.cumprod, np.cumprod, _unary(), None),
    "matmul": (tg.matmul, np.matmul, _matrices(), None),
    "einsum": (lambda x, y: tg.einsum("ij,jk->ik", x, y),
               lambda x, y: np.einsum("ij,jk->ik", x, y), _matrices(), None),
    "tensordot": (lambda x, y: tg.tensordot(x, y, 1), lambda x, y: np.tensordot(x, y, 1),
                  _matrices(), "einsum"),
    "where": (lambda x, y: tg.where(MASK, x, y), lambda x, y: np.where(MASK, x, y),
              st.tuples(complex_arrays(shape=(2, 2)), complex_arrays(shape=(2, 2))), None),
    "add_n": (lambda x, y: tg.add_n([x, y, x]), lambda x, y: x + y + x, _same_shape({}, {}), None),
    "reshape": (lambda x: tg.reshape(x, (-1,)), np.ravel, _unary(), None),
    "transpose": (tg.transpose, np.transpose, _unary(), None),
    "expand_dims": (lambda x: tg.expand_dims(x, 0), lambda x: x[None], _unary(), None),
    "squeeze": (lambda x: tg.squeeze(tg.expand_dims(x, 0), 0), lambda x: x, _unary(), None),
    "broadcast_to": (lambda x: tg.broadcast_to(x, (2, 3)), lambda x: np.broadcast_to(x, (2, 3)),
                     st.tuples(complex_arrays(shape=(3,))), None),
    "getitem": (lambda x: x[..., ::-1], lambda x: x[..., ::-1],
                st.tuples(complex_arrays(shape=(2, 3))), None),
    "gather": (lambda x: tg.gather(x, [1, 0, 1]), lambda x: x[[1, 0, 1]],
               st.tuples(complex_arrays(shape=(2, 2))), None),
    "concat": (lambda x, y: tg.concat([x, y], 0), lambda x, y: np.concatenate([x, y], 0),
               st.tuples(complex_arrays(shape=(2,)), complex_arrays(shape=(3,))), None),
    "stack": (lambda x, y: tg.stack([x, y]), lambda x, y: np.stack([x, y]),
              _same_shape({}, {}), None),
    "split": (lambda x: tg.split(x, 2, axis=0)[1], lambda x: np.split(x, 2, axis=0)[1],
              st.tuples(complex_arrays(shape=(4,))), None),
    "flip": (lambda x: tg.flip(x, 0), lambda x: np.flip(x, 0),
             st.tuples(complex_arrays(shape=(3,))), None),
    "roll": (lambda x: tg.roll(x, 1, 0), lambda x: np.roll(x, 1, 0),
             st.tuples(complex_arrays(shape=(3,))), None),
    "tile": (lambda x: tg.tile(x, 2), lambda x: np.tile(x, 2),
             st.tuples(complex_arrays(shape=(2,))), None),
    "repeat": (lambda x: tg.repeat(x, 2), lambda x: np.repeat(x, 2),
               st.tuples(complex_arrays(shape=(2,))), None),
    "pad": (lambda x: tg.pad(x, [(1, 2)]), lambda x: np.pad(x, [(1, 2)]),
            st.tuples(complex_arrays(shape=(2,))), None),
    "diagonal": (tg.diagonal, np.diagonal, st.tuples(complex_arrays(shape=(3, 3))), None),
    "diag": (tg.diag, np.diag, st.tuples(complex_arrays(shape=(3,))), None),
    "fft": (tg.signal.fft, np.fft.fft, st.tuples(complex_arrays(shape=(2, 3))), None),
    "ifft": (tg.signal.ifft, np.fft.ifft, st.tuples(complex_arrays(shape=(3,))), None),
    "rfft": (tg.signal.rfft, np.fft.rfft,
             st.tuples(st.builds(np.real, complex_arrays(shape=(2, 4)))), None),
    "irfft": (lambda c: tg.signal.irfft(c, 4), lambda c: np.fft.irfft(c, 4),
              st.tuples(complex_arrays(shape=(3,))), None),
    "inv": (tg.linalg.inv, np.linalg.inv, st.tuples(_well_conditioned()), None),
    "solve": (tg.linalg.solve, np.linalg.solve,
              st.tuples(_well_conditioned(), complex_arrays(shape=(2, 2))), None),
    "det": (tg.linalg.det, np.linalg.det, st.tuples(_well_conditioned()), None),
    "slogdet": (lambda a: tg.linalg.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1],
                st.tuples(_well_conditioned()), None),
    "eigvals": (lambda a: tg.abs(tg.linalg.eigvals(a)) ** 2,
                lambda a: np.abs(np.linalg.eigvals(a)) ** 2, st.tuples(_well_conditioned()),
                None),
    "eig": (lambda a: tg.abs(tg.linalg.eig(a)[1]) ** 2,
            lambda a: np.abs(np.linalg.eig(a)[1]) ** 2, st.tuples(_well_conditioned()), None),
    "tril": (tg.tril, np.tril, st.tuples(complex_arrays(shape=(3, 3))), None),
    "triu": (lambda x: tg.triu(x, 1), lambda x: np.triu(x, 1),
             st.tuples(complex_arrays(shape=(3, 3))), None),
    "cholesky": (tg.linalg.cholesky, np.linalg.cholesky, st.tuples(_hermitian()), None),
    "eigh": (lambda a: tg.linalg.eigh(a)[0], lambda a: np.linalg.eigh(a)[0],
             st.tuples(_hermitian()), None),
    "svdvals": (lambda a: tg.linalg.svd(a, compute_uv=False),
                lambda a: np.linalg.svd(a, compute_uv=False), st.tuples(_well_conditioned()),
                None),
    "svd": (lambda a: tg.matmul(*tg.linalg.svd(a)[::2]),
            lambda a: np.matmul(*np.linalg.svd(a)[::2]), st.tuples(_well_conditioned()), None),
    "qr": (lambda a: tg.abs(tg.linalg.qr(a)[1]) ** 2, lambda a: np.abs(np.linalg.qr(a)[1]) ** 2,
           st.tuples(_well_conditioned()), None),
    "pinv": (tg.linalg.pinv, np.linalg.pinv,   # of full rank: the rank must not change
             st.tuples(st.builds(lambda a: np.vstack([a, [[0.0, 0.5j]]]), _well_conditioned())),
             None),
    "take_along_axis": (lambda x: tg.take_along_axis(x, np.array([2, 0]), 0),
                        lambda x: np.take_along_axis(x, np.array([2, 0]), 0),
                        st.tuples(complex_arrays(shape=(3,))), None),
}

#: Ops that take complex input without a table entry of their own: structural ops, which
#: move values without computing (graph inputs, control flow, calls, the fused programs of
#: the graph optimiser), and the ops that the gradients of the entries above are made of
#: (checked through them).
STRUCTURAL = {"placeholder", "const", "read_variable", "custom_gradient", "If", "While",
              "call", "print", "identity", "identity_n", "stop_gradient", "zeros_like",
              "ones_like", "equal", "not_equal", "shuffle", "repeat_like", "reshape_like",
              "broadcast_like", "sum_like", "undiagonal", "index_add", "scatter_add",
              "add_along_axis", "unpad", "unrepeat", "untile", "resize_rows",
              "scatter_update", "tensor_array_check",
              "cofactor", "eigen_gaps"}   # the last two: det's and eig's gradients


#: Ops differentiated only on complex input (on real input they are identities or
#: constants), or with complex results: they have a line here instead of one in
#: tests/op_table.py (eigen_gaps, eig's gradient, is checked through eig).
COMPLEX_ONLY = {"real", "conj", "complex", "imag", "angle", "fft", "ifft", "rfft", "irfft",
                "eig", "eigvals", "eigen_gaps"}
