"""Function transformations on top of the tape, with JAX's names.

``tg.grad(f)`` is a new function that returns the gradient of ``f``: it runs
``f`` under a GradientTape that watches the chosen arguments and asks the tape
for the gradient. Unconnected arguments get zeros, and sparse gradients are
made dense, so the results are always plain tensors.
"""
import warnings

import numpy as np

from .. import nest, validate
from ..ops import moveaxis, reshape, stack, zeros
from ..tensor import Tensor, constant
from .arguments import as_outputs, dense, like_tree, own_leaves, prepare, split_aux
from .called_as import called_as
from .forward import ForwardAccumulator
from .tape import GradientTape
from .vectorize import over_directions


def _primals(f, primals, where):
    """Check ``f`` and give each leaf of ``primals`` (a sequence of pytrees) its own
    float tensor (``arguments.own_leaves``)."""
    validate.callable_(f, "f", where)
    primals = validate.sequence(primals, "primals", where)
    if not primals:
        validate.fail(ValueError, where, "primals", "at least one value to differentiate at",
                      primals)
    validate.arity(f, len(primals), "primals", where)
    return own_leaves(primals, [f"primals[{i}]" for i in range(len(primals))], where)


def _tangents(tangents, primals, where):
    tangents = validate.sequence(tangents, "tangents", where)
    return like_tree(tuple(tangents), tuple(primals), where, "tangents", "primals")


def _scalar(value, where):
    if not isinstance(value, Tensor) or value.size != 1:
        shape = getattr(value, "shape", type(value).__name__)
        raise TypeError(f"grad requires a function with a scalar output, but it returned "
                        f"{shape}. For vector outputs use tg.vjp or tg.jacrev.")
    if value.dtype.kind != "f":   # a bool or an integer has no derivative to take
        raise TypeError(f"{where}: `f` must return a floating-point scalar, but it "
                        f"returned {validate.describe(value)}. That is not differentiable "
                        f"(a comparison or a count is piecewise constant): return the "
                        f"float quantity itself, e.g. the loss rather than loss > 0.")


def _gradients(tape, target, trees, output_gradients=None):
    """The gradient of ``target`` for every leaf of ``trees``, dense, as those trees."""
    flat = [leaf for tree in trees for leaf in nest.tree_leaves(tree)]
    grads = iter(tape.gradient(target, flat, output_gradients=output_gradients))
    return [nest.tree_map(lambda leaf: dense(next(grads), leaf), tree) for tree in trees]


def value_and_grad(f, argnums=0, has_aux=False):
    """A function returning ``(f(*args), gradient of f w.r.t. args[argnums])``.

    ``f`` must return a scalar. ``argnums`` is an int (one gradient) or a tuple (a tuple
    of gradients); an argument may be a pytree (nested tuples, lists, dicts, namedtuples)
    of tensors, and its gradient is a tree of the same shape. With ``has_aux=True``,
    ``f`` returns ``(value, aux)``, and the result is ``((value, aux), gradient)``.
    """
    validate.callable_(f, "f", "tg.value_and_grad")
    validate.boolean(has_aux, "has_aux", "tg.value_and_grad")
    def wrapped(*args, **kwargs):
        args, nums, single = prepare(args, argnums, "tg.grad", kwargs)
        with GradientTape() as tape:
            tape.watch([leaf for n in nums for leaf in nest.tree_leaves(args[n])])
            value, aux = split_aux(f(*args, **kwargs), has_aux, "tg.grad")
            value = as_outputs(value, "tg.grad")
        _scalar(value, "tg.grad")
        grads = _gradients(tape, value, [args[n] for n in nums])
        grads = grads[0] if single else tuple(grads)
        return ((value, aux) if has_aux else value), grads
    return called_as("tg.value_and_grad", wrapped, f)


