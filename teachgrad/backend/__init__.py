"""Which array library runs the kernels.

Everything above this module asks it for the array namespace ``xp`` instead of
importing numpy for computation, so the same op code runs on numpy (the
default) or, on a machine with a GPU, on CuPy.

    >>> from teachgrad import backend
    >>> backend.xp.tanh(backend.xp.zeros(3))   # numpy by default
    array([0., 0., 0.])
"""
import contextlib
import os

import numpy

from . import host_memory
from .host_memory import keep_freed_memory

if os.environ.get("TEACHGRAD_KEEP_FREED_MEMORY") == "1":   # opted in before the import
    keep_freed_memory()

#: The array namespace that every kernel uses. Read it as ``backend.xp`` at call
#: time (never ``from teachgrad.backend import xp``) so that ``set_backend``
#: takes effect everywhere.
xp = numpy
_name = "numpy"


def get_backend() -> str:
    """The name of the backend in use: ``"numpy"`` or ``"cupy"``."""
    return _name


def set_backend(name: str) -> None:
    """Choose the array library for tensors created from now on.

    Args:
      name: ``"numpy"`` (CPU, always available) or ``"cupy"`` (needs an NVIDIA
        GPU and the ``cupy`` package: ``pip install "teachgrad[gpu]"``).
    """
    global xp, _name
    if not isinstance(name, str):
        raise TypeError(f"tg.set_backend: `name` must be 'numpy' or 'cupy', but got "
                        f"{name!r} (a {type(name).__name__}).")
    if name == "numpy":
        xp, _name = numpy, "numpy"
        return
    if name == "cupy":
        try:
            import cupy
        except ImportError as error:
            raise RuntimeError(
                "The 'cupy' backend needs CuPy, which is not installed. "
                "Install it with: pip install 'teachgrad[gpu]' "
                "(on a machine with an NVIDIA GPU and CUDA 12)."
            ) from error
        try:
            cupy.cuda.runtime.getDeviceCount()
        except Exception as error:  # CuPy raises its own CUDA error types
            raise RuntimeError(
                f"The 'cupy' backend needs an NVIDIA GPU, but CUDA found none ({error})."
            ) from error
        xp, _name = cupy, "cupy"
        return
    raise ValueError(f"tg.set_backend: `name` must be a backend, but got the unknown backend "
                     f"{name!r}: choose 'numpy' or 'cupy'.")


@contextlib.contextmanager
def using(name: str):
    """Use backend ``name`` inside a ``with`` block, then go back to the one before.

        with tg.backend.using("cupy"):
            x = tg.constant([1.0, 2.0])    # on the GPU
        tg.get_backend()                   # "numpy" again

    Tensors keep the arrays they were made with: leaving the block moves none of
    them (``x.numpy()`` copies one to the host). Raises like ``set_backend``
    when ``name`` cannot be used, before the block runs.
    """
    before = _name
    set_backend(name)
    try:
        yield name
    finally:
        set_backend(before)


def to_numpy(array):
    """A host (numpy) copy of an array from any backend.

    It looks at the array, not at the backend in use now, so a tensor made on the
    GPU still converts after ``set_backend("numpy")`` (or a ``using`` block) ends.
    """
    if not isinstance(array, numpy.ndarray) and type(array).__module__.startswith("cupy"):
        return array.get()
    return numpy.asarray(array)


def scalar(value, dtype):
    """The Python number ``value`` as a 0-d value of ``dtype`` for the backend in use.

    With numpy it is a numpy scalar, which is also what numpy returns for 0-d results:
    arithmetic on numpy scalars takes a fast path (``x * y`` in about 0.04 µs) that 0-d
    arrays and ufunc calls do not (about 0.6 µs). Other backends get a 0-d array.
    """
    if xp is numpy:
        return dtype.type(value)
    return xp.asarray(value, dtype)


def is_numpy_scalar(value):
    """Is ``value`` a numpy scalar (``np.float64(2.0)``, what numpy returns for a 0-d
    result)? Unlike a 0-d array it is immutable, so a kernel may return it as it is."""
    return isinstance(value, numpy.generic)


def where_or_zero(mask, values):
    """``where(mask, values, 0)`` for float ``values``, with no branch per entry: the bits
    of ``values`` and-ed with all ones (``mask`` True) or all zeros (+0.0), so a NaN or an
    infinity where ``mask`` is False gives 0 as ``where`` does. ``where`` branches, and a
    random mask (a relu's signs, a pool's winners) makes it about four times slower
    (66 against 17 µs on 16,384 float64 entries)."""
    bits = _SAME_SIZE_INT.get(values.dtype.itemsize) if values.dtype.kind == "f" else None
    if bits is None:
        return xp.where(mask, values, values.dtype.type(0))
    return (values.view(bits) & -mask.astype(bits)).view(values.dtype)


_SAME_SIZE_INT = {2: "int16", 4: "int32", 8: "int64"}


def linalg_errors():
    """A block in which a singular or non-positive-definite matrix raises numpy's
    LinAlgError on every backend: numpy always raises; CuPy, to spare a device
    synchronisation, returns NaNs unless asked (``cupyx.errstate(linalg="raise")``)."""
    if _name != "cupy":
        return contextlib.nullcontext()
    import cupyx
    return cupyx.errstate(linalg="raise")
