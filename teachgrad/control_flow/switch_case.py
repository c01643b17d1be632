"""``tg.switch_case`` and ``tg.case``: run one of several branches.

Both are ``tg.cond`` with more than two ways to go, and are built from it, so
everything a cond does they do too: eagerly only the chosen branch runs (a
tape records its ops, tagged with the branch that ran); in a graph each
choice is an If node, the next choice nested in its false branch::

    switch_case(i, [f0, f1, f2])  =  cond(i == 0, f0,
                                          lambda: cond(i == 1, f1, f2))

and the gradient of each If node is the gradient of the branch that ran, as
for any cond. An index out of range runs ``default``, or the last branch when
there is none (TensorFlow's rule), which is why ``f2`` above needs no test.

``case`` picks the first branch whose predicate is true. Its predicates are
turned into one index (a ``case_index`` node in a graph, which also checks
``exclusive`` and that some predicate holds when the graph runs), and the
rest is ``switch_case``.
"""
from .. import backend, dtypes, validate
from ..ops import equal
from ..ops.core.apply import innermost
from ..ops.core.batching import BatchedTensor
from ..ops.core.declare import defshape, not_differentiable, primitive
from ..state import state
from ..tensor import Tensor, convert_to_tensor
from .cond import Branch, cond
from .subgraph import entered


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """``branch_fns[branch_index]()``, or ``default()`` for an index out of range.

    Args:
      branch_index: a scalar integer tensor (or Python int) choosing the branch.
      branch_fns: a list of functions of no arguments, a dict ``{int: fn}``, or a
        list of ``(int, fn)`` pairs; the keys must be ``0, 1, ..., n - 1``. All
        must return the same nested structure of tensors, with the same dtypes.
      default: run when ``branch_index`` is out of range; without one, the last
        branch runs then.
      name: the name of the If nodes in graphs.

        y = tg.switch_case(i, [lambda: x * x, lambda: -x, lambda: tg.sin(x)])
    """
    validate.flags("tg.switch_case", name=name)
    fns = _branch_list(branch_fns)
    if default is not None:
        validate.callable_(default, "default", "tg.switch_case")
    index = _index(branch_index)
    if state.graph is None and not isinstance(index, BatchedTensor):
        k = int(index.numpy()) if isinstance(index, Tensor) else index
        taken = f"branch_fns[{k}]" if 0 <= k < len(fns) else \
            ("default" if default is not None else f"branch_fns[{len(fns) - 1}]")
        fn = fns[k] if 0 <= k < len(fns) else (default or fns[-1])
        with entered(Branch(name, taken)):
            return fn()
    # In a graph, or inside tg.vectorized_map with an index per example: a chain of conds
    # (which a map turns into selections, each example getting its own branch's result).
    return _chain(index, fns, default, 0, name)


def _chain(index, fns, default, k, name):
    """The If nodes choosing among ``fns[k:]`` (then ``default``): one per test."""
    if k == len(fns) - 1:
        if default is None:
            return fns[k]()     # the last branch takes every other index: no test
        return cond(equal(index, k), fns[k], default, name=name)
    rest = lambda: _chain(index, fns, default, k + 1, name)  # noqa: E731
    return cond(equal(index, k), fns[k], rest, name=name)


def _branch_list(branch_fns):
    """``branch_fns`` (a list, a dict or a list of pairs) as a list, in key order."""
    where = "tg.switch_case"
    if not isinstance(branch_fns, (list, tuple, dict)):
        validate.fail(TypeError, where, "branch_fns", "a list of functions, a dict {int: fn} "
                      "or a list of (int, fn) pairs", branch_fns)
    if not branch_fns:
        validate.fail(ValueError, where, "branch_fns", "at least one branch", branch_fns)
    if isinstance(branch_fns, dict):
        pairs = list(branch_fns.items())
    else:   # a function stands for the pair (its position, it)
        pairs = [(i, entry) if callable(entry) else entry for i, entry in enumerate(branch_fns)]
    for i, pair in enumerate(pairs):
        if not isinstance(pair, tuple) or len(pair) != 2:
            validate.fail(TypeError, where, f"branch_fns[{i}]", "a function or an "
                          "(int, fn) pair", pair)
        key, fn = pair
        if type(key) is not int:
            validate.fail(TypeError, where, f"branch_fns[{i}]'s key", "a Python int", key)
        validate.callable_(fn, f"branch_fns[{key}]", where)
    keys = sorted(key for key, _ in pairs)
    if keys != list(range(len(pairs))):
        validate.fail(ValueError, where, "branch_fns", f"keyed 0 to {len(pairs) - 1}, each "
                      f"once", keys, "A switch needs one branch for each index 0, 1, ....")
    return [fn for _, fn in sorted(pairs, key=lambda pair: pair[0])]


