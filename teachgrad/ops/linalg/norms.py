"""Vector and matrix norms, numpy's ``linalg.norm``, composed of reductions (and of
``svdvals`` for the spectral and nuclear norms), so each gradient is theirs:

* ord 2 (or None): sqrt(sum x^2), gradient x / ||x|| (undefined at x = 0);
* ord 1: sum |x|, gradient sign(x); inf / -inf: max / min |x|, a one-hot gradient;
* ord p: (sum |x|^p)^(1/p); ord 0: how many entries are nonzero (no gradient);
* matrices: 'fro' (sqrt of the sum of squares), 'nuc' (sum of singular values,
  gradient U V^T), 2 / -2 (largest / smallest singular value, gradient u_1 v_1^T),
  1 / -1 (max / min column sum of |x|), inf / -inf (max / min row sum of |x|).
"""
from ... import validate
from ..core.apply import innermost
from ..core.grad_util import as_tensor
from ..elementwise.arithmetic import not_equal, power
from ..elementwise.casts import cast
from ..elementwise.math import abs, sqrt, square
from ..reductions.sums import max, min, sum
from ..shape.rearrange import moveaxis
from ..shape.reshape import expand_dims, reshape
from .singular_values import svdvals_p

_WHERE = "tg.linalg.norm"
_INF = float("inf")


def _ord(value):
    if value is None or isinstance(value, str) and value in ("fro", "nuc"):
        return value
    if isinstance(value, str):
        validate.fail(ValueError, _WHERE, "ord", "None, 'fro', 'nuc' or a number", value)
    try:
        if isinstance(value, bool) or getattr(value, "ndim", 0):
            raise TypeError
        value = float(value)
    except (TypeError, ValueError):
        validate.fail(TypeError, _WHERE, "ord", "None, 'fro', 'nuc' or a number", value)
    if value != value:
        validate.fail(ValueError, _WHERE, "ord", "a number that is not NaN", value)
    return value


def _axes(axis, ndim):
    axes = (axis,) if not isinstance(axis, (list, tuple)) else tuple(axis)
    axes = tuple(validate.one_axis(a, ndim, "axis", _WHERE) % (ndim or 1) for a in axes)
    if len(axes) not in (1, 2) or len(set(axes)) != len(axes):
        validate.fail(ValueError, _WHERE, "axis", "one axis (a vector norm) or two distinct "
                      "axes (a matrix norm)", axis)
    return axes


def _squared_magnitude(x):
    """x^2, or abs(x)^2 for complex x (whose norms are those of the magnitudes)."""
    return square(abs(x)) if x.dtype.kind == "c" else square(x)


def _vector_norm(x, ord, axis, keepdims):
    if ord is None or ord == 2:
        return sqrt(sum(_squared_magnitude(x), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        validate.fail(ValueError, _WHERE, "ord", "a number or None for a vector norm", ord)
    if ord == _INF:
        return max(abs(x), axis=axis, keepdims=keepdims)
    if ord == -_INF:
        return min(abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:   # a count: piecewise constant, no gradient
        return sum(cast(not_equal(x, 0), x.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return sum(abs(x), axis=axis, keepdims=keepdims)
    return power(sum(power(abs(x), ord), axis=axis, keepdims=keepdims), 1.0 / ord)


def _matrix_norm(x, ord, axes, keepdims):
    row, col = axes
    if ord is None or ord == "fro":
        result = sqrt(sum(_squared_magnitude(x), axis=axes))
    elif ord in ("nuc", 2, -2):
        s = innermost.process(svdvals_p, moveaxis(x, (row, col), (-2, -1)))
        result = sum(s, axis=-1) if ord == "nuc" else max(s, axis=-1) if ord == 2 \
            else min(s, axis=-1)
    elif ord in (1, -1, _INF, -_INF):
        summed, other = (row, col) if ord in (1, -1) else (col, row)
        pick = max if ord > 0 else min
        result = pick(sum(abs(x), axis=summed), axis=other - (other > summed))
    else:
        validate.fail(ValueError, _WHERE, "ord", "None, 'fro', 'nuc', 1, -1, 2, -2, inf or "
                      "-inf for a matrix norm", ord)
    if keepdims:
        for a in sorted(axes):
            result = expand_dims(result, a)
    return result


def norm(x, ord=None, axis=None, keepdims=False):
    r"""numpy's ``linalg.norm``: a vector norm over one axis ($\|x\|_p = (\sum \lvert x_i
    \rvert^p)^{1/p}$, ord None = 2, inf = the largest absolute value, 0 = count of
    nonzeros), or a matrix norm over two ('fro', 'nuc' = $\sum \sigma_i$, 2 = $\sigma_{max}$,
    1 = the largest column sum of absolute values, inf = the largest row sum, and their
    negatives for the minima). ``axis=None``: the vector or
    matrix norm of a 1-D or 2-D ``x``; with ``ord=None``, the 2-norm of all entries.

    Composed of sums, maxima and singular values, whose gradients give its own:
    e.g. $\partial \|x\|_2 / \partial x = x / \|x\|_2$ and
    $\partial \|A\|_* / \partial A = U V^T$."""
    x = as_tensor(x, "x", _WHERE)
    ord = _ord(ord)
    keepdims = validate.boolean(keepdims, "keepdims", _WHERE)
    if x.shape is None:
        raise ValueError(f"{_WHERE}: `x` must have a known rank.")
    if axis is None:
        if ord is None:
            result = sqrt(sum(_squared_magnitude(reshape(x, (-1,)))))
            return reshape(result, (1,) * x.ndim) if keepdims else result
        if x.ndim not in (1, 2):
            validate.fail(ValueError, _WHERE, "x", "a 1-D or 2-D tensor when `ord` is "
                          "given without `axis`", x)
        axis = tuple(range(x.ndim))
    axes = _axes(axis, x.ndim)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    return _matrix_norm(x, ord, axes, keepdims)
