"""The arguments and results of the function transformations, as pytrees.

``tg.grad``, ``tg.vjp``, ``tg.jvp`` and the Jacobians take and return *pytrees*, JAX's
word for nested tuples, lists, dicts and namedtuples of tensors (``teachgrad.nest``):
``tg.grad(loss)({"w": w, "b": b})`` returns ``{"w": dw, "b": db}``. This module turns
the differentiated arguments into the flat list of tensors a tape or an accumulator
watches, and the flat answers back into trees.

Each differentiated leaf gets a tensor of its own, ``identity(x)``, made before ``f``
runs (``slots.py`` says why): ``f`` reads the copy, the tape watches the copy, and the
copy's gradient holds only the uses of its argument slot. So in
``tg.grad(lambda a: a * x)(x)``, where ``x`` is both the argument and captured, the
answer is ``x`` (the slot's derivative), as in JAX, not ``2 x``.
"""
from .. import dtypes, nest, validate
from ..ops import IndexedSlices, identity, zeros_like
from ..tensor import Tensor, Variable, constant
from .slots import own_slot, repeated


def as_float_tensor(value, name, where):
    """``value`` as a floating-point tensor (a Variable stays itself)."""
    if isinstance(value, Variable):
        return value
    t = value if isinstance(value, Tensor) else constant(
        validate.tensor_like(value, name, where))
    if not dtypes.is_differentiable(t.dtype):
        validate.fail(TypeError, where, name, "floating-point (only they can be "
                      "differentiated)", value, "Pass e.g. 3.0 instead of 3.")
    return t


def own_leaves(trees, names, where, others=()):
    """``trees`` (one pytree per differentiated argument) with each leaf a float tensor
    of its own: a tensor leaf becomes ``identity(leaf)``, so that a use of the same tensor
    outside its slot (captured by ``f``, or in another argument: ``others``) is not
    counted as a use of the slot. A Variable stays itself (``f`` may assign to it),
    unless it fills several slots."""
    for tree, name in zip(trees, names):
        if not nest.tree_leaves(tree):   # None, or an empty list, tuple or dict
            validate.fail(TypeError, where, name, "a value to differentiate at (a tensor, a "
                          "number, or a tree holding at least one)", tree)
    converted = [nest.tree_map(lambda leaf, name=name: as_float_tensor(leaf, name, where),
                               tree) for tree, name in zip(trees, names)]
    shared = repeated([leaf for t in converted for leaf in nest.tree_leaves(t)]
                      + [leaf for t in others for leaf in nest.tree_leaves(t)])
    return [nest.tree_map(lambda leaf: own_slot(leaf, shared) if isinstance(leaf, Variable)
                          else identity(leaf), tree) for tree in converted]


def argnums_of(argnums, count, where):
    """``(nums, single)``: the positions asked for, and whether one int was given."""
    single = not isinstance(argnums, (list, tuple))
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        validate.fail(ValueError, where, "argnums", "an int or a non-empty tuple of ints",
                      argnums)
    for n in nums:
        validate.integer(n, "argnums", where)
        if not -count <= n < count:
            raise ValueError(f"{where}: argnums {argnums} is out of range for a call with "
                             f"{count} positional arguments.")
    return tuple(n % count for n in nums), single


def prepare(args, argnums, where, kwargs=None):
    """``(args, nums, single)``: ``args`` with the differentiated ones (``argnums``)
    given leaves of their own, as ``own_leaves`` makes them."""
    nums, single = argnums_of(argnums, len(args), where)
    mine = sorted(set(nums))
    args = list(args)
    others = [a for i, a in enumerate(args) if i not in mine] + list((kwargs or {}).values())
    for n, tree in zip(mine, own_leaves([args[n] for n in mine],
                                        [f"argument {n}" for n in mine], where, others)):
        args[n] = tree
    return args, nums, single


def as_outputs(out, where):
    """``f``'s result with each Python number in it made a constant (whose derivative
    is zero), so that ``lambda x: 3.0`` differentiates like ``lambda x: tg.constant(3.0)``."""
    return nest.tree_map(lambda o: o if isinstance(o, Tensor) else constant(
        validate.tensor_like(o, "the output of f", where)), out)


def split_aux(result, has_aux, where):
    """``(out, aux)`` of ``f``'s result: with ``has_aux``, ``f`` returns the pair."""
    if not validate.boolean(has_aux, "has_aux", where):
        return result, None
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        validate.fail(TypeError, where, "the result of f", "a pair (output, aux) when "
                      "has_aux=True", result, "Return `out, aux` from f, or drop has_aux.")
    return result[0], result[1]


def dense(g, like):
    """A gradient as a plain tensor: zeros for None, an IndexedSlices made dense."""
    if g is None:
        return zeros_like(like)
    return g.to_dense() if isinstance(g, IndexedSlices) else g


def like_tree(tree, template, where, name, template_name, same_dtype=False):
    """``tree`` (tangents or cotangents) checked against ``template`` (the primals or the
    outputs): the same nesting, and each leaf a tensor of its leaf's shape (and, with
    ``same_dtype``, of its dtype)."""
    def one(like, value):
        t = value if isinstance(value, Tensor) else constant(
            validate.tensor_like(value, name, where, like.dtype))
        if (t.shape is not None and like.shape is not None
                and tuple(t.shape) != tuple(like.shape)):
            raise ValueError(f"{where}: {name} has shape {tuple(t.shape)} where "
                             f"{template_name} has shape {tuple(like.shape)}; each leaf "
                             f"of {name} must have the shape of its leaf of {template_name}.")
        if same_dtype and t.dtype != like.dtype:
            raise TypeError(f"{where}: {name} has dtype {t.dtype.name} where "
                            f"{template_name} has dtype {like.dtype.name}; give each leaf "
                            f"the dtype of its leaf of {template_name}.")
        return t
    entries = tree if isinstance(tree, (tuple, list)) else (tree,)
    likes = template if isinstance(tree, (tuple, list)) else (template,)
    for entry, like in zip(entries, likes):
        if entry is None and like is not None:
            validate.fail(TypeError, where, name, f"a value (a tensor or a tree of them) for "
                          f"each entry of {template_name}", tree)
    return nest.tree_map(one, template, tree, where=where, names=[template_name, name])
