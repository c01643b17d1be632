"""The one place where an op's inputs are checked against the dtypes its rules accept.

Every op declares whether its rules hold for complex numbers
(``teachgrad.ops.core.declare.takes_complex``). ``bind`` and the graph builder call
``check_complex`` for an op that has not: a complex input is then a TypeError naming
the op, not a result computed on the real parts alone.
"""


def check_complex(op, inputs):
    """Refuse complex ``inputs`` (Tensors or symbolic tensors) of ``op``, which has no
    complex rules."""
    for t in inputs:
        dtype = getattr(t, "dtype", None)
        if dtype is not None and dtype.kind == "c":
            raise TypeError(complex_message(op, dtype))


def complex_message(op, dtype):
    """Why ``op`` refuses an input of the complex ``dtype``, and what to do instead."""
    why = op.complex_refusal or (
        "it has no rule for complex numbers. Apply it to tg.real(z), tg.imag(z) or "
        "tg.abs(z) if that is what you mean.")
    return f"tg.{op.name} does not take complex input (got {dtype}): {why}"
