"""Tensors and Variables: values that ops consume and produce.

A ``Tensor`` holds an array from the backend and a unique id. The id (from a
creation counter, so the same program always numbers its tensors the same way)
is how a ``GradientTape`` remembers which tensors it is watching and which
recorded operation produced each one.

A ``Variable`` is mutable state. Each time it is assigned it gets a fresh
*snapshot*: an ordinary Tensor holding the new value. Ops read the snapshot, so
an operation recorded on a tape keeps the value it actually used even if the
Variable is assigned later; the tape remembers which snapshots stand for which
Variable, so that gradients reach the Variable itself.
"""
import itertools
import types

import numpy as np

from . import backend, validate
from .state import state

_new_id = itertools.count().__next__


def next_tensor_id():
    """A new tensor id (for Tensor kinds that set their fields themselves)."""
    return _new_id()


class Tensor:
    """An immutable n-dimensional array that autodiff can follow.

    Attributes:
      value: the backend array it holds (None for a graph's symbolic tensor, which has
        a value only while a Session runs, and for one example's view of a batch inside
        ``tg.vectorized_map``). ``numpy()`` gives a host copy.
      id: a number from a creation counter: how tapes and the engine know a tensor.
      shape, dtype, name: as numpy's (name: the label drawings and errors use).
    """

    __slots__ = ("value", "id", "shape", "dtype", "name", "__weakref__")
    # Make numpy defer to our operators in `ndarray + Tensor`.
    __array_priority__ = 100

    def __init__(self, value, name=None):
        self.value = value
        self.id = _new_id()
        self.shape = value.shape   # kept as plain attributes: the engine reads them a lot
        self.dtype = value.dtype
        self.name = name

    # -- what it holds --------------------------------------------------------

    @property
    def ndim(self):
        if self.shape is None:
            raise ValueError(f"The rank of {self!r} is unknown; give its placeholder a shape.")
        return len(self.shape)

    @property
    def size(self):
        """The number of entries (None when a dimension is unknown)."""
        if self.shape is None or None in self.shape:
            return None
        return int(np.prod(self.shape, dtype=np.int64))

    def numpy(self):
        """The value as a numpy array (a host copy when on a GPU)."""
        return backend.to_numpy(self.value)

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def item(self):
        return self.numpy().item()

    def __float__(self):
        return float(self.numpy())

    def __int__(self):
        return int(self.numpy())

    def __index__(self):
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
        return int(self.numpy())

    def __bool__(self):
        if self.size != 1:
            raise ValueError(
                f"The truth value of a tensor with shape {self.shape} is ambiguous; "
                "use tg.reduce-style ops (tg.max, tg.min) or compare element by element.")
        return bool(self.numpy())

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        label = f", name={self.name!r}" if self.name else ""
        body = np.array2string(self.numpy(), separator=", ", prefix="tg.Tensor(")
        return f"tg.Tensor({body}, shape={self.shape}, dtype={self.dtype}{label})"

    __hash__ = object.__hash__  # tensors are identities, even though == is elementwise

    # -- operators and methods: each is one public op ------------------------------
    #: ``x * y`` is ``tg.multiply(x, y)``, ``x[1:]`` is ``tg.getitem(x, slice(1, None))``,
    #: ``x.sum(axis=0)`` is ``tg.sum(x, axis=0)``: each method here is set to the very
    #: function the public op is (``Tensor.sum is tg.sum``, name= included); an operator,
    #: which takes no name=, to the op function that ``tg.multiply`` adds name= to
    #: (``Tensor.__mul__ is tg.multiply.__wrapped__``: one call less on every ``x * y``);
    #: each reflected one (``2 - x``) calls it with the operands swapped. The ops are defined after this
    #: class (they make Tensors), so the ops package hands them over once, when it has
    #: defined them all (``take_operators``); this table is the one place that says which.
    OPERATORS = {
        "__add__": "add", "__sub__": "subtract", "__mul__": "multiply", "__truediv__": "divide",
        "__pow__": "power", "__mod__": "mod", "__matmul__": "matmul",
        "__neg__": "negative", "__abs__": "abs", "__getitem__": "getitem",
        "__lt__": "less", "__le__": "less_equal", "__gt__": "greater", "__ge__": "greater_equal",
        "__eq__": "equal", "__ne__": "not_equal",
        "sum": "sum", "mean": "mean", "max": "max", "min": "min", "astype": "cast",
        "ravel": "ravel", "flatten": "flatten",
    }
    REFLECTED = ("__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rpow__", "__rmod__",
                 "__rmatmul__")
    #: The public ops by name (``Tensor.ops.stack``), once ``take_operators`` has run.
    ops = None

    @classmethod
    def take_operators(cls, namespace):
        """Set the operators and methods above from ``namespace`` (the ops package's
        public functions, ``tg.multiply`` and the rest)."""
        cls.ops = types.SimpleNamespace(**{name: namespace[name] for name in (
            *cls.OPERATORS.values(), "reshape", "transpose", "stack")})
        for method, op in cls.OPERATORS.items():
            setattr(cls, method, _operator(method, namespace[op]))
        for method in cls.REFLECTED:
            forward = cls.OPERATORS[method.replace("r", "", 1)]
            setattr(cls, method, _swapped(_operator(method, namespace[forward])))

    def __pos__(self):
        return self

    def reshape(self, *shape):
        """``tg.reshape(self, shape)``; ``x.reshape(2, 3)`` is ``x.reshape((2, 3))``."""
        return Tensor.ops.reshape(self, shape[0] if len(shape) == 1 else shape)

    def transpose(self, *axes):
        """``tg.transpose(self, axes)``; no axes reverse them all."""
        return Tensor.ops.transpose(self, axes or None)

    @property
    def T(self):
        """The tensor with its axes reversed."""
        return Tensor.ops.transpose(self)


