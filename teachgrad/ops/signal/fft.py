r"""The discrete Fourier transform, under TensorFlow's names (``tf.signal.fft``, ...).

Each transform acts on the innermost axis (the 2-D ones on the two innermost), as
TensorFlow's do; leading axes are a batch. The DFT of length $n$ is the matrix
$F_{jk} = e^{-2\pi i jk/n}$, and it is linear, so its gradient is another DFT: with
TensorFlow's convention (``teachgrad.dtypes``) a cotangent goes back through
$F^H = \bar F^T = n \cdot \mathrm{ifft}$. So ``fft``'s VJP is ``n * ifft(ct)`` and
``ifft``'s is ``fft(ct) / n``.

``rfft`` keeps the first $n/2 + 1$ outputs of the FFT of a real signal (the others are
their conjugates); its VJP pads the cotangent back to $n$ with zeros, applies
$n \cdot \mathrm{ifft}$ and keeps the real part (a real input's cotangent is real).
``irfft`` reads its input as half of a Hermitian spectrum, so each entry but the first
(and, for even $n$, the last) stands for two: its VJP is ``rfft(ct)`` weighted by
$2/n$, and $1/n$ for those (TensorFlow's weighting).
"""
import numpy as np

from ... import backend, validate
from ..core.apply import innermost, leading_axes_rule
from ..core.declare import defbatch, defeffect, defjvp, defvjp, primitive, takes_complex
from ..core.grad_util import as_tensor
from ..elementwise.casts import cast
from ..elementwise.conjugate import real_part
from ..shape.padding import pad
from ..shape.rearrange import swapaxes


def _complex_dtype(dtype):
    return np.result_type(dtype, np.complex64)


def _real_dtype(dtype):
    return np.dtype(_complex_dtype(dtype).char.lower())


def _fit(t, length):
    """``t`` cropped or zero-padded on its innermost axis to ``length`` entries."""
    have = t.shape[-1]
    if have > length:
        return t[..., :length]
    if have < length:
        return pad(t, [(0, 0)] * (t.ndim - 1) + [(0, length - have)])
    return t


def _fft_kernel(x):
    return backend.xp.fft.fft(x, axis=-1).astype(x.dtype, copy=False)


def _ifft_kernel(x):
    return backend.xp.fft.ifft(x, axis=-1).astype(x.dtype, copy=False)

# fft(x): y_k = sum_j x_j e^{-2 pi i jk/n}.  Linear: VJP n ifft(ct), JVP fft(x_dot).
fft_p = primitive("fft", _fft_kernel)
defeffect(fft_p, "fresh")
takes_complex(fft_p)
# ifft(y): x_j = (1/n) sum_k y_k e^{2 pi i jk/n}.  VJP fft(ct) / n.
ifft_p = primitive("ifft", _ifft_kernel)
defeffect(ifft_p, "fresh")
takes_complex(ifft_p)
defvjp(fft_p, lambda ct, ans, x: innermost.process(ifft_p, ct) * x.shape[-1])
defjvp(fft_p, lambda x_dot, ans, x: innermost.process(fft_p, x_dot))
defvjp(ifft_p, lambda ct, ans, x: innermost.process(fft_p, ct) / x.shape[-1])
defjvp(ifft_p, lambda x_dot, ans, x: innermost.process(ifft_p, x_dot))
defbatch(fft_p, leading_axes_rule(fft_p))
defbatch(ifft_p, leading_axes_rule(ifft_p))


def _rfft_kernel(x, n):
    return backend.xp.fft.rfft(x, n=n, axis=-1).astype(_complex_dtype(x.dtype), copy=False)


def _rfft_vjp(ct, ans, x, n):
    full = _fit(ct, n)                                   # the dropped half: zeros
    return _fit(real_part(innermost.process(ifft_p, full)) * n, x.shape[-1])


def _irfft_kernel(c, n):
    return backend.xp.fft.irfft(c, n=n, axis=-1).astype(_real_dtype(c.dtype), copy=False)


