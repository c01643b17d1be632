"""Exponentials and logarithms in other bases, 1/x, and log-sum-exp of two tensors.

Each op is one line (see ``ufuncs.py``): numpy's ufunc and its derivative, written
with teachgrad ops so that it can be differentiated again (``ans`` is the output).
"""
import math

from .math import exp
from .ufuncs import binary, unary

LN2, LN10 = math.log(2), math.log(10)

log2_p, log2 = unary("log2", lambda x, ans: 1 / (x * LN2),
                     r"$\log_2 x$.  $\frac{d}{dx}\log_2 x = 1 / (x \ln 2)$")
log10_p, log10 = unary("log10", lambda x, ans: 1 / (x * LN10),
                       r"$\log_{10} x$.  $\frac{d}{dx}\log_{10} x = 1 / (x \ln 10)$")
expm1_p, expm1 = unary("expm1", lambda x, ans: ans + 1,
                       r"$e^x - 1$, accurate for tiny x.  $\frac{d}{dx} = e^x$ = ans + 1")
exp2_p, exp2 = unary("exp2", lambda x, ans: ans * LN2,
                     r"$2^x$.  $\frac{d}{dx} 2^x = 2^x \ln 2$")
reciprocal_p, reciprocal = unary("reciprocal", lambda x, ans: -(ans * ans),
                                 r"$1 / x$.  $\frac{d}{dx} x^{-1} = -x^{-2}$")

# log(e^x + e^y), without overflow.  d/dx = e^x / (e^x + e^y) = e^(x - ans), and so for y.
logaddexp_p, logaddexp = binary(
    "logaddexp", lambda x, y, ans: exp(x - ans), lambda x, y, ans: exp(y - ans),
    r"$\log(e^x + e^y)$.  $\partial_x = e^{x - \mathrm{ans}}$, $\partial_y = e^{y - \mathrm{ans}}$")

# log2(2^x + 2^y).  d/dx = 2^x / (2^x + 2^y) = 2^(x - ans), and so for y.
logaddexp2_p, logaddexp2 = binary(
    "logaddexp2", lambda x, y, ans: exp2(x - ans), lambda x, y, ans: exp2(y - ans),
    r"$\log_2(2^x + 2^y)$.  $\partial_x = 2^{x - \mathrm{ans}}$, $\partial_y = 2^{y - \mathrm{ans}}$")
