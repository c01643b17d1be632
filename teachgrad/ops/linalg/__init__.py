"""Linear algebra.

matmul, inverse, solve and determinants, factorizations (cholesky, eigh, qr, svd),
norms, einsum and numpy's products.
"""
