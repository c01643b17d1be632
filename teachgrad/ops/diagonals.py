"""Diagonals: reading them (diagonal, trace) and the transpose that writes one back.

``diagonal`` picks the entries x[..., i, i + offset] (of two chosen axes) into a last
axis. Its VJP writes the cotangent back onto that diagonal of a zero tensor:
``undiagonal``, its transpose, whose own VJP is ``diagonal`` again.
"""
from .. import backend
from .core import bind, defeffect, defjvp, defvjp, primitive
from .grad_util import as_tensor
from .reduction import sum
from .shape import _axis


def _diagonal_axes(x, axis1, axis2, where):
    if x.ndim < 2:
        raise ValueError(f"{where} needs a tensor of rank 2 or more, got shape {x.shape}.")
    axis1, axis2 = _axis(axis1, x.ndim), _axis(axis2, x.ndim)
    if axis1 == axis2:
        raise ValueError(f"{where}: axis1 and axis2 are the same axis ({axis1}).")
    return axis1, axis2


# diagonal(x)[..., i] = x[..., i, i + offset] over axes (axis1, axis2), numpy's order:
# the other axes first, the diagonal last.  VJP: the cotangent written back on it.
diagonal_p = primitive("diagonal", lambda x, offset, axis1, axis2: backend.xp.diagonal(
    x, offset, axis1, axis2))
defeffect(diagonal_p, "view")
def diagonal(a, offset=0, axis1=0, axis2=1):
    r"""$\mathrm{out}_{\dots i} = x_{i,\, i + \mathrm{offset}}$ over ``axis1``, ``axis2``.
    VJP: the cotangent placed on that diagonal of zeros."""
    x = as_tensor(a)
    axis1, axis2 = _diagonal_axes(x, axis1, axis2, "diagonal")
    return bind(diagonal_p, x, offset=int(offset), axis1=axis1, axis2=axis2)
defvjp(diagonal_p, lambda ct, ans, x, offset, axis1, axis2:
       undiagonal(ct, x, offset, axis1, axis2))
defjvp(diagonal_p, lambda x_dot, ans, x, offset, axis1, axis2:
       diagonal(x_dot, offset, axis1, axis2))


def _undiagonal_kernel(g, x, offset, axis1, axis2):
    xp = backend.xp
    out = xp.zeros(x.shape, dtype=g.dtype)
    view = xp.moveaxis(out, (axis1, axis2), (-2, -1))   # writes go through to out
    steps = xp.arange(g.shape[-1])
    view[..., steps + max(-offset, 0), steps + max(offset, 0)] = g
    return out

# undiagonal(g, x): zeros of x's shape with g on the diagonal that diagonal(x) reads.
# Only x's shape is used. It is linear in g, and diagonal is its transpose.
undiagonal_p = primitive("undiagonal", _undiagonal_kernel)
defeffect(undiagonal_p, "fresh", shape_only_inputs=(1,))
def undiagonal(g, x, offset=0, axis1=0, axis2=1):
    """Zeros shaped like ``x`` with ``g`` written on the diagonal ``diagonal(x, offset,
    axis1, axis2)`` reads: the transpose of ``diagonal``."""
    x = as_tensor(x)
    axis1, axis2 = _diagonal_axes(x, axis1, axis2, "undiagonal")
    return bind(undiagonal_p, g, x, offset=int(offset), axis1=axis1, axis2=axis2)
defvjp(undiagonal_p, lambda ct, ans, g, x, offset, axis1, axis2:
       diagonal(ct, offset, axis1, axis2), None)
defjvp(undiagonal_p, lambda g_dot, ans, g, x, offset, axis1, axis2:
       undiagonal(g_dot, x, offset, axis1, axis2), None)
undiagonal_p.shape_rule = lambda g, x, offset, axis1, axis2: [(x.shape, g.dtype)]


def trace(a, offset=0, axis1=0, axis2=1):
    r"""$\sum_i x_{i,\, i + \mathrm{offset}}$ over ``axis1``, ``axis2``: the sum of
    ``diagonal``.  $\partial / \partial x$ = ones on that diagonal."""
    return sum(diagonal(a, offset, axis1, axis2), axis=-1)
