"""numpy's products, each written with einsum, matmul or elementwise ops, so that their
gradients are those ops' gradients (one op, one place):

* ``tensordot(a, b, axes)``: sum over the paired axes, an einsum;
* ``dot``: numpy's rules (a scalar multiplies; 1-D and 2-D operands are ``matmul``;
  otherwise the last axis of ``a`` against the second-to-last of ``b``, a tensordot);
* ``inner`` (last axis against last axis), ``vdot`` (flattened), ``outer``;
* ``kron`` (an outer product of interleaved axes, reshaped) and ``cross``.
"""
import math

from ... import validate
from ..core.grad_util import as_tensor, broadcastable, known
from ..elementwise.arithmetic import multiply, subtract
from ..shape.concat_split import stack
from ..shape.rearrange import moveaxis
from ..shape.reshape import reshape, transpose
from .einsum import einsum_explicit
from .matmul import matmul

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _operands(a, b, where):
    a, b = as_tensor(a, "a", where), as_tensor(b, "b", where)
    for t, name in ((a, "a"), (b, "b")):
        if t.shape is None:
            raise ValueError(f"{where}: `{name}` must have a known rank (a placeholder with "
                             f"shape=None has none).")
    return a, b


def _axes_list(value, ndim, name, where):
    """One side of tensordot's ``axes`` (an int or a list of them) as axes in [0, ndim)."""
    axes = [value] if isinstance(value, int) and not isinstance(value, bool) else \
        validate.sequence(value, name, where)
    axes = [validate.one_axis(a, ndim, name, where) for a in axes]
    if axes and ndim == 0:
        validate.fail(ValueError, where, name, "no axes for a scalar", value)
    axes = [a % ndim for a in axes]
    if len(set(axes)) != len(axes):
        validate.fail(ValueError, where, name, "distinct axes", value)
    return axes


def _tensordot_axes(axes, a, b, where):
    """``axes`` (an int N, or a pair of axis lists) as two lists of axes."""
    if isinstance(axes, (list, tuple)):
        if len(axes) != 2:
            validate.fail(ValueError, where, "axes", "an integer or a pair (axes of a, axes "
                          "of b)", axes)
        axes_a = _axes_list(axes[0], a.ndim, "axes", where)
        axes_b = _axes_list(axes[1], b.ndim, "axes", where)
        if len(axes_a) != len(axes_b):
            validate.fail(ValueError, where, "axes", "two lists of the same length", axes)
        return axes_a, axes_b
    n = validate.integer(axes, "axes", where, minimum=0)
    if n > min(a.ndim, b.ndim):
        validate.fail(ValueError, where, "axes", f"at most the rank of a ({a.ndim}) and of b "
                      f"({b.ndim})", axes)
    return list(range(a.ndim - n, a.ndim)), list(range(n))


def tensordot(a, b, axes=2):
    r"""$\mathrm{out}_{IJ} = \sum_K a_{IK}\, b_{KJ}$, with $K$ the paired axes: ``axes=N``
    pairs the last N axes of ``a`` with the first N of ``b``; ``axes=(axes_a, axes_b)``
    names them. The free axes of ``a`` come first, then those of ``b``.

    Written as one einsum, so its VJP is einsum's: $\bar a = \bar{\mathrm{out}}\, b^T$
    over the free axes of ``b``, and likewise for ``b``.
    """
    a, b = _operands(a, b, "tg.tensordot")
    axes_a, axes_b = _tensordot_axes(axes, a, b, "tg.tensordot")
    for i, j in zip(axes_a, axes_b):
        if a.shape[i] is not None and b.shape[j] is not None and a.shape[i] != b.shape[j]:
            raise ValueError(f"tg.tensordot: `axes` pairs axis {i} of a (size {a.shape[i]}) "
                             f"with axis {j} of b (size {b.shape[j]}); paired sizes must match.")
    if a.ndim + b.ndim - len(axes_a) > len(_LETTERS):   # einsum has 52 letters
        return _tensordot_by_matmul(a, b, axes_a, axes_b)
    sa = _LETTERS[:a.ndim]
    sb = [None] * b.ndim
    for i, j in zip(axes_a, axes_b):
        sb[j] = sa[i]
    spare = iter(_LETTERS[a.ndim:])
    sb = "".join(c if c is not None else next(spare) for c in sb)
    out = "".join(c for i, c in enumerate(sa) if i not in axes_a) + \
        "".join(c for j, c in enumerate(sb) if j not in axes_b)
    return einsum_explicit(f"{sa},{sb}->{out}", a, b)


def _tensordot_by_matmul(a, b, axes_a, axes_b):
    """``tensordot`` as numpy computes it, for more axes than einsum has letters: the
    paired axes moved to the end of ``a`` and the front of ``b``, each operand reshaped to
    a matrix, one ``matmul``, and the free axes given back."""
    if not (known(a.shape) and known(b.shape)):
        raise ValueError(f"tg.tensordot: `a` and `b` have {a.ndim + b.ndim} axes in all, "
                         f"more than einsum has letters; their sizes must then be known.")
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [j for j in range(b.ndim) if j not in axes_b]
    sizes = [math.prod(a.shape[i] for i in axes) for axes in (free_a, axes_a)]
    left = reshape(transpose(a, free_a + list(axes_a)), tuple(sizes))
    right = reshape(transpose(b, list(axes_b) + free_b),
                    (sizes[1], math.prod(b.shape[j] for j in free_b)))
    return reshape(matmul(left, right), tuple(a.shape[i] for i in free_a)
                   + tuple(b.shape[j] for j in free_b))


