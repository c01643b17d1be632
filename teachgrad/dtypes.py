"""Data types. They are numpy's dtypes, under short names.

Only floating-point tensors are differentiated: integers and booleans are
constants to autodiff (the gradient of anything with respect to an index is
not defined), exactly as TensorFlow treats them.
"""
import numpy as np

float32 = np.dtype("float32")
float64 = np.dtype("float64")
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
    """True for the dtypes that carry gradients (float16/32/64)."""
    return dtype.kind == "f"
