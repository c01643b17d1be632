"""Function transformations on top of the tape, with JAX's names.

``tg.grad(f)`` is a new function that returns the gradient of ``f``: it runs
``f`` under a GradientTape that watches the chosen arguments and asks the tape
for the gradient. Unconnected arguments get zeros, and sparse gradients are
made dense, so the results are always plain tensors.
"""
import warnings

import numpy as np

from .. import dtypes, nest, validate
from ..ops import IndexedSlices, moveaxis, reshape, stack, zeros, zeros_like
from ..tensor import Tensor, Variable, constant
from .called_as import called_as
from .forward import ForwardAccumulator
from .slots import own_slot, repeated
from .tape import GradientTape
from .vectorize import vmap


def _as_float_tensor(value, position, name=None, where="the differentiated function"):
    if isinstance(value, Variable):
        return value
    t = value if isinstance(value, Tensor) else constant(
        validate.tensor_like(value, name or f"argument {position}", where))
    if not dtypes.is_floating(t.dtype):
        validate.fail(TypeError, where, name or f"argument {position}", "floating-point (only "
                      "they can be differentiated)", value, "Pass e.g. 3.0 instead of 3.")
    return t


_NO_TANGENTS = object()


def _primals(f, primals, where, tangents=_NO_TANGENTS):
    """Check ``f`` and convert ``primals`` (and ``tangents``, one per primal, if given)."""
    validate.callable_(f, "f", where)
    primals = validate.sequence(primals, "primals", where)
    if not primals:
        validate.fail(ValueError, where, "primals", "at least one value to differentiate at",
                      primals)
    primals = [_as_float_tensor(p, i, f"primals[{i}]", where) for i, p in enumerate(primals)]
    shared = repeated(primals)                  # one tensor, several slots: one source each
    primals = [own_slot(p, shared) for p in primals]
    validate.arity(f, len(primals), "primals", where)
    if tangents is _NO_TANGENTS:
        return primals
    tangents = validate.sequence(tangents, "tangents", where)
    if len(tangents) != len(primals):
        validate.fail(ValueError, where, "tangents", f"one tangent per primal ({len(primals)})",
                      tangents)
    return primals, [_as_tangent(t, p, where) for t, p in zip(tangents, primals)]


def _as_tangent(tangent, primal, where):
    if isinstance(tangent, Tensor):
        return tangent
    return constant(validate.tensor_like(tangent, "tangents", where, primal.dtype))


def _as_outputs(out, where):
    """``f``'s result with each Python number in it made a constant (whose derivative
    is zero), so that ``lambda x: 3.0`` differentiates like ``lambda x: tg.constant(3.0)``."""
    flat = nest.flatten(out)
    if all(isinstance(o, Tensor) for o in flat):
        return out
    return nest.pack_sequence_as(out, [
        o if isinstance(o, Tensor) else
        constant(validate.tensor_like(o, "the output of f", where)) for o in flat])


def _dense(g, like):
    if g is None:
        return zeros_like(like)
    return g.to_dense() if isinstance(g, IndexedSlices) else g


def _prepare(args, argnums, where="tg.grad", kwargs=None):
    """Convert the differentiated arguments to tensors, each slot its own (see slots.py)."""
    single = not isinstance(argnums, (list, tuple))
    nums = (argnums,) if single else tuple(argnums)
    for n in nums:
        validate.integer(n, "argnums", where)
        if not -len(args) <= n < len(args):
            raise ValueError(f"argnums {argnums} is out of range for a call with "
                             f"{len(args)} positional arguments.")
    args, mine = list(args), sorted({n % len(args) for n in nums})
    for n in mine:
        args[n] = nest.pack_sequence_as(
            args[n], [_as_float_tensor(a, n, where=where) for a in nest.flatten(args[n])])
    shared = repeated(nest.flatten(args) + nest.flatten(list((kwargs or {}).values())))
    for n in mine:
        args[n] = nest.pack_sequence_as(
            args[n], [own_slot(a, shared) for a in nest.flatten(args[n])])
    return args, nums, single