def dot(a, b):
    r"""numpy's ``dot``: a scalar operand multiplies; 1-D and 2-D operands are the matrix
    (or inner) product, ``matmul``; otherwise $\mathrm{out}_{i\dots,k\dots m} = \sum_j
    a_{i\dots j}\, b_{k\dots j m}$ (last axis of ``a`` against the second-to-last of
    ``b``), a ``tensordot``. Gradients are those of multiply, matmul or einsum."""
    a, b = _operands(a, b, "tg.dot")
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b)
    return tensordot(a, b, ([-1], [max(b.ndim - 2, 0)]))


def inner(a, b):
    r"""$\mathrm{out}_{I J} = \sum_k a_{I k}\, b_{J k}$: the last axes contracted (a scalar
    operand multiplies). A ``tensordot``."""
    a, b = _operands(a, b, "tg.inner")
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return tensordot(a, b, ([-1], [-1]))


def _flat(t):
    return reshape(t, (-1,))


def vdot(a, b):
    r"""$\sum_i a_i b_i$ over the flattened operands (real numbers: no conjugate), which
    must have as many entries. An einsum ``"i,i->"``."""
    a, b = _operands(a, b, "tg.vdot")
    a, b = _flat(a), _flat(b)
    if None not in (a.shape[0], b.shape[0]) and a.shape[0] != b.shape[0]:
        raise ValueError(f"tg.vdot: `a` and `b` must have as many entries, got {a.shape[0]} "
                         f"and {b.shape[0]}.")
    return einsum_explicit("i,i->", a, b)


def outer(a, b):
    r"""$\mathrm{out}_{ij} = a_i b_j$ over the flattened operands: an einsum ``"i,j->ij"``
    ($\bar a = \bar{\mathrm{out}}\, b$, $\bar b = \bar{\mathrm{out}}^T a$)."""
    a, b = _operands(a, b, "tg.outer")
    return einsum_explicit("i,j->ij", _flat(a), _flat(b))


def kron(a, b):
    r"""The Kronecker product: blocks $a_{i} \cdot b$, laid out as numpy does
    ($\mathrm{out}_{i n_b + k} = a_i b_k$ along each axis, after padding the shorter
    shape with leading 1s). An outer product of interleaved axes (a broadcast
    ``multiply``), reshaped: its VJP sums each block's cotangent against ``b``
    (or ``a``)."""
    a, b = _operands(a, b, "tg.kron")
    if None in a.shape or None in b.shape:
        raise ValueError("tg.kron: `a` and `b` must have known sizes (the result's are their "
                         "products).")
    n = max(a.ndim, b.ndim)
    sa = (1,) * (n - a.ndim) + tuple(a.shape)
    sb = (1,) * (n - b.ndim) + tuple(b.shape)
    spread_a = reshape(a, tuple(d for p in sa for d in (p, 1)))
    spread_b = reshape(b, tuple(d for q in sb for d in (1, q)))
    return reshape(multiply(spread_a, spread_b), tuple(p * q for p, q in zip(sa, sb)))


def _part(x, i):
    return x[..., i] if i < x.shape[-1] else None


def _times(p, q):
    return None if p is None or q is None else multiply(p, q)


def _minus(p, q):
    """p - q, where a missing component (None) is 0 (never both missing here)."""
    if q is None:
        return p
    return subtract(p, q) if p is not None else -q


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    r"""The cross product of 3-vectors (or 2-vectors, whose third component is 0) along
    ``axisa`` of ``a`` and ``axisb`` of ``b`` (``axis`` sets all three), broadcast over
    the other axes: $c = (a_1 b_2 - a_2 b_1,\ a_2 b_0 - a_0 b_2,\ a_0 b_1 - a_1 b_0)$,
    put on ``axisc``. Two 2-vectors give the scalar $a_0 b_1 - a_1 b_0$.
    Written with multiply and subtract, so those ops' gradients give its VJP
    ($\bar a = b \times \bar c$, $\bar b = \bar c \times a$)."""
    where = "tg.cross"
    a, b = _operands(a, b, where)
    if axis is not None:
        axisa = axisb = axisc = axis
    for t, ax, name in ((a, axisa, "axisa"), (b, axisb, "axisb")):
        if t.ndim == 0:
            validate.fail(ValueError, where, "a" if t is a else "b", "a tensor of vectors "
                          "(rank 1 or more)", t)
        validate.one_axis(ax, t.ndim, name, where)
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if None in (a.shape[-1], b.shape[-1]):
        raise ValueError("tg.cross: the sizes of `axisa` of a and `axisb` of b (the number of "
                         "components) must be known.")
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"tg.cross: the vectors of `a` and `b` must have 2 or 3 components, "
                         f"got {a.shape[-1]} and {b.shape[-1]}.")
    if not broadcastable(a.shape[:-1], b.shape[:-1]):
        validate.fail(ValueError, where, "b", f"vectors whose other axes broadcast against "
                      f"those of `a`, {tuple(a.shape[:-1])}", b)
    a0, a1, a2 = (_part(a, i) for i in range(3))
    b0, b1, b2 = (_part(b, i) for i in range(3))
    z = _minus(_times(a0, b1), _times(a1, b0))
    if a2 is None and b2 is None:
        return z
    x = _minus(_times(a1, b2), _times(a2, b1))
    y = _minus(_times(a2, b0), _times(a0, b2))
    c = stack([x, y, z], axis=-1)   # each has the broadcast shape of a's and b's vectors
    return moveaxis(c, -1, validate.one_axis(axisc, c.ndim, "axisc", where))

