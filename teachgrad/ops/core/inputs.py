"""Saying what was wrong with an op's inputs, in the caller's words.

A conversion that fails in ``bind`` is said again naming the argument as the public
function that was given it calls it (``input_error``: ``tg.exp: `x` must be
numbers ...``), an op that reads a shape before ``bind`` checks its operand first
(``operand``), and a kernel's error names the op and its input shapes
(``with_context``).
"""
from ... import validate
from ...tensor import Tensor, holds_tensor, packed


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