def _index(branch_index):
    """``branch_index`` checked: a Python int, or a scalar integer tensor (not a bool)."""
    if isinstance(branch_index, bool) or not isinstance(branch_index, (int, Tensor)):
        if not hasattr(branch_index, "dtype"):   # a float, a string, None, ...
            validate.fail(TypeError, "tg.switch_case", "branch_index", "an integer (a Python "
                          "int or an integer tensor)", branch_index)
        branch_index = convert_to_tensor(branch_index)   # a numpy integer or array
    if isinstance(branch_index, int):
        return branch_index
    if branch_index.dtype.kind not in "iu":
        validate.fail(TypeError, "tg.switch_case", "branch_index", "an integer tensor "
                      "(int32 or int64)", branch_index, "Cast it with tg.cast(i, tg.int64).")
    if branch_index.shape not in ((), None):
        validate.fail(ValueError, "tg.switch_case", "branch_index", "a scalar", branch_index)
    return branch_index


# -- tg.case ---------------------------------------------------------------------------------
def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The result of the first ``fn`` whose ``pred`` is true, else of ``default``.

    Args:
      pred_fn_pairs: a list of ``(pred, fn)`` pairs: a scalar bool tensor (or
        Python bool) and a function of no arguments.
      default: run when no predicate is true. Without one, the last ``fn``
        stands in for it, and it is an error if no predicate is true.
      exclusive: check that at most one predicate is true (an error otherwise).
      strict: keep a one-element list or tuple result as it is; by default it is
        unpacked to its element, as TensorFlow 1's ``case`` does.
      name: the name of the nodes in graphs.

        y = tg.case([(x < 0, lambda: -x), (x > 10, lambda: x - 10)], default=lambda: x)
    """
    validate.flags("tg.case", exclusive=exclusive, strict=strict, name=name)
    preds, fns = _pairs(pred_fn_pairs)
    if default is not None:
        validate.callable_(default, "default", "tg.case")
    index = case_index(*preds, exclusive=exclusive, has_default=default is not None)
    # Without a default the last fn stands in for it, behind a test of the index: in a
    # graph that test is what runs case_index, whose check refuses "none is true".
    result = switch_case(index, fns, fns[-1] if default is None else default, name=name)
    if not strict and isinstance(result, (list, tuple)) and len(result) == 1:
        return result[0]
    return result


def _pairs(pred_fn_pairs):
    """The predicates (scalar bool tensors) and the functions of ``pred_fn_pairs``."""
    where = "tg.case"
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    if not isinstance(pred_fn_pairs, (list, tuple)) or not pred_fn_pairs:
        validate.fail(TypeError if not isinstance(pred_fn_pairs, (list, tuple)) else ValueError,
                      where, "pred_fn_pairs", "a non-empty list of (pred, fn) pairs",
                      pred_fn_pairs)
    preds, fns = [], []
    for i, pair in enumerate(pred_fn_pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            validate.fail(TypeError, where, f"pred_fn_pairs[{i}]", "a (pred, fn) pair", pair)
        pred, fn = pair
        pred = convert_to_tensor(pred) if not isinstance(pred, Tensor) else pred
        if pred.dtype != dtypes.bool_ or pred.shape not in ((), None):
            validate.fail(TypeError, where, f"pred_fn_pairs[{i}][0]", "a scalar bool tensor",
                          pred, "Compare to make one, e.g. x > 0.")
        preds.append(pred)
        fns.append(validate.callable_(fn, f"pred_fn_pairs[{i}][1]", where))
    return preds, fns


def _case_index_kernel(*preds, exclusive, has_default):
    truths = [bool(p) for p in preds]
    if exclusive and sum(truths) > 1:
        raise ValueError(f"tg.case(exclusive=True): more than one predicate is true: "
                         f"{truths}. Make them exclusive, or pass exclusive=False to take "
                         f"the first true one.")
    if not any(truths) and not has_default:
        raise ValueError(f"tg.case: none of the predicates is true ({truths}) and no "
                         f"default was given. Pass default= for that case.")
    first = truths.index(True) if any(truths) else len(truths)
    return backend.xp.asarray(first, dtype=dtypes.int64)


# case_index(*preds; exclusive, has_default): the position of the first true predicate
# (their number when none is), checking case's rules as it goes.
case_index_p = not_differentiable(primitive("case_index", _case_index_kernel))
defshape(case_index_p, lambda *preds, **params: [((), dtypes.int64)])


def case_index(*preds, exclusive=False, has_default=True):
    """The index of the first true one of ``preds`` (scalar bools)."""
    return innermost.process(case_index_p, *preds, exclusive=exclusive, has_default=has_default)
