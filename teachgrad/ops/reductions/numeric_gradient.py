r"""numpy's ``gradient``: derivatives of sampled values by finite differences.

Along each axis, interior samples take the second-order central difference
$\frac{f_{i+1} - f_{i-1}}{2h}$ (for uneven spacing, its weighted form) and the two
ends a one-sided difference of order ``edge_order``. Every output is a sum of
slices of ``f`` times constant weights, made of ``getitem``, ``multiply`` and
``concat``: linear in ``f``, so its gradient is the same weights, transposed. The
spacings are constants (not differentiated), as numpy's.
"""
from ... import backend, validate
from ...tensor import Tensor
from ..core.grad_util import as_tensor
from ..elementwise.casts import cast
from ..shape.concat_split import concat
from ..shape.rearrange import axes_tuple
from ..shape.reshape import reshape

WHERE = "tg.gradient"


def _spacings(varargs, x, axes):
    """One spacing per axis: a number $h$, or the sample coordinates (1-D, one per entry
    along that axis) as an array."""
    if len(varargs) == 0:
        return [1.0] * len(axes)
    if len(varargs) == 1 and _is_number(varargs[0]):
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        validate.fail(TypeError, WHERE, "varargs", f"no spacing, one for every axis, or one "
                      f"for each of the {len(axes)} axes differentiated", varargs)
    out = []
    for spacing, axis in zip(varargs, axes):
        if _is_number(spacing):
            out.append(spacing)
            continue
        coords = validate.tensor_like(spacing, "varargs", WHERE)
        if coords.ndim != 1 or coords.shape[0] != x.shape[axis]:
            validate.fail(ValueError, WHERE, "varargs", f"coordinates with one entry per "
                          f"sample along axis {axis} ({x.shape[axis]})", spacing)
        out.append(coords)
    return out


def _is_number(value):
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) or (
        not isinstance(value, Tensor) and getattr(value, "ndim", None) == 0)


def _steps(spacing):
    """``(h, None)`` for even steps $h$, or ``(None, dx)`` with the uneven steps between
    coordinates (numpy checks coordinates for even steps, and uses $h$ then)."""
    if _is_number(spacing):
        return spacing, None
    xp = backend.xp
    dx = xp.diff(spacing.astype("float64") if spacing.dtype.kind in "iub" else spacing)
    if bool((dx == dx[0]).all()):
        return float(dx[0]), None
    return None, dx


def _second_order_ends(h, dx):
    """numpy's weights of $f_0, f_1, f_2$ for the first entry and of $f_{n-3}, f_{n-2},
    f_{n-1}$ for the last, with ``edge_order=2``."""
    if h is not None:
        return (-1.5 / h, 2. / h, -0.5 / h), (0.5 / h, -2. / h, 1.5 / h)
    d1, d2 = float(dx[0]), float(dx[1])
    first = (-(2. * d1 + d2) / (d1 * (d1 + d2)), (d1 + d2) / (d1 * d2),
             -d1 / (d2 * (d1 + d2)))
    d1, d2 = float(dx[-2]), float(dx[-1])
    last = (d2 / (d1 * (d1 + d2)), -(d2 + d1) / (d1 * d2), (2. * d2 + d1) / (d2 * (d1 + d2)))
    return first, last


def _along(x, axis, spacing, edge_order):
    """The derivative of ``x`` along ``axis``: interior samples, then the two ends."""
    n = x.shape[axis]
    if n is None:
        raise ValueError(f"{WHERE}: the size of axis {axis} of `f` is unknown; gradient "
                         f"needs it (give the placeholder a known size there).")
    if n < edge_order + 1:
        validate.fail(ValueError, WHERE, "f", f"at least edge_order + 1 = {edge_order + 1} "
                      f"samples along axis {axis} to take a numerical gradient", x)

    def part(start, stop):
        return x[(slice(None),) * axis + (slice(start, stop),)]
    h, dx = _steps(spacing)
    if h is not None:   # numpy's (f[2:] - f[:-2]) / (2 h)
        middle = (part(2, None) - part(None, -2)) / (2. * h)
        dx_0 = dx_n = h
    else:               # a f[:-2] + b f[1:-1] + c f[2:], weights from the uneven steps
        dx1, dx2 = dx[:-1], dx[1:]
        weights = (-dx2 / (dx1 * (dx1 + dx2)), (dx2 - dx1) / (dx1 * dx2),
                   dx1 / (dx2 * (dx1 + dx2)))
        shape = (-1,) + (1,) * (x.ndim - axis - 1)
        a, b, c = (reshape(cast(Tensor(w), x.dtype), shape) for w in weights)
        middle = a * part(None, -2) + b * part(1, -1) + c * part(2, None)
        dx_0, dx_n = float(dx[0]), float(dx[-1])
    if edge_order == 1:   # (f[1] - f[0]) / dx_0 and (f[-1] - f[-2]) / dx_n
        start = (part(1, 2) - part(0, 1)) / dx_0
        end = (part(n - 1, n) - part(n - 2, n - 1)) / dx_n
    else:
        (a, b, c), (p, q, r) = _second_order_ends(h, dx)
        start = a * part(0, 1) + b * part(1, 2) + c * part(2, 3)
        end = p * part(n - 3, n - 2) + q * part(n - 2, n - 1) + r * part(n - 1, n)
    return concat([start, middle, end], axis=axis)


def gradient(f, *varargs, axis=None, edge_order=1):
    r"""The derivative of the samples ``f`` along each axis by finite differences
    (numpy's ``gradient``): $\frac{f_{i+1} - f_{i-1}}{2h}$ inside, one-sided
    differences of order ``edge_order`` (1 or 2) at the ends.

    Args:
      f: the samples, a tensor (integers become float64).
      varargs: the spacing: none (1), one number for every axis, or one per axis
        differentiated, each a number $h$ or the samples' coordinates (1-D).
      axis: the axes to differentiate along (None: all).
      edge_order: 1 or 2, the order of the differences at the ends.

    Returns:
      The derivative along the axis, or a tuple of them, one per axis. Linear in ``f``
      (its gradient flows back through the same weights); the spacings are constants.
    """
    x = as_tensor(f, "f", WHERE)
    if x.dtype.kind != "f":
        x = cast(x, "float64")
    if x.ndim == 0:
        validate.fail(ValueError, WHERE, "f", "a tensor with at least one axis", f)
    axes = axes_tuple(axis, x.ndim, WHERE)
    if type(edge_order) is not int or edge_order not in (1, 2):
        validate.fail(ValueError, WHERE, "edge_order", "1 or 2", edge_order)
    spacings = _spacings(varargs, x, axes)
    out = tuple(_along(x, a, h, edge_order) for a, h in zip(axes, spacings))
    return out[0] if len(out) == 1 else out
