"""The op table: one line per public differentiable op in teachgrad.

Each ``OpSpec`` says how to call the op on tensors (``fn``), what numpy computes
for the same inputs (``ref``, the forward reference), and how to draw valid
inputs (``inputs``, a strategy of ``strategies.Case``: float64 arrays to
differentiate, plus non-differentiable parameters passed by keyword to both
``fn`` and ``ref``). ``elementwise`` ops (and those marked ``second_order``) also
get second-derivative tests. ``tests/test_op_gradients.py`` runs every entry.

To add an op, add one line to ``OPS``.
"""
import functools
from dataclasses import dataclass
from typing import Callable, Optional

import linalg_strategies as L
import nn_strategies as NN
import numpy as np
import numpy_strategies as N
import strategies as S
import surface_strategies as SF
from hypothesis.strategies import SearchStrategy

import teachgrad as tg
from teachgrad import nest
from teachgrad.ops import getitem, index_add
from teachgrad.ops.linalg import matrix
from teachgrad.ops.nn import conv_moves, pooling
from teachgrad.ops.shape.rows import resize_rows, row_count


@dataclass(frozen=True)
class OpSpec:
    name: str
    fn: Callable                 # fn(*tensors, **case.params) -> a Tensor or a list of them
    ref: Callable                # ref(*arrays, **case.params) -> numpy's answer
    inputs: SearchStrategy       # -> strategies.Case
    elementwise: bool = False    # elementwise ops get second-order tests
    second_order: Optional[bool] = None  # second-order tests for a non-elementwise op
    primitive: Optional[str] = None      # the teachgrad primitive it exercises (default: name)
    eps: float = 1e-6            # finite-difference step
    rtol: float = 1e-5
    atol: float = 1e-6
    #: For an op whose arrangement each array library chooses (partition: the order on
    #: each side of kth), ``canonical(array, **params)`` maps any arrangement the
    #: contract allows to one form; backends are compared in that form.
    canonical: Optional[Callable] = None

    @property
    def op_name(self):
        return self.primitive or self.name

    @property
    def has_second_order(self):
        return self.elementwise if self.second_order is None else self.second_order

    def __repr__(self):  # what pytest and hypothesis print
        return f"OpSpec({self.name})"


# -- helpers the table-driven tests share ---------------------------------------------
def dense(g):
    """A gradient as a numpy array (IndexedSlices are densified first)."""
    if isinstance(g, tg.IndexedSlices):
        g = g.to_dense()
    return g.numpy()


def leaves(out):
    """The output tensor(s) of an op as a list."""
    return list(nest.flatten(out))


# -- numpy references the table needs ------------------------------------------------
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softmax(x, axis):
    e = np.exp(x)  # no max shift: an independent formula, fine for |x| <= 3
    return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax(x, axis):
    return x - np.log(np.sum(np.exp(x), axis=axis, keepdims=True))


def _sparse_xent(z, labels):
    picked = np.take_along_axis(z, labels[..., None], axis=-1)[..., 0]
    return np.log(np.sum(np.exp(z), axis=-1)) - picked


def _logsumexp(x, axis, keepdims):
    return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))


def _split(x, num_or_size_splits, axis):
    if isinstance(num_or_size_splits, int):
        return np.split(x, num_or_size_splits, axis=axis)
    return np.split(x, np.cumsum(num_or_size_splits)[:-1].tolist(), axis=axis)


def _matmul_transposed(x, y, transpose_a, transpose_b):
    return np.matmul(np.swapaxes(x, -1, -2) if transpose_a else x,
                     np.swapaxes(y, -1, -2) if transpose_b else y)


def _sum_like(g, x):
    lead = g.ndim - x.ndim
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(x.shape)
                                      if n == 1 and g.shape[lead + i] != 1)
    return np.sum(g, axis=axes).reshape(x.shape)


def _scatter_add(x, values, indices, axis):
    out = x.copy()
    if values.size:
        np.add.at(out, (slice(None),) * (axis % x.ndim) + (indices,), values)
    return out


def _scatter_update(x, values, indices):
    out = x.copy()
    out[indices] = values
    return out


