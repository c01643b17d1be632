"""``name=``: every public op takes one, and its result carries it.

    a = tg.multiply(x, y, name="a")      # eagerly: a.name == "a"
    with graph.as_default():
        a = tg.multiply(x, y, name="a")  # in a graph: the node is "a" (or "a_1" if taken)

The name is what drawings, steppers, events and error messages call the
tensor. The op functions themselves (``def sin(x): return innermost.process(sin_p, x)``)
know nothing of names: where they are made public (``teachgrad/ops/__init__.py``,
``tg.nn``, ``tg.linalg``, ``tg.random``) one call, ``name_public_ops(globals(), ...)``,
wraps each one with ``takes_name``, which adds a keyword-only ``name=None``. A call without a name costs one plain
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
import linecache
import os
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


def name_public_ops(namespace, prefix="tg.", keep=()):
    """Replace each public op function in ``namespace`` (a module's ``globals()``) by
    itself wrapped with ``takes_name``: the one way every public op gets ``name=``.
    ``keep``: keys to leave as they are (functions that make no tensor)."""
    for key in unnamed_ops(namespace):
        if key not in keep:
            namespace[key] = takes_name(namespace[key], prefix)


def takes_name(fn, prefix="tg."):
    """``fn`` with a keyword-only ``name=None`` parameter added (see the module
    docstring). ``prefix`` is how the function is reached (``"tg.nn."``), for the
    error messages about ``name``.

    The wrapper is written out with ``fn``'s own parameters (``def multiply(x, y, *,
    name=None)``), so a call without a name hands them straight on, with no packing of
    ``*args`` and ``**kwargs``: ``x * y`` is ``tg.multiply(x, y)`` and pays one plain
    call for it. ``help(tg.sin)`` and ``inspect.signature`` show ``sin(x, *, name=None)``."""
    signature = inspect.signature(fn)
    name_parameter = inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None)
    kept = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    extra = [p for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD]
    namespace = {"_op_fn_": fn, "_op_where_": prefix + fn.__name__, "_labelled": _labelled}
    parameters, arguments = _forwarded(kept + [name_parameter] + extra, namespace)
    call = f"_op_fn_({', '.join(arguments)})"
    source = (f"def {fn.__name__}({', '.join(parameters)}):\n"
              f"    if name is None:\n        return {call}\n"
              f"    return _labelled(_op_where_, name, lambda: {call})\n")
    # A file name inside the package: tracebacks show the wrapper's lines (linecache), and
    # tg.debug.record_sources skips it as teachgrad's own frame, as it skips the op's.
    filename = os.path.join(os.path.dirname(__file__), f"<name= wrapper of {prefix}{fn.__name__}>")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    op = functools.update_wrapper(namespace[fn.__name__], fn)
    op.__signature__ = signature.replace(parameters=kept + [name_parameter] + extra)
    return op


def _forwarded(parameters, namespace):
    """The parameter list of a wrapper with these ``parameters`` (each default a name in
    ``namespace``), and the arguments that hand them on (all but ``name``)."""
    texts, arguments, starred = [], [], False
    kinds = inspect.Parameter
    for i, p in enumerate(parameters):
        text = p.name
        if p.default is not p.empty:
            namespace[f"_op_default_{i}"] = p.default
            text += f"=_op_default_{i}"
        if p.kind is kinds.VAR_POSITIONAL:
            text, starred = "*" + p.name, True
        elif p.kind is kinds.VAR_KEYWORD:
            text = "**" + p.name
        elif p.kind is kinds.KEYWORD_ONLY and not starred:
            texts.append("*")
            starred = True
        if p.kind is kinds.POSITIONAL_ONLY and (i + 1 == len(parameters) or parameters[
                i + 1].kind is not kinds.POSITIONAL_ONLY):
            text += ", /"
        texts.append(text)
        if p.name != "name":
            arguments.append({kinds.VAR_POSITIONAL: "*", kinds.VAR_KEYWORD: "**"}.get(p.kind, "")
                             + (f"{p.name}={p.name}" if p.kind is kinds.KEYWORD_ONLY else p.name))
    return texts, arguments


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
