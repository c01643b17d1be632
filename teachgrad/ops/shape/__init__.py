"""Shape and indexing.

reshape, transpose and broadcasting (reshape.py), rearranging, repeating, padding,
concatenating, splitting and stacking, diagonals, indexing and gathering, functional
updates, ranges.
"""
