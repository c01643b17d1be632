"""Elementwise ops.

arithmetic and comparisons, math functions, exponentials and logarithms, trigonometry,
rounding, complex parts, numpy's ufuncs, casts and identities.
"""