def _resize_rows(x, n):
    kept = x[:n]
    return np.concatenate([kept, np.zeros((n - kept.shape[0],) + x.shape[1:], x.dtype)])


def _resize_rows_op(x, n):
    return resize_rows(x, tg.constant(np.int64(n)), row_count(x))


def _index_add(x, values, key):
    out = x.copy()
    np.add.at(out, key, values)
    return out


def _cumsum_reverse(x, axis):
    x, axis = (x.ravel(), 0) if axis is None else (x, axis)
    return np.flip(np.cumsum(np.flip(x, axis), axis), axis)


def _add_along_axis(x, values, indices, axis):
    out = x.copy()
    if values.size:
        np.add.at(out, _along_axis_key(x.shape, indices, axis), values)
    return out


def _along_axis_key(shape, indices, axis):
    axis %= len(shape)
    return tuple(indices if d == axis else np.arange(n).reshape([n if e == d else 1
                                                                 for e in range(len(shape))])
                 for d, n in enumerate(shape))


def _undiagonal(g, x, offset, axis1, axis2):
    out = np.zeros(x.shape, g.dtype)
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    steps = np.arange(g.shape[-1])
    view[..., steps + max(-offset, 0), steps + max(offset, 0)] = g
    return out


def _unrepeat(g, x, repeats, axis):
    out = np.zeros(x.shape, g.dtype)
    np.add.at(out, (slice(None),) * axis + (np.repeat(np.arange(x.shape[axis]), repeats),), g)
    return out


def _untile(g, x, reps):
    n = max(x.ndim, len(reps))
    shape, reps = (1,) * (n - x.ndim) + x.shape, (1,) * (n - len(reps)) + tuple(reps)
    out = np.zeros(shape, g.dtype)
    for block in np.ndindex(*reps):
        out += g[tuple(slice(b * d, (b + 1) * d) for b, d in zip(block, shape))]
    return out.reshape(x.shape)


def _unpad(g, x, pad_width, mode):
    """The transpose of np.pad, column by column of its Jacobian (numpy pads a basis)."""
    out = np.zeros(x.shape, g.dtype)
    for i in np.ndindex(*x.shape):
        e = np.zeros(x.shape)
        e[i] = 1.0
        out[i] = np.sum(g * np.pad(e, pad_width, mode=mode))
    return out


def _signed(columns, *xp):
    """Eigen- or singular vectors with each column's sign fixed by its first entry (a
    decomposition's signs are arbitrary; finite differences need them to stay put)."""
    return columns * (np.sign(columns[..., :1, :]) if xp else tg.sign(columns[..., :1, :]))


def _eigh(a, UPLO="L"):
    w, v = tg.linalg.eigh(a, UPLO)
    return [w, _signed(v)]


def _eigh_ref(a, UPLO="L"):
    w, v = np.linalg.eigh(a, UPLO)
    return [w, _signed(v, np)]


def _svd(a):
    u, s, vh = tg.linalg.svd(a, full_matrices=False)
    sign = tg.sign(u[..., :1, :])
    return [u * sign, s, vh * tg.swapaxes(sign, -1, -2)]


