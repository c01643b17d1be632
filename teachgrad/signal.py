r"""``tg.signal``: TensorFlow's FFTs, differentiable::

    import teachgrad as tg
    x = tg.Variable([1.0, 2.0, 0.0, -1.0])
    with tg.GradientTape() as tape:
        power = tg.sum(tg.abs(tg.signal.rfft(x)) ** 2)
    tape.gradient(power, x)

Each transform acts on the innermost axis (``fft``, ``ifft``, ``rfft``, ``irfft``) or the
two innermost (``fft2d``, ``ifft2d``, ``rfft2d``, ``irfft2d``); ``rfft`` and ``irfft``
take TensorFlow's ``fft_length``. The ops and their gradients (another FFT) are
``teachgrad/ops/signal/fft.py``.
"""
from .ops.core.naming import takes_name as _takes_name, unnamed_ops as _unnamed_ops
from .ops.signal.fft import fft, fft2d, ifft, ifft2d, irfft, irfft2d, rfft, rfft2d

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2d", "ifft2d", "rfft2d", "irfft2d"]

# Every function above takes name= too, as TensorFlow's do.
for _key in _unnamed_ops(globals()):
    globals()[_key] = _takes_name(globals()[_key], prefix="tg.signal.")
del _key
