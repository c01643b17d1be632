"""``tg.linalg``: numpy's ``linalg`` functions, differentiable::

    import teachgrad as tg
    a = tg.Variable([[2.0, 1.0], [1.0, 3.0]])
    with tg.GradientTape() as tape:
        y = tg.linalg.det(a)
    tape.gradient(y, a)          # det(a) * inv(a)^T = [[3, -1], [-1, 2]]

Each function is an op of ``teachgrad/ops/`` (``matrix.py``: inv, solve, det,
slogdet; ``factorizations.py``: cholesky, eigh, qr; ``eig.py``: eig, eigvals; ``singular_values.py``: svd, pinv;
``norms.py``: norm),
declared there once with its adjoint; this module only gathers them under numpy's
names. Every one takes ``name=`` and works on batches of matrices (leading axes).
"""
from .ops.core.naming import name_public_ops as _name_public_ops
from .ops.linalg.eig import eig, eigvals
from .ops.linalg.factorizations import cholesky, eigh, qr
from .ops.linalg.matrix import det, inv, slogdet, solve
from .ops.linalg.norms import norm
from .ops.linalg.singular_values import pinv, svd

__all__ = ["inv", "solve", "det", "slogdet", "cholesky", "eigh", "eig", "eigvals", "svd", "qr",
           "pinv", "norm"]

# Every function above takes name= too.
_name_public_ops(globals(), prefix="tg.linalg.")
