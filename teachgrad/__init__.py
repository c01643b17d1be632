"""teachgrad: automatic differentiation you can watch.

    import teachgrad as tg
    x = tg.Variable(3.0)
    with tg.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)          # 6.0
"""
from . import autodiff, backend, control_flow, graph, nest, ops, viz
from .autodiff import (AggregationMethod, ForwardAccumulator, GradcheckError, GradientTape,
                       UnconnectedGradients, custom_gradient, grad, grad_pass_through,
                       gradcheck, recompute_grad, gradients, hessian, hvp, jacfwd,
                       jacrev, jvp, linear_transpose, linearize, transposition_only,
                       value_and_grad, vectorized_map, vjp, vmap)
from .backend import get_backend, set_backend
from .control_flow import (TensorArray, case, cond, foldl, foldr, map_fn, scan, switch_case,
                           while_loop)
from .dtypes import bool_, complex64, complex128, float32, float64, int32, int64
from .ops import (IndexedSlices, abs, add, add_n, broadcast_to, cast, concat, cos, divide,
                  equal, exp, expand_dims, gather, greater, greater_equal, identity,
                  identity_n, less, less_equal, log, log1p, log_softmax, logsumexp, matmul,
                  max, maximum, mean, min, minimum, multiply, negative, not_equal, ones,
                  ones_like, power, relu, reshape, round, sigmoid, sign, sin, softmax,
                  sparse_softmax_cross_entropy_with_logits, split, sqrt, square, squeeze,
                  stack, stop_gradient, subtract, sum, tanh, transpose, where, zeros,
                  zeros_like)
from .ops import (arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, ceil, clip, cosh,
                  deg2rad, degrees, exp2, expm1, floor, fmax, fmin, fmod, hypot, log2, log10,
                  logaddexp, logaddexp2, mod, nan_to_num, rad2deg, radians, reciprocal,
                  remainder, rint, sinc, sinh, tan, trunc)
from .ops import (all, any, argmax, argmin, argsort, cumprod, cumsum, diagonal, diff, prod, sort,
                  std, take_along_axis, trace, var)
from .ops import (arange, array_split, atleast_1d, atleast_2d, atleast_3d, column_stack, diag,
                  dstack, flatten, flip, fliplr, flipud, hstack, linspace, moveaxis, pad, ravel,
                  repeat, roll, rot90, select, swapaxes, take, tile, tril, triu, vstack)
from .ops import cross, dot, einsum, inner, kron, outer, tensordot, vdot
from .ops import (angle, append, argpartition, c_, complex, conj, conjugate, convolve, fabs,
                  gradient, imag, partition, r_, real, real_if_close, rollaxis, row_stack)
from .graph import (Graph, Session, TensorSpec, function, get_default_graph, name_scope,
                    placeholder)
from .ops.io.printing import print  # noqa: A004  (tg.print, as tf.print)
from .tensor import SymbolicTensor, Tensor, Variable, constant, convert_to_tensor
from . import debug, exercises, linalg, nn, optimizers, random, signal
from .debug import explain_gradient

from ._version import __version__  # noqa: E402  (pyproject.toml reads it there)