def _svd_ref(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    sign = np.sign(u[..., :1, :])
    return [u * sign, s, vh * np.swapaxes(sign, -1, -2)]


def _as_matrix_case(case):
    """A diagonal_case made into one for diag of a matrix (2-D, offset as k)."""
    x = case.arrays[0]
    x = x.reshape(x.shape[0], int(np.prod(x.shape[1:])))
    return S.Case((x,), {"k": case.params["offset"]})


# -- the table -----------------------------------------------------------------------
OPS = [
    # binary arithmetic, with broadcasting
    OpSpec("add", tg.add, np.add, S.binary(), elementwise=True),
    OpSpec("subtract", tg.subtract, np.subtract, S.binary(), elementwise=True),
    OpSpec("multiply", tg.multiply, np.multiply, S.binary(), elementwise=True),
    OpSpec("divide", tg.divide, np.divide, S.binary(S.REALS, S.NONZERO), elementwise=True),
    OpSpec("power", tg.power, np.power, S.binary(S.POWER_BASE, S.POWER_EXPONENT),
           elementwise=True),
    OpSpec("maximum", tg.maximum, np.maximum, S.separated_binary(), elementwise=True),
    OpSpec("minimum", tg.minimum, np.minimum, S.separated_binary(), elementwise=True),
    OpSpec("where", lambda x, y, condition: tg.where(condition, x, y),
           lambda x, y, condition: np.where(condition, x, y), S.where_case(), elementwise=True),
    # elementwise functions of one tensor
    OpSpec("negative", tg.negative, np.negative, S.unary(), elementwise=True),
    OpSpec("exp", tg.exp, np.exp, S.unary(), elementwise=True),
    OpSpec("log", tg.log, np.log, S.unary(S.POSITIVE), elementwise=True),
    OpSpec("log1p", tg.log1p, np.log1p, S.unary(S.ABOVE_MINUS_ONE), elementwise=True),
    OpSpec("sqrt", tg.sqrt, np.sqrt, S.unary(S.POSITIVE), elementwise=True),
    OpSpec("square", tg.square, np.square, S.unary(), elementwise=True),
    OpSpec("abs", tg.abs, np.abs, S.unary(S.NONZERO), elementwise=True),
    OpSpec("sin", tg.sin, np.sin, S.unary(), elementwise=True),
    OpSpec("cos", tg.cos, np.cos, S.unary(), elementwise=True),
    OpSpec("tanh", tg.tanh, np.tanh, S.unary(), elementwise=True),
    OpSpec("tanh_grad", tg.ops.tanh_grad, lambda y, g: g * (1 - y * y),
           S.same_shape_list(2, 2), elementwise=True),
    OpSpec("sigmoid", tg.sigmoid, _sigmoid, S.unary(), elementwise=True),
    OpSpec("sigmoid_grad", tg.ops.sigmoid_grad, lambda y, g: g * (y * (1 - y)),
           S.same_shape_list(2, 2), elementwise=True),
    OpSpec("relu", tg.relu, lambda x: np.maximum(x, 0), S.unary(S.NONZERO), elementwise=True),
    OpSpec("relu_grad", tg.ops.relu_grad, lambda g, x: np.where(x > 0, g, 0.0),
           S.same_shape_pair(S.REALS, S.NONZERO), elementwise=True),
    OpSpec("identity", tg.identity, lambda x: x, S.unary(), elementwise=True),
    OpSpec("cast", lambda x: tg.cast(x, tg.float32), lambda x: x.astype(np.float32),
           S.unary(), elementwise=True, eps=1e-2, atol=1e-4),  # float32 output: big steps
    OpSpec("cast_to_float64", lambda x: tg.cast(x, tg.float64), lambda x: x.astype(np.float64),
           S.unary(), elementwise=True, primitive="cast"),
    # trigonometric and hyperbolic functions, their inverses, angles
    OpSpec("tan", tg.tan, np.tan, S.unary(S.Domain(-1.3, 1.3)), elementwise=True),
    OpSpec("sinh", tg.sinh, np.sinh, S.unary(), elementwise=True),
    OpSpec("cosh", tg.cosh, np.cosh, S.unary(), elementwise=True),
    OpSpec("arcsin", tg.arcsin, np.arcsin, S.unary(S.Domain(-0.9, 0.9)), elementwise=True),
    OpSpec("arccos", tg.arccos, np.arccos, S.unary(S.Domain(-0.9, 0.9)), elementwise=True),
    OpSpec("arctan", tg.arctan, np.arctan, S.unary(), elementwise=True),
    OpSpec("arcsinh", tg.arcsinh, np.arcsinh, S.unary(), elementwise=True),
    OpSpec("arccosh", tg.arccosh, np.arccosh, S.unary(S.Domain(1.1, 4.0)), elementwise=True),
    OpSpec("arctanh", tg.arctanh, np.arctanh, S.unary(S.Domain(-0.9, 0.9)), elementwise=True),
    OpSpec("arctan2", tg.arctan2, np.arctan2, S.binary(S.NONZERO, S.REALS), elementwise=True),
    OpSpec("hypot", tg.hypot, np.hypot, S.binary(S.NONZERO, S.REALS), elementwise=True),
    OpSpec("sinc", tg.sinc, np.sinc, S.unary(), elementwise=True),
    OpSpec("deg2rad", tg.deg2rad, np.deg2rad, S.unary(), elementwise=True),
    OpSpec("radians", tg.radians, np.radians, S.unary(), elementwise=True, primitive="deg2rad"),
    OpSpec("rad2deg", tg.rad2deg, np.rad2deg, S.unary(), elementwise=True),
    OpSpec("degrees", tg.degrees, np.degrees, S.unary(), elementwise=True, primitive="rad2deg"),
    # exponentials and logarithms in other bases
    OpSpec("log2", tg.log2, np.log2, S.unary(S.POSITIVE), elementwise=True),
    OpSpec("log10", tg.log10, np.log10, S.unary(S.POSITIVE), elementwise=True),
    OpSpec("expm1", tg.expm1, np.expm1, S.unary(), elementwise=True),
    OpSpec("exp2", tg.exp2, np.exp2, S.unary(), elementwise=True),
    OpSpec("reciprocal", tg.reciprocal, np.reciprocal, S.unary(S.Domain(-3.0, 3.0, 0.3)),
           elementwise=True),
    OpSpec("logaddexp", tg.logaddexp, np.logaddexp, S.binary(), elementwise=True),
    OpSpec("logaddexp2", tg.logaddexp2, np.logaddexp2, S.binary(), elementwise=True),
    # jumps and kinks: remainders, clipping, NaN-ignoring extrema
    OpSpec("mod", tg.mod, np.mod, N.remainder_case(), elementwise=True),
    OpSpec("mod_operator", lambda x, y: x % y, np.mod, N.remainder_case(), elementwise=True,
           primitive="mod"),
    OpSpec("remainder", tg.remainder, np.remainder, N.remainder_case(), primitive="mod"),
    OpSpec("fmod", tg.fmod, np.fmod, N.remainder_case(), elementwise=True),
    OpSpec("fmax", tg.fmax, np.fmax, S.separated_binary(), elementwise=True),
    OpSpec("fmin", tg.fmin, np.fmin, S.separated_binary(), elementwise=True),
    OpSpec("clip", tg.clip, np.clip, N.clip_case(), elementwise=True),
    OpSpec("clip_python_bounds", tg.clip, np.clip, N.clip_one_bound_case(), elementwise=True,
           primitive="clip"),
    OpSpec("nan_to_num", tg.nan_to_num, np.nan_to_num, N.non_finite_case(), elementwise=True),
    # several tensors in, one or several out
    OpSpec("add_n", lambda *xs: tg.add_n(list(xs)), lambda *xs: functools.reduce(np.add, xs),
           S.same_shape_list()),
    OpSpec("identity_n", lambda *xs: tg.identity_n(*xs), lambda *xs: list(xs),
           S.any_shape_list()),
    # linear algebra
    OpSpec("matmul", tg.matmul, np.matmul, S.matmul_case(), second_order=True),
    OpSpec("matmul_transposed", tg.matmul, _matmul_transposed, S.matmul_transposed_case(),
           second_order=True, primitive="matmul"),
    # products (one einsum each, or matmul) and tg.linalg; the matrix functions are
    # drawn well conditioned (tests/linalg_strategies.py)
    OpSpec("einsum", lambda *xs, subscripts: tg.einsum(subscripts, *xs),
           lambda *xs, subscripts: np.einsum(subscripts, *xs), L.einsum_case(),
           second_order=True),
    OpSpec("dot", tg.dot, np.dot, L.dot_case(), primitive="einsum"),
    OpSpec("inner", tg.inner, np.inner, L.inner_case(), primitive="einsum"),
    OpSpec("vdot", tg.vdot, np.vdot, L.vdot_case(), primitive="einsum"),
    OpSpec("outer", tg.outer, np.outer, L.two_any(), primitive="einsum"),
    OpSpec("tensordot", tg.tensordot, np.tensordot, L.tensordot_case(), primitive="einsum"),
    OpSpec("kron", tg.kron, np.kron, L.two_any(), primitive="multiply"),
    OpSpec("cross", tg.cross, L.cross_reference, L.cross_case(), primitive="multiply"),
    OpSpec("inv", tg.linalg.inv, np.linalg.inv, L.matrix_case(), second_order=True),
    OpSpec("solve", tg.linalg.solve, np.linalg.solve, L.solve_case(), second_order=True),
    OpSpec("det", tg.linalg.det, np.linalg.det, L.matrix_case(), second_order=True),
    OpSpec("cofactor", matrix.cofactor, lambda a: np.linalg.det(a)[..., None, None]
           * np.swapaxes(np.linalg.inv(a), -1, -2), L.matrix_case(), second_order=True),
    OpSpec("slogdet", lambda a: list(tg.linalg.slogdet(a)), lambda a: list(np.linalg.slogdet(a)),
           L.matrix_case(), second_order=True),
    OpSpec("cholesky", tg.linalg.cholesky, np.linalg.cholesky, L.cholesky_case(),
           second_order=True),
    OpSpec("eigh", _eigh, _eigh_ref, L.eigh_case(), second_order=True),
    OpSpec("svd", _svd, _svd_ref, L.svd_case(), second_order=True),
    OpSpec("svdvals", lambda a: tg.linalg.svd(a, compute_uv=False),
           lambda a: np.linalg.svd(a, compute_uv=False), L.svd_case(), second_order=True),
    OpSpec("qr", lambda a: list(tg.linalg.qr(a)), lambda a: list(np.linalg.qr(a)),
           L.tall_case(), second_order=True),
    OpSpec("qr_r", lambda a: tg.linalg.qr(a, "r"), lambda a: np.linalg.qr(a, "r"),
           L.tall_case(), primitive="qr"),
    OpSpec("qr_wide_complete", lambda a: list(tg.linalg.qr(a, "complete")),
           lambda a: list(np.linalg.qr(a, "complete")), SF.wide_case(), second_order=True,
           primitive="qr"),
    OpSpec("eigh_upper", lambda a: _eigh(a, "U"), lambda a: _eigh_ref(a, "U"), L.eigh_case(),
           second_order=True, primitive="eigh"),
    OpSpec("pinv", tg.linalg.pinv, np.linalg.pinv, L.svd_case(), second_order=True),
    OpSpec("norm", tg.linalg.norm, np.linalg.norm, L.norm_case(), primitive="sum"),
    # reductions
    OpSpec("sum", tg.sum, np.sum, S.reduction_case()),
    OpSpec("mean", tg.mean, np.mean, S.reduction_case()),
    OpSpec("max", tg.max, np.max, S.reduction_case(distinct=True, empty_reduction=False),
           second_order=True),
    OpSpec("min", tg.min, np.min, S.reduction_case(distinct=True, empty_reduction=False),
           second_order=True),
    OpSpec("logsumexp", tg.logsumexp, _logsumexp, S.reduction_case(),
           second_order=True),
    OpSpec("softmax", tg.softmax, _softmax, S.along_axis_case(), second_order=True),
    OpSpec("log_softmax", tg.log_softmax, _log_softmax, S.along_axis_case(), second_order=True),
    OpSpec("sparse_softmax_cross_entropy",
           lambda z, labels: tg.sparse_softmax_cross_entropy_with_logits(labels, z),
           _sparse_xent, S.sparse_xent_case(), second_order=True),
    # more reductions, and scans
    OpSpec("prod", tg.prod, np.prod, N.prod_case(), second_order=True),
    OpSpec("prod_many_zeros", tg.prod, np.prod, N.prod_case(many_zeros=True), primitive="prod"),
    OpSpec("var", tg.var, np.var, N.var_case(), second_order=True, primitive="sum"),
    OpSpec("std", tg.std, np.std, N.var_case(distinct=True), second_order=True,
           primitive="sqrt"),
    OpSpec("cumsum", tg.cumsum, np.cumsum, N.scan_case(), second_order=True),
    OpSpec("cumsum_reverse", lambda x, axis: tg.cumsum(x, axis, reverse=True), _cumsum_reverse,
           N.scan_case(), primitive="cumsum"),
    OpSpec("cumprod", tg.cumprod, np.cumprod, N.scan_case(many_zeros=False), second_order=True),
    OpSpec("cumprod_many_zeros", tg.cumprod, np.cumprod, N.scan_case(many_zeros=True),
           primitive="cumprod"),
    OpSpec("diff", tg.diff, np.diff, N.diff_case(), primitive="subtract"),
    OpSpec("sort", tg.sort, np.sort, N.scan_case(distinct=True), second_order=True),
    OpSpec("take_along_axis", tg.take_along_axis, np.take_along_axis, N.take_along_axis_case(),
           second_order=True),
    OpSpec("add_along_axis", lambda x, values, indices, axis: tg.ops.add_along_axis(
        x, indices, values, axis), _add_along_axis, N.add_along_axis_case(),
           second_order=True),
    OpSpec("diagonal", tg.diagonal, np.diagonal, N.diagonal_case(), second_order=True),
    OpSpec("undiagonal", tg.ops.undiagonal, _undiagonal, N.undiagonal_case()),
    OpSpec("trace", tg.trace, np.trace, N.diagonal_case(), primitive="diagonal"),
    # moving entries around
    # np.reshape's `shape` keyword is numpy >= 2.1 (2.0 calls it `newshape`): positional.
    OpSpec("reshape", tg.reshape, lambda x, shape: np.reshape(x, shape), S.reshape_case()),
    OpSpec("transpose", tg.transpose, np.transpose, S.transpose_case()),
    OpSpec("expand_dims", tg.expand_dims, np.expand_dims, S.expand_dims_case()),
    OpSpec("squeeze", tg.squeeze, np.squeeze, S.squeeze_case()),
    OpSpec("broadcast_to", tg.broadcast_to, np.broadcast_to, S.broadcast_to_case()),
    OpSpec("reshape_like", tg.ops.reshape_like, lambda g, x: g.reshape(x.shape),
           S.reshape_like_case()),
    OpSpec("broadcast_like", tg.ops.broadcast_like, lambda g, x: np.broadcast_to(g, x.shape),
           S.broadcast_like_case()),
    OpSpec("sum_like", tg.ops.sum_like, _sum_like, S.sum_like_case()),
    OpSpec("repeat_like", tg.ops.repeat_like,
           lambda v, like: np.broadcast_to(v, (like.shape[0],) + v.shape), S.repeat_like_case()),
    OpSpec("concat", lambda *xs, axis: tg.concat(list(xs), axis=axis),
           lambda *xs, axis: np.concatenate(xs, axis=axis), S.concat_case()),
    OpSpec("stack", lambda *xs, axis: tg.stack(list(xs), axis=axis),
           lambda *xs, axis: np.stack(xs, axis=axis), S.stack_case()),
    OpSpec("split", tg.split, _split, S.split_case()),
    OpSpec("split_first_piece", lambda x, **kw: tg.split(x, **kw)[0],
           lambda x, **kw: _split(x, **kw)[0], S.split_case(), primitive="split"),
    # numpy's rearranging, copying and joining
    OpSpec("ravel", tg.ravel, np.ravel, S.unary(), primitive="reshape"),
    OpSpec("flatten_method", lambda x: x.flatten(), lambda x: x.flatten(), S.unary(),
           primitive="reshape"),
    OpSpec("flip", tg.flip, np.flip, N.flip_case(), second_order=True),
    OpSpec("flipud", tg.flipud, np.flipud, S.unary(shape=S.shapes(min_dims=1)), primitive="flip"),
    OpSpec("fliplr", tg.fliplr, np.fliplr, S.unary(shape=S.shapes(min_dims=2)), primitive="flip"),
    OpSpec("rot90", tg.rot90, np.rot90, N.rot90_case(), primitive="flip"),
    OpSpec("roll", tg.roll, np.roll, N.roll_case(), second_order=True),
    OpSpec("moveaxis", tg.moveaxis, np.moveaxis, N.moveaxis_case(), primitive="transpose"),
    OpSpec("swapaxes", tg.swapaxes, np.swapaxes, N.swapaxes_case(), primitive="transpose"),
    OpSpec("atleast_1d", tg.atleast_1d, np.atleast_1d, S.unary(), primitive="reshape"),
    OpSpec("atleast_2d", tg.atleast_2d, np.atleast_2d, S.unary(), primitive="reshape"),
    OpSpec("atleast_3d", tg.atleast_3d, np.atleast_3d, S.unary(), primitive="reshape"),
    OpSpec("repeat", tg.repeat, np.repeat, N.repeat_case(), second_order=True),
    OpSpec("unrepeat", tg.ops.unrepeat, _unrepeat, N.unrepeat_case()),
    OpSpec("tile", tg.tile, np.tile, N.tile_case(), second_order=True),
    OpSpec("untile", tg.ops.untile, _untile, N.untile_case()),
    OpSpec("pad", tg.pad, np.pad, N.pad_case(), second_order=True),
    OpSpec("unpad", tg.ops.unpad, _unpad, N.unpad_case()),
    OpSpec("vstack", lambda *xs: tg.vstack(xs), lambda *xs: np.vstack(xs), N.joinable("vstack"),
           primitive="concat"),
    OpSpec("hstack", lambda *xs: tg.hstack(xs), lambda *xs: np.hstack(xs), N.joinable("hstack"),
           primitive="concat"),
    OpSpec("dstack", lambda *xs: tg.dstack(xs), lambda *xs: np.dstack(xs), N.joinable("dstack"),
           primitive="concat"),
    OpSpec("column_stack", lambda *xs: tg.column_stack(xs), lambda *xs: np.column_stack(xs),
           N.joinable("column_stack"), primitive="concat"),
    OpSpec("array_split", tg.array_split, np.array_split, N.array_split_case(),
           primitive="split"),
    OpSpec("take", tg.take, np.take, N.take_case(), primitive="gather"),
    OpSpec("select", lambda *xs, condlist, default: tg.select(condlist, list(xs), default),
           lambda *xs, condlist, default: np.select(condlist, list(xs), default),
           N.select_case(), primitive="where"),
    OpSpec("diag", tg.diag, np.diag, N.diag_case(), second_order=True),
    OpSpec("diag_of_matrix", tg.diag, np.diag, N.diagonal_case().map(_as_matrix_case),
           primitive="diagonal"),
    OpSpec("tril", tg.tril, np.tril, N.triangle_case(), second_order=True),
    OpSpec("triu", tg.triu, np.triu, N.triangle_case(), second_order=True),
    # issue 32's numpy surface
    OpSpec("fabs", tg.fabs, np.fabs, S.unary(S.NONZERO), elementwise=True, primitive="abs"),
    OpSpec("real", tg.real, np.real, S.unary(), primitive="identity"),
    OpSpec("conj", tg.conj, np.conj, S.unary(), primitive="identity"),
    OpSpec("conjugate", tg.conjugate, np.conjugate, S.unary(), primitive="identity"),
    OpSpec("real_if_close", tg.real_if_close, np.real_if_close, S.unary(),
           primitive="identity"),
    OpSpec("partition", tg.partition, np.partition, SF.partition_case(),
           primitive="take_along_axis", canonical=SF.partition_canonical),
    OpSpec("rollaxis", tg.rollaxis, np.rollaxis, SF.rollaxis_case(), primitive="transpose"),
    OpSpec("row_stack", lambda *xs: tg.row_stack(xs), lambda *xs: np.vstack(xs),
           N.joinable("vstack"), primitive="concat"),
    OpSpec("append", tg.append, np.append, SF.append_case(), primitive="concat"),
    OpSpec("r_", lambda *xs: tg.r_[xs], lambda *xs: np.r_[xs], SF.r_case(),
           primitive="concat"),
    OpSpec("c_", lambda *xs: tg.c_[xs], lambda *xs: np.c_[xs], SF.r_case(columns=True),
           primitive="concat"),
    OpSpec("gradient", lambda f, varargs, **kw: tg.gradient(f, *varargs, **kw),
           lambda f, varargs, **kw: np.gradient(f, *varargs, **kw), SF.gradient_case(),
           second_order=True, primitive="concat"),
    OpSpec("gradient_all_axes", lambda f, varargs, **kw: tg.gradient(f, *varargs, **kw),
           lambda f, varargs, **kw: np.gradient(f, *varargs, **kw),
           SF.gradient_case(all_axes=True), primitive="concat"),
    OpSpec("convolve", tg.convolve, np.convolve, SF.convolve_case(), second_order=True,
           primitive="gather"),
    # indexing (gradients along axis 0 come back as tg.IndexedSlices)
    OpSpec("gather", tg.gather, np.take, S.gather_case(), second_order=True),
    OpSpec("scatter_add", lambda x, values, indices, axis: tg.ops.scatter_add(x, indices, values, axis),
           _scatter_add, S.scatter_add_case(), second_order=True),
    OpSpec("getitem", lambda x, key: x[key], lambda x, key: x[key], S.getitem_case(),
           second_order=True),
    OpSpec("getitem_function", getitem, lambda x, key: x[key], S.getitem_case(),
           primitive="getitem"),
    OpSpec("scatter_update", lambda x, values, indices: tg.ops.scatter_update(x, indices, values),
           _scatter_update, S.scatter_update_case(), second_order=True),
    OpSpec("index_add", index_add, _index_add, S.index_add_case(), second_order=True),
    OpSpec("resize_rows", _resize_rows_op, _resize_rows, S.resize_rows_case(),
           second_order=True),
    # tg.nn: convolution, the ops its VJP is made of, and pooling (NHWC, HWIO)
    OpSpec("conv2d", tg.nn.conv2d, NN.conv2d, NN.conv2d_case(), second_order=True),
    OpSpec("spread", conv_moves.spread, NN.spread, NN.spread_case(), second_order=True),
    OpSpec("unspread", conv_moves.unspread, NN.unspread, NN.unspread_case()),
    OpSpec("window_pad", conv_moves.window_pad, NN.window_pad, NN.window_pad_case(),
           second_order=True),
    OpSpec("window_unpad", conv_moves.window_unpad, NN.window_unpad, NN.window_unpad_case()),
    OpSpec("max_pool2d", tg.nn.max_pool2d, NN.max_pool2d, NN.pool_case(distinct=True),
           second_order=True),
    OpSpec("max_pool2d_grad", pooling.max_pool2d_grad, NN.max_pool2d_grad,
           NN.pool_grad_case(distinct=True), second_order=True),
    OpSpec("max_pool2d_pick", pooling.max_pool2d_pick, NN.max_pool2d_pick, NN.pool_pick_case()),
    OpSpec("avg_pool2d", tg.nn.avg_pool2d, NN.avg_pool2d, NN.pool_case(), second_order=True),
    OpSpec("max_pool1d", tg.nn.max_pool1d, SF.pool1d(NN.max_pool2d),
           SF.pool1d_case(distinct=True), primitive="max_pool2d"),
    OpSpec("avg_pool1d", tg.nn.avg_pool1d, SF.pool1d(NN.avg_pool2d), SF.pool1d_case(),
           primitive="avg_pool2d"),
    OpSpec("max_pool2d_channels", tg.nn.max_pool2d, NN.max_pool2d,
           NN.channel_pool_case(distinct=True), primitive="max_pool2d"),
    OpSpec("avg_pool2d_channels", tg.nn.avg_pool2d, NN.avg_pool2d, NN.channel_pool_case(),
           second_order=True, primitive="avg_pool2d"),
    OpSpec("avg_pool2d_grad", pooling.avg_pool2d_grad, NN.avg_pool2d_grad, NN.pool_grad_case(),
           second_order=True),
]

OPS_BY_NAME = {spec.name: spec for spec in OPS}
assert len(OPS_BY_NAME) == len(OPS), "two table entries share a name"