def _irfft_weights(n, dtype):
    """2/n for the entries of a half spectrum that stand for two, 1/n for those that do not."""
    weights = np.full(n // 2 + 1, 2.0 / n)
    weights[0] = 1.0 / n
    if n % 2 == 0:
        weights[-1] = 1.0 / n
    return backend.xp.asarray(weights.astype(_real_dtype(dtype)))


def _irfft_vjp(ct, ans, c, n):
    half = innermost.process(rfft_p, ct, n=n) * _irfft_weights(n, c.dtype)
    return _fit(half, c.shape[-1])

# rfft(x, n): the first n/2 + 1 entries of fft of the real x cropped or padded to n.
rfft_p = primitive("rfft", _rfft_kernel)
defeffect(rfft_p, "fresh")
# irfft(c, n): the real signal of length n whose rfft is c (cropped or padded to n/2 + 1).
irfft_p = primitive("irfft", _irfft_kernel)
defeffect(irfft_p, "fresh")
takes_complex(irfft_p)
defvjp(rfft_p, _rfft_vjp)
defjvp(rfft_p, lambda x_dot, ans, x, n: innermost.process(rfft_p, x_dot, n=n))
defvjp(irfft_p, _irfft_vjp)
defjvp(irfft_p, lambda c_dot, ans, c, n: innermost.process(irfft_p, c_dot, n=n))
defbatch(rfft_p, leading_axes_rule(rfft_p))
defbatch(irfft_p, leading_axes_rule(irfft_p))


def _signal(x, where, kind, ndim=1):
    x = as_tensor(x, "input", where)
    if x.dtype is None or x.dtype.kind not in kind or x.ndim < ndim:
        accepted = {"c": "a complex tensor", "f": "a real float tensor",
                    "fc": "a float or complex tensor"}[kind]
        validate.fail(TypeError if x.ndim >= ndim else ValueError, where, "input",
                      f"{accepted} of at least {ndim} axes", x,
                      "tg.cast an integer signal to tg.float32 or tg.float64 first."
                      if x.dtype is not None and x.dtype.kind in "biu" else "")
    if x.shape is None or x.shape[-1] is None:
        raise ValueError(f"{where}: the innermost size of `input` must be known (the "
                         f"transform's length), but it is not; give the placeholder a shape.")
    return x


def _length(fft_length, default, where):
    """TensorFlow's ``fft_length``: None (the default) or one positive int (a list of one)."""
    if fft_length is None:
        return default
    if isinstance(fft_length, (list, tuple)) and len(fft_length) == 1:
        fft_length = fft_length[0]
    return validate.integer(fft_length, "fft_length", where, minimum=1)


def fft(input):
    """The DFT over the innermost axis (``tf.signal.fft``); a real input becomes complex.
    Gradient: ``n * ifft(ct)``."""
    x = _signal(input, "tg.signal.fft", "fc")
    return innermost.process(fft_p, x if x.dtype.kind == "c" else cast(x, _complex_dtype(x.dtype)))


def ifft(input):
    """The inverse DFT over the innermost axis (``tf.signal.ifft``). Gradient: ``fft(ct) / n``."""
    x = _signal(input, "tg.signal.ifft", "fc")
    return innermost.process(ifft_p, x if x.dtype.kind == "c" else cast(x, _complex_dtype(x.dtype)))


def rfft(input, fft_length=None):
    """The DFT of the real ``input`` over its innermost axis, cropped or zero-padded to
    ``fft_length`` (default: its size): the ``fft_length // 2 + 1`` entries that are not
    conjugates of others (``tf.signal.rfft``)."""
    x = _signal(input, "tg.signal.rfft", "f")
    return innermost.process(rfft_p, x, n=_length(fft_length, x.shape[-1], "tg.signal.rfft"))


def irfft(input, fft_length=None):
    """The real signal of length ``fft_length`` (default ``2 * (size - 1)``) whose
    ``rfft`` is ``input`` (``tf.signal.irfft``; the imaginary parts of the entries that
    must be real are ignored)."""
    c = _signal(input, "tg.signal.irfft", "c")
    n = _length(fft_length, max(2 * (c.shape[-1] - 1), 1), "tg.signal.irfft")
    return innermost.process(irfft_p, c, n=n)


def _lengths(fft_length, defaults, where):
    """TensorFlow's ``fft_length`` of a 2-D transform: None or two positive ints."""
    if fft_length is None:
        return defaults
    if not isinstance(fft_length, (list, tuple)) or len(fft_length) != 2:
        validate.fail(ValueError, where, "fft_length", "None or two positive ints (a "
                      "length per transformed axis)", fft_length)
    return tuple(validate.integer(n, "fft_length", where, minimum=1) for n in fft_length)


def _inner_two(t):
    return swapaxes(t, -1, -2)


def fft2d(input):
    """The 2-D DFT over the two innermost axes (``tf.signal.fft2d``): an ``fft`` of each
    row, then of each column. Gradient: ``n1 n2 * ifft2d(ct)``."""
    x = _signal(input, "tg.signal.fft2d", "fc", ndim=2)
    return _inner_two(fft(_inner_two(fft(x))))


def ifft2d(input):
    """The inverse 2-D DFT over the two innermost axes (``tf.signal.ifft2d``)."""
    x = _signal(input, "tg.signal.ifft2d", "fc", ndim=2)
    return _inner_two(ifft(_inner_two(ifft(x))))


def rfft2d(input, fft_length=None):
    """The 2-D DFT of the real ``input`` over its two innermost axes, cropped or padded to
    ``fft_length`` ``[n1, n2]``, keeping ``n2 // 2 + 1`` columns (``tf.signal.rfft2d``)."""
    x = _signal(input, "tg.signal.rfft2d", "f", ndim=2)
    n1, n2 = _lengths(fft_length, tuple(x.shape[-2:]), "tg.signal.rfft2d")
    return _inner_two(fft(_fit(_inner_two(rfft(x, n2)), n1)))


def irfft2d(input, fft_length=None):
    """The real 2-D signal of shape ``fft_length`` (default: ``[m1, 2 (m2 - 1)]``) whose
    ``rfft2d`` is ``input`` (``tf.signal.irfft2d``)."""
    c = _signal(input, "tg.signal.irfft2d", "c", ndim=2)
    m1, m2 = c.shape[-2:]
    n1, n2 = _lengths(fft_length, (m1, max(2 * (m2 - 1), 1)), "tg.signal.irfft2d")
    return irfft(_inner_two(ifft(_fit(_inner_two(c), n1))), n2)
