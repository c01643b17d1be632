"""Identity-like ops, dtype casts, stop_gradient, and tensors of zeros and ones."""
from ... import backend, dtypes, validate
from ...tensor import constant
from ..core.apply import innermost, leading_axes_rule
from ..core.declare import (
    accepts,
    defbatch,
    defeffect,
    defjvp,
    defvjp,
    defvjp_all,
    not_differentiable,
    primitive,
    takes_complex,
)


def _cast_kernel(x, dtype):
    if x.dtype.kind == "c" and dtype.kind != "c":
        x = x.real   # TensorFlow's cast: a complex number becomes its real part
    return x.astype(dtype, copy=False)

# cast(x, dtype): same values, another dtype. The gradient is cast back (complex to real
# keeps the real part, whose cotangent is ct + 0i; real to complex, the reverse).
cast_p = primitive("cast", _cast_kernel)
defeffect(cast_p, "view")
takes_complex(cast_p)
def cast(x, dtype):
    """``x`` converted to ``dtype`` (``tg.float32``, ``"int64"``, ``tg.complex64``, ...).
    A complex ``x`` cast to a real dtype keeps its real part, as TensorFlow's cast does."""
    if dtype is None:
        validate.fail(TypeError, "tg.cast", "dtype", "a data type", dtype)
    return innermost.process(cast_p, x, dtype=validate.dtype(dtype, "dtype", "tg.cast"))
defvjp(cast_p, lambda ct, ans, x, dtype: cast(ct, x.dtype) if dtypes.is_differentiable(x.dtype)
       else None)
defjvp(cast_p, lambda x_dot, ans, x, dtype: cast(x_dot, dtype) if dtypes.is_differentiable(dtype)
       else None)
defbatch(cast_p, leading_axes_rule(cast_p))

# identity(x) = x.  Its gradient passes straight through.
identity_p = primitive("identity", lambda x: x)
defeffect(identity_p, "view")
takes_complex(identity_p)
def identity(x): return innermost.process(identity_p, x)
defvjp(identity_p, lambda ct, ans, x: ct)
defjvp(identity_p, lambda x_dot, ans, x: x_dot)
defbatch(identity_p, leading_axes_rule(identity_p))
accepts(identity_p, sparse=True)

# identity_n(x1, ..., xn): several tensors through one op; each cotangent passes through.
identity_n_p = primitive("identity_n", lambda *xs: xs, multiple_results=True)
defeffect(identity_n_p, "view")
takes_complex(identity_n_p)
def identity_n(*tensors):
    """Return the tensors unchanged, as one op (used to group outputs)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return list(innermost.process(identity_n_p, *tensors))
defvjp_all(identity_n_p, lambda cts, ans, *xs: list(cts))
defbatch(identity_n_p, leading_axes_rule(identity_n_p))
accepts(identity_n_p, sparse=True)

# stop_gradient(x) = x, but autodiff treats the result as a constant.
stop_gradient_p = not_differentiable(primitive("stop_gradient", lambda x: x))
defeffect(stop_gradient_p, "view")
takes_complex(stop_gradient_p)
def stop_gradient(x):
    """``x`` itself, seen by autodiff as a constant: no gradient flows through it."""
    return innermost.process(stop_gradient_p, x)
defbatch(stop_gradient_p, leading_axes_rule(stop_gradient_p))

# zeros_like / ones_like depend only on x's shape: zero derivative.
zeros_like_p = not_differentiable(primitive(
    "zeros_like", lambda x, dtype: backend.xp.zeros_like(x, dtype=dtype)))
defeffect(zeros_like_p, "fresh", shape_only_inputs=(0,))
takes_complex(zeros_like_p)
def zeros_like(x, dtype=None):
    return innermost.process(zeros_like_p, x, dtype=validate.dtype(dtype, "dtype", "tg.zeros_like"))
defbatch(zeros_like_p, leading_axes_rule(zeros_like_p))

ones_like_p = not_differentiable(primitive(
    "ones_like", lambda x, dtype: backend.xp.ones_like(x, dtype=dtype)))
defeffect(ones_like_p, "fresh", shape_only_inputs=(0,))
takes_complex(ones_like_p)
def ones_like(x, dtype=None):
    return innermost.process(ones_like_p, x, dtype=validate.dtype(dtype, "dtype", "tg.ones_like"))
defbatch(ones_like_p, leading_axes_rule(ones_like_p))


def _filled(fill, shape, dtype, where):
    shape = validate.shape(shape, "shape", where)
    dtype = validate.dtype(dtype, "dtype", where) or dtypes.float64
    try:
        return constant(fill(shape, dtype=dtype))
    except (ValueError, MemoryError) as error:   # numpy: "Maximum allowed dimension exceeded"
        validate.fail(ValueError, where, "shape", "a shape whose size fits in memory", shape,
                      f"({error})")


def zeros(shape, dtype=dtypes.float64):
    """A constant tensor of zeros (float64 unless ``dtype`` says otherwise)."""
    return _filled(backend.xp.zeros, shape, dtype, "tg.zeros")


def ones(shape, dtype=dtypes.float64):
    """A constant tensor of ones (float64 unless ``dtype`` says otherwise)."""
    return _filled(backend.xp.ones, shape, dtype, "tg.ones")
