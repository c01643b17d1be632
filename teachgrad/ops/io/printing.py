"""``tg.print``: an op whose point is its effect, a line written when it runs.

Python's ``print`` inside a traced function runs once, while Python traces
it, and writes what a symbolic tensor is (its name and shape), never a value.
``tg.print`` is an op: eagerly it writes at once; while a graph is built it adds
a ``print`` node, which writes the values each time the graph runs::

    @tg.function
    def step(x):
        print("tracing with", x)       # once, at trace time: a SymbolicTensor
        tg.print("x is", x)            # every call: the value of x
        return x * 2

The node has one output, a token that nothing need read. It is declared
``"stateful"`` (``defeffect``): the optimiser never folds, merges, fuses or
prunes it, and a traced function runs it on every call, after the effects made
before it and before those made after it (nodes run in creation order). It has
no derivative: under a tape it is recorded, and carries no gradient.
"""
import sys

import numpy as np

from ... import validate
from ...tensor import Tensor
from ..core.apply import innermost
from ..core.declare import (
    defbatch,
    defeffect,
    defshape,
    not_differentiable,
    primitive,
    takes_complex,
)
from .formatting import format_value


class Slot:
    """Where the ``index``-th tensor goes in the values written."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _fill(template, arrays):
    """``template`` with each Slot replaced by its array."""
    if isinstance(template, Slot):
        return arrays[template.index]
    if isinstance(template, dict):
        return {k: _fill(v, arrays) for k, v in template.items()}
    if isinstance(template, (list, tuple)):
        return type(template)(_fill(v, arrays) for v in template)
    return template


def _print_kernel(*arrays, template, summarize, sep, end, stream):
    text = sep.join(format_value(v, summarize) for v in _fill(template, arrays))
    write(stream, text, end)
    return np.asarray(True)   # the token: a scalar nobody need read


# print(*tensors, template, summarize, sep, end, stream): writes one line when it runs.
print_p = not_differentiable(primitive("print", _print_kernel))
takes_complex(print_p)
defshape(print_p, lambda *inputs, **params: [((), np.dtype(bool))])
defeffect(print_p, "stateful")
# Inside tg.vectorized_map: one line with the whole batch, as one call writes it.
defbatch(print_p, lambda values, batched, **params: (innermost.process(print_p, *values, **params), False))


def write(stream, text, end):
    """Write ``text`` and ``end`` where ``stream`` (from ``output_stream``) says."""
    kind, target = stream
    if kind == "file":
        with open(target, "a", encoding="utf-8") as file:
            file.write(text + end)
    elif kind == "call":
        target(text)
    else:
        out = getattr(sys, target) if kind == "sys" else target
        out.write(text + end)
        flush = getattr(out, "flush", None)
        if flush is not None:
            flush()


def resolve_stream(value, where="tg.print"):
    """``output_stream`` as ``(kind, target)``: sys.stdout and sys.stderr looked up when the
    line is written (a notebook or pytest may have replaced them), a file, a function
    taking the line (``logging.info``), or any object with ``write``."""
    if value is None or value is sys.stderr or value is sys.__stderr__:
        return ("sys", "stderr")
    if value is sys.stdout or value is sys.__stdout__:
        return ("sys", "stdout")
    if isinstance(value, str):
        if value.startswith("file://") and len(value) > len("file://"):
            return ("file", value[len("file://"):])
        validate.fail(ValueError, where, "output_stream", "sys.stdout, sys.stderr, "
                      "'file://<path>', a logging function or an object with write()", value)
    if callable(getattr(value, "write", None)):
        return ("object", value)
    if callable(value):
        return ("call", value)
    validate.fail(TypeError, where, "output_stream", "sys.stdout, sys.stderr, "
                  "'file://<path>', a logging function or an object with write()", value)


def _template(value, tensors):
    """``value`` with each tensor in it replaced by a Slot (the tensor put in ``tensors``)."""
    if isinstance(value, Tensor):
        tensors.append(value)
        return Slot(len(tensors) - 1)
    if isinstance(value, dict):
        return {k: _template(v, tensors) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_template(v, tensors) for v in value)
    return value


def print(*inputs, output_stream=None, summarize=None, sep=" ", end="\n", name=None):
    """Write ``inputs`` when the op runs: at once eagerly, on every call of a traced
    function (``tf.print``).

    Args:
      *inputs: tensors, Python values, and lists, tuples and dicts of them. Tensors are
        written as numpy writes them without commas (``[0 1 2 ... 7 8 9]``); a string
        given on its own is written as it is.
      output_stream: where the line goes: ``sys.stderr`` (the default, as TensorFlow's),
        ``sys.stdout``, ``"file://<path>"`` (appended), a logging function such as
        ``logging.info``, or an object with a ``write`` method.
      summarize: how many entries to write at each end of an axis; the middle of a
        longer one is ``...``. None: 3; -1: every entry.
      sep, end: written between the inputs and after them (Python's print's).
      name: the node's name in a graph.

    Returns None eagerly and in a traced function. While a ``tg.Graph`` is built it
    returns the node's token (a bool scalar): a Session writes the line when it
    runs something that depends on it, e.g. ``session.run(token)``.
    """
    where = "tg.print"
    stream = resolve_stream(output_stream, where)
    if summarize is not None:
        summarize = validate.integer(summarize, "summarize", where, minimum=-1)
        if summarize == 0:
            validate.fail(ValueError, where, "summarize", "a positive number of entries, "
                          "-1 (all of them) or None (3)", summarize)
    for label, text in (("sep", sep), ("end", end)):
        if not isinstance(text, str):
            validate.fail(TypeError, where, label, "a string", text)
    validate.name(name, where)
    tensors = []
    template = tuple(_template(v, tensors) for v in inputs)
    token = innermost.process(print_p, *tensors, template=template, summarize=summarize, sep=sep,
                 end=end, stream=stream)
    graph = getattr(token, "graph", None)
    if graph is None:
        return None
    if name is not None:
        graph.rename(token.node, name)
    return None if graph.runs_effects else token
