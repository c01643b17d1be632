"""Tensor's operators and methods: each is one op.

``x * y`` is ``multiply(x, y)``, ``x[1:]`` is ``getitem(x, slice(1, None))``,
``x.sum(axis=0)`` is ``sum(x, axis=0)``. ``Tensor`` is defined before any op
exists, so the ops give it these here, once they are all defined: that keeps
``tensor.py`` free of imports from ``ops`` (which imports ``tensor``).

Because a rule can use them on its cotangent (``g.sum(axis=0)``), the op
modules need not import each other in circles either.
"""
from ..tensor import Tensor
from .elementwise.arithmetic import (
    add,
    divide,
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    multiply,
    not_equal,
    power,
    subtract,
)
from .elementwise.casts import cast
from .elementwise.math import abs, negative
from .elementwise.rounding import mod
from .linalg.matmul import matmul
from .reductions.sums import max, mean, min, sum
from .shape.concat_split import stack
from .shape.indexing import getitem
from .shape.rearrange import flatten, ravel
from .shape.reshape import reshape, transpose


def _swapped(op):
    """``op`` with its operands swapped: ``2 - x`` calls ``x.__rsub__(2)``."""
    return lambda self, other: op(other, self)


_OPERATORS = {
    "__add__": add, "__radd__": _swapped(add),
    "__sub__": subtract, "__rsub__": _swapped(subtract),
    "__mul__": multiply, "__rmul__": _swapped(multiply),
    "__truediv__": divide, "__rtruediv__": _swapped(divide),
    "__pow__": power, "__rpow__": _swapped(power),
    "__mod__": mod, "__rmod__": _swapped(mod),
    "__matmul__": matmul, "__rmatmul__": _swapped(matmul),
    "__neg__": negative, "__abs__": abs,
    "__lt__": less, "__le__": less_equal, "__gt__": greater, "__ge__": greater_equal,
    "__eq__": equal, "__ne__": not_equal,
    "__getitem__": getitem,
}

_METHODS = {
    "sum": sum, "mean": mean, "max": max, "min": min,
    "reshape": lambda self, *shape: reshape(self, shape[0] if len(shape) == 1 else shape),
    "transpose": lambda self, *axes: transpose(self, axes or None),
    "astype": cast,
    "ravel": ravel, "flatten": flatten,
}

for _name, _op in {**_OPERATORS, **_METHODS}.items():
    setattr(Tensor, _name, _op)
Tensor.__pos__ = lambda self: self
Tensor.T = property(transpose, doc="The tensor with its axes reversed.")
# How a list of tensors given where one tensor is expected becomes one (tensor.packed).
Tensor.stack_parts = staticmethod(stack)
