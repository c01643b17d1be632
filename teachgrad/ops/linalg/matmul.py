"""Matrix multiplication, with numpy's rules for 1-D and batched operands and
TensorFlow's ``transpose_a`` / ``transpose_b`` flags (which let the VJP rules
multiply by a transpose without a separate transpose op)."""
import numpy as np

from ... import backend, validate
from ..core.apply import innermost
from ..core.declare import defbatch, defeffect, defjvp, defshape, defvjp, primitive, takes_complex
from ..elementwise.conjugate import conj_of
from ..shape.reshape import (
    broadcast_as,
    expand_dims,
    move_to_rank,
    reshape,
    squeeze,
    swap_last_two,
    unbroadcast,
)


def _mT(a):
    return a.swapaxes(-1, -2)   # a view; the method skips numpy's Python wrapper


def _matmul_kernel(x, y, transpose_a, transpose_b):
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("scalars cannot be matrix-multiplied; use tg.multiply (or *) instead")
    if (transpose_a and x.ndim < 2) or (transpose_b and y.ndim < 2):
        raise ValueError("transpose_a/transpose_b need operands with at least 2 axes")
    a = _mT(x) if transpose_a else x
    b = _mT(y) if transpose_b else y
    inner_a = a.shape[-1]
    inner_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if inner_a != inner_b:
        raise ValueError(
            f"shapes {x.shape} and {y.shape} are incompatible"
            f"{' (after transposing)' if transpose_a or transpose_b else ''}: the last axis "
            f"of the first ({inner_a}) must equal the "
            f"{'second-to-last' if b.ndim > 1 else 'only'} axis of the second ({inner_b})")
    return backend.xp.matmul(a, b)


# For C = A B:  dA = dC B^T  and  dB = A^T dC.  With the flags (TensorFlow's
# MatMul gradient table), e.g. C = A B^T gives dA = dC B and dB = dC^T A.
def _matmul_vjp_x(ct, ans, x, y, transpose_a, transpose_b):
    y = conj_of(y)   # complex: dA = dC B^H
    if x.ndim == 1 or y.ndim == 1:
        gx = _vector_cotangent(ct, x, y, transpose_a, transpose_b)
    elif not transpose_a:
        gx = matmul(ct, y, transpose_b=not transpose_b)
    else:
        gx = matmul(y, ct, transpose_a=transpose_b, transpose_b=True)
    return unbroadcast(gx, x)


def _matmul_vjp_y(ct, ans, x, y, transpose_a, transpose_b):
    x = conj_of(x)   # complex: dB = A^H dC
    if x.ndim == 1 or y.ndim == 1:
        gy = _vector_cotangent(ct, y, x, transpose_b, transpose_a, second=True)
    elif not transpose_b:
        gy = matmul(x, ct, transpose_a=not transpose_a)
    else:
        gy = matmul(ct, x, transpose_a=True, transpose_b=transpose_a)
    return unbroadcast(gy, y)

def _vector_cotangent(ct, a, other, transpose_a, transpose_other, second=False):
    """The cotangent of operand ``a`` of a product with a vector in it (``a`` the first
    operand, ``other`` the second, or with ``second`` the other way round; each flag
    belongs to the operand named beside it and counts only for a matrix).

    A vector operand's cotangent is a matrix-vector product, written with the vector
    on the left where the matrix is 2-D (``ct @ op(m)``, numpy's vector-matrix
    product): under ``tg.vmap`` a batch of such vectors is one matrix, and the
    batching rule makes the whole batch one matrix product."""
    if a.ndim == 1 and other.ndim == 1:
        return ct * other
    if a.ndim == 1:   # ct has op(other)'s free axis; contract it away
        if other.ndim == 2:
            # first: ct @ op(other)^T; second: ct @ op(other)
            return matmul(ct, other, transpose_b=transpose_other == second)
        return squeeze(matmul(other, expand_dims(ct, -1),
                              transpose_a=transpose_other != second), -1)
    # the vector is the other operand: a's cotangent is an outer product with it
    if second:   # ct (..., N) and the vector x (K,): op(a) is (K, N)
        outer = expand_dims(other, -1) * expand_dims(ct, -2)
    else:        # ct (..., M) and the vector y (K,): op(a) is (M, K)
        outer = expand_dims(ct, -1) * other
    return swap_last_two(outer) if transpose_a else outer


matmul_p = primitive("matmul", _matmul_kernel)
defeffect(matmul_p, "fresh")
takes_complex(matmul_p)
def matmul(x, y, transpose_a=False, transpose_b=False):
    """Matrix product ``x @ y`` (batched over leading axes, as numpy does).

    ``transpose_a`` / ``transpose_b`` multiply by the transpose of the last two
    axes of ``x`` / ``y`` instead, without materialising it.
    """
    return innermost.process(matmul_p, x, y,
                transpose_a=validate.boolean(transpose_a, "transpose_a", "tg.matmul"),
                transpose_b=validate.boolean(transpose_b, "transpose_b", "tg.matmul"))
