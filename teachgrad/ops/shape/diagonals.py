"""Diagonals and triangles: diagonal, trace and diag read or build a diagonal, tril and
triu keep a triangle, and undiagonal is the transpose that writes a diagonal back.

``diagonal`` picks the entries x[..., i, i + offset] (of two chosen axes) into a last
axis. Its VJP writes the cotangent back onto that diagonal of a zero tensor:
``undiagonal``, its transpose, whose own VJP is ``diagonal`` again.
"""
from ... import backend, validate
from ..core.apply import innermost, leading_axes_rule
from ..core.declare import defbatch, defeffect, defjvp, defshape, defvjp, primitive, takes_complex
from ..core.grad_util import as_tensor, check_entries
from ..elementwise.casts import zeros
from ..reductions.sums import sum
from .reshape import broadcast_to, expand_dims, repeat_like, unbroadcast


def _diagonal_axes(x, axis1, axis2, where, name="a"):
    if x.ndim < 2:
        validate.fail(ValueError, where, name, "a tensor of rank 2 or more", x)
    axis1 = validate.one_axis(axis1, x.ndim, "axis1", where) % x.ndim
    axis2 = validate.one_axis(axis2, x.ndim, "axis2", where) % x.ndim
    if axis1 == axis2:
        raise ValueError(f"{where}: `axis1` and `axis2` are the same axis ({axis1}).")
    return axis1, axis2


def _offset(value, where, name="offset"):
    """A diagonal's offset: an int that fits in 32 bits (a larger one selects nothing,
    and the kernels cannot take it)."""
    return validate.integer(value, name, where, minimum=-2 ** 31, maximum=2 ** 31 - 1)


# diagonal(x)[..., i] = x[..., i, i + offset] over axes (axis1, axis2), numpy's order:
# the other axes first, the diagonal last.  VJP: the cotangent written back on it.
diagonal_p = primitive("diagonal", lambda x, offset, axis1, axis2: backend.xp.diagonal(
    x, offset, axis1, axis2))
defeffect(diagonal_p, "view")
takes_complex(diagonal_p)
def diagonal(a, offset=0, axis1=0, axis2=1):
    r"""$\mathrm{out}_{\dots i} = x_{i,\, i + \mathrm{offset}}$ over ``axis1``, ``axis2``.
    VJP: the cotangent placed on that diagonal of zeros."""
    x = as_tensor(a, "a", "tg.diagonal")
    axis1, axis2 = _diagonal_axes(x, axis1, axis2, "tg.diagonal")
    offset = _offset(offset, "tg.diagonal")
    return innermost.process(diagonal_p, x, offset=offset, axis1=axis1, axis2=axis2)
defvjp(diagonal_p, lambda ct, ans, x, offset, axis1, axis2:
       undiagonal(ct, x, offset, axis1, axis2))
defjvp(diagonal_p, lambda x_dot, ans, x, offset, axis1, axis2:
       diagonal(x_dot, offset, axis1, axis2))
defbatch(diagonal_p, lambda values, batched, offset, axis1, axis2: (   # past the batch axis
    innermost.process(diagonal_p, values[0], offset=offset, axis1=axis1 + 1, axis2=axis2 + 1), True))


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
takes_complex(undiagonal_p)
def undiagonal(g, x, offset=0, axis1=0, axis2=1):
    """Zeros shaped like ``x`` with ``g`` written on the diagonal ``diagonal(x, offset,
    axis1, axis2)`` reads: the transpose of ``diagonal``."""
    x = as_tensor(x, "x", "tg.ops.undiagonal")
    axis1, axis2 = _diagonal_axes(x, axis1, axis2, "tg.ops.undiagonal", "x")
    return innermost.process(undiagonal_p, g, x, offset=int(offset), axis1=axis1, axis2=axis2)
defvjp(undiagonal_p, lambda ct, ans, g, x, offset, axis1, axis2:
       diagonal(ct, offset, axis1, axis2), None)
defjvp(undiagonal_p, lambda g_dot, ans, g, x, offset, axis1, axis2:
       undiagonal(g_dot, x, offset, axis1, axis2), None)


def _undiagonal_batch(values, batched, offset, axis1, axis2):
    """The axes past the batch axis, on zeros of the batch's shape (a shared ``g``
    broadcasts along it as it is written)."""
    (g, x), (g_batched, x_batched) = values, batched
    x = x if x_batched else repeat_like(x, g)
    return innermost.process(undiagonal_p, g, x, offset=offset, axis1=axis1 + 1, axis2=axis2 + 1), True