def value_and_grad(f, argnums=0):
    """A function returning ``(f(*args), gradient of f w.r.t. args[argnums])``.

    ``f`` must return a scalar. ``argnums`` is an int (one gradient) or a tuple
    (a tuple of gradients); an argument may be a nested list/dict of tensors.
    """
    validate.callable_(f, "f", "tg.value_and_grad")
    def wrapped(*args, **kwargs):
        args, nums, single = _prepare(args, argnums, kwargs=kwargs)
        with GradientTape() as tape:
            tape.watch([args[n] for n in nums])
            value = _as_outputs(f(*args, **kwargs), "tg.grad")
        if not isinstance(value, Tensor) or value.size != 1:
            shape = getattr(value, "shape", type(value).__name__)
            raise TypeError(f"grad requires a function with a scalar output, but it returned "
                            f"{shape}. For vector outputs use tg.vjp or tg.jacrev.")
        if value.dtype.kind != "f":   # a bool or an integer has no derivative to take
            raise TypeError(f"tg.grad: `f` must return a floating-point scalar, but it "
                            f"returned {validate.describe(value)}. That is not differentiable "
                            f"(a comparison or a count is piecewise constant): return the "
                            f"float quantity itself, e.g. the loss rather than loss > 0.")
        grads = tape.gradient(value, [args[n] for n in nums])
        grads = [nest.pack_sequence_as(args[n], [_dense(g, a) for g, a in
                                                 zip(nest.flatten(gs), nest.flatten(args[n]))])
                 for n, gs in zip(nums, grads)]
        return value, (grads[0] if single else tuple(grads))
    return called_as("tg.value_and_grad", wrapped, f)


def grad(f, argnums=0):
    """A function returning the gradient of scalar-valued ``f`` w.r.t. ``args[argnums]``.

    >>> tg.grad(lambda x: x ** 3)(2.0)      # 3 x^2 at x = 2
    tg.Tensor(12., ...)
    """
    validate.callable_(f, "f", "tg.grad")
    vg = value_and_grad(f, argnums)
    def wrapped(*args, **kwargs):
        return vg(*args, **kwargs)[1]
    return called_as("tg.grad", wrapped, f)


def vjp(f, *primals):
    """Run ``f(*primals)`` and return ``(out, vjp_fn)``.

    ``vjp_fn(ct)`` maps a cotangent of ``out`` (same structure) to a tuple of
    cotangents, one per primal: the vector-Jacobian product ``ct^T J``. It can
    be called any number of times.
    """
    primals = _primals(f, primals, "tg.vjp")
    with GradientTape(persistent=True) as tape:
        tape.watch(primals)
        out = f(*primals)

    def vjp_fn(cotangent):
        nest.assert_same_structure(out, cotangent, "output and cotangent")
        grads = tape.gradient(out, primals, output_gradients=cotangent)
        return tuple(_dense(g, p) for g, p in zip(grads, primals))
    return out, vjp_fn


def jacrev(f, argnums=0):
    """A function returning the Jacobian of ``f`` by reverse mode: shape
    ``out.shape + arg.shape`` (a tuple of them for a tuple ``argnums``).

    Row ``k`` is the vector-Jacobian product with the one-hot cotangent ``e_k``;
    ``tape.jacobian`` maps the backward pass over all of them with ``tg.vmap``, so it
    runs ONCE: ``vmap(lambda e: vjp_fn(e))(eye)``.
    """
    validate.callable_(f, "f", "tg.jacrev")
    def wrapped(*args, **kwargs):
        args, nums, single = _prepare(args, argnums, "tg.jacrev", kwargs)
        with GradientTape(persistent=True) as tape:
            tape.watch([args[n] for n in nums])
            out = _as_outputs(f(*args, **kwargs), "tg.jacrev")
        if not isinstance(out, Tensor):
            raise TypeError(f"jacrev needs a function returning one tensor, got {type(out).__name__}.")
        jacs = tape.jacobian(out, [args[n] for n in nums],
                             unconnected_gradients="zero")
        return jacs[0] if single else tuple(jacs)
    return wrapped


