"""The one place where an op's inputs are checked against the dtypes its rules accept.

Every op declares whether its rules hold for complex numbers
(``teachgrad.ops.core.declare.takes_complex``). ``bind`` and the graph builder call
``check_complex`` for an op that has not: a complex input is then a TypeError naming
the op and the argument, not a result computed on the real parts alone.
"""
import sys


def check_complex(op, inputs, given):
    """Refuse complex ``inputs`` (the Tensors or symbolic tensors ``op`` was about to run
    on, made from the arguments ``given``) of ``op``, which has no complex rules. The
    error names the argument as the public function that was called names it: the
    nearest caller that took that value as a parameter."""
    for t in inputs:   # the common case, no complex input, costs one test per input
        if t.dtype is not None and t.dtype.kind == "c":
            break
    else:
        return
    found = [i for i, t in enumerate(inputs) if _is_complex(t)]
    if found:
        # the argument that was complex when given (a number beside it turned complex)
        i = next((i for i in found if _is_complex(given[i])), found[0])
        name = _argument_name(given[i], i, sys._getframe(1))
        raise TypeError(complex_message(op, inputs[i].dtype, name))


def _is_complex(value):
    dtype = getattr(value, "dtype", None)
    return isinstance(value, complex) or (dtype is not None and dtype.kind == "c")


def complex_message(op, dtype, name="x"):
    """Why ``op`` refuses its input ``name`` of the complex ``dtype``, and what to do."""
    why = op.complex_refusal or (
        "it has no rule for complex numbers. Apply it to tg.real(z), tg.imag(z) or "
        "tg.abs(z) if that is what you mean.")
    return f"tg.{op.name}: `{name}` is complex ({dtype}), and tg.{op.name} does not take " \
           f"complex input: {why}"


def _argument_name(value, i, frame, search=8):
    """The name ``value`` has among the parameters of the nearest function, from
    ``frame`` outwards (past ``bind``, the interpreter and the graph builder, whose
    parameters hold the arguments as a tuple), that took it as one; ``input i`` when
    none did (a value the public function computed)."""
    while frame is not None and search:
        code = frame.f_code
        for key in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
            if frame.f_locals.get(key) is value:
                return key
        frame, search = frame.f_back, search - 1
    return f"input {i}"
