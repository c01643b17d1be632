"""``name=``: every public op takes one, and its result carries it.

    a = tg.multiply(x, y, name="a")      # eagerly: a.name == "a"
    with graph.as_default():
        a = tg.multiply(x, y, name="a")  # in a graph: the node is "a" (or "a_1" if taken)

The name is what drawings, steppers, events and error messages call the
tensor. The op functions themselves (``def sin(x): return bind(sin_p, x)``)
know nothing of names: ``take_names`` gives each public one a twin that takes
``name=`` as well, with the op's own parameters, so a call without a name costs
one plain Python call more and nothing else. Operators (``a * b``) and the ops
that gradient rules call use the op functions directly and pay nothing.

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
import inspect
import types

from .. import validate
from ..tensor import SymbolicTensor, Tensor, next_tensor_id as new_tensor_id

#: Exported functions of ``teachgrad.ops`` that are not ops and take no name.
NOT_OPS = frozenset({"bind", "primitive", "defvjp", "defjvp", "defvjp_all", "not_differentiable"})


def take_names(namespace, package="teachgrad.", prefix="tg."):
    """Replace each public op function in ``namespace`` (a module's ``globals()``)
    by a twin that also takes ``name=``. Functions defined outside ``package``,
    private ones, and those that take a ``name`` already are left alone. ``prefix``
    is how the namespace is reached (``"tg.nn."``), for the twin's error messages."""
    for key, fn in list(namespace.items()):
        if (key.startswith("_") or key in NOT_OPS or not isinstance(fn, types.FunctionType)
                or not fn.__module__.startswith(package) or hasattr(fn, "__named__")):
            continue
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):
            continue
        if "name" in signature.parameters:
            continue
        namespace[key] = named(fn, signature, prefix)


def named(fn, signature=None, prefix="tg."):
    """``fn`` with a ``name=None`` keyword parameter added (see the module docstring).

    The twin is compiled with ``fn``'s own parameter list, so that a call without
    a name passes its arguments straight on (no ``*args`` packing)."""
    signature = signature or inspect.signature(fn)
    defaults, params, call = {}, [], []
    keyword_only = False
    for p in signature.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            params.append(f"*{p.name}")
            call.append(f"*{p.name}")
            keyword_only = True
            continue
        if p.kind is p.VAR_KEYWORD:
            continue
        if p.kind is p.KEYWORD_ONLY and not keyword_only:
            params.append("*")
            keyword_only = True
        spelled = p.name
        if p.default is not p.empty:
            defaults[f"_default_{p.name}"] = p.default
            spelled += f"=_default_{p.name}"
        params.append(spelled)
        call.append(f"{p.name}={p.name}" if p.kind is p.KEYWORD_ONLY else p.name)
    if not keyword_only:
        params.append("*")
    params.append("name=None")
    var_keyword = next((p.name for p in signature.parameters.values()
                        if p.kind is p.VAR_KEYWORD), None)
    if var_keyword:
        params.append(f"**{var_keyword}")
        call.append(f"**{var_keyword}")
    arguments, passed = ", ".join(params), ", ".join(call)
    source = (f"def {fn.__name__}({arguments}):\n"
              f"    if name is None:\n"
              f"        return _fn({passed})\n"
              f"    return _labelled(_where, name, lambda: _fn({passed}))\n")
    scope = dict(defaults, _fn=fn, _labelled=_labelled, _where=prefix + fn.__name__)
    # Compiled as if written in this file, so that the frames that look for the user's
    # line (tg.debug's source lines, check_numerics) skip the twin as teachgrad's own.
    exec(compile(source, __file__, "exec"), scope)   # noqa: S102 (no user text in it)
    twin = scope[fn.__name__]
    twin.__doc__, twin.__module__, twin.__qualname__ = fn.__doc__, fn.__module__, fn.__qualname__
    twin.__wrapped__ = fn
    twin.__named__ = True
    name_parameter = inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None)
    kept = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    extra = [p for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD]
    twin.__signature__ = signature.replace(parameters=kept + [name_parameter] + extra)
    return twin


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
        from .misc import identity   # here: misc imports this package's core
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