def _operator(method, public):
    """What ``Tensor.method`` is for the public op ``public``: the op itself for a named
    method (``x.sum(name="s")``), the function under its name= wrapper for an operator."""
    return getattr(public, "__wrapped__", public) if method.startswith("__") else public


def _swapped(op):
    """``op`` with its operands swapped: ``2 - x`` calls ``x.__rsub__(2)``."""
    def reflected(self, other):
        return op(other, self)
    reflected.__name__ = reflected.__qualname__ = f"reflected_{op.__name__}"
    return reflected


class SymbolicTensor(Tensor):
    """An output of a node in a ``tg.Graph``: a shape and a dtype, but no value.

    Its value exists only while a ``tg.Session`` runs the graph. Dimensions
    that are not known when the graph is built are None.
    """

    __slots__ = ("graph", "node", "index")

    def __init__(self, graph, node, index, shape, dtype, name):
        self.value = None
        self.id = _new_id()
        self.shape = None if shape is None else tuple(shape)
        self.dtype = dtype
        self.name = name
        self.graph = graph
        self.node = node
        self.index = index

    def numpy(self):
        raise RuntimeError(
            f"{self.name} is a symbolic tensor of a graph: it has no value until the graph "
            f"runs. Evaluate it with tg.Session(graph).run({self.name!r}-tensor, feed_dict=...).")

    def __bool__(self):
        raise TypeError(f"Using the symbolic tensor {self.name} as a Python bool is not allowed "
                        "in graph mode: its value is not known while the graph is built. For a branch "
                        "or a loop that depends on it, use tg.cond or tg.while_loop.")

    def __len__(self):
        if self.shape is None or not self.shape or self.shape[0] is None:
            raise TypeError(f"len() of {self.name}, whose first dimension is unknown.")
        return self.shape[0]

    def __repr__(self):
        shape = "unknown" if self.shape is None else "(" + ", ".join(
            "None" if d is None else str(d) for d in self.shape) + ("," if len(self.shape) == 1 else "") + ")"
        return f"<tg.SymbolicTensor '{self.name}' shape={shape} dtype={self.dtype}>"


class Variable(Tensor):
    """Mutable state that a ``GradientTape`` watches when it is read.

    Args:
      value: the initial value (anything ``tg.constant`` accepts).
      trainable: whether tapes watch it automatically when an op reads it.
      name: a label shown by the visualizers.
      dtype: optional dtype to convert the initial value to.
    """

    __slots__ = ("trainable", "snapshot")

    def __init__(self, value, trainable=True, name=None, dtype=None):
        validate.flags("tg.Variable", trainable=trainable, name=name)
        array = to_array(value, dtype, "value", "tg.Variable")
        super().__init__(array, name=name)
        self.trainable = trainable
        self.snapshot = Tensor(array, name=name)

    def read_value(self):
        """The current value as a plain Tensor (what an op sees)."""
        return self.snapshot

    def assign(self, value):
        """Replace the value (same shape and dtype); returns the Variable.

        Inside ``tg.function`` the assignment is part of the traced graph: it happens
        each time the function runs (after its outputs are computed), and later reads
        in the same function see the new value."""
        if state.graph is not None:
            return state.graph.assign_variable(self, value)
        array = self._checked(value, "value", "Variable.assign")
        if array.shape != self.shape:
            raise ValueError(
                f"Variable.assign: `value` must have the Variable's shape {self.shape}, but "
                f"got a value of shape {array.shape}"
                + (f" (Variable {self.name})." if self.name else "."))
        self.value = array
        self.snapshot = Tensor(array, name=self.name)
        return self

    def assign_add(self, delta):
        """``self = self + delta``, in place of the old value."""
        if state.graph is not None:
            return state.graph.assign_variable(self, delta, sign=1)
        return self.assign(self._combined(delta, "Variable.assign_add", 1))

    def assign_sub(self, delta):
        """``self = self - delta``, in place of the old value."""
        if state.graph is not None:
            return state.graph.assign_variable(self, delta, sign=-1)
        return self.assign(self._combined(delta, "Variable.assign_sub", -1))

    def _combined(self, delta, where, sign):
        """The value plus (``sign`` 1) or minus (-1) ``delta``, which must fit its shape."""
        array = self._checked(delta, "delta", where)
        try:
            fits = np.broadcast_shapes(array.shape, self.shape) == self.shape
        except ValueError:
            fits = False
        if not fits:
            validate.fail(ValueError, where, "delta", f"a value that broadcasts to the "
                          f"Variable's shape {self.shape}", delta)
        return self.value + array if sign > 0 else self.value - array

    def _checked(self, value, name, where):
        """``value`` as an array of this Variable's dtype; a conversion that would lose
        what it holds (floats into an integer Variable) is refused, not truncated."""
        array = to_array(value, None, name, where)
        if array.dtype != self.dtype:
            if not np.can_cast(array.dtype, self.dtype, casting="same_kind"):
                validate.fail(TypeError, where, name, f"values of the Variable's dtype "
                              f"{self.dtype} (or a kind that converts without loss)", value,
                              f"Converting would truncate or change them; use "
                              f"tg.cast or round them first if that is what you mean.")
            array = array.astype(self.dtype)
        return array

    def __repr__(self):
        body = np.array2string(self.numpy(), separator=", ", prefix="tg.Variable(")
        return (f"tg.Variable({body}, shape={self.shape}, dtype={self.dtype}, "
                f"name={self.name!r}, trainable={self.trainable})")


