"""Reductions and scans.

sum, mean, max, min, logsumexp (sums.py); prod, var, std, argmax, any, all
(aggregate.py); cumulative sums, differences and sorting (scans.py); partition; numpy's
finite-difference gradient.
"""
