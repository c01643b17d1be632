r"""Data types. They are numpy's dtypes, under short names.

Floating-point and complex tensors are differentiated: integers and booleans are
constants to autodiff (the gradient of anything with respect to an index is not
defined), exactly as TensorFlow treats them.

Complex tensors follow TensorFlow's convention for what a gradient is. For a real
loss $L$ of $z = x + iy$, the gradient is

.. math:: \frac{\partial L}{\partial x} + i \frac{\partial L}{\partial y},

the direction of steepest ascent in the complex plane, so ``z -= lr * grad`` is
gradient descent, and the gradient of $\lvert z \rvert^2 = x^2 + y^2$ is
$2x + 2iy = 2z$. PyTorch agrees; JAX's ``grad`` gives the conjugate, $2\bar z$.
For a holomorphic $f$ with derivative $f'(z)$, a cotangent ``ct`` of $f(z)$ becomes
$\mathrm{ct} \cdot \overline{f'(z)}$, which is why the rules conjugate.

Promotion is numpy's: a complex tensor with a float tensor gives complex, float32 with
complex64 stays complex64, float64 with complex64 gives complex128.
"""
import numpy as np

float32 = np.dtype("float32")
float64 = np.dtype("float64")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
bool_ = np.dtype("bool")


def as_dtype(dtype):
    """Turn ``tg.float32``, ``"float32"``, ``np.float32`` or ``float`` into a numpy dtype."""
    if dtype is None:
        return None
    try:
        return np.dtype(dtype)
    except TypeError as error:
        raise TypeError(f"{dtype!r} is not a data type; use e.g. tg.float32 or 'float64'.") from error


def is_floating(dtype) -> bool:
    """True for the real floating-point dtypes (float16/32/64)."""
    return dtype.kind == "f"


def is_complex(dtype) -> bool:
    """True for complex64 and complex128."""
    return dtype.kind == "c"


def is_differentiable(dtype) -> bool:
    """True for the dtypes that carry gradients: the floats and the complex dtypes."""
    return dtype.kind in "fc"


def real_dtype(dtype):
    """The dtype of the real and imaginary parts of ``dtype`` (complex64 -> float32); a
    real dtype is its own."""
    return np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype
