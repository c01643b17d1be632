"""Exponentials and logarithms in other bases, 1/x, and log-sum-exp of two tensors.

Each op is one line (see ``ufuncs.py``): numpy's ufunc and its derivative, written
with teachgrad ops so that it can be differentiated again (``ans`` is the output).
"""
import math

from .math import sigmoid
from .ufuncs import binary, unary

LN2, LN10 = math.log(2), math.log(10)

log2_p, log2 = unary("log2", lambda x, ans: 1 / (x * LN2),
                     r"$\log_2 x$.  $\frac{d}{dx}\log_2 x = 1 / (x \ln 2)$",
                     holomorphic=True)
log10_p, log10 = unary("log10", lambda x, ans: 1 / (x * LN10),
                       r"$\log_{10} x$.  $\frac{d}{dx}\log_{10} x = 1 / (x \ln 10)$",
                       holomorphic=True)
expm1_p, expm1 = unary("expm1", lambda x, ans: ans + 1,
                       r"$e^x - 1$, accurate for tiny x.  $\frac{d}{dx} = e^x$ = ans + 1",
                       holomorphic=True)
exp2_p, exp2 = unary("exp2", lambda x, ans: ans * LN2,
                     r"$2^x$.  $\frac{d}{dx} 2^x = 2^x \ln 2$",
                     holomorphic=True)
reciprocal_p, reciprocal = unary("reciprocal", lambda x, ans: -(ans * ans),
                                 r"$1 / x$.  $\frac{d}{dx} x^{-1} = -x^{-2}$",
                                 holomorphic=True)

# log(e^x + e^y), without overflow.  d/dx = e^x / (e^x + e^y) = 1 / (1 + e^(y - x)), the
# sigmoid of x - y, and so for y. It equals e^(x - ans), but not in floats: at x = y = 1e4,
# ans = 1e4 + log 2 is rounded in float32 to the nearest 2^-10, and e^(x - ans) comes out
# 0.49989, not 0.5. The difference x - y loses nothing, so the sigmoid form is exact (as is
# TensorFlow's, which subtracts the max under stop_gradient before the exp).
logaddexp_p, logaddexp = binary(
    "logaddexp", lambda x, y, ans: sigmoid(x - y), lambda x, y, ans: sigmoid(y - x),
    r"$\log(e^x + e^y)$.  $\partial_x = \sigma(x - y)$, $\partial_y = \sigma(y - x)$")

# log2(2^x + 2^y).  d/dx = 2^x / (2^x + 2^y) = sigmoid((x - y) ln 2), and so for y (exact
# at large x and y, as logaddexp's).
logaddexp2_p, logaddexp2 = binary(
    "logaddexp2", lambda x, y, ans: sigmoid((x - y) * LN2),
    lambda x, y, ans: sigmoid((y - x) * LN2),
    r"$\log_2(2^x + 2^y)$.  $\partial_x = \sigma((x - y)\ln 2)$, "
    r"$\partial_y = \sigma((y - x)\ln 2)$")