def grad(f, argnums=0, has_aux=False):
    """A function returning the gradient of scalar-valued ``f`` w.r.t. ``args[argnums]``
    (a pytree like the argument; ``(gradient, aux)`` with ``has_aux=True``).

    >>> tg.grad(lambda x: x ** 3)(2.0)      # 3 x^2 at x = 2
    tg.Tensor(12., ...)
    """
    validate.callable_(f, "f", "tg.grad")
    vg = value_and_grad(f, argnums, has_aux)
    def wrapped(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return called_as("tg.grad", wrapped, f)


def vjp(f, *primals, has_aux=False):
    """Run ``f(*primals)`` and return ``(out, vjp_fn)`` (``(out, vjp_fn, aux)`` with
    ``has_aux=True``, where ``f`` returns ``(out, aux)``).

    ``vjp_fn(ct)`` maps a cotangent of ``out`` (a pytree of its structure and shapes)
    to a tuple of cotangents, one per primal, each a tree like its primal: the
    vector-Jacobian product ``ct^T J``. It can be called any number of times.
    """
    primals = _primals(f, primals, "tg.vjp")
    with GradientTape(persistent=True) as tape:
        tape.watch([leaf for p in primals for leaf in nest.tree_leaves(p)])
        out, aux = split_aux(f(*primals), has_aux, "tg.vjp")
        out = as_outputs(out, "tg.vjp")

    def vjp_fn(cotangent):
        cotangent = like_tree(cotangent, out, "tg.vjp", "the cotangent", "the output of f")
        return tuple(_gradients(tape, nest.tree_leaves(out), primals,
                                nest.tree_leaves(cotangent)))
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def jacrev(f, argnums=0, has_aux=False):
    """A function returning the Jacobian of ``f`` by reverse mode: shape
    ``out.shape + arg.shape``. With pytrees, as in JAX: a tree shaped like ``f``'s
    output, each leaf a tree shaped like the argument (a tuple of them for a tuple
    ``argnums``); with ``has_aux=True``, ``(jacobian, aux)``.

    Row ``k`` is the vector-Jacobian product with the one-hot cotangent ``e_k``;
    ``tape.jacobian`` maps the backward pass over all of them with ``tg.vmap``, so it
    runs ONCE per output: ``vmap(lambda e: vjp_fn(e))(eye)``.
    """
    validate.callable_(f, "f", "tg.jacrev")
    validate.boolean(has_aux, "has_aux", "tg.jacrev")
    def wrapped(*args, **kwargs):
        args, nums, single = prepare(args, argnums, "tg.jacrev", kwargs)
        trees = [args[n] for n in nums]
        flat = [leaf for tree in trees for leaf in nest.tree_leaves(tree)]
        with GradientTape(persistent=True) as tape:
            tape.watch(flat)
            out, aux = split_aux(f(*args, **kwargs), has_aux, "tg.jacrev")
            out = as_outputs(out, "tg.jacrev")

        jac = _per_output(out, lambda y: tape.jacobian(y, flat, unconnected_gradients="zero"),
                          trees, single)
        return (jac, aux) if has_aux else jac
    return wrapped


def jvp(f, primals, tangents, has_aux=False):
    """``(f(*primals), J t)``: the output and its tangent along ``tangents``, by forward
    mode (``(out, tangent, aux)`` with ``has_aux=True``).

    ``primals`` and ``tangents`` are sequences with one entry per argument; each entry
    may be a pytree, the tangent nested as its primal, leaf by leaf of its shape.
    """
    primals = _primals(f, primals, "tg.jvp")
    tangents = _tangents(tangents, primals, "tg.jvp")
    with ForwardAccumulator([leaf for p in primals for leaf in nest.tree_leaves(p)],
                            [leaf for t in tangents for leaf in nest.tree_leaves(t)]) as acc:
        out, aux = split_aux(f(*primals), has_aux, "tg.jvp")
        out = as_outputs(out, "tg.jvp")
    tangent = nest.tree_map(lambda y: acc.jvp(y, unconnected_gradients="zero"), out)
    return (out, tangent, aux) if has_aux else (out, tangent)


def jacfwd(f, argnums=0, has_aux=False):
    """A function returning the Jacobian of ``f`` by forward mode: shape
    ``out.shape + arg.shape``. With pytrees, as ``jacrev``: a tree shaped like ``f``'s
    output, each leaf a tree shaped like the argument (a tuple of them for a tuple
    ``argnums``), so ``jac[i][j]`` is output i with respect to argument j; with
    ``has_aux=True``, ``(jacobian, aux)``.

    Column ``k`` is the tangent of the output along the one-hot input tangent ``e_k``;
    ``tg.vmap`` pushes every one-hot tangent (of every argument leaf, the rows of one
    identity matrix) through ONE forward pass: ``vmap(lambda e: jvp(f, args, e))(eye)``.
    """
    validate.callable_(f, "f", "tg.jacfwd")
    validate.boolean(has_aux, "has_aux", "tg.jacfwd")
    def wrapped(*args, **kwargs):
        args, nums, single = prepare(args, argnums, "tg.jacfwd", kwargs)
        trees = [args[n] for n in nums]
        xs = [leaf for tree in trees for leaf in nest.tree_leaves(tree)]
        sizes = [x.size for x in xs]
        total = sum(sizes)
        results = []   # f's output and aux, as the mapped function computes them

        def run():
            out, aux = split_aux(f(*args, **kwargs), has_aux, "tg.jacfwd")
            return as_outputs(out, "tg.jacfwd"), aux

        def tangents_of_outputs(*tangents):
            with ForwardAccumulator(xs, list(tangents)) as acc:
                results[:] = run()
            return [acc.jvp(y, unconnected_gradients="zero")
                    for y in nest.tree_leaves(results[0])]

        if total:
            tangents = _one_hot_tangents(xs, sizes, total)
            try:
                columns = over_directions(tangents_of_outputs)(*tangents)
            except NotImplementedError as error:   # what tg.vmap cannot batch yet
                warnings.warn(f"tg.jacfwd: {error} Computing the Jacobian one column at a "
                              f"time instead.", stacklevel=2)
                columns = _map_by_loop(tangents_of_outputs, tangents, total)
            out, aux = results
        else:   # no input entries: empty Jacobians
            out, aux = run()
            columns = [zeros((0,) + tuple(y.shape), y.dtype) for y in nest.tree_leaves(out)]
        columns = iter(columns)
        jac = _per_output(out, lambda y: _split_columns(next(columns), y, xs, sizes), trees,
                          single)
        return (jac, aux) if has_aux else jac
    return wrapped


def _per_output(out, jacobians_of, trees, single):
    """A Jacobian in JAX's shape: a tree like ``out`` whose leaf for output ``y`` is a tree
    like each argument in ``trees`` (one, or a tuple); ``jacobians_of(y)`` gives ``y``'s
    Jacobians with respect to every argument leaf, in order."""
    def of_output(y):
        jacs = iter(jacobians_of(y))
        per_arg = [nest.tree_map(lambda leaf: next(jacs), tree) for tree in trees]
        return per_arg[0] if single else tuple(per_arg)
    return nest.tree_map(of_output, out)


def _one_hot_tangents(xs, sizes, total):
    """The rows of the ``total x total`` identity, cut into one tangent per argument:
    row ``k`` is the one-hot tangent of entry ``k`` of the arguments laid end to end."""
    eye, start, tangents = np.eye(total), 0, []
    for x, size in zip(xs, sizes):
        block = eye[:, start:start + size].astype(x.dtype)
        tangents.append(constant(block.reshape((total,) + tuple(x.shape))))
        start += size
    return tangents


def _map_by_loop(fn, batches, size):
    """``vmap(fn)(*batches)`` one example at a time, in a Python loop."""
    outputs = [fn(*[b[k] for b in batches]) for k in range(size)]
    return [stack(list(column)) for column in zip(*outputs)]


def _split_columns(columns, y, xs, sizes):
    """``columns`` (``[total, *y.shape]``, one per input entry) as ``y``'s Jacobian with
    respect to each input leaf: ``y.shape + x.shape``."""
    jacobians, start = [], 0
    for x, size in zip(xs, sizes):
        block = moveaxis(columns[start:start + size], 0, -1)
        jacobians.append(reshape(block, tuple(y.shape) + tuple(x.shape)))
        start += size
    return jacobians


def hessian(f, argnums=0, has_aux=False):
    """The Hessian of scalar-valued ``f``: forward mode over its reverse-mode gradient.
    With pytrees, a tree of the argument's shape whose leaves are trees of its shape."""
    validate.callable_(f, "f", "tg.hessian")
    if validate.boolean(has_aux, "has_aux", "tg.hessian"):
        return called_as("tg.hessian", jacfwd(grad(f, argnums, has_aux=True), argnums,
                                            has_aux=True), f)
    return called_as("tg.hessian", jacfwd(grad(f, argnums), argnums), f)


def hvp(f, primals, tangents):
    """Hessian-vector products ``H v`` of scalar-valued ``f``, forward over reverse.

    An accumulator pushes ``tangents`` through the gradient computation of a
    tape: the tangent of the gradient is ``H v``, at about the cost of a few
    gradients and without forming ``H``. Returns one product per primal, each a tree
    like its primal.
    """
    primals = _primals(f, primals, "tg.hvp")
    tangents = _tangents(tangents, primals, "tg.hvp")
    flat = [leaf for p in primals for leaf in nest.tree_leaves(p)]
    with ForwardAccumulator(flat, [leaf for t in tangents for leaf in nest.tree_leaves(t)]) \
            as acc:
        with GradientTape() as tape:
            tape.watch(flat)
            value = as_outputs(f(*primals), "tg.hvp")
        # Densified while the accumulator is on: a sparse gradient's to_dense() gets
        # its tangent too (after the block it would be a constant, tangent zero).
        grads = _gradients(tape, value, primals)
    return tuple(nest.tree_map(lambda g: acc.jvp(g, unconnected_gradients="zero"), g)
                 for g in grads)
