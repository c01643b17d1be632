"""Every differentiable operation, each declared once with its rules.

To add an op: declare it with ``primitive``, give it rules with ``defvjp``
(and, if you like, a native forward-mode rule with ``defjvp``, and a batching rule
for ``tg.vectorized_map`` with ``defbatch``; an elementwise op needs none), export it
here, and add one line to the op table in ``tests/op_table.py``.

The ``defvjp``, ``defjvp`` and ``defvjp_all`` offered here are the verbs a user calls:
the rules they declare always get Tensors (``teachgrad.ops.core.user_rules``). The op
families below declare theirs with ``teachgrad.ops.core.declare``'s, whose rules run on
raw arrays when nothing records the backward pass.
"""
from ..tensor import Tensor as _Tensor
from .core.op import Node, Op
from .core.apply import bind
from .core.declare import defbatch, not_differentiable, primitive
from .core.user_rules import defjvp, defvjp, defvjp_all
from .core.batching import BatchedTensor
from .elementwise.casts import (cast, identity, identity_n, ones, ones_like, stop_gradient,
                                zeros, zeros_like)
from .elementwise.math import (abs, cos, exp, fabs, log, log1p, negative, round, sigmoid,
                               sigmoid_grad, sign, sin, sqrt, square, tanh, tanh_grad)
from .shape.reshape import (broadcast_like, broadcast_to, expand_dims, repeat_like, reshape,
                            reshape_like, squeeze, sum_like, transpose)
from .shape.concat_split import concat, split, stack
from .shape.indexing import IndexedSlices, gather, getitem, index_add, scatter_add
from .shape.updates import scatter_update
from .reductions.sums import logsumexp, max, mean, min, sum
from .elementwise.arithmetic import (add, add_n, divide, equal, greater, greater_equal, less,
                                     less_equal, maximum, minimum, multiply, not_equal, power,
                                     subtract, where)
from .linalg.matmul import matmul
from .linalg.einsum import einsum
from .linalg.products import cross, dot, inner, kron, outer, tensordot, vdot
from .elementwise.trig import (arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, cosh,
                               deg2rad, degrees, hypot, rad2deg, radians, sinc, sinh, tan)
from .elementwise.exponential import exp2, expm1, log2, log10, logaddexp, logaddexp2, reciprocal
from .elementwise.rounding import (ceil, clip, floor, fmax, fmin, fmod, mod, nan_to_num,
                                   remainder, rint, trunc)
from .shape.along_axis import add_along_axis, take_along_axis
from .reductions.scans import argsort, cumprod, cumsum, diff, sort
from .reductions.aggregate import all, any, argmax, argmin, prod, std, var
from .shape.diagonals import diag, diagonal, trace, tril, triu, undiagonal
from .shape.rearrange import (atleast_1d, atleast_2d, atleast_3d, flatten, flip, fliplr, flipud,
                              moveaxis, ravel, roll, rot90, swapaxes)
from .shape.repeating import repeat, tile, unrepeat, untile
from .shape.padding import pad, unpad
from .shape.stacking import array_split, column_stack, dstack, hstack, vstack
from .shape.selection import select, take
from .shape.ranges import arange, linspace
from .elementwise.complex_parts import (angle, complex, conj, conjugate, imag, real,
                                        real_if_close)
from .shape.appending import append, c_, r_, rollaxis, row_stack
from .reductions.partition import argpartition, partition
from .reductions.numeric_gradient import gradient
from .nn.convolve import convolve
from .nn.activations import (log_softmax, relu, relu_grad, softmax,
                             sparse_softmax_cross_entropy_with_logits)

# Every public op above takes name= too (the label drawings, steppers and errors use).
from .core.naming import name_public_ops as _name_public_ops
_name_public_ops(globals())

# x * y is tg.multiply(x, y): Tensor's operators are these very functions (its table).
_Tensor.take_operators(globals())
