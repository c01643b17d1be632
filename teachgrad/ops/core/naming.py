"""``name=``: every public op takes one, and its result carries it.

    a = tg.multiply(x, y, name="a")      # eagerly: a.name == "a"
    with graph.as_default():
        a = tg.multiply(x, y, name="a")  # in a graph: the node is "a" (or "a_1" if taken)

The name is what drawings, steppers, events and error messages call the
tensor. The op functions themselves (``def sin(x): return bind(sin_p, x)``)
know nothing of names: where they are made public (``teachgrad/ops/__init__.py``,
``tg.nn``, ``tg.linalg``) a visible loop wraps each one with ``takes_name``,
which adds a keyword-only ``name=None``. A call without a name costs one plain
Python call more and nothing else. Operators (``a * b``) and the ops that
gradient rules call use the op functions directly and pay nothing.

With a name, the op runs as usual and its result is labelled afterwards:

* an eager tensor gets ``tensor.name = name`` (several outputs: ``name:0``,
  ``name:1``, ... as in TensorFlow);
* a graph tensor's node is renamed ``name`` under the current name scopes,
  numbered if taken (``graph.rename(node, name)``);
* an op that hands back one of its inputs unchanged (``tg.reshape`` to the
  same shape, say) returns a named ``identity`` of it, so that the input keeps
  its own name;
* a TypeError or ValueError raised by the op says which named op failed.
"""
import functools
import inspect
import types

from ... import validate
from ...tensor import SymbolicTensor, Tensor, next_tensor_id as new_tensor_id

#: Exported functions of ``teachgrad.ops`` that are not ops and take no name.
NOT_OPS = frozenset({"bind", "primitive", "defvjp", "defjvp", "defvjp_all", "not_differentiable"})


def unnamed_ops(namespace, package="teachgrad."):
    """The keys of ``namespace`` (a module's ``globals()``) that hold public op
    functions without a ``name`` parameter yet: functions defined in ``package``,
    not private, not in ``NOT_OPS``."""
    keys = []
    for key, fn in namespace.items():
        if (key.startswith("_") or key in NOT_OPS or not isinstance(fn, types.FunctionType)
                or not fn.__module__.startswith(package)):
            continue
        try:
            parameters = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        if "name" not in parameters:
            keys.append(key)
    return keys


def takes_name(fn, prefix="tg."):
    """``fn`` with a keyword-only ``name=None`` parameter added (see the module
    docstring). ``prefix`` is how the function is reached (``"tg.nn."``), for the
    error messages about ``name``.

    The wrapper's ``__signature__`` is ``fn``'s with ``name`` added, so
    ``help(tg.sin)`` and ``inspect.signature`` show ``sin(x, *, name=None)``."""
    where = prefix + fn.__name__

    @functools.wraps(fn)
    def op(*args, name=None, **kwargs):
        if name is None:
            return fn(*args, **kwargs)
        return _labelled(where, name, lambda: fn(*args, **kwargs))

    signature = inspect.signature(fn)
    name_parameter = inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None)
    kept = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    extra = [p for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD]
    op.__signature__ = signature.replace(parameters=kept + [name_parameter] + extra)
    return op


def _labelled(where, name, run):
    """Run the op (``run()``, the function ``where`` names), then label what it made
    ``name``."""
    validate.name(name, where)
    if not name.strip("/"):
        validate.fail(ValueError, where, "name", "a non-empty string (e.g. 'a')", name)
    first = new_tensor_id()   # tensors with a larger id were made by this call
    try:
        result = run()
    except (TypeError, ValueError) as error:
        raise _named_error(error, name) from None
    return label(result, name, first)


def label(result, name, first=-1):
    """``result`` (a tensor, or a list or tuple of them) labelled ``name``; a tensor
    whose id is not above ``first`` was not made by the op, and is named through an
    ``identity``."""
    if isinstance(result, Tensor):
        return _label_one(result, name, None, first, set())
    if isinstance(result, (list, tuple)) and result and all(
            isinstance(t, Tensor) for t in result):
        renamed = set()
        labelled = [_label_one(t, name, i, first, renamed) for i, t in enumerate(result)]
        return labelled if isinstance(result, list) else tuple(labelled)
    return result


def _label_one(tensor, name, index, first, renamed):
    if tensor.id <= first or type(tensor) not in (Tensor, SymbolicTensor):
        from ..elementwise.casts import identity  # here: misc imports this package's core
        tensor = identity(tensor)    # an input handed back unchanged keeps its own name
    if isinstance(tensor, SymbolicTensor):
        if id(tensor.node) not in renamed:   # the outputs of one node are name:0, name:1
            renamed.add(id(tensor.node))
            tensor.graph.rename(tensor.node, name)
        return tensor
    tensor.name = name if index is None else f"{name}:{index}"
    return tensor


def _named_error(error, name):
    """``error`` again, saying which named op raised it."""
    try:
        return type(error)(f"{error} (in the op named {name!r})")
    except Exception:
        note = f"Raised by the op named {name!r}."
        if hasattr(error, "add_note"):
            error.add_note(note)
        return error
