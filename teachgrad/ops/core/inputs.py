"""Saying what was wrong with an op's inputs, in the caller's words.

A conversion that fails in an interpreter is said again naming the argument as the
public function that was given it calls it (``input_error``: ``tg.exp: `x` must be
numbers ...``; ``public_caller`` finds that function), an op that reads a shape before
handing itself over checks its operand first (``operand``), and a kernel's error names
the op and its input shapes (``with_context``). The conversions themselves are here too:
``convert_inputs`` (what an op makes of Python numbers, arrays and Variables),
``batch_inputs`` (inside ``tg.vectorized_map``) and ``as_arrays`` (for an op run on raw
arrays).
"""
import os
import sys

from ... import backend, validate
from ...state import per_thread
from ...tensor import (
    SymbolicTensor,
    Tensor,
    Variable,
    as_array,
    convert_to_tensor,
    holds_tensor,
    packed,
)
from .batching import BatchedTensor, innermost_frame
from .recorder import note_variable_read


def input_error(where, args, error, caller):
    """``error``, raised converting one of ``args`` to a tensor, said again naming that
    argument (``tg.exp: `x` must be numbers ...``) when a validator can say what was
    wrong. Its name is the one it has in ``caller``, the frame of the public function
    that was given it (looked up only now, when there is an error to explain)."""
    code = caller.f_code
    parameters = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                                  + bool(code.co_flags & 4)]   # with a *args
    names = {k: v for k, v in caller.f_locals.items() if k in parameters}
    for i, a in enumerate(args):
        if not isinstance(a, Tensor):
            name = next((k for k, v in names.items() if v is a), None) or next(
                (f"{k}[{j}]" for k, v in names.items() if isinstance(v, (list, tuple))
                 for j, e in enumerate(v) if e is a), f"input {i}")
            try:
                if type(a) in (list, tuple) and holds_tensor(a):
                    packed(a, name, where)
                else:
                    validate.tensor_like(a, name, where)
            except (TypeError, ValueError) as named:
                return named
    return error


def operand(x, name, where):
    """``x`` as something with a shape (for an op that reads it before ``bind``): a
    Python number or (nested) list becomes a constant tensor, checked."""
    if hasattr(x, "ndim"):
        return x
    if type(x) in (list, tuple) and holds_tensor(x):
        return packed(x, name, where)   # tg.stack of its entries: differentiable
    return Tensor(validate.tensor_like(x, name, where))


def with_context(error, where, shapes):
    """``error`` again, saying where it happened: ``where`` (the op or node that
    failed) and the shapes of its inputs.

    The error keeps its type, so ``except TypeError`` catches it as before. It is
    rebuilt around the longer message when its type takes just a message; a type
    whose constructor wants more (numpy's casting errors want the dtypes) is kept
    as it is and gets the context as a note, printed under it in the traceback.
    """
    try:
        return type(error)(f"{where}: {error} (input shapes: {shapes})")
    except Exception:
        note = f"Raised by {where} (input shapes: {shapes})."
        if hasattr(error, "add_note"):   # Python 3.11+
            error.add_note(note)
        else:
            error.__notes__ = [*getattr(error, "__notes__", ()), note]
        return error


def convert_inputs(args):
    """``args`` of an op as Tensors: Python scalars and arrays become constants (of the
    dtype of the first tensor beside them), a Variable is read through its snapshot."""
    if len(args) == 2:   # a binary op, `x * 2.0`: the commonest case, spelled out
        x, y = args
        like = x if isinstance(x, Tensor) else y if isinstance(y, Tensor) else None
        return (x if type(x) is Tensor else as_input(x, like),
                y if type(y) is Tensor else as_input(y, like))
    like = None   # the first tensor: Python scalars take its dtype
    for a in args:
        if isinstance(a, Tensor):
            like = a
            break
    return tuple([a if type(a) is Tensor else as_input(a, like) for a in args])


def batch_inputs(args):
    """``args`` of an op inside tg.vectorized_map as tensors for its batching rule. While
    a graph is built, a Variable stays one: the graph reads it when the rule's ops are
    added (eagerly, its snapshot is read here, as ``bind`` reads it)."""
    if per_thread.state.graph is None:
        return convert_inputs(args)
    like = next((a for a in args if isinstance(a, Tensor)), None)
    return tuple([a if isinstance(a, Tensor) else as_input(a, like) for a in args])


def as_input(value, like):
    """One input of an op as a Tensor (``like``: the tensor whose dtype a number takes)."""
    if (type(value) is float or type(value) is int) and like is not None \
            and like.dtype.kind == "f":
        # The commonest case, `x * 2.0` or `y - 1`, ahead of the checks below: what
        # convert_to_tensor makes of a number next to a float tensor.
        return Tensor(backend.scalar(value, like.dtype))
    if isinstance(value, Variable):
        snapshot = value.snapshot
        if per_thread.state.recorders:
            note_variable_read(value, snapshot)
        return snapshot
    if isinstance(value, SymbolicTensor):
        raise RuntimeError(
            f"{value.name} belongs to a graph and has no value here. Build ops on it inside "
            f"`with graph.as_default():`, or evaluate it with tg.Session(graph).run(...).")
    if isinstance(value, BatchedTensor):   # used after its map returned?
        innermost_frame((value,))
    if isinstance(value, Tensor):  # a Tensor subclass other than Variable
        return value
    return convert_to_tensor(value, like)


def as_arrays(op, args):
    """``args`` of an op run on arrays, each as a raw array: a Tensor's value, and a
    Python number as ``bind`` converts it (the dtype of the first float array beside it)."""
    values, numbers = [], False
    for a in args:
        if isinstance(a, Tensor):
            if isinstance(a, Variable):
                a = a.snapshot
            elif isinstance(a, SymbolicTensor):
                raise RuntimeError(f"{op.name}: a gradient rule run on arrays was given "
                                   f"the graph tensor {a.name}.")
            a = a.value
        elif not hasattr(a, "dtype"):   # a Python number or list: converted below
            numbers = True
        values.append(a)
    if numbers:
        like = next((v for v in values if getattr(v, "dtype", None) is not None
                     and v.dtype.kind == "f"), None)
        values = [v if hasattr(v, "dtype") else as_array(v, like) for v in values]
    return values


def public_caller():
    """The frame of the public function that handed an op over (``tg.exp``'s, the nearest
    frame outside ``teachgrad/ops/core``: not an interpreter's): its argument names say
    which input was wrong."""
    frame = sys._getframe(1)
    while frame.f_code.co_filename.startswith(_CORE_DIR):
        frame = frame.f_back
    return frame


_CORE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
