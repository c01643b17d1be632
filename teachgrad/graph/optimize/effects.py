"""What the passes may assume about each op, listed op by op.

An optimiser may only move, merge or skip work it understands. Three facts
about an op decide what it may do:

* **pure**: the outputs depend on the inputs and the params alone: no state,
  no randomness, no side effects, and params that are plain data. Only pure
  ops are folded into constants or merged with an equal node. Placeholders,
  Variable reads, function calls, loops, conds, custom gradients, and every op
  declared outside teachgrad (which the optimiser knows nothing about) are not.
* **fresh**: each output is a new array that the op made and nobody else holds,
  so it may be overwritten once its last reader has run. A reshape's output is
  a view of its input, a const's output is the constant itself, a reduction may
  hand back a numpy scalar: none of those is fresh.
* **keeps no alias**: as a reader, the op neither returns nor keeps a view of
  its input (``identity``, ``reshape``, ``getitem``, ``cast`` do; a loop or a
  call may return its input unchanged). An array may be overwritten in place
  only if every one of its readers keeps no alias of it.

An op missing from these lists is treated as the most careful answer: impure,
not fresh, keeping aliases. A new op is therefore safe, and merely not
optimised, until it is listed here.
"""
from ... import ops
from ...ops import arithmetic, math, misc, nn, reduction, shape
from ...ops.linalg import matmul_p
from ..graph import const_p

#: Elementwise ops and others whose outputs are new arrays (also pure).
_FRESH = {
    math.negative_p, math.exp_p, math.log_p, math.log1p_p, math.sqrt_p, math.square_p,
    math.sign_p, math.round_p, math.abs_p, math.sin_p, math.cos_p, math.tanh_p,
    math.tanh_grad_p, math.sigmoid_p, math.sigmoid_grad_p,
    arithmetic.add_p, arithmetic.subtract_p, arithmetic.multiply_p, arithmetic.divide_p,
    arithmetic.power_p, arithmetic.maximum_p, arithmetic.minimum_p, arithmetic.where_p,
    arithmetic.add_n_p, misc.zeros_like_p, misc.ones_like_p,
    nn.relu_p, nn.relu_grad_p, nn.softmax_p, nn.log_softmax_p, matmul_p,
    shape.concat_p, shape.stack_p, shape.index_add_p, shape.gather_p, shape.scatter_add_p,
}
_COMPARISONS = {arithmetic.less, arithmetic.less_equal, arithmetic.greater,
                arithmetic.greater_equal, arithmetic.equal, arithmetic.not_equal}

#: Pure, but their outputs may be views of their inputs (or scalars).
_VIEWS = {
    misc.cast_p, misc.identity_p, misc.identity_n_p, misc.stop_gradient_p,
    shape.reshape_p, shape.transpose_p, shape.expand_dims_p, shape.squeeze_p,
    shape.broadcast_to_p, shape.reshape_like_p, shape.broadcast_like_p, shape.split_p,
    shape.getitem_p,
}
#: Pure, outputs not guaranteed fresh (a full reduction gives a numpy scalar), no alias kept.
_REDUCTIONS = {reduction.sum_p, reduction.mean_p, reduction.max_p, reduction.min_p,
               reduction.logsumexp_p, reduction.count_p, shape.sum_like_p}


def _comparison_ops():
    """The comparison ops. ``arithmetic._comparison`` makes them inside a factory, so
    they are found in the closures of the functions that bind them."""
    found = set()
    for compare in _COMPARISONS:
        for cell in compare.__closure__ or ():
            if isinstance(cell.cell_contents, ops.Op):
                found.add(cell.cell_contents)
    return found


COMPARISONS = frozenset(_comparison_ops())
_FRESH |= COMPARISONS
PURE = frozenset(_FRESH | _VIEWS | _REDUCTIONS | {const_p})
FRESH = frozenset(_FRESH)
KEEPS_NO_ALIAS = frozenset(_FRESH | _REDUCTIONS)

#: Ops whose output depends only on the *shape* of these inputs, never their values:
#: with the shape known, the input counts as constant for folding.
SHAPE_ONLY_INPUTS = {
    misc.zeros_like_p: (0,), misc.ones_like_p: (0,), reduction.count_p: (0,),
    shape.reshape_like_p: (1,), shape.broadcast_like_p: (1,), shape.sum_like_p: (1,),
}

#: Kernels of the ops the optimiser makes itself (elementwise programs, one op per
#: program): their ops are pure, fresh and keep no alias.
_pass_kernels = set()


def register_fresh_kernel(kernel):
    """Declare every op running ``kernel`` pure, fresh and alias-free."""
    _pass_kernels.add(kernel)


def is_pure(op):
    return op in PURE or op.forward in _pass_kernels


def is_fresh(op):
    return op in FRESH or op.forward in _pass_kernels


def keeps_no_alias(op):
    return op in KEEPS_NO_ALIAS or op.forward in _pass_kernels
