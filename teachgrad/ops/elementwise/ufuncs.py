"""numpy's elementwise functions (ufuncs) as ops, each declared in one line.

An elementwise op of one input has one derivative, ``f'(x)``, and both rules use
it: the VJP multiplies the cotangent by it (``ct * f'(x)``), the JVP the tangent
(``x_dot * f'(x)``). So an op is declared by its ufunc's name and ``f'``::

    # tan x.  d/dx tan x = 1 + tan^2 x
    tan_p, tan = unary("tan", lambda x, ans: 1 + ans * ans, r"$\\tan x$ ...")

``f'`` is written with teachgrad ops (it receives tensors), so the rules can be
differentiated again. An op of two inputs gives a partial derivative for each,
and broadcasts: its VJP ends in ``unbroadcast`` like every binary op's.
"""
from ... import backend
from ..core.apply import innermost
from ..core.declare import defeffect, defjvp, defvjp, not_differentiable, primitive, takes_complex
from ..shape.reshape import broadcast_as, unbroadcast
from .conjugate import conj_of


def _ufunc(name):
    """The kernel ``backend.xp.<name>(*arrays)``, looked up when it runs (numpy or CuPy)."""
    def kernel(*arrays):
        return getattr(backend.xp, name)(*arrays)
    kernel.__name__ = name
    return kernel


def _public(op, arity, name, doc):
    """The function users call: ``name(x)`` or ``name(x, y)``, binding ``op``."""
    if arity == 1:
        def apply(x): return innermost.process(op, x)
    else:
        def apply(x, y): return innermost.process(op, x, y)
    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = doc
    return apply


def unary(name, derivative, doc, ufunc=None, holomorphic=False):
    """``(op, function)`` for numpy's ufunc ``ufunc`` (default: ``name``) of one input,
    whose derivative is ``derivative(x, ans)`` (``ans`` is the op's output).
    ``holomorphic``: the same formula holds for complex numbers, and the op takes them
    (its VJP multiplies by the conjugate derivative, TensorFlow's convention)."""
    ufunc = ufunc or name
    op = primitive(name, _ufunc(ufunc))
    defeffect(op, "fresh", elementwise=ufunc)
    if holomorphic:
        takes_complex(op)
    defvjp(op, lambda ct, ans, x: ct * conj_of(derivative(x, ans)))
    defjvp(op, lambda x_dot, ans, x: x_dot * derivative(x, ans))
    return op, _public(op, 1, name, doc)


def binary(name, dx, dy, doc, ufunc=None):
    """``(op, function)`` for numpy's ufunc of two broadcasting inputs, with partial
    derivatives ``dx(x, y, ans)`` and ``dy(x, y, ans)``; ``None`` for ``dx`` means 1."""
    ufunc = ufunc or name
    op = primitive(name, _ufunc(ufunc))
    defeffect(op, "fresh", elementwise=ufunc)
    defvjp(op,
           lambda ct, ans, x, y: unbroadcast(ct if dx is None else ct * dx(x, y, ans), x),
           lambda ct, ans, x, y: unbroadcast(ct * dy(x, y, ans), y))
    defjvp(op,
           lambda x_dot, ans, x, y: broadcast_as(x_dot if dx is None else x_dot * dx(x, y, ans),
                                                 ans),
           lambda y_dot, ans, x, y: broadcast_as(y_dot * dy(x, y, ans), ans))
    return op, _public(op, 2, name, doc)


def piecewise_constant(name, doc, arity=1, ufunc=None):
    """``(op, function)`` for a ufunc whose derivative is zero wherever it exists
    (floor, ceil...): marked not differentiable, as autograd and TensorFlow do."""
    ufunc = ufunc or name
    op = not_differentiable(primitive(name, _ufunc(ufunc)))
    defeffect(op, "fresh", elementwise=ufunc)
    return op, _public(op, arity, name, doc)