defvjp(matmul_p, _matmul_vjp_x, _matmul_vjp_y)
# Bilinear: d(X Y) = dX Y + X dY.
defjvp(matmul_p,
       lambda x_dot, ans, x, y, transpose_a, transpose_b: broadcast_as(
           matmul(x_dot, y, transpose_a=transpose_a, transpose_b=transpose_b), ans),
       lambda y_dot, ans, x, y, transpose_a, transpose_b: broadcast_as(
           matmul(x, y_dot, transpose_a=transpose_a, transpose_b=transpose_b), ans))


def _matmul_batch(values, batched, transpose_a, transpose_b):
    """A batch of matrix products is one matmul over the batch axis, once a vector
    example is made a matrix (numpy reads a 2-D batch of vectors as one matrix) and
    both operands have each example's axes lined up after the batch.

    When one matrix is shared by every example, the examples' rows (or vectors) are
    stacked into one tall matrix instead: one matrix product that BLAS runs well, where
    a stack of small ones would run one call per example."""
    (x, y), (x_batched, y_batched) = values, batched
    if x_batched and not y_batched and y.ndim == 2 and not transpose_a:
        return _rows_times(x, y, transpose_b), True
    if y_batched and not x_batched and x.ndim == 2 and y.ndim == 2:
        # op(x) @ v for each vector v: the rows v^T op(x)^T, stacked
        return matmul(y, x, transpose_b=not transpose_a), True
    x_vector = x_batched and x.ndim == 2
    y_vector = y_batched and y.ndim == 2
    if x_vector:
        x = expand_dims(x, 1)          # (B, k) -> (B, 1, k): a row per example
    if y_vector:
        y = expand_dims(y, -1)         # (B, k) -> (B, k, 1): a column per example
    rank = max(x.ndim - x_batched, y.ndim - y_batched)
    x = move_to_rank(x, rank) if x_batched else x
    y = move_to_rank(y, rank) if y_batched else y
    out = matmul(x, y, transpose_a=transpose_a, transpose_b=transpose_b)
    if y_vector:
        out = squeeze(out, -1)
    if x_vector:   # the row's axis: last when y gave a column or was a vector itself
        out = squeeze(out, -1 if y_vector or (not y_batched and y.ndim == 1) else -2)
    return out, True
defbatch(matmul_p, _matmul_batch)


def _rows_times(x, y, transpose_b):
    """Every example's ``x`` (a batch, batch on axis 0) times the one matrix ``y``: the
    examples' rows stacked into one matrix, multiplied once, and unstacked."""
    if x.ndim == 2:   # a vector per example: the batch is already one matrix
        return matmul(x, y, transpose_b=transpose_b)
    lead, inner = tuple(x.shape[:-1]), x.shape[-1]
    if None in lead[1:] or inner in (0, None) or (lead[0] is None and 0 in lead):
        return matmul(x, y, transpose_b=transpose_b)   # sizes -1 could not stand for
    rows = -1 if lead[0] is None else int(np.prod(lead))
    out = matmul(reshape(x, (rows, inner)), y, transpose_b=transpose_b)
    return reshape(out, (-1 if lead[0] is None else lead[0],) + lead[1:] + (out.shape[-1],))


def _matmul_shape(x, y, transpose_a, transpose_b):
    """matmul's output shape without computing it (None = unknown)."""
    if x.shape is None or y.shape is None:
        return [(None, np.result_type(x.dtype, y.dtype))]
    a = list(x.shape)
    b = list(y.shape)
    if transpose_a:
        a[-2], a[-1] = a[-1], a[-2]
    if transpose_b:
        b[-2], b[-1] = b[-1], b[-2]
    if not a or not b:
        raise ValueError("scalars cannot be matrix-multiplied; use tg.multiply (or *) instead")
    inner_a, inner_b = a[-1], (b[-2] if len(b) > 1 else b[0])
    if inner_a is not None and inner_b is not None and inner_a != inner_b:
        raise ValueError(f"shapes {x.shape} and {y.shape} are incompatible: the last axis of "
                         f"the first ({inner_a}) must equal the "
                         f"{'second-to-last' if len(b) > 1 else 'only'} axis of the second "
                         f"({inner_b})")
    batch_a, batch_b = a[:-2], b[:-2]
    n = max(len(batch_a), len(batch_b))
    batch_a = [1] * (n - len(batch_a)) + batch_a
    batch_b = [1] * (n - len(batch_b)) + batch_b
    batch = [p if q == 1 else q if p == 1 else (p if p == q else None)
             for p, q in zip(batch_a, batch_b)]
    rows = [a[-2]] if len(a) > 1 else []
    cols = [b[-1]] if len(b) > 1 else []
    return [(tuple(batch + rows + cols), np.result_type(x.dtype, y.dtype))]

defshape(matmul_p, _matmul_shape)