defbatch(undiagonal_p, _undiagonal_batch)
defshape(undiagonal_p, lambda g, x, offset, axis1, axis2: [(x.shape, g.dtype)])


def trace(a, offset=0, axis1=0, axis2=1):
    r"""$\sum_i x_{i,\, i + \mathrm{offset}}$ over ``axis1``, ``axis2``: the sum of
    ``diagonal``.  $\partial / \partial x$ = ones on that diagonal."""
    return sum(diagonal(a, offset, axis1, axis2), axis=-1)


# diag(v, k): a vector v becomes the k-th diagonal of a square matrix of zeros;
# the VJP reads that diagonal of ct back. (A matrix's diag is its diagonal.)
diag_p = primitive("diag", lambda v, k: backend.xp.diag(v, k))
defeffect(diag_p, "fresh")
takes_complex(diag_p)
def diag(v, k=0):
    r"""For a 1-D ``v``: the matrix with ``v`` on its k-th diagonal, zeros elsewhere.
    For a 2-D ``v``: its k-th diagonal (``diagonal``).  VJP of the first: diagonal(ct, k)."""
    x = as_tensor(v, "v", "tg.diag")
    k = _offset(k, "tg.diag", "k")
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        validate.fail(ValueError, "tg.diag", "v", "a 1-D or 2-D tensor", x)
    if x.shape[0] is not None:   # the matrix is (n + |k|) x (n + |k|)
        check_entries((x.shape[0] + abs(k)) ** 2, "k", k, "tg.diag")
    return innermost.process(diag_p, x, k=k)
defvjp(diag_p, lambda ct, ans, v, k: diagonal(ct, k))
defjvp(diag_p, lambda v_dot, ans, v, k: diag(v_dot, k))


def _diag_batch(values, batched, k):
    """A batch of vectors, each written on the k-th diagonal of its own matrix."""
    v = values[0]
    size = v.shape[1] + abs(k) if v.shape[1] is not None else None
    if size is None:
        return NotImplemented
    shape_of = repeat_like(zeros((size, size), dtype=v.dtype), v)   # only its shape is read
    return innermost.process(undiagonal_p, v, shape_of, offset=k, axis1=1, axis2=2), True
defbatch(diag_p, _diag_batch)


# tril / triu: the entries on and below (above) the k-th diagonal of the last two axes,
# zeros elsewhere. Each is its own transpose: the VJP keeps the same entries of ct.
# (A 1-D input is broadcast to a square matrix first, as numpy does: unbroadcast sums back.)
def _triangle(name, doc):
    """``(op, function)`` for numpy's ``tril`` or ``triu``, whose VJP is itself."""
    op = primitive(name, lambda x, k: getattr(backend.xp, name)(x, k))
    defeffect(op, "fresh")
    takes_complex(op)
    def keep(m, k=0):
        return innermost.process(op, as_tensor(m, "m", f"tg.{name}"), k=_offset(k, f"tg.{name}", "k"))
    keep.__name__ = keep.__qualname__ = name
    keep.__doc__ = doc
    defvjp(op, lambda ct, ans, x, k: unbroadcast(keep(ct, k), x))
    defjvp(op, lambda x_dot, ans, x, k: keep(x_dot, k))
    defbatch(op, _triangle_batch(op))
    return op, keep


def _triangle_batch(op):
    """tril/triu keep a triangle of the last two axes, over any leading ones; a batch of
    vectors is first made the batch of square matrices numpy makes of each."""
    matrices = leading_axes_rule(op)
    def rule(values, batched, k):
        x = values[0]
        if x.ndim == 2:
            if None in x.shape:
                return NotImplemented
            x = broadcast_to(expand_dims(x, 1), (x.shape[0], x.shape[1], x.shape[1]))
        return matrices([x], batched, k=k)
    return rule

tril_p, tril = _triangle("tril", r"""$\mathrm{out}_{ij} = x_{ij}$ where $j \le i + k$, else 0
    (last two axes).  VJP: tril(ct, k).""")
triu_p, triu = _triangle("triu", r"""$\mathrm{out}_{ij} = x_{ij}$ where $j \ge i + k$, else 0
    (last two axes).  VJP: triu(ct, k).""")