def jvp(f, primals, tangents):
    """``(f(*primals), J t)``: the output and its tangent along ``tangents``, by forward mode.

    ``primals`` and ``tangents`` are sequences with one entry per argument.
    """
    primals, tangents = _primals(f, primals, "tg.jvp", tangents)
    with ForwardAccumulator(primals, tangents) as acc:
        out = _as_outputs(f(*primals), "tg.jvp")
    return out, acc.jvp(out, unconnected_gradients="zero")


def jacfwd(f, argnums=0):
    """A function returning the Jacobian of ``f`` by forward mode: shape
    ``out.shape + arg.shape``. With a tuple ``argnums`` there is one Jacobian per
    argument; with several outputs, one (tuple) per output, as in JAX: ``jac[i][j]`` is
    output i with respect to argument j.

    Column ``k`` is the tangent of the output along the one-hot input tangent ``e_k``;
    ``tg.vmap`` pushes every one-hot tangent (of every argument, the rows of one
    identity matrix) through ONE forward pass: ``vmap(lambda e: jvp(f, args, e))(eye)``.
    """
    validate.callable_(f, "f", "tg.jacfwd")
    def wrapped(*args):
        args, nums, single = _prepare(args, argnums, "tg.jacfwd")
        xs = [args[n] for n in nums]
        sizes = [x.size for x in xs]
        total = sum(sizes)
        results = []   # f's output, as the mapped function computes it

        def tangents_of_outputs(*tangents):
            with ForwardAccumulator(xs, list(tangents)) as acc:
                results[:] = [_as_outputs(f(*args), "tg.jacfwd")]
            return [acc.jvp(y, unconnected_gradients="zero") for y in nest.flatten(results[0])]

        if total:
            tangents = _one_hot_tangents(xs, sizes, total)
            try:
                columns = vmap(tangents_of_outputs)(*tangents)
            except NotImplementedError as error:   # what tg.vmap cannot batch yet
                warnings.warn(f"tg.jacfwd: {error} Computing the Jacobian one column at a "
                              f"time instead.", stacklevel=2)
                columns = _map_by_loop(tangents_of_outputs, tangents, total)
            out = results[0]
        else:   # no input entries: empty Jacobians
            out = _as_outputs(f(*args), "tg.jacfwd")
            columns = [zeros((0,) + tuple(y.shape), y.dtype) for y in nest.flatten(out)]
        jacobians = [_split_columns(c, y, xs, sizes, single)
                     for c, y in zip(columns, nest.flatten(out))]
        return nest.pack_sequence_as(out, jacobians)
    return wrapped


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


def _split_columns(columns, y, xs, sizes, single):
    """``columns`` (``[total, *y.shape]``, one per input entry) as ``y``'s Jacobian with
    respect to each argument: ``y.shape + x.shape``."""
    jacobians, start = [], 0
    for x, size in zip(xs, sizes):
        block = moveaxis(columns[start:start + size], 0, -1)
        jacobians.append(reshape(block, tuple(y.shape) + tuple(x.shape)))
        start += size
    return jacobians[0] if single else tuple(jacobians)


def hessian(f, argnums=0):
    """The Hessian of scalar-valued ``f``: forward mode over its reverse-mode gradient."""
    validate.callable_(f, "f", "tg.hessian")
    return called_as("tg.hessian", jacfwd(grad(f, argnums), argnums), f)


def hvp(f, primals, tangents):
    """Hessian-vector products ``H v`` of scalar-valued ``f``, forward over reverse.

    An accumulator pushes ``tangents`` through the gradient computation of a
    tape: the tangent of the gradient is ``H v``, at about the cost of a few
    gradients and without forming ``H``. Returns one product per primal.
    """
    primals, tangents = _primals(f, primals, "tg.hvp", tangents)
    with ForwardAccumulator(primals, tangents) as acc:
        with GradientTape() as tape:
            tape.watch(primals)
            value = _as_outputs(f(*primals), "tg.hvp")
        grads = tape.gradient(value, primals, unconnected_gradients="zero")
        # Densified while the accumulator is on: a sparse gradient's to_dense() gets
        # its tangent too (after the block it would be a constant, tangent zero).
        grads = [_dense(g, p) for g, p in zip(grads, primals)]
    return tuple(acc.jvp(g, unconnected_gradients="zero") for g in grads)
