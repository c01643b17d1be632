"""What the factorizations' rules (``factorizations.py``, ``singular_values.py``) share:
identity matrices and diagonal matrices built from tensors (so that sizes need not be
known when a graph is built), and the shapes of a batch of factors.
"""
from ..elementwise.casts import ones_like
from ..shape.diagonals import diagonal, undiagonal
from ..shape.reshape import expand_dims
from .matrix import float_dtype


def eye_like(m):
    """Identity matrices shaped like the square matrices ``m`` (ones written on the
    diagonal of zeros, so that the size need not be known when a graph is built)."""
    return undiagonal(ones_like(diagonal(m, 0, -2, -1)), m, 0, -2, -1)


def diag_matrices(v, eye):
    """Matrices with the vectors ``v`` (..., n) on their diagonals."""
    return expand_dims(v, -1) * eye


def factor_shapes(a, full_matrices=False):
    """(batch, m, n, k, dtype) of matrices ``a``, k = min(m, n) (None: unknown)."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = None if m is None or n is None else min(m, n)
    return batch, m, (m if full_matrices else k), n, k, float_dtype(a.dtype)