def to_array(value, dtype=None, name="value", where="tg.constant"):
    """Convert Python data, numpy arrays or tensors to a backend array (checked:
    None, strings and ragged lists are refused, naming ``name``)."""
    return validate.tensor_like(value, name, where,
                                None if dtype is None else validate.dtype(dtype, "dtype", where))


def constant(value, dtype=None, name=None):
    """A Tensor holding ``value``.

    dtypes follow numpy: Python floats become float64, Python ints int64, and
    ``dtype=`` converts.

    >>> tg.constant([1.0, 2.0]).dtype
    dtype('float64')
    """
    if name is not None:
        validate.name(name, "tg.constant")
    graph = state.graph
    if graph is not None:  # building a graph: a constant node
        if isinstance(value, SymbolicTensor):
            return value if dtype is None else value.astype(dtype)   # the cast op
        return graph.add_constant(to_array(value, dtype), name=name)
    if isinstance(value, Tensor) and dtype is None and name is None:
        return value.read_value() if isinstance(value, Variable) else value
    return Tensor(to_array(value, dtype), name=name)


def convert_to_tensor(value, like=None):
    """``value`` as a Tensor. A Python scalar next to the tensor ``like`` takes
    its dtype (``x32 * 2.0`` stays float32), as numpy's scalar rules do. A list
    holding tensors is stacked (``packed``), so gradients flow through it."""
    if isinstance(value, Tensor):
        return value
    if type(value) in (list, tuple) and holds_tensor(value):
        return packed(value)
    return Tensor(as_array(value, like))


def holds_tensor(value):
    """Does the (nested) list or tuple ``value`` hold a Tensor anywhere?"""
    return any(isinstance(v, Tensor) or (type(v) in (list, tuple) and holds_tensor(v))
               for v in value)


def packed(value, name=None, where=None):
    """The (nested) list ``value``, which holds tensors, as one tensor: ``tg.stack`` of
    its parts, innermost lists first, as autograd and TensorFlow's ``convert_to_tensor``
    do. ``tg.mean([x, x + 2])`` is then differentiated through both entries; turning the
    list into a constant array would silently give a gradient of zero.

    The stacking is ``tg.stack`` (``Tensor.ops.stack``: this module comes before any op
    exists, see ``Tensor.take_operators``). Given the argument's ``name`` and the
    function it was given to (``where``), an error stacking it names them."""
    try:
        return Tensor.ops.stack([packed(v) if type(v) in (list, tuple) and holds_tensor(v)
                              else v for v in value])
    except (TypeError, ValueError) as error:
        if where is None:
            raise
        raise type(error)(f"{where}: `{name}` is a list holding tensors, which becomes one "
                          f"tensor by stacking its entries (tg.stack), but they do not stack: "
                          f"{error}") from None


def as_array(value, like=None):
    """The backend array ``convert_to_tensor`` would hold for ``value`` (not a tensor):
    a Python scalar next to ``like`` (a tensor or an array) takes its dtype."""
    if like is not None and isinstance(value, (int, float, bool, complex)):
        return backend.scalar(value, scalar_dtype(like.dtype, value))
    return to_array(value)


def scalar_dtype(dtype, value):
    """The dtype numpy gives a Python scalar next to an array of ``dtype``."""
    kind = dtype.kind
    if (kind == "f" and type(value) is not complex) or kind == "c" \
            or (kind in "iu" and type(value) is int) or (kind == "b" and type(value) is bool):
        return dtype
    return np.result_type(dtype, value)

